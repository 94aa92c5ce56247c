"""One real-time forecast: the model fitted on the vintage an origin used, its forecast there.

:func:`forecast_at_origin` is the step :func:`attnreg.timeseries.vintages.forecast_vintages`
repeats at every origin (and on the latest vintage, for the leakage audit).
"""

from __future__ import annotations

import warnings
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from attnreg.exceptions import DataError, RankDeficiencyWarning
from attnreg.formula.design import build_design
from attnreg.methods import get_method
from attnreg.timeseries import intervals as iv
from attnreg.timeseries.plan import subdesign
from attnreg.timeseries.quantile_density import central_interval

__all__ = ["OriginForecast", "forecast_at_origin"]


class OriginForecast(NamedTuple):
    """One origin's forecast, its training rows, (gaussian, quantile) interval bounds, the
    df of a gaussian h = 1 interval's t and the forecast of every τ (quantile methods)."""

    forecast: float
    n_train: int
    lower: float
    upper: float
    df: float = np.nan
    quantiles: tuple[float, ...] = ()
    taus: tuple[float, ...] = ()


def forecast_at_origin(formula: str, frame: pd.DataFrame, dates: pd.Index, origin: Any, target: Any,
         method: str, options: dict[str, Any], window: int | None, env: Any,
         namespace: dict[str, Any], interval: str | None = None, level: float = 0.9,
         horizon: int = 1) -> OriginForecast:
    """Forecast, training rows and interval of one origin, from its vintage's frame."""
    estimator = get_method(method)
    known = frame.loc[:origin]
    design = build_design(formula, known, eval_env=env, extra_names=namespace)
    start = 0 if window is None else max(design.n_obs - window, 0)
    if design.n_obs - start <= design.n_coef:
        raise DataError(f"origin {origin!r} has {design.n_obs - start} training rows in its "
                        f"vintage for {design.n_coef} coefficients: start later")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        fit = estimator.fit_design(subdesign(design, np.arange(start, design.n_obs)),
                                   estimator.check_options(options))
    ahead = dates[(dates > origin) & (dates <= target)]
    X, _ = design.rebuild(known.reindex(known.index.append(ahead)))
    if not np.isfinite(X[-1]).all():
        raise DataError(f"the regressors of target {target!r} are not in the vintage used at "
                        f"origin {origin!r}: lag every regressor at least the horizon (and one "
                        "more if a vintage lacks its own date)")
    n = design.n_obs - start
    if estimator.capabilities.quantiles:  # every τ: the median and the central interval
        q = X[-1] @ fit.coef.to_numpy()  # one forecast per τ, as fitted
        mid, lo, hi = central_interval(q[None, :], np.asarray(fit.taus), level)
        return OriginForecast(float(mid[0]), n, *((float(lo[0]), float(hi[0])) if interval == "quantile"
                                          else (np.nan, np.nan)), quantiles=tuple(map(float, q)),
                      taus=tuple(map(float, fit.taus)))
    pred = float(estimator.predict_design(fit, X[-1][None, :])[0])
    if interval != "gaussian":
        return OriginForecast(pred, n, np.nan, np.nan)
    half = (float(iv.gaussian_quantile(level, fit.df_resid)) * iv.linear_prediction_sd(fit, X[-1])
            if horizon == 1 else float(iv.gaussian_quantile(level)) * float(fit.sigma))
    return OriginForecast(pred, n, pred - half, pred + half,
                  float(fit.df_resid) if horizon == 1 else np.nan)
