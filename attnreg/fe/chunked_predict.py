"""Predictions of a chunked fixed-effects fit: x₀'β̂ plus the row's estimated fixed effects.

The effects are those of :meth:`ChunkedFixedEffectsResults.fixef` (fixest's normalisation of
the effects of pass A's table), so the predictions are the in-memory fit's
(:func:`attnreg.fe.predict.predict_fe` with ``interval="none"``): a level not in the fit gives
NaN and a warning naming it, or an error (``unseen="error"``); a missing fixed effect, NaN.
Intervals need the fit's leverages on the fixed effects, which a chunked fit does not keep.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import patsy

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.fe.effects import normalise
from attnreg.fe.predict import UNSEEN, _codes, _sum_effects

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
                       interval: str = "none", unseen: str = "nan") -> pd.Series:
    """Predictions for the rows of ``newdata`` (a DataFrame or a dict of columns), the fixed
    effects included (module notes).

    Returns
    -------
    Series, shape (m,)
        Indexed as ``newdata``.

    Raises
    ------
    OptionError
        ``interval`` other than ``"none"``; ``unseen`` not ``"nan"``/``"error"``; ``newdata``
        not in memory.
    DataError
        An unseen level with ``unseen="error"`` (named).
    """
    if interval != "none":
        raise OptionError(f"predict(interval={interval!r}) of a chunked fit with absorbed fixed "
                          "effects is not available (the intervals need each fitted row's "
                          "leverage): fit in memory for intervals")
    if unseen not in UNSEEN:
        raise OptionError(f"unseen must be 'nan' or 'error', however: {unseen=}")
    if isinstance(newdata, dict):
        newdata = pd.DataFrame(newdata)
    if not isinstance(newdata, pd.DataFrame):
        raise OptionError(f"predict() of a chunked fit with absorbed fixed effects takes a "
                          f"pandas DataFrame or a dict of columns, however: "
                          f"{type(newdata).__name__}")
    X = _regressors(fit, newdata)
    codes = _codes(fit, newdata, unseen)  # type: ignore[arg-type]
    b = np.where(np.isnan(fit.filtered.coef), 0.0, fit.filtered.coef)
    eff = fit.absorbed.effects
    alpha = normalise(fit.absorbed.fe, eff[:, 0] - eff[:, 1:] @ b)
    fe_part = _sum_effects(fit, codes, alpha[:, None])[:, 0]  # type: ignore[arg-type]
    return pd.Series(X @ b + fe_part, index=newdata.index, name="fit")
