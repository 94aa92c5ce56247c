"""Quantile forecasts (growth-at-risk): every τ re-estimated at every origin, no look-ahead.

For a method that predicts several quantiles per fit (``Capabilities.quantiles``:
``method="quantreg"``), :func:`attnreg.forecast` fits the model of each origin on the rows
observed by it, as for every method, and keeps the forecast of every τ
(``ForecastResults.quantile_path``, shape (n_forecasts, n_tau), as fitted: crossings are
counted, not hidden). The point forecast is the median of the predictive distribution of
:mod:`attnreg.timeseries.quantile_density` (the τ = 0.5 forecast when 0.5 is fitted), and
``interval="quantile"`` takes the ``(1 − level) / 2`` and ``(1 + level) / 2`` forecasts as the
interval (both must be among the τ; after rearrangement).

:func:`attnreg.timeseries.quantile_scores.quantile_evaluation` scores each τ: the mean
pinball loss, the hit rate (share of outcomes below the forecast quantile, τ when
calibrated) and Kupiec's test of it: the "coverage" of the 5 % and 95 % quantiles of Adrian,
Boyarchenko & Giannone (2019).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from attnreg._progress import Progress
from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.methods import Estimator, get_method
from attnreg.timeseries.forecast_results import ForecastResults
from attnreg.timeseries.plan import ForecastPlan, fit_window
from attnreg.timeseries.quantile_density import quantile_ppf, rearrange

__all__ = ["check_quantile_plan", "interval_taus", "run_quantile_forecasts"]

_TAU_MATCH = 1e-9  # a τ given as 0.05 matches the level's (1 - 0.9) / 2 up to rounding


def interval_taus(taus: tuple[float, ...], level: float) -> tuple[int, int]:
    """Positions among ``taus`` of ``(1 − level) / 2`` and ``(1 + level) / 2``, or OptionError.

    Examples
    --------
    >>> interval_taus((0.05, 0.5, 0.95), 0.9)
    (0, 2)
    """
    t = np.asarray(taus, dtype=np.float64)
    want = ((1.0 - level) / 2.0, (1.0 + level) / 2.0)
    found = [np.flatnonzero(np.abs(t - w) < _TAU_MATCH) for w in want]
    if any(f.size == 0 for f in found):
        raise OptionError(f"interval='quantile' at level={level:g} takes the forecasts of tau "
                          f"{want[0]:g} and {want[1]:g}, however the fitted tau are "
                          f"{list(taus)}: add both to tau= or choose level= as 1 - 2 tau of "
                          "a fitted pair")
    return int(found[0][0]), int(found[1][0])


def check_quantile_plan(estimator: Estimator, options: dict[str, Any], interval: str | None,
                        level: float) -> None:
    """``interval="quantile"`` needs a quantile method and the τ pair of ``level``."""
    if interval != "quantile":
        return
    if not estimator.capabilities.quantiles:
        raise OptionError(f"interval='quantile' takes two forecast quantiles of a quantile "
                          f"method (method='quantreg', tau=[...]), not method "
                          f"{estimator.name!r}: use interval='empirical' or 'gaussian'")
    interval_taus(estimator.check_options(options)["tau"], level)


def _point_and_bounds(plan: ForecastPlan, taus: tuple[float, ...], quantiles: FloatArray
                      ) -> tuple[FloatArray, FloatArray | None, FloatArray | None]:
    """The predictive median and, with ``interval="quantile"``, the interval's bounds."""
    ordered = rearrange(quantiles)
    t = np.asarray(taus, dtype=np.float64)
    median = ordered[:, 0] if t.size == 1 else quantile_ppf(0.5, ordered, t)
    if plan.interval != "quantile":
        return median, None, None
    lo, hi = interval_taus(taus, plan.level)
    return median, ordered[:, lo].copy(), ordered[:, hi].copy()


def run_quantile_forecasts(plan: ForecastPlan, bar: Progress,
                           auto_seconds: float | None = None) -> ForecastResults:
    """Fit every τ at every origin (from the origin's training rows) and forecast them all.

    Parameters
    ----------
    plan : ForecastPlan
        A plan of a method with ``Capabilities.quantiles``.
    bar : Progress
    auto_seconds : float, optional
        Turn ``bar`` on after the first fit when the fits are expected to take longer.

    Returns
    -------
    ForecastResults
        With ``quantile_path`` (n_forecasts, n_tau) and ``taus``.
    """
    d, estimator = plan.design, get_method(plan.method)
    fit = None
    rows = []
    for i in range(plan.n_forecasts):
        if plan.refit[i] or fit is None:
            if fit is not None:  # warm start: the previous origin's solution tried first
                plan.options.update(estimator.warm_start(fit))
            started = time.perf_counter()
            fit = fit_window(plan, i)
            if auto_seconds is not None and i == 0:
                spent = (time.perf_counter() - started) * int(np.count_nonzero(plan.refit))
                bar.enabled = spent > auto_seconds
        rows.append(fit.coef.to_numpy())  # (n_coef, n_tau) of the model used by forecast i
        bar.update(i + 1)
    assert fit is not None
    for name in estimator.warm_start(fit):
        plan.options.pop(name, None)
    coef = np.stack(rows)  # (n_forecasts, n_coef, n_tau)
    quantiles = np.einsum("ic,ick->ik", d.X[plan.targets], coef)
    taus = tuple(fit.taus)
    median, lower, upper = _point_and_bounds(plan, taus, quantiles)
    return ForecastResults(plan=plan, predictions=median, coef_path=None, tuning_path=None,
                           engine="refit", lower=lower, upper=upper,
                           quantile_path=quantiles, taus=taus)
