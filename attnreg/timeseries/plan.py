"""The forecasting plan: which rows train the model of which forecast, and that fit.

A :class:`ForecastPlan` is what :func:`attnreg.forecast` decides before estimating anything;
:func:`fit_window` estimates the model of one forecast from its training rows only, through
the method registry. The engine (``_running``), the results and the leakage audit all start
from here.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray, IntArray
from attnreg.formula.design import Design
from attnreg.exceptions import RankDeficiencyWarning
from attnreg.methods import get_method

__all__ = ["ForecastPlan", "IteratedPlan", "benchmark_means", "checked_options", "fit_window",
           "prevailing_means", "subdesign", "tuning_of"]


@dataclass(frozen=True)
class ForecastPlan:
    """Which rows train the model for which forecast (all positions are design rows).

    Attributes
    ----------
    design : Design
        Built once on the full data; lags only look backwards, so each row's regressors
        are known at its own date.
    targets : ndarray of int, shape (n_forecasts,)
        Design rows that are forecast.
    train_stop : ndarray of int, shape (n_forecasts,)
        Training rows of forecast i are design rows ``train_start[i]:train_stop[i]``.
    train_start : ndarray of int, shape (n_forecasts,)
    refit : ndarray of bool, shape (n_forecasts,)
        Whether the model is re-estimated for forecast i (else the previous fit is reused).
    origin_labels : pandas.Index
        Data label of each forecast's origin.
    method, scheme : str
    horizon : int
        The forecast horizon h of this plan (one plan per horizon).
    window : int or None
    options : dict
        Method options.
    strategy : {"direct", "iterated"}
        Direct: the model of this plan forecasts h steps ahead in one go. Iterated: the plan's
        fits are one-step models, iterated h times (pure autoregressions).
    interval : {None, "empirical", "gaussian", "aci"}
        Forecast intervals requested (see :func:`attnreg.forecast`).
    level : float
        Their nominal coverage.
    min_errors : int
        Past out-of-sample errors needed before an empirical interval is given.
    aci_gamma : float
        ``interval="aci"``: the step size of the adaptive miss rate
        (:mod:`attnreg.timeseries.conformal`).
    target_pos, origin_pos : ndarray of int, shape (n_forecasts,), or None
        Data positions of each forecast's target and origin (``target - horizon``).
    response : ndarray, shape (n_data_rows,), or None
        The response at every data row, NaN where it is not observed: the prevailing mean
        at an origin is the mean of its values at and before the origin
        (:func:`prevailing_means`).
    """

    design: Design
    targets: IntArray
    train_start: IntArray
    train_stop: IntArray
    refit: np.ndarray
    origin_labels: pd.Index
    method: str
    scheme: str
    horizon: int
    window: int | None
    options: dict[str, Any]
    strategy: str = "direct"
    interval: str | None = None
    level: float = 0.9
    min_errors: int = 20
    aci_gamma: float = 0.005
    target_pos: IntArray | None = None
    origin_pos: IntArray | None = None
    response: FloatArray | None = field(default=None, repr=False)

    @property
    def n_forecasts(self) -> int:
        """Number of forecasts."""
        return int(self.targets.size)

    def rows(self, i: int) -> IntArray:
        """Training rows of forecast ``i``."""
        return np.arange(self.train_start[i], self.train_stop[i])


@dataclass(frozen=True)
class IteratedPlan:
    """The one-step plan (``base``) whose fits are iterated to every horizon.

    Attributes
    ----------
    base : ForecastPlan
        One-step forecasts from every origin that some horizon needs.
    lags : ndarray of int, shape (n_coef,)
        Lag of the response in each design column (0: the intercept).
    first : int
        Data position of the first target.
    positions : ndarray of int, shape (n_obs,)
        Data position of each design row.
    index : pandas.Index
        The data's index.
    """

    base: ForecastPlan
    lags: IntArray
    first: int
    positions: IntArray
    index: pd.Index


def subdesign(design: Design, rows: IntArray) -> Design:
    """The design restricted to ``rows`` (same columns, transforms and factor levels)."""
    return dataclasses.replace(
        design, y=design.y[rows], X=np.ascontiguousarray(design.X[rows]),
        row_labels=design.row_labels[rows],
        weights=None if design.weights is None else design.weights[rows],
        dropped_labels=design.dropped_labels[:0])


def checked_options(plan: ForecastPlan, tuning: float | None = None) -> dict[str, Any]:
    """The plan's method options, validated by its estimator; ``tuning`` fixes λ or k."""
    estimator = get_method(plan.method)
    options = dict(plan.options)
    if tuning is not None and estimator.tuning is not None:
        options[estimator.tuning] = tuning
    return estimator.check_options(options)


def tuning_of(plan: ForecastPlan) -> tuple[float | str | None, bool]:
    """The λ/k request and the standardize flag of a spectral plan, validated like attnreg()."""
    options = checked_options(plan)
    return options["tuning"], options["standardize"]


def fit_window(plan: ForecastPlan, i: int, tuning: float | None = None) -> Any:
    """The model of forecast ``i``, estimated from its training rows only.

    ``tuning`` fixes λ or k (to reproduce a forecast whose λ was chosen by the updater).
    """
    sub = subdesign(plan.design, plan.rows(i))
    options = checked_options(plan, tuning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        return get_method(plan.method).fit_design(sub, options)


def benchmark_means(y: FloatArray, start: IntArray, stop: IntArray) -> FloatArray:
    """Prevailing mean of ``y[start:stop]`` for every forecast, by cumulative sums.

    Examples
    --------
    >>> benchmark_means(np.array([1.0, 2.0, 3.0, 4.0]), np.array([0, 1]), np.array([2, 4]))
    array([1.5, 3. ])
    """
    c = np.r_[0.0, np.cumsum(y)]
    return (c[stop] - c[start]) / (stop - start)


def prevailing_means(plan: ForecastPlan) -> FloatArray:
    """The prevailing-mean benchmark of every forecast, shape (n_forecasts,).

    The mean of every response observed at or before the forecast's origin (Campbell &
    Thompson 2008, Goyal & Welch 2008): for an h-step forecast of the target at s, the mean
    of y over the data rows up to s − h. It does not depend on the model (its lags, which drop
    the first rows of its design, its window or its scheme), so the OOS R² of different runs
    over the same target dates share one benchmark. Plans made without the observed response
    fall back to the mean of the training rows (:func:`benchmark_means`).

    Examples
    --------
    >>> import attnreg as ar
    >>> frame = pd.DataFrame({"y": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]})
    >>> fc = ar.forecast("y ~ lag(y, 3)", frame, start=6, scheme="rolling", window=3)
    >>> prevailing_means(fc.plan)  # means of y[0..5] and y[0..6], not of the window's rows
    array([3.5, 4. ])
    """
    if plan.response is None or plan.origin_pos is None:
        return benchmark_means(plan.design.y, plan.train_start, plan.train_stop)
    seen = ~np.isnan(plan.response)
    total = np.r_[0.0, np.cumsum(np.where(seen, plan.response, 0.0))]
    count = np.r_[0, np.cumsum(seen)]
    stop = plan.origin_pos + 1  # rows at or before the origin
    return total[stop] / count[stop]
