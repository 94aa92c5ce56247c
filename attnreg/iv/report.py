"""The summary of an IV fit: R's ``print(summary(ivreg(...), diagnostics = TRUE))`` (AER)
digit for digit, then the weak-instrument report R does not print.

AER prints the residual quantiles with ``print(quantile(r), digits = 4)`` (no ``zapsmall``),
the coefficient table and the diagnostics with ``printCoefmat(digits = 4)`` (the
significance legend only after the diagnostics, and only when they carry stars), then
sigma, R² and the Wald test with ``formatC``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from attnreg.report import Summary, render
from attnreg.report.rformat import fmt_g, fmt_pvalue, format_c, r_format, r_signif
from attnreg.report.rprint import SIGNIF_LEGEND, print_coefmat, print_named_vector, quantiles as _quantiles
from attnreg.report.sections import Call, Coefficients, Lines

if TYPE_CHECKING:
    from attnreg.iv.results import IVResults

__all__ = ["IVCoefficients", "IVDiagnostics", "IVResiduals", "IVStatistics", "iv_summary"]


@dataclass(frozen=True)
class IVResiduals:
    """The residuals ``sqrt(w) e``, printed as AER's quantiles (all of them up to five rows).

    AER labels them "Residuals:" also when weighted (its ``summary.ivreg`` loses the weights
    it would test for "Weighted"); the label is kept as AER prints it, ``weighted`` says which.
    """

    values: np.ndarray
    weighted: bool


@dataclass(frozen=True)
class IVCoefficients(Coefficients):
    """The coefficient table (no legend: it follows the diagnostics)."""


@dataclass(frozen=True)
class IVDiagnostics:
    """AER's diagnostics table: df1, df2, statistic, p-value (:mod:`attnreg.iv.diagnostics`)."""

    table: pd.DataFrame


@dataclass(frozen=True)
class IVStatistics:
    """Residual standard error, R², the Wald test."""

    sigma: float
    df_resid: int
    r_squared: float
    adj_r_squared: float
    wald: float
    wald_p: float
    wald_df1: int
    covariance: str


@render.text.register
def _(section: IVResiduals) -> list[str]:
    label = "Residuals:"  # as AER prints it, weighted or not (see IVResiduals)
    r = section.values
    if r.size > 5:
        body = print_named_vector(_quantiles(r), ["Min", "1Q", "Median", "3Q", "Max"], 4)
    else:
        body = print_named_vector(r, [str(i + 1) for i in range(r.size)], 4)
    return [label, *body, ""]


@render.text.register
def _(section: IVCoefficients) -> list[str]:
    return ["Coefficients:", *print_coefmat(section.table, 4, section.stars)[0]]


@render.text.register
def _(section: IVDiagnostics) -> list[str]:
    lines, starred = print_coefmat(section.table, 4, True, na_print="NA")
    return ["", "Diagnostic tests:", *lines, *(["---", SIGNIF_LEGEND] if starred else [])]


@render.text.register
def _(section: IVStatistics) -> list[str]:
    s = section
    sigma = r_format([r_signif(s.sigma, 4)], 7)[0]
    lines = ["", f"Residual standard error: {sigma} on {s.df_resid} degrees of freedom",
             f"Multiple R-Squared: {format_c(s.r_squared)},\t"
             f"Adjusted R-squared: {format_c(s.adj_r_squared)} ",
             f"Wald test: {format_c(s.wald)} on {s.wald_df1} and {s.df_resid} DF,  "
             f"p-value: {fmt_pvalue(s.wald_p, 4)} "]
    if s.covariance != "classical":
        lines.append(f"Standard errors and tests: {s.covariance} covariance")
    return lines


def _weak_lines(res: IVResults) -> tuple[str, ...]:
    """The weak-instrument report: what AER does not print."""
    wk = res.weak_instruments()
    lines = [f"Weak-instrument report ({wk.kind} covariance for the robust statistics):"]
    for j, name in enumerate(res.frame.endog_names):
        lines.append(f"  {name}: partial R2 {fmt_g(wk.partial_r2[j])}, first-stage F "
                     f"{fmt_g(wk.f_classical[j])}, robust F {fmt_g(wk.f_robust[j])}, "
                     f"Sanderson-Windmeijer F {fmt_g(wk.sw_f[j])} "
                     f"on ({wk.df[0] - len(res.frame.endog_names) + 1}, {wk.df[1]}) df")
    lines.append(f"  Cragg-Donald Wald F {fmt_g(wk.cragg_donald_f)}; Kleibergen-Paap rk Wald F "
                 f"{fmt_g(wk.kp_rk_wald_f)}; rk LM {fmt_g(wk.kp_rk_lm)} "
                 f"(p-value {fmt_pvalue(wk.kp_rk_lm_pvalue, 4)}, under-identification)")
    lines += _stock_yogo_lines(res)
    if not math.isnan(wk.effective_f):
        lines.append(f"  Montiel Olea-Pflueger effective F {fmt_g(wk.effective_f)}; 5% critical "
                     f"value for a 10% worst-case bias {fmt_g(wk.effective_f_cv)}")
        ar = res.anderson_rubin(0.95)
        where = {"interval": f"[{fmt_g(ar.lower)}, {fmt_g(ar.upper)}]",
                 "rays": f"(-Inf, {fmt_g(ar.lower)}] U [{fmt_g(ar.upper)}, Inf)",
                 "ray": f"[{fmt_g(ar.lower)}, {fmt_g(ar.upper)}]",
                 "real line": "(-Inf, Inf)", "empty": "{}"}[ar.shape]
        lines.append(f"  Anderson-Rubin 95% confidence set for {res.frame.endog_names[0]}: "
                     f"{where} ({ar.shape}; homoskedastic)")
    return tuple(lines)


def _stock_yogo_lines(res: IVResults) -> list[str]:
    """ivreg2's block of Stock–Yogo critical values for the estimator in use, or why not."""
    lead = "  Stock-Yogo weak ID test critical values: "
    cv = res.stock_yogo()
    k1, l2 = res.frame.D.shape[1], res.frame.Z.shape[1]
    if cv.empty:
        return [f"{lead}not available for {k1} endogenous regressor(s) and {l2} excluded "
                "instrument(s) (beyond the tables)"]
    lines = [f"{lead if i == 0 else ' ' * len(lead)}{label:<32}{value:6.2f}"
             for i, (label, value) in enumerate(cv.items())]
    stat = "Cragg-Donald F" if res.vcov_kind == "classical" else "Kleibergen-Paap rk Wald F"
    lines.append(f"  Source: Stock-Yogo (2005); compare the {stat}")
    if res.method == "fuller":
        lines.append("  NB: the Fuller critical values are for Fuller's alpha = 1")
    return lines


def _estimator_lines(res: IVResults) -> tuple[str, ...]:
    """What the estimator adds: LIML's and Fuller's κ, GMM's and CUE's Hansen J."""
    f = res.fit
    if res.method in ("liml", "fuller"):
        return (f"k-class kappa: {fmt_g(f.kappa, 7)} (LIML kappa {fmt_g(f.liml_kappa, 7)}"
                + (f", Fuller alpha {fmt_g(res.alpha)})" if res.method == "fuller" else ")"),)
    if res.method in ("gmm", "cue"):
        q = res.frame.Z.shape[1] - res.frame.D.shape[1]
        if q == 0:
            return ()
        p = float(stats.chi2.sf(f.j_stat, q))
        return (f"Hansen J statistic: {fmt_g(f.j_stat)} on {q} DF,  p-value: {fmt_pvalue(p, 4)}",)
    return ()


def iv_summary(res: IVResults) -> Summary:
    """The report of an IV fit (see the module docstring)."""
    w = res.frame.weights
    sw = np.ones(res.nobs) if w is None else np.sqrt(w)
    table = pd.DataFrame({"Estimate": res.coef, "Std. Error": res.std_err,
                          "t value": res.t_value, "Pr(>|t|)": res.p_value})
    wt = res.f_test
    stats_ = IVStatistics(sigma=res.sigma, df_resid=res.df_resid, r_squared=res.r_squared,
                          adj_r_squared=res.adj_r_squared, wald=float(wt["statistic"]),
                          wald_p=float(wt["p_value"]), wald_df1=int(wt["df1"]),
                          covariance=res.vcov_kind)
    sections: list[object] = [
        Call(res.call),
        IVResiduals(res.fit.resid * sw, w is not None and bool(np.ptp(w) != 0)),
        IVCoefficients(table), IVDiagnostics(res.diagnostics()), stats_]
    estimator = _estimator_lines(res)
    if estimator:
        sections.append(Lines(estimator, lead_blank=True))
    if res.frame.fixed_effects:
        sections.append(Lines((f"Fixed effects absorbed: {', '.join(res.frame.fixed_effects)} "
                               f"({res.frame.n_absorbed} parameters)",), lead_blank=True))
    sections.append(Lines(_weak_lines(res), lead_blank=True))
    return Summary(title=f"attnreg IV fit ({res.method})", sections=tuple(sections))
