"""What the scores and calibration tests of one horizon's forecasts start from.

:class:`ScoreInputs` holds the predictive distributions, the interval bounds and the level of
one horizon's forecasts. :func:`forecast_inputs` builds it for ordinary forecasts
(:class:`~attnreg.timeseries.forecast_results.ForecastResults`), :func:`real_time_inputs` for
real-time ones (:class:`~attnreg.timeseries.vintages.RealTimeForecasts`): the same
distributions (the Student t of the fit's prediction interval at h = 1, the normal at h > 1,
the ensemble of the past errors known by the origin, the quantile density), scored against
the release each forecast is evaluated on (``evaluate_on``), over the forecasts whose release
is out. :func:`attnreg.timeseries.scores.forecast_scores` and
:func:`attnreg.timeseries.calibration.calibration` read either through ``res.score_inputs()``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.timeseries import quantile_density as qd
from attnreg.timeseries.scores import Predictive, predictive

if TYPE_CHECKING:
    from attnreg.timeseries.vintages import RealTimeForecasts

__all__ = ["ScoreInputs", "forecast_inputs", "real_time_inputs"]


@dataclass(frozen=True)
class ScoreInputs:
    """One horizon's predictive distributions and intervals, as the scores need them.

    Attributes
    ----------
    predictive : Predictive
        The predictive distribution of each scored forecast, shape (n,).
    lower, upper : ndarray, shape (n,)
        The interval bounds, NaN where a forecast has none.
    level : float
        Nominal coverage of the intervals.
    interval : str
        The interval type (``"quantile"`` for quantile forecasts without one).
    index : Index, length n
        The target dates of the scored forecasts.
    """

    predictive: Predictive
    lower: FloatArray
    upper: FloatArray
    level: float
    interval: str
    index: pd.Index


def forecast_inputs(res: Any) -> ScoreInputs:
    """The score inputs of one horizon's ordinary forecasts (every forecast is scored)."""
    pred = predictive(res)
    nan = np.full(pred.actual.size, np.nan)
    return ScoreInputs(pred, nan if res.lower is None else res.lower,
                       nan if res.upper is None else res.upper, float(res.plan.level),
                       str(res.plan.interval or "quantile"), res.forecasts.index)


def real_time_inputs(rt: RealTimeForecasts) -> ScoreInputs:
    """The score inputs of real-time forecasts: the forecasts whose ``evaluate_on`` release is
    out, scored against it.

    Gaussian intervals: the Student t with the df of the fit at the origin (h = 1) or the
    normal (h > 1) whose central ``level`` interval is the interval; empirical and adaptive
    intervals: the forecast plus each first-release error known at the origin (those the
    intervals are made of, :func:`~attnreg.timeseries.vintages.real_time_bounds`); quantile
    forecasts: the quantile density of their τ.

    Examples
    --------
    Vintages that are never revised give the scores of the final data's forecasts:

    >>> import attnreg as ar
    >>> rng = np.random.default_rng(0)
    >>> final = pd.DataFrame({"y": rng.standard_normal(60)})
    >>> vintages = pd.concat([final.iloc[: v + 1].assign(vintage=v) for v in range(20, 60)])
    >>> rt = ar.forecast("y ~ lag(y, 1)", vintages, vintage="vintage", start=40,
    ...                  interval="gaussian")
    >>> fc = ar.forecast("y ~ lag(y, 1)", final, start=40, interval="gaussian")
    >>> bool(np.allclose(rt.evaluate(), fc.evaluate()))
    True
    >>> real_time_inputs(rt).predictive.kind  # h = 1: the t of the prediction interval
    't'
    """
    f = rt.forecasts
    keep = f["actual"].notna().to_numpy()
    y, mean = f["actual"].to_numpy()[keep], f["forecast"].to_numpy()[keep]
    has = "lower" in f.columns
    lo = f["lower"].to_numpy()[keep] if has else np.full(y.size, np.nan)
    up = f["upper"].to_numpy()[keep] if has else np.full(y.size, np.nan)
    if rt.quantile_path is not None and rt.interval in (None, "quantile"):
        pred = _quantile_predictive(rt, keep, y, mean)
    elif rt.interval is None:
        raise OptionError("density scores and calibration need forecast intervals: call "
                          "forecast(..., vintage=..., interval='gaussian', 'empirical', 'aci' "
                          "or 'quantile')")
    elif rt.interval == "gaussian":
        pred = _gaussian_predictive(rt, keep, y, mean, lo, up)
    else:
        errors = (f["first_release"] - f["forecast"]).to_numpy()
        assert rt.n_errors is not None  # kept for empirical and adaptive intervals
        members = np.where(np.isnan(lo), 0, rt.n_errors[keep])
        pred = Predictive("ensemble", y, mean, None, errors, members)
    return ScoreInputs(pred, lo, up, float(rt.level), str(rt.interval or "quantile"),
                       f.index[keep])


def _gaussian_predictive(rt: RealTimeForecasts, keep: np.ndarray, y: FloatArray,
                         mean: FloatArray, lo: FloatArray, up: FloatArray) -> Predictive:
    if rt.df_path is not None:  # h = 1: the fit's t prediction interval
        df = rt.df_path[keep]
        scale = (up - lo) / (2.0 * stats.t.ppf(0.5 + rt.level / 2.0, df))
        return Predictive("t", y, mean, scale, None, None, df=df)
    z = stats.norm.ppf(0.5 + rt.level / 2.0)
    return Predictive("gaussian", y, mean, (up - lo) / (2.0 * z), None, None)


def _quantile_predictive(rt: RealTimeForecasts, keep: np.ndarray, y: FloatArray,
                         mean: FloatArray) -> Predictive:
    assert rt.quantile_path is not None and rt.taus is not None
    if len(rt.taus) < 2:
        raise OptionError(f"density scores of quantile forecasts need at least two tau, "
                          f"however: tau={list(rt.taus)}; fit several (tau=[0.05, 0.5, 0.95])")
    return Predictive("quantile", y, mean, None, None, None,
                      quantiles=qd.rearrange(rt.quantile_path[keep]),
                      taus=np.asarray(rt.taus, dtype=np.float64))
