"""Predictions of a chunked fixed-effects fit: x₀'β̂ plus the row's estimated fixed effects.

The effects are those of :meth:`ChunkedFixedEffectsResults.fixef` (fixest's normalisation of
the effects of pass A's table), so the predictions are the in-memory fit's
(:func:`attnreg.fe.predict.predict_fe` with ``interval="none"``): a level not in the fit gives
NaN and a warning naming it, or an error (``unseen="error"``); a missing fixed effect, NaN.
Their confidence and prediction intervals are the in-memory fit's too
(:mod:`attnreg.fe.chunked_intervals`: classical from the fit's tables, robust and cluster
ones from one more pass over the rows).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import patsy
from scipy import stats

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.fe.chunked_intervals import chunked_prediction_variance
from attnreg.fe.effects import normalise
from attnreg.fe.predict import UNSEEN, _codes, _sum_effects
from attnreg.inference.tstats import check_level

if TYPE_CHECKING:
    from attnreg.fe.chunked_results import ChunkedFixedEffectsResults

__all__ = ["predict_chunked_fe"]


def _regressors(fit: ChunkedFixedEffectsResults, frame: pd.DataFrame) -> FloatArray:
    """The new rows' regressors (NaN rows where a variable is missing), shape (m, n_coef)."""
    from attnreg.formula.builder import design_rows
    from attnreg.formula.checks import translate_patsy_error
    from attnreg.formula.frame import prepare_frame, string_labels, variable_uses
    from attnreg.formula.parse import check_names

    spec: Any = fit.spec  # an AbsorbedSpec
    frame = string_labels(frame, "newdata")
    factors = list(spec.x_info.factor_infos.keys())
    check_names(factors, frame, spec.eval_env, "newdata")
    uses = {name: outside for f in factors for name, outside in variable_uses(f.code).items()}
    prepared = prepare_frame(frame, uses, "newdata")
    try:
        mat, rows = design_rows(spec.x_info, prepared)
    except patsy.PatsyError as exc:
        raise translate_patsy_error(exc, "newdata") from None
    X = np.full((frame.shape[0], len(spec.x_info.column_names)), np.nan)
    X[rows] = mat
    return np.asarray(X[:, list(spec.slopes)])


def predict_chunked_fe(fit: ChunkedFixedEffectsResults, newdata: Any, *,
                       interval: str = "none", level: float = 0.95, unseen: str = "nan",
                       data: Any = None, progress: bool = False) -> Any:
    """Predictions for the rows of ``newdata`` (a DataFrame or a dict of columns), the fixed
    effects included, with intervals (module notes).

    Parameters
    ----------
    fit : ChunkedFixedEffectsResults
    newdata : DataFrame or dict
        Rows with the regressors and the fixed-effect columns.
    interval : {"none", "confidence", "prediction"}
        Intervals under the fit's covariance: classical (no pass over the rows), HC0–HC3 or
        cluster (HC0, HC1: one more pass over the rows); ``"prediction"`` adds σ².
    level : float
    unseen : {"nan", "error"}
        A level not in the fit: NaN with an InferenceWarning naming it, or DataError.
    data : optional
        The fit's data again, for a robust interval of a fit that does not keep its source.
    progress : bool

    Returns
    -------
    Series, shape (m,), or DataFrame, shape (m, 3)
        Indexed as ``newdata``; with an interval the columns ``fit``, ``lwr``, ``upr``.

    Raises
    ------
    OptionError
        ``interval`` or ``unseen`` not one of theirs; ``newdata`` not in memory; a
        covariance without prediction intervals (HAC, Driscoll–Kraay, CR2).
    DataError
        An unseen level with ``unseen="error"`` (named).
    """
    if interval not in ("none", "confidence", "prediction"):
        raise OptionError(f"interval must be 'none', 'confidence' or 'prediction', however: "
                          f"{interval=}")
    if unseen not in UNSEEN:
        raise OptionError(f"unseen must be 'nan' or 'error', however: {unseen=}")
    check_level(level)
    if isinstance(newdata, dict):
        newdata = pd.DataFrame(newdata)
    if not isinstance(newdata, pd.DataFrame):
        raise OptionError(f"predict() of a chunked fit with absorbed fixed effects takes a "
                          f"pandas DataFrame or a dict of columns, however: "
                          f"{type(newdata).__name__}")
    X = _regressors(fit, newdata)
    as_fit: Any = fit  # the helpers of the in-memory fit read its absorbed fixed effects
    codes = _codes(as_fit, newdata, unseen)
    b = np.where(np.isnan(fit.filtered.coef), 0.0, fit.filtered.coef)
    eff = fit.absorbed.effects
    alpha = normalise(fit.absorbed.fe, eff[:, 0] - eff[:, 1:] @ b)
    pred = X @ b + _sum_effects(as_fit, codes, alpha[:, None])[:, 0]
    if interval == "none":
        return pd.Series(pred, index=newdata.index, name="fit")
    Xt = X - _sum_effects(as_fit, codes, eff[:, 1:])
    var = chunked_prediction_variance(fit, Xt, codes, data=data, progress=progress)
    if interval == "prediction":
        var = var + fit.sigma ** 2
    half = stats.t.ppf(0.5 + level / 2.0, fit.df_resid) * np.sqrt(var)
    return pd.DataFrame({"fit": pred, "lwr": pred - half, "upr": pred + half},
                        index=newdata.index)
