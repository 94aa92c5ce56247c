"""Fan charts: nested central forecast intervals (50 %, 70 %, 90 % by default) over target dates.

:func:`fan_bands` computes the bounds of each level with no look-ahead, from what the run's
own intervals come from, so that at the run's ``level`` they are the run's ``lower`` and
``upper``:

- quantile forecasts (``method="quantreg"``): the ``(1 ∓ L) / 2`` quantiles of the predictive
  distribution of :mod:`attnreg.timeseries.quantile_density` (the forecasts themselves when
  those τ were fitted, after rearrangement);
- ``interval="gaussian"``: ``forecast ± z_L s`` with the normal ``s`` of
  :func:`attnreg.timeseries.scores.predictive` (the sd whose central ``level`` interval is
  the run's interval); at h = 1 ``forecast ± t_{ν,L} s``, the Student t of the fit's
  prediction interval (ν its residual df);
- ``interval="empirical"``: the quantiles of the past out-of-sample errors observed by each
  origin (:func:`attnreg.timeseries.intervals.empirical_bounds`) at level L;
- ``interval="aci"``: the adaptive conformal intervals at level L, each level with its own
  adaptive miss rate (:func:`attnreg.timeseries.conformal.aci_bounds`, same step size).

Real-time forecasts (:class:`~attnreg.timeseries.vintages.RealTimeForecasts`) have the same
bands from what their intervals come from: the quantile forecasts of each origin's vintage,
the Gaussian scale of each interval, and the quantiles of the first-release errors known at
each origin (empirical intervals; adaptive conformal intervals with the run's step size, each
level with its own adaptive miss rate).

:func:`draw_fan` draws them (``fc.plot(kind="fan", levels=...)``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError

__all__ = ["FAN_LEVELS", "draw_fan", "fan_bands"]

#: The default nested levels of a fan chart.
FAN_LEVELS = (0.5, 0.7, 0.9)


def _levels(levels: Any) -> list[float]:
    values = [levels] if isinstance(levels, (int, float)) else list(levels)
    if not values or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                             and 0.0 < v < 1.0 for v in values):
        raise OptionError(f"levels must be coverage levels in (0, 1), e.g. (0.5, 0.7, 0.9), "
                          f"however: {levels=!r}")
    return sorted({float(v) for v in values})


def _quantile_bounds(q: FloatArray, taus: Any, level: float) -> tuple[FloatArray, FloatArray]:
    from attnreg.timeseries.quantile_density import quantile_ppf, rearrange

    t = np.asarray(taus, dtype=np.float64)
    if t.size < 2:
        raise OptionError(f"a fan chart of quantile forecasts needs at least two tau, however: "
                          f"tau={t.tolist()}; fit several (tau=[0.05, 0.5, 0.95])")
    q = rearrange(q)
    return quantile_ppf((1.0 - level) / 2.0, q, t), quantile_ppf((1.0 + level) / 2.0, q, t)


def _real_time_bounds(rt: Any, level: float) -> tuple[FloatArray, FloatArray]:
    """The bounds of real-time forecasts (all of them, released or not)."""
    f = rt.forecasts
    mean = f["forecast"].to_numpy(dtype=np.float64)
    if rt.quantile_path is not None and rt.interval in (None, "quantile"):
        return _quantile_bounds(rt.quantile_path, rt.taus, level)
    if rt.interval not in ("gaussian", "empirical", "aci"):
        raise OptionError("a fan chart of real-time forecasts needs quantile forecasts or "
                          "interval='gaussian', 'empirical' or 'aci', however: "
                          f"interval={rt.interval!r}")
    lo, up = f["lower"].to_numpy(dtype=np.float64), f["upper"].to_numpy(dtype=np.float64)
    if rt.interval == "gaussian":  # the t of the fit's prediction interval at h = 1
        df = rt.df_path
        scale = (up - lo) / (2.0 * (stats.norm.ppf(0.5 + rt.level / 2.0) if df is None
                                    else stats.t.ppf(0.5 + rt.level / 2.0, df)))
        q = stats.norm.ppf(0.5 + level / 2.0) if df is None else stats.t.ppf(0.5 + level / 2.0, df)
        return mean - q * scale, mean + q * scale
    from attnreg.timeseries.intervals import empirical_bounds

    # the errors known at each origin, as the run's intervals (vintages.real_time_bounds);
    # the run's min_errors is where its intervals start
    first = f["first_release"].to_numpy(dtype=np.float64)
    if rt.interval == "aci":
        from attnreg.timeseries.conformal import aci_bounds

        lower, upper, _ = aci_bounds(mean, first, np.arange(mean.size), rt.n_errors - 1, level,
                                     rt.min_errors, rt.aci_gamma)
        return lower, upper
    errors = first - mean
    lower, upper, _ = empirical_bounds(mean, errors, np.arange(mean.size), rt.n_errors - 1,
                                       level, 1)
    none = np.isnan(lo)
    lower[none], upper[none] = np.nan, np.nan
    return lower, upper


def _bounds(fc: Any, level: float) -> tuple[FloatArray, FloatArray]:
    """Lower and upper bounds of the central ``level`` interval of every forecast."""
    from attnreg.timeseries.scores import predictive

    if not hasattr(fc, "plan"):  # real-time forecasts
        return _real_time_bounds(fc, level)
    p = fc.plan
    pred = predictive(fc)
    if pred.kind == "quantile":
        from attnreg.timeseries.quantile_density import quantile_ppf

        assert pred.quantiles is not None and pred.taus is not None
        return (quantile_ppf((1.0 - level) / 2.0, pred.quantiles, pred.taus),
                quantile_ppf((1.0 + level) / 2.0, pred.quantiles, pred.taus))
    if pred.kind in ("gaussian", "t"):
        assert pred.scale is not None
        q = (stats.norm.ppf(0.5 + level / 2.0) if pred.df is None
             else stats.t.ppf(0.5 + level / 2.0, pred.df))
        return pred.mean - q * pred.scale, pred.mean + q * pred.scale
    assert p.target_pos is not None and p.origin_pos is not None
    if p.interval == "aci":
        from attnreg.timeseries.conformal import aci_bounds

        lower, upper, _ = aci_bounds(pred.mean, pred.actual, p.target_pos, p.origin_pos, level,
                                     p.min_errors, p.aci_gamma)
        return lower, upper
    from attnreg.timeseries.intervals import empirical_bounds

    lower, upper, _ = empirical_bounds(pred.mean, pred.actual - pred.mean, p.target_pos,
                                       p.origin_pos, level, p.min_errors)
    return lower, upper


def fan_bands(fc: Any, levels: Sequence[float] = FAN_LEVELS) -> pd.DataFrame:
    """Bounds of nested central intervals of one horizon's forecasts.

    Parameters
    ----------
    fc : ForecastResults or RealTimeForecasts
        Quantile forecasts, or forecasts made with ``interval=``.
    levels : sequence of float
        Coverage levels in (0, 1).

    Returns
    -------
    DataFrame, shape (n_forecasts, 2 * n_levels)
        Indexed by target date; columns (level, "lower" | "upper"), levels increasing; NaN
        where a forecast has no interval yet (empirical and adaptive intervals).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> fc = ar.forecast("infl ~ lag(infl, 1)", macro, start="2000Q1", interval="gaussian")
    >>> bands = fan_bands(fc)
    >>> bool(np.allclose(bands[(0.9, "upper")], fc.upper))
    True
    """
    values = _levels(levels)
    columns = pd.MultiIndex.from_product([values, ["lower", "upper"]], names=["level", "bound"])
    data = np.column_stack([b for v in values for b in _bounds(fc, v)])
    return pd.DataFrame(data, index=fc.forecasts.index, columns=columns)


def draw_fan(fc: Any, ax: Any, levels: Sequence[float] = FAN_LEVELS) -> Any:
    """Draw the fan: one band per level (widest palest), the forecast and the actuals.

    Only the forecasts whose every band exists are drawn (empirical intervals start after
    ``min_errors`` past errors). Returns ``ax``; its ``collections`` are the bands, widest
    first.
    """
    bands = fan_bands(fc, levels)
    ok = np.isfinite(bands.to_numpy()).all(axis=1)
    if not ok.any():
        raise OptionError("no forecast has an interval yet to draw a fan: start earlier or "
                          "lower min_errors=")
    f = fc.forecasts[ok]
    x = f.index.to_timestamp() if isinstance(f.index, pd.PeriodIndex) else f.index
    values = sorted({lv for lv, _ in bands.columns}, reverse=True)
    for k, level in enumerate(values):
        ax.fill_between(x, bands[(level, "lower")].to_numpy()[ok],
                        bands[(level, "upper")].to_numpy()[ok], color="tab:blue",
                        alpha=0.15 + 0.5 * k / max(len(values), 1), lw=0,
                        label=f"{100 * level:g}%")
    ax.plot(x, f["forecast"].to_numpy(), color="tab:blue", lw=1.2, label="forecast")
    ax.plot(x, f["actual"].to_numpy(), color="black", lw=1, label="actual")
    ax.legend(fontsize=8)
    run = getattr(fc, "plan", fc)  # real-time forecasts carry method and horizon themselves
    where = "" if hasattr(fc, "plan") else "real-time "
    ax.set_title(f"{run.method} {where}fan chart, horizon {run.horizon}")
    return ax
