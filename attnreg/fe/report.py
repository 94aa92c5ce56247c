"""The summary of a fixed-effects fit: R's ``summary.lm`` layout, with what was absorbed."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from attnreg.report.rformat import format_c
from attnreg.report.sections import Call, Coefficients, FitStatistics, Lines, Residuals
from attnreg.report.summary import Summary

if TYPE_CHECKING:
    from attnreg.fe.results import FixedEffectsResults

__all__ = ["fe_lines", "fe_summary"]


def _count(n: int) -> str:
    return f"{n:,}"


def fe_lines(fit: FixedEffectsResults) -> tuple[str, ...]:
    """The notes on the absorbed fixed effects: names and level counts, the within R², the
    rows left out, and the demeaning's accuracy when it fell short.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> rng = np.random.default_rng(1)
    >>> df = pd.DataFrame({"firm": rng.integers(0, 5, 40), "x": rng.normal(size=40)})
    >>> df["y"] = df.x + rng.normal(size=40)
    >>> fe_lines(ar.attnreg("y ~ x | firm", df))[0]
    'Fixed effects: firm (5 levels)'
    """
    ab = fit.absorbed
    counts = [f"{name} ({_count(n)}{' levels' if k == 0 else ''})"
              for k, (name, n) in enumerate(zip(ab.fe.names, ab.fe.n_levels, strict=True))]
    lines = [f"Fixed effects: {', '.join(counts)}"]
    if ab.n_redundant:
        lines.append(f"  ({ab.n_params:,} fixed-effect parameters: {ab.n_redundant} "
                     "redundant level(s) not counted)")
    lines.append(f"Within R-squared:  {format_c(fit.within_r_squared)},\t"
                 f"Adjusted within R-squared:  {format_c(fit.adj_within_r_squared)}")
    if fit.vcov_spec.kind == "cluster" and fit.vcov_spec.option("type") == "CR2":
        lines.append("Cluster small-sample correction: CR2's adjustment of each cluster's "
                     "residuals (no G/(G - 1) factor, as clubSandwich)")
    elif fit.vcov_spec.kind == "cluster":
        lines.append("Cluster small-sample correction: " + (
            "fixest's (fixed effects nested in a cluster not counted in K; G/(G - 1) with the "
            "smallest G)" if fit.ssc == "fixest" else
            "the dummy-variable fit's (every parameter in K; G/(G - 1) per dimension)"))
    missing = {t: n for t, n in ab.n_missing.items() if n}
    if missing:
        lines.append("Rows without a fixed effect, left out: "
                     + ", ".join(f"{t} {n:,}" for t, n in missing.items()))
    if ab.n_singletons:
        lines.append(f"Singletons removed: {ab.n_singletons:,} row(s)")
    if not ab.converged:
        lines.append(f"The demeaning reached a relative accuracy of {ab.orthogonality:.2g}, "
                     f"short of the data's {ab.floor:.2g}: the digits of the coefficients "
                     "may be fewer")
    return tuple(lines)


def fe_summary(fit: FixedEffectsResults) -> Summary:
    """The report of a fixed-effects fit (a :class:`~attnreg.report.Summary`)."""
    resid = fit.weighted_resid
    labels = tuple(str(v) for v in resid.index) if fit.df_resid <= 5 else ()
    w = fit.design.weights
    residuals = Residuals(resid.to_numpy(), labels, w is not None and bool(np.ptp(w) != 0),
                          float(fit.df_resid))
    z = "z" if math.isinf(fit.df_inference) else "t"
    table = pd.DataFrame({"Estimate": fit.coef, "Std. Error": fit.std_err,
                          f"{z} value": fit.t_value, f"Pr(>|{z}|)": fit.p_value})
    ft = fit.f_test if fit.df_model > 0 else None
    stats = FitStatistics(
        sigma=float(fit.sigma), df_resid=float(fit.df_resid), effective=False,
        n_deleted=int(fit.design.dropped_labels.size), r_squared=float(fit.r_squared),
        adj_r_squared=float(fit.adj_r_squared),
        f_statistic=None if ft is None else float(ft.statistic),
        f_df1=None if ft is None else float(ft.df1),
        f_df2=None if ft is None else float(ft.df2),
        f_p_value=None if ft is None else float(ft.p_value),
        covariance=fit.vcov_spec.kind, covariance_label=fit.vcov_spec.label(fit=fit))
    sections = (Call(fit.call), residuals, Coefficients(table, n_aliased=len(fit.aliased)),
                stats, Lines(fe_lines(fit), lead_blank=False))
    return Summary(title="attnreg ols fit with absorbed fixed effects", sections=sections)
