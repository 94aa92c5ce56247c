"""The views of a forecast run: which past rows each forecast attended to, and how much.

Computed by the forecasting engine from the plan: the model of a forecast is the one the run
kept (softmax: warm-started, so it cannot be refitted alone) or the window's deterministic
refit (:func:`attnreg.timeseries.plan.fit_window`, with the λ or k the run used).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.attention import AttentionWeights
from attnreg.exceptions import OptionError
from attnreg.methods import get_method
from attnreg.timeseries.plan import fit_window

if TYPE_CHECKING:
    from attnreg.timeseries.forecast_results import ForecastResults

__all__ = ["attention_shares", "forecast_attention", "model_at"]


def _tuning_at(res: ForecastResults, i: int) -> float | None:
    """The λ or k forecast ``i`` used, so that a refit reproduces it exactly."""
    if res.tuning_path is None:
        return None
    value = float(res.tuning_path[i])
    return int(value) if get_method(res.plan.method).tuning == "k" else value


def model_at(res: ForecastResults, i: int) -> Any:
    """The model that forecast ``i`` (a refit position) was made with."""
    if res.models is not None:
        return res.models[i]
    return fit_window(res.plan, i, _tuning_at(res, i))


def _last_refit(res: ForecastResults, i: int) -> int:
    return int(np.flatnonzero(res.plan.refit[: i + 1])[-1])


def _attention_of_row(fit: Any, row: FloatArray, labels: pd.Index,
                      chunk_size: int | None) -> AttentionWeights:
    family = get_method(fit.method).family
    if family == "network":
        raise OptionError(f"attention weights are defined for the spectral and softmax methods, "
                          f"not for method {fit.method!r}")
    if family == "softmax":
        row = row[:, 1:] if fit.design.intercept else row
    return fit.attention_of(row, labels, chunk_size)  # type: ignore[no-any-return]


def forecast_attention(res: ForecastResults, i: int,
                       chunk_size: int | None = None) -> AttentionWeights:
    """Weights of forecast ``i`` over the rows its model was estimated from."""
    fit = model_at(res, _last_refit(res, i))
    row = res.plan.design.X[res.plan.targets[i]][None, :]
    return _attention_of_row(fit, row, res.forecasts.index[i:i + 1], chunk_size)


def attention_shares(res: ForecastResults, recent: tuple[int, ...]) -> pd.DataFrame:
    """Σ|ω| on the ``k`` most recent training rows over Σ|ω|, for every forecast and k."""
    out = np.empty((res.plan.n_forecasts, len(recent)))
    fit = None
    for i in range(res.plan.n_forecasts):
        if res.plan.refit[i] or fit is None:
            fit = model_at(res, i)
        row = res.plan.design.X[res.plan.targets[i]][None, :]
        w = np.abs(_attention_of_row(fit, row, pd.Index([0]), None).weights.to_numpy()[0])
        out[i] = [w[-k:].sum() / w.sum() for k in recent]
    return pd.DataFrame(out, columns=[f"last_{k}" for k in recent], index=res.forecasts.index)
