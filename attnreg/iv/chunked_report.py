"""The summary of a chunked IV fit: the in-memory one's sections
(:func:`attnreg.iv.report.iv_summary`) from the chunked numbers; the residual quantiles when
the rows' residuals were kept (up to :data:`attnreg.iv.chunked.RESIDUALS_KEPT` rows)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from attnreg.iv.chunked import RESIDUALS_KEPT
from attnreg.iv.report import IVCoefficients, IVDiagnostics, IVResiduals, IVStatistics, \
    _estimator_lines, _weak_lines
from attnreg.report import Summary
from attnreg.report.sections import Call, Lines

if TYPE_CHECKING:
    from attnreg.iv.chunked_results import ChunkedIVResults

__all__ = ["chunked_iv_summary"]


def chunked_iv_summary(res: ChunkedIVResults) -> Summary:
    """The report of a chunked IV fit (see the module docstring)."""
    table = pd.DataFrame({"Estimate": res.coef, "Std. Error": res.std_err,
                          "t value": res.t_value, "Pr(>|t|)": res.p_value})
    wt = res.f_test
    stats_ = IVStatistics(sigma=res.sigma, df_resid=res.df_resid, r_squared=res.r_squared,
                          adj_r_squared=res.adj_r_squared, wald=float(wt["statistic"]),
                          wald_p=float(wt["p_value"]), wald_df1=int(wt["df1"]),
                          covariance=res.vcov_kind)
    resid = res.residual_sample
    first: object = (IVResiduals(resid, res.spec is not None and res.spec.weights is not None)
                     if resid is not None else
                     Lines((f"Residuals: not kept (residuals=False, or more than "
                            f"{RESIDUALS_KEPT} rows)", ""),))
    sections: list[object] = [Call(res.call), first, IVCoefficients(table),
                              IVDiagnostics(res.diagnostics()), stats_]
    estimator = _estimator_lines(res)  # type: ignore[arg-type]
    if estimator:
        sections.append(Lines(estimator, lead_blank=True))
    sections.append(Lines(_weak_lines(res), lead_blank=True))  # type: ignore[arg-type]
    return Summary(title=f"attnreg IV fit ({res.method})", sections=tuple(sections))
