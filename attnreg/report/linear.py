"""The summary of a linear fit: what R's ``summary.lm`` computes, as sections of numbers."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg.report.sections import (
    AttentionSummary,
    Call,
    Coefficients,
    FitStatistics,
    Penalty,
    Residuals,
)
from attnreg.report.summary import Summary

if TYPE_CHECKING:
    from attnreg.linear.results import LinearResults

__all__ = ["linear_summary"]


def linear_summary(res: LinearResults) -> Summary:
    """The ``summary.lm``-style report of a spectral fit (OLS, WLS, ridge, PCR)."""
    w = res.design.weights
    resid_w = _summary_residuals(res)
    # R names the residuals only when it prints them all (five or fewer residual df)
    labels = tuple(str(v) for v in resid_w.index) if res.df_resid <= 5 else ()
    residuals = Residuals(resid_w.to_numpy(), labels, w is not None and bool(np.ptp(w) != 0),
                          float(res.df_resid))
    z = "z" if math.isinf(res.df_inference) else "t"  # df=np.inf: coeftest's z table
    table = pd.DataFrame({"Estimate": res.coef, "Std. Error": res.std_err,
                          f"{z} value": res.t_value, f"Pr(>|{z}|)": res.p_value})
    if res.vcov_spec.option("df") == "satterthwaite":  # each coefficient's own t df
        table.insert(3, "df (Satt.)", res.df_coef)
    sections: list[Any] = [Call(res.call), residuals,
                           Coefficients(table, n_aliased=len(res.aliased)), _fit_statistics(res)]
    if res.selection is not None:
        sections.append(_penalty(res))
    sections.append(_attention(res))
    return Summary(title=f"attnreg {res.method} fit", sections=tuple(sections))


def _summary_residuals(res: LinearResults) -> pd.Series:
    """Weighted residuals of every data row, 0 for rows of weight zero (as R's summary)."""
    zero, labels = res.design.zero_weight, res.design.row_labels
    if zero is None:
        return res.weighted_resid
    return zero.all_rows(res.weighted_resid.to_numpy(), labels, np.zeros(len(zero.labels)),
                         "resid")


def _fit_statistics(res: LinearResults) -> FitStatistics:
    has_model = res.df_model > 0
    ft = res.f_test if has_model else None
    return FitStatistics(
        sigma=float(res.sigma), df_resid=float(res.df_resid), effective=res.rule.penalized,
        n_deleted=int(res.design.dropped_labels.size),
        r_squared=float(res.r_squared) if has_model else None,
        adj_r_squared=float(res.adj_r_squared) if has_model else None,
        f_statistic=None if ft is None else float(ft.statistic),
        f_df1=None if ft is None else float(ft.df1),
        f_df2=None if ft is None else float(ft.df2),
        f_p_value=None if ft is None else float(ft.p_value),
        covariance=res.vcov_spec.kind, covariance_label=res.vcov_spec.label(fit=res))


def _penalty(res: LinearResults) -> Penalty:
    sel = res.selection
    assert sel is not None
    return Penalty(method=res.method, parameter=res.rule.parameter,
                   value=float(sel.value), criterion=sel.criterion,
                   n_candidates=int(sel.grid.size), standardized=bool(res.standardize),
                   edf=float(res.edf))


def _row_label(label: Any) -> str:
    """A row label as the reader wrote it: strings quoted, numbers (numpy's too) plain."""
    return repr(label) if isinstance(label, str) else str(label)


#: Every row's hat value is computed for the summary's largest leverage when that costs at
#: most this many multiply-adds (n · rank², a fraction of a second); beyond, the sampled rows'.
EXACT_LEVERAGE_BUDGET = 5e8


def _attention(res: LinearResults) -> AttentionSummary:
    neg, lev, m = res.sampled_weight_stats()
    every = ("_row_pass" in res.__dict__  # already computed (HC2, HC3, influence, ...)
             or res.nobs * (res.spectrum.rank + 1) ** 2 <= EXACT_LEVERAGE_BUDGET)
    hat = res.hat_values if every or m == res.nobs else res.sampled_hat_values()
    h = hat.to_numpy()
    imax = int(np.nanargmax(h))
    with np.errstate(divide="ignore"):  # a row with no weight at all (hat value 0): inf
        inv = 1 / lev
    return AttentionSummary(
        leverage_mean=float(res.edf / res.nobs), leverage_max=float(h[imax]),  # Σ h = tr(H)
        leverage_max_row=_row_label(hat.index[imax]),
        neighbours_median=float(np.median(inv)), neighbours_min=float(np.min(inv)),
        negative_median=float(np.median(neg)), negative_min=float(np.min(neg)),
        n_sampled=int(m), n_rows=int(res.nobs), n_leverage=int(h.size))
