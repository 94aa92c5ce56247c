"""Coverage over time: the rolling hit rate of forecast intervals against their nominal level.

``fc.plot(kind="coverage", window=20)``: for every forecast with an interval, the share of
the last ``window`` such forecasts whose outcome lies inside its interval (bounds included,
as :func:`attnreg.timeseries.evaluation.interval_coverage`), dated by the last target; one
line per horizon for several horizons. The nominal ``level`` is drawn as a line, with the
band ``level ± 1.96 sqrt(level (1 − level) / window)`` that independent hits at the nominal
rate would stay in 95 % of the time at any one date (h-step hits overlap for h > 1, so
there the band is too narrow).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError

__all__ = ["draw_coverage", "rolling_coverage"]


def rolling_coverage(actual: object, lower: object, upper: object, window: int) -> FloatArray:
    """Share of hits among the last ``window`` forecasts that have an interval.

    Parameters
    ----------
    actual, lower, upper : array_like, shape (n,)
        Outcomes and interval bounds (NaN bounds: no interval, skipped).
    window : int
        Forecasts per hit rate, at least 2.

    Returns
    -------
    ndarray, shape (n,)
        NaN for forecasts without an interval and until ``window`` intervals exist.

    Examples
    --------
    >>> rolling_coverage([0.0, 2.0, 0.0, 0.0], [-1.0, -1.0, np.nan, -1.0],
    ...                  [1.0, 1.0, np.nan, 1.0], window=2).tolist()
    [nan, 0.5, nan, 0.5]
    """
    y, lo, up = (np.asarray(a, dtype=np.float64) for a in (actual, lower, upper))
    has = ~(np.isnan(lo) | np.isnan(up))
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or \
            not 2 <= window <= max(int(has.sum()), 2):
        raise OptionError(f"window must be an integer in 2..{int(has.sum())} (the forecasts "
                          f"with an interval), however: {window=}")
    hits = ((y[has] >= lo[has]) & (y[has] <= up[has])).astype(np.float64)
    c = np.r_[0.0, np.cumsum(hits)]
    rate = np.full(hits.size, np.nan)
    rate[window - 1:] = (c[window:] - c[:-window]) / window
    out = np.full(y.size, np.nan)
    out[has] = rate
    return out


def draw_coverage(fc: Any, ax: Any, window: int = 20) -> Any:
    """Draw the rolling coverage of one or several horizons' intervals on ``ax``."""
    parts = [fc.at_horizon(h) for h in fc.horizons] if hasattr(fc, "horizons") else [fc]
    level = float(parts[0].plan.level)
    for part in parts:
        if part.lower is None or part.upper is None:
            raise OptionError("kind='coverage' needs forecast intervals: call forecast(..., "
                              "interval='gaussian', 'empirical', 'aci' or 'quantile')")
        f = part.forecasts
        rate = rolling_coverage(f["actual"], part.lower, part.upper, window)
        ok = ~np.isnan(rate)
        x = f.index[ok]
        ax.plot(x.to_timestamp() if isinstance(x, pd.PeriodIndex) else x, rate[ok], lw=1.2,
                label=f"h = {part.plan.horizon}")
    band = 1.96 * np.sqrt(level * (1.0 - level) / window)
    ax.axhline(level, color="black", ls="--", lw=1, label=f"nominal {100 * level:g}%")
    ax.axhspan(level - band, level + band, color="grey", alpha=0.15, lw=0)
    ax.set_ylim(0.0, 1.02)
    ax.set_ylabel(f"coverage of the last {window} intervals")
    ax.legend(fontsize=8)
    ax.set_title(f"Coverage over time, {parts[0].plan.interval} intervals")
    return ax
