"""Forecast intervals without look-ahead: empirical quantiles of past errors, or Gaussian.

``"empirical"``: the interval of the forecast made at origin t is the forecast plus the
``(1 - level) / 2`` and ``(1 + level) / 2`` quantiles of the model's own out-of-sample errors
at the same horizon whose targets are observed by t (an h-step error for target s is known
only at s), once there are at least ``min_errors`` of them; NaN before.

``"gaussian"``: the forecast ± a quantile times a scale from the fit at the origin (see
:func:`linear_prediction_sd` and :func:`attnreg.forecast`).
"""

from __future__ import annotations

import bisect
from typing import Any

import numpy as np
from scipy import stats

from attnreg._typing import FloatArray, IntArray

__all__ = ["ar_psi_weights", "empirical_bounds", "gaussian_quantile", "linear_prediction_sd"]


def _sorted_quantile(values: list[float], p: float) -> float:
    """numpy's default (linear, R type 7) quantile of an already sorted list."""
    pos = (len(values) - 1) * p
    lo = int(np.floor(pos))
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (pos - lo) * (values[hi] - values[lo])


def empirical_bounds(pred: FloatArray, errors: FloatArray, target_pos: IntArray,
                     origin_pos: IntArray, level: float,
                     min_errors: int) -> tuple[FloatArray, FloatArray, IntArray]:
    """Lower and upper bounds from the past errors observed by each origin.

    Parameters
    ----------
    pred : ndarray, shape (n,)
        Forecasts, in target order.
    errors : ndarray, shape (n,)
        Their errors ``actual - forecast`` (only those observed by an origin are used).
    target_pos, origin_pos : ndarray of int, shape (n,)
        Time positions of each forecast's target and origin; targets increase.
    level : float
        Nominal coverage.
    min_errors : int
        Errors needed before an interval is given.

    Returns
    -------
    lower, upper : ndarray, shape (n,)
        NaN where fewer than ``min_errors`` errors are observed by the origin.
    n_errors : ndarray of int, shape (n,)
        Errors each interval is based on.

    Examples
    --------
    Errors of targets 0..4; the forecast for target 6 is made at origin 4 (h = 2), when the
    errors of targets 0..4 are known; the one for target 5 (origin 3) sees four errors:

    >>> lo, up, n = empirical_bounds(np.zeros(7), np.array([1., -1., 2., -2., 0., 9., 9.]),
    ...                              np.arange(7), np.arange(7) - 2, 0.5, 4)
    >>> n.tolist(), lo[5:].tolist(), up[5:].tolist()
    ([0, 0, 1, 2, 3, 4, 5], [-1.25, -1.0], [1.25, 1.0])
    """
    n = pred.size
    known = np.searchsorted(target_pos, origin_pos, side="right")  # errors observed by origin
    lower, upper = np.full(n, np.nan), np.full(n, np.nan)
    lo_p, hi_p = (1.0 - level) / 2.0, (1.0 + level) / 2.0
    pool: list[float] = []
    added = 0
    for i in range(n):  # one insertion and two order statistics per origin
        while added < known[i]:
            bisect.insort(pool, float(errors[added]))
            added += 1
        if added >= min_errors:
            lower[i] = pred[i] + _sorted_quantile(pool, lo_p)
            upper[i] = pred[i] + _sorted_quantile(pool, hi_p)
    return lower, upper, known.astype(np.int64)


def gaussian_quantile(level: float, df: float | FloatArray | None = None) -> Any:
    """``t_df`` (or standard normal when ``df`` is None) quantile of ``(1 + level) / 2``.

    Examples
    --------
    >>> round(float(gaussian_quantile(0.95)), 4), round(float(gaussian_quantile(0.9, 10)), 4)
    (1.96, 1.8125)
    """
    p = 0.5 + level / 2.0
    return stats.norm.ppf(p) if df is None else stats.t.ppf(p, df)


def linear_prediction_sd(fit: Any, row: FloatArray) -> float:
    """``sqrt(σ² + x' V x)``: the standard deviation of a new observation at ``row``.

    ``V`` is the fit's coefficient covariance computed from its decomposition (OLS:
    ``σ² (X'X)⁻¹``, never inverted explicitly; ridge and PCR: their covariance conditional on
    λ or k), as in ``fit.predict(interval="prediction")``.
    """
    if not fit._df_ok:
        return float("nan")
    Vz, E = fit._vcov_z
    e = fit.spectrum.y_exponent
    xs = np.ldexp(np.asarray(row, dtype=np.float64), E - e)
    var = float(xs @ np.where(np.isnan(Vz), 0.0, Vz) @ xs) + float(fit._sigma2_s)
    return float(np.ldexp(np.sqrt(var), e))


def ar_psi_weights(phi: FloatArray, h: int) -> FloatArray:
    """MA weights ``ψ_0..ψ_{h-1}`` of AR coefficients ``phi`` (n, p), vectorised over rows.

    ``ψ_0 = 1``, ``ψ_m = Σ_{k=1}^{min(m, p)} φ_k ψ_{m-k}``; the h-step error variance of the
    iterated forecast is ``σ² Σ_{m<h} ψ_m²``.

    Examples
    --------
    >>> ar_psi_weights(np.array([[0.5]]), 3)
    array([[1.  , 0.5 , 0.25]])
    """
    n, p = phi.shape
    psi = np.zeros((n, h))
    psi[:, 0] = 1.0
    for m in range(1, h):
        k = np.arange(1, min(m, p) + 1)
        psi[:, m] = np.einsum("ik,ik->i", phi[:, k - 1], psi[:, m - k])
    return psi
