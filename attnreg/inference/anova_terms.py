"""The analysis of variance of one fit: R's sequential table (type I) and ``car::Anova``'s
type II and III tables, from Householder QR factorisations of the weighted design with the
response appended (see :mod:`attnreg.inference.anova`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.exceptions import InferenceWarning, OptionError
from attnreg.inference.anova_rss import formula_frame
from attnreg.inference.anova_wald import wald_anova

if TYPE_CHECKING:
    from attnreg.linear.results import LinearResults
from attnreg.inference.anova_table import AnovaTable

__all__ = ["marginal", "r_factor", "sequential"]


# ------------------------------------------------------------------------ QR pieces

def r_factor(fit: LinearResults, cols: IntArray, centred: bool) -> FloatArray:
    """R of the QR of [sqrt(w) X[:, cols] | sqrt(w) y], shape (k+1, k+1), the columns (and
    y) centred at the weighted means when ``centred``: the fit's own ``sub_design_r`` (on the
    spectrum's rescaled response for an in-memory fit; from the accumulated R factor for a
    fit that keeps no rows)."""
    return np.asarray(fit.sub_design_r(cols, centred))


def _rss_of(fit: LinearResults, cols: IntArray) -> float:
    """Residual sum of squares (rescaled response) of the sub-design ``cols``, uncentred."""
    R = r_factor(fit, cols, centred=False)
    return float(R[-1, -1] ** 2)


def _term_columns(fit: LinearResults) -> list[tuple[str, list[int]]]:
    """The formula's terms with their design columns, in design order."""
    info = fit._term_info
    n = len(fit.names)
    return [(name, list(range(*sl.indices(n)))) for name, sl in info.term_name_slices.items()]


def _f_table(fit: LinearResults, ss_s: list[float], df: list[float]) -> tuple[list[float], ...]:
    """Mean squares, F and p values of rows of (rescaled) sums of squares, R's way."""
    rss_s, dfr = np.float64(fit._rss_s), float(fit.df_resid)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = rss_s / dfr if dfr > 0 else np.float64(math.nan)
        F = [float((s / d) / scale) if d > 0 else math.nan for s, d in zip(ss_s, df, strict=True)]
    P = [float(stats.f.sf(f, d, dfr)) if not math.isnan(f) and dfr > 0 else math.nan
         for f, d in zip(F, df, strict=True)]
    return F, P


def _check_perfect(fit: LinearResults, mss_s: float) -> None:
    if fit._rss_s < 1e-10 * mss_s:
        warn_user("ANOVA F-tests on an essentially perfect fit are unreliable (the residual "
                  "sum of squares is below 1e-10 times the model's)", InferenceWarning)


def _heading_response(fit: LinearResults) -> str:
    return f"Response: {formula_frame(fit).response_name}"


# ------------------------------------------------------------------------ sequential

def sequential(fit: LinearResults) -> AnovaTable:
    """R's ``anova.lm``: sequential sums of squares of the terms, then the residuals."""
    sp = fit.spectrum
    kept = np.sort(np.asarray(sp.kept, dtype=np.int64))
    centred = sp.intercept is not None
    effects = np.zeros(0)
    if kept.size:
        R = r_factor(fit, kept, centred)
        effects = R[:-1, -1]
    position = {int(j): i for i, j in enumerate(kept)}
    labels: list[str] = []
    ss_s: list[float] = []
    df: list[float] = []
    for name, cols in _term_columns(fit):
        mine = [position[j] for j in cols if j in position]
        if not mine:  # the intercept, or a term whose columns are all aliased (R drops it)
            continue
        labels.append(name)
        ss_s.append(float(np.sum(effects[mine] ** 2)))
        df.append(float(len(mine)))
    mss_s = float(effects @ effects) + (sp.sum_w * sp.y_center**2 if centred else 0.0)
    _check_perfect(fit, mss_s)
    F, P = _f_table(fit, ss_s, df)
    ss = [fit._unscaled_square(s, f"the sum of squares of {lab}") for s, lab in
          zip(ss_s, labels, strict=True)] + [fit.rss]
    df.append(float(fit.df_resid))
    with np.errstate(divide="ignore", invalid="ignore"):
        ms = [s / d if d > 0 else math.nan for s, d in zip(ss, df, strict=True)]
    table = pd.DataFrame({"Df": df, "Sum Sq": ss, "Mean Sq": ms, "F value": [*F, math.nan],
                          "Pr(>F)": [*P, math.nan]}, index=[*labels, "Residuals"])
    return AnovaTable(table, ("Analysis of Variance Table\n", _heading_response(fit)),
                      "sequential")


# ------------------------------------------------------------------------ type II / III

def marginal(fit: LinearResults, type: int) -> AnovaTable:
    """``car::Anova(fit, type = 2 | 3)`` from residual sums of squares of sub-designs."""
    if len(fit.aliased):
        raise OptionError(f"type {type} tables need a full-rank design, however coefficient(s) "
                          f"{', '.join(fit.aliased)} are aliased; drop them from the formula "
                          "(or use the sequential table, type=1)")
    terms = _term_columns(fit)
    if not fit.vcov_spec.estimator.classical:
        return AnovaTable(*wald_anova(fit, type, terms))
    factors = {t.name(): frozenset(t.factors) for t in fit._term_info.terms}
    all_cols = [j for _, cols in terms for j in cols]
    full = _rss_of(fit, np.asarray(all_cols, dtype=np.int64))
    labels, ss_s, df = [], [], []
    for name, cols in terms:
        if name == "Intercept" and type == 2:
            continue
        if type == 3:
            without = [j for j in all_cols if j not in cols]
            ss = _rss_of(fit, np.asarray(without, dtype=np.int64)) - full
        else:
            rel = {n for n, f in factors.items() if n != name and factors[name] < f}
            rel_cols = {j for n, c in terms if n in rel for j in c}
            base = [j for j in all_cols if j not in rel_cols]
            smaller = [j for j in base if j not in cols]
            ss = (_rss_of(fit, np.asarray(smaller, dtype=np.int64))
                  - _rss_of(fit, np.asarray(base, dtype=np.int64)))
        labels.append("(Intercept)" if name == "Intercept" else name)
        ss_s.append(max(ss, 0.0))
        df.append(float(len(cols)))
    F, P = _f_table(fit, ss_s, df)
    ss_out = [fit._unscaled_square(s, f"the sum of squares of {lab}") for s, lab in
              zip(ss_s, labels, strict=True)] + [fit.rss]
    table = pd.DataFrame({"Sum Sq": ss_out, "Df": [*df, float(fit.df_resid)],
                          "F value": [*F, math.nan], "Pr(>F)": [*P, math.nan]},
                         index=[*labels, "Residuals"])
    roman = "II" if type == 2 else "III"
    return AnovaTable(table, (f"Anova Table (Type {roman} tests)\n", _heading_response(fit)),
                      f"type {roman}")
