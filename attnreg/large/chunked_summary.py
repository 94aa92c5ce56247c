"""The R ``summary.lm``-style report of a chunked fit, with notes on its passes over the rows.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from attnreg.large.fit import fit_chunked
>>> rng = np.random.default_rng(4)
>>> df = pd.DataFrame({"x": rng.normal(size=100)})
>>> df["y"] = 1 + df.x + rng.normal(size=100)
>>> text = str(chunked_summary(fit_chunked("y ~ x", df, chunk_rows=30)))
>>> "Chunked fit of" in text, "Residuals:" in text
(True, True)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from attnreg.report.sections import Call, Coefficients, FitStatistics, Lines, Penalty, Residuals
from attnreg.report.summary import Summary

__all__ = ["chunked_summary"]


def _plain(label: Any) -> Any:
    """A row label as Python prints it (``123`` rather than ``np.int64(123)``)."""
    return label.item() if isinstance(label, np.generic) else label


def _pass_notes(res: Any) -> list[str]:
    """What was read, kept, dropped and excluded."""
    return [f"Chunked fit of {res.source_description}: {res.n_read} rows read, "
            f"{res.nobs} in the fit"
            + (f", {res.n_dropped} dropped for missing values" if res.n_dropped else "")
            + (f", {res.n_excluded} excluded by subset" if res.n_excluded else "")
            + (f", {res.factor.n_zero_weight} of weight zero" if res.factor.n_zero_weight
               else "") + "."]


def _residuals(res: Any, notes: list[str]) -> Residuals | None:
    """The residual quantiles' section (None: not computed), its notes added to ``notes``."""
    st = res.residual_stats
    if st is None:
        notes.append("Residuals not computed (the rows are no longer available): no residual "
                     "quantiles." if res.lazy_residuals else
                     "Residuals not computed (residuals=False): no residual quantiles.")
        return None
    sampled = st.sample_values.size < st.n_obs
    values = np.concatenate([st.sample_values, [st.resid_min, st.resid_max]]) if sampled \
        else st.sample_values
    if sampled:
        notes.append(f"Residual quantiles from a uniform sample of "
                     f"{st.sample_values.size} of {st.n_obs} rows (Min and Max exact).")
    notes.append(f"Leverage (hat values): mean {res.edf / res.nobs:.4g}, max "
                 f"{st.hat_max:.4g} (row {_plain(st.hat_max_label)!r}).")
    return Residuals(np.asarray(values, dtype=np.float64),
                     tuple(str(i) for i in range(values.size)),
                     res.factor.weighted, float(res.df_resid))


def _fit_statistics(res: Any) -> FitStatistics:
    """σ, R², the F test and the covariance in use (no R² or F without slopes)."""
    has_model = res.df_model > 0
    ft = res.f_test if has_model else None
    return FitStatistics(
        sigma=float(res.sigma), df_resid=float(res.df_resid),
        effective=res.rule.penalized, n_deleted=res.n_dropped,
        r_squared=float(res.r_squared) if has_model else None,
        adj_r_squared=float(res.adj_r_squared) if has_model else None,
        f_statistic=None if ft is None else float(ft.statistic),
        f_df1=None if ft is None else float(ft.df1),
        f_df2=None if ft is None else float(ft.df2),
        f_p_value=None if ft is None else float(ft.p_value),
        covariance=res.vcov_spec.kind, covariance_label=res.vcov_spec.label())


def chunked_summary(res: Any) -> Summary:
    """The summary of a :class:`~attnreg.large.results.ChunkedResults` (its ``summary()``).

    Parameters
    ----------
    res : ChunkedResults

    Returns
    -------
    attnreg.report.Summary
    """
    sections: list[Any] = [Call(res.call)]
    notes = _pass_notes(res)
    residuals = _residuals(res, notes)
    if residuals is not None:
        sections.append(residuals)
    if res.refinement:
        notes.append(f"OLS refined in extended precision: {len(res.refinement)} pass(es).")
    table = pd.DataFrame({"Estimate": res.coef, "Std. Error": res.std_err,
                          "t value": res.t_value, "Pr(>|t|)": res.p_value})
    sections.append(Coefficients(table, n_aliased=len(res.aliased)))
    sections.append(_fit_statistics(res))
    if res.selection is not None:
        sel = res.selection
        sections.append(Penalty(method=res.method, parameter=res.rule.parameter,
                                value=float(sel.value), criterion=sel.criterion,
                                n_candidates=int(sel.grid.size),
                                standardized=bool(res.standardize), edf=res.edf))
    sections.append(Lines(tuple(notes), lead_blank=True))
    return Summary(title=f"attnreg {res.method} fit (chunked)", sections=tuple(sections))
