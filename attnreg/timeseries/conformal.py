"""Adaptive conformal forecast intervals (Gibbs & Candès 2021) without look-ahead.

``interval="aci"``: the empirical intervals of :mod:`attnreg.timeseries.intervals` (quantiles
of the model's own past out-of-sample errors at the same horizon), whose miss rate ``α_t``
is steered online so that the long-run coverage is the nominal ``level`` even when the
error distribution shifts:

``α_t = α + γ Σ_{j observed by t} (α − err_j)``,  ``α = 1 − level``,

where ``err_j`` is 1 when the outcome of forecast j fell outside its interval. The sum runs
over the forecasts whose outcome is observed at origin t (an h-step forecast of target s is
scored at s, h periods after its origin), so the level used at an origin never depends on
later data. The interval is ``forecast + [q(α_t / 2), q(1 − α_t / 2)]`` of the past errors;
``α_t`` is clipped to [0, 1] for the quantiles (Gibbs and Candès take the whole line when
``α_t < 0``; here it is the range of the past errors, and a point when ``α_t > 1``).
"""

from __future__ import annotations

import bisect

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import OptionError
from attnreg.timeseries.intervals import _sorted_quantile

__all__ = ["aci_bounds", "check_aci_gamma"]


def check_aci_gamma(aci_gamma: object) -> float:
    """``aci_gamma`` as a float in (0, 1), or OptionError.

    Examples
    --------
    >>> check_aci_gamma(0.01)
    0.01
    """
    if isinstance(aci_gamma, bool) or not isinstance(aci_gamma, (int, float, np.floating)) \
            or not 0.0 < float(aci_gamma) < 1.0:
        raise OptionError(f"aci_gamma (the step of the adaptive level) must be a number in "
                          f"(0, 1), e.g. 0.005, however: {aci_gamma=!r}")
    return float(aci_gamma)


def aci_bounds(pred: FloatArray, actual: FloatArray, target_pos: IntArray,
               origin_pos: IntArray, level: float, min_errors: int,
               gamma: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Adaptive conformal bounds of forecasts in target order.

    Parameters
    ----------
    pred, actual : ndarray, shape (n,)
        Forecasts and outcomes, in target order (an outcome is used only once observed).
    target_pos, origin_pos : ndarray of int, shape (n,)
        Time positions of each forecast's target and origin; targets increase.
    level : float
        Nominal coverage.
    min_errors : int
        Past errors needed before an interval is given (NaN bounds before).
    gamma : float
        Step size γ of the update of ``α_t``.

    Returns
    -------
    lower, upper : ndarray, shape (n,)
    alpha : ndarray, shape (n,)
        The miss rate ``α_t`` used by each interval (NaN where there is none).

    Examples
    --------
    Five one-step forecasts (origin = target − 1); the first interval (α = 0.5) covers its
    outcome, so the next one is narrower: ``α_t`` rises by ``γ α``:

    >>> lo, up, a = aci_bounds(np.zeros(5), np.array([0., 1., -1., 0., 0.]), np.arange(5),
    ...                        np.arange(5) - 1, 0.5, 3, 0.1)
    >>> a.round(3).tolist()
    [nan, nan, nan, 0.5, 0.55]
    """
    n = pred.size
    errors = actual - pred
    known = np.searchsorted(target_pos, origin_pos, side="right")  # outcomes observed
    lower, upper, alpha = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    miss = 1.0 - level
    drift = np.zeros(n)  # α - err_j of forecast j (0 without an interval)
    pool: list[float] = []
    added, total = 0, 0.0
    for i in range(n):  # sequential: α_t depends on the coverage of earlier intervals
        while added < known[i]:
            bisect.insort(pool, float(errors[added]))
            total += drift[added]
            added += 1
        if added < min_errors:
            continue
        alpha[i] = miss + gamma * total
        a = min(max(alpha[i], 0.0), 1.0)
        lower[i] = pred[i] + _sorted_quantile(pool, a / 2.0)
        upper[i] = pred[i] + _sorted_quantile(pool, 1.0 - a / 2.0)
        drift[i] = miss - float(not lower[i] <= actual[i] <= upper[i])
    return lower, upper, alpha
