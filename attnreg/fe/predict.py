"""Fixed effects of a fit, and predictions that add them.

A prediction of the dummy-variable regression for a row with regressors x₀ and levels d₀ is
x₀'β̂ + d₀'α̂. Its variance under the classical covariance splits in two, because the
residualised regressors are orthogonal to the dummies: σ² d₀'(D'WD)⁺d₀ (the fixed effects'
part, :func:`attnreg.fe.leverage.level_quadratic`) plus x̃₀'Var(β̂)x̃₀ with x̃₀ = x₀ − d₀'α_X
the row's regressors less their fixed-effect part (α_X the effects of the regressors'
demeaning). That is the dummy-variable fit's interval exactly.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.exceptions import DataError, InferenceWarning, OptionError
from attnreg.fe.absorb import codes_of, term_values
from attnreg.fe.leverage import level_quadratic
from attnreg.fe.robust import robust_prediction_variance
from attnreg.inference.tstats import check_level

if TYPE_CHECKING:
    from attnreg.fe.results import FixedEffectsResults

__all__ = ["UNSEEN", "fixed_effects_of", "predict_fe", "query_rows"]

#: what ``predict(unseen=)`` does with a level not in the fit: NaN and a warning, or an error
UNSEEN = ("nan", "error")


def fixed_effects_of(fit: FixedEffectsResults) -> dict[str, pd.Series]:
    """The normalised fixed effects of ``fit``, one Series per term indexed by its levels."""
    fe = fit.absorbed.fe
    alpha = fit.normalised_effects()
    o = fe.offsets
    return {name: pd.Series(alpha[o[k]:o[k + 1]], index=fe.levels[k], name=name)
            for k, name in enumerate(fe.names)}


def _frame(fit: FixedEffectsResults, newdata: Any) -> pd.DataFrame:
    if newdata is None:
        design = fit.absorbed.full_design
        if design.data is None or design.data_rows is None:
            raise DataError("this fit does not keep its data: pass newdata")
        return design.data.iloc[design.data_rows]
    if isinstance(newdata, pd.DataFrame):
        return newdata
    try:
        return pd.DataFrame(newdata)
    except (ValueError, TypeError) as exc:
        raise DataError(f"newdata must be a DataFrame or a dict of columns: {exc}") from None


def _codes(fit: FixedEffectsResults, frame: pd.DataFrame, unseen: str) -> list[IntArray]:
    """Level codes of the new rows in each fixed effect: −1 where missing or unseen."""
    fe, out = fit.absorbed.fe, []
    for k, term in enumerate(fit.absorbed.terms):
        values, missing = term_values(frame, term)
        code = codes_of(values, fe.levels[k])
        new = (code < 0) & ~missing
        if new.any():
            names = pd.unique(np.asarray(values[new]))
            shown = ", ".join(map(repr, names[:5].tolist())) + (" ..." if names.size > 5 else "")
            message = (f"fixed effect {term.text!r} has {names.size} level(s) not in the fit: "
                       f"{shown}")
            if unseen == "error":
                raise DataError(f"{message}; drop those rows or use unseen='nan'")
            warn_user(f"{message}; their predictions are NaN", InferenceWarning)
        out.append(np.where(missing, -1, code))
    return out


def predict_fe(fit: FixedEffectsResults, newdata: Any = None, *, interval: str = "none",
               level: float = 0.95, unseen: str = "nan") -> Any:
    """Predictions of a fixed-effects fit for new rows (or its own rows), effects included.

    Parameters
    ----------
    fit : FixedEffectsResults
    newdata : DataFrame or dict, optional
        Rows with the regressors and the fixed-effect columns; the fit's rows by default.
    interval : {"none", "confidence", "prediction"}
        Intervals under the fit's covariance: classical, HC0–HC3 or cluster (HC0/HC1), the
        dummy-variable fit's exactly (:mod:`attnreg.fe.robust`); ``"prediction"`` adds σ².
    level : float
    unseen : {"nan", "error"}
        A level not in the fit: NaN with an InferenceWarning naming it, or DataError.

    Returns
    -------
    Series (``interval="none"``) or DataFrame with columns ``fit``, ``lwr``, ``upr``.
    """
    if interval not in ("none", "confidence", "prediction"):
        raise OptionError(f"interval must be 'none', 'confidence' or 'prediction', however: "
                          f"{interval=}")
    if unseen not in UNSEEN:
        raise OptionError(f"unseen must be 'nan' or 'error', however: {unseen=}")
    check_level(level)
    X, Xt, codes, labels = query_rows(fit, newdata, unseen)
    b = np.where(np.isnan(fit.filtered.coef), 0.0, fit.filtered.coef)
    alpha = fit.normalised_effects()
    fe_part = _sum_effects(fit, codes, alpha[:, None])[:, 0]
    pred = X @ b + fe_part
    if interval == "none":
        return pd.Series(pred, index=labels, name="fit")
    sigma2 = fit.sigma ** 2
    if fit.vcov_spec.estimator.classical:
        V = np.nan_to_num(fit.vcov.to_numpy())
        q = level_quadratic(fit.absorbed.fe, fit.design.weights, codes,
                            solver=fit._level_solver)
        var = np.einsum("ij,jk,ik->i", Xt, V, Xt) + sigma2 * q
    else:
        ok = np.isfinite(Xt).all(axis=1)
        var = np.full(Xt.shape[0], np.nan)
        var[ok] = robust_prediction_variance(fit, Xt[ok], [c[ok] for c in codes])
    if interval == "prediction":
        var = var + sigma2
    half = stats.t.ppf(0.5 + level / 2.0, fit.df_resid) * np.sqrt(var)
    return pd.DataFrame({"fit": pred, "lwr": pred - half, "upr": pred + half}, index=labels)


def query_rows(fit: FixedEffectsResults, newdata: Any = None, unseen: str = "nan"
               ) -> tuple[FloatArray, FloatArray, list[IntArray], pd.Index]:
    """The regressors of new rows, the same less their fixed-effect part (x̃₀ = x₀ − d₀'α_X,
    α_X the effects of the regressors' demeaning), their level codes (−1: unseen or
    missing, warned or refused by ``unseen``) and their labels.

    Returns
    -------
    X, Xt : ndarray, shape (m, n_coef)
    codes : list of ndarray of int, each shape (m,)
    labels : pandas.Index
    """
    frame = _frame(fit, newdata)
    design = fit.absorbed.full_design
    X_full, labels = design.rebuild(frame)
    slopes = [j for j, n in enumerate(design.column_names) if n != "(Intercept)"]
    X = X_full[:, slopes]
    codes = _codes(fit, frame, unseen)
    Xt = X - _sum_effects(fit, codes, fit.absorbed.effects[:, 1:])
    return X, Xt, codes, labels


def _sum_effects(fit: FixedEffectsResults, codes: list[IntArray],
                 effects: FloatArray) -> FloatArray:
    """Σ_k effects[level of the row in k], shape (m, n_cols); NaN where a code is −1."""
    fe = fit.absorbed.fe
    out = np.zeros((codes[0].size, effects.shape[1]))
    bad = np.zeros(codes[0].size, dtype=bool)
    for k, code in enumerate(codes):
        bad |= code < 0
        out += effects[np.where(code < 0, 0, code) + fe.offsets[k]]
    out[bad] = np.nan
    return out
