"""The predictive distribution of quantile forecasts: interpolated quantiles, exponential tails.

A quantile forecast gives ``q_1, ..., q_K`` at levels ``τ_1 < ... < τ_K`` (e.g. the five τ of a
growth-at-risk regression). Its predictive distribution here is the one whose quantile function
is linear between the fitted quantiles and whose tails are exponential:

- between ``q_k`` and ``q_{k+1}``: ``F`` linear from ``τ_k`` to ``τ_{k+1}`` (a uniform density
  ``(τ_{k+1} − τ_k) / (q_{k+1} − q_k)``);
- below ``q_1``: ``F(y) = τ_1 exp((y − q_1) / b_L)``, above ``q_K``:
  ``F(y) = 1 − (1 − τ_K) exp(−(y − q_K) / b_R)``, with the scales ``b_L``, ``b_R`` that make the
  density continuous at ``q_1`` and ``q_K`` (``b_L = τ_1 (q_2 − q_1) / (τ_2 − τ_1)``).

It needs at least two τ. Crossing quantiles (a larger τ with a smaller forecast) are first
rearranged (sorted, Chernozhukov, Fernández-Val & Galichon 2010). The CRPS, the log score and
the PIT are those of this distribution (:func:`crps_quantile_density` in closed form), so
they compare with the CRPS of a Gaussian or ensemble forecast. The quantile score
``(2 / K) Σ_k ρ_τk(y − q_k)`` (Berrisch & Ziel 2023; the ``crps_quantile`` of the
``scoringrules`` package) is :func:`crps_quantiles`: it only approximates the CRPS and leaves
out the tails beyond the outer τ, so it is smaller than the CRPS of any distribution with
those quantiles and does not compare with other forecasts' CRPS.
"""

from __future__ import annotations

import numpy as np

from attnreg._typing import FloatArray

__all__ = ["central_interval", "crps_quantile_density", "crps_quantiles", "quantile_cdf",
           "quantile_logpdf", "quantile_ppf", "rearrange"]


def rearrange(q: FloatArray) -> FloatArray:
    """Quantile forecasts ``q`` (n, K) sorted along each row (monotone rearrangement).

    Examples
    --------
    >>> rearrange(np.array([[1.0, 0.5, 2.0]]))
    array([[0.5, 1. , 2. ]])
    """
    return np.sort(np.asarray(q, dtype=np.float64), axis=1)


def _tail_scales(taus: FloatArray, q: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``b_L`` and ``b_R`` (n,) of sorted quantiles ``q`` (n, K), K >= 2."""
    b_left = taus[0] * (q[:, 1] - q[:, 0]) / (taus[1] - taus[0])
    b_right = (1.0 - taus[-1]) * (q[:, -1] - q[:, -2]) / (taus[-1] - taus[-2])
    return b_left, b_right


def _segment(taus: FloatArray, q: FloatArray, y: FloatArray) -> tuple[np.ndarray, np.ndarray]:
    """Knots at or below each ``y``: ``k`` (n,) in 0..K, and the inner segment index."""
    k = np.sum(q <= y[:, None], axis=1)
    j = np.clip(k - 1, 0, taus.size - 2)  # segment [q_j, q_{j+1}] where 0 < k < K
    return k, j


def quantile_cdf(y: FloatArray, q: FloatArray, taus: FloatArray) -> FloatArray:
    """``F(y)`` of each row's predictive distribution, shape (n,).

    Parameters
    ----------
    y : ndarray, shape (n,)
    q : ndarray, shape (n, K)
        Sorted quantile forecasts (:func:`rearrange`), K >= 2.
    taus : ndarray, shape (K,)
        Their levels, increasing in (0, 1).

    Examples
    --------
    >>> quantile_cdf(np.array([0.0, 1.5]), np.array([[-1.0, 1.0, 2.0]] * 2),
    ...              np.array([0.1, 0.5, 0.9]))
    array([0.3, 0.7])
    """
    taus = np.asarray(taus, dtype=np.float64)
    k, j = _segment(taus, q, y)
    rows = np.arange(y.size)
    lo, hi = q[rows, j], q[rows, j + 1]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        inner = taus[j] + (taus[j + 1] - taus[j]) * (y - lo) / (hi - lo)
        bl, br = _tail_scales(taus, q)
        left = taus[0] * np.exp((y - q[:, 0]) / bl)
        right = 1.0 - (1.0 - taus[-1]) * np.exp(-(y - q[:, -1]) / br)
    return np.where(k == 0, left, np.where(k == taus.size, right, inner))


def quantile_logpdf(y: FloatArray, q: FloatArray, taus: FloatArray) -> FloatArray:
    """``log f(y)`` of each row's predictive distribution, shape (n,) (see :func:`quantile_cdf`).

    Examples
    --------
    >>> float(np.exp(quantile_logpdf(np.array([0.0]), np.array([[-1.0, 1.0, 2.0]]),
    ...                              np.array([0.1, 0.5, 0.9])))[0])  # 0.4 over a width of 2
    0.2
    """
    taus = np.asarray(taus, dtype=np.float64)
    k, j = _segment(taus, q, y)
    rows = np.arange(y.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = np.log(taus[j + 1] - taus[j]) - np.log(q[rows, j + 1] - q[rows, j])
        bl, br = _tail_scales(taus, q)
        left = np.log(taus[0]) + (y - q[:, 0]) / bl - np.log(bl)
        right = np.log1p(-taus[-1]) - (y - q[:, -1]) / br - np.log(br)
    return np.where(k == 0, left, np.where(k == taus.size, right, inner))


def quantile_ppf(u: float, q: FloatArray, taus: FloatArray) -> FloatArray:
    """The ``u`` quantile of each row's predictive distribution, shape (n,).

    Equal to the forecast ``q_k`` when ``u`` is one of the τ.

    Examples
    --------
    >>> quantile_ppf(0.7, np.array([[-1.0, 1.0, 2.0]]), np.array([0.1, 0.5, 0.9]))
    array([1.5])
    """
    taus = np.asarray(taus, dtype=np.float64)
    hit = np.flatnonzero(np.isclose(taus, u, rtol=0.0, atol=1e-12))
    if hit.size:
        return np.array(q[:, hit[0]], dtype=np.float64)
    bl, br = _tail_scales(taus, q)
    if u < taus[0]:
        return np.asarray(q[:, 0] + bl * np.log(u / taus[0]))
    if u > taus[-1]:
        return np.asarray(q[:, -1] - br * np.log((1.0 - u) / (1.0 - taus[-1])))
    j = int(np.searchsorted(taus, u)) - 1
    w = (u - taus[j]) / (taus[j + 1] - taus[j])
    return np.asarray(q[:, j] + w * (q[:, j + 1] - q[:, j]))


def crps_quantiles(y: FloatArray, q: FloatArray, taus: FloatArray) -> FloatArray:
    """Quantile-score CRPS ``(2 / K) Σ_k ρ_τk(y − q_k)``, shape (n,) (scoringrules' formula).

    Examples
    --------
    >>> crps_quantiles(np.array([0.0]), np.array([[-1.0, 1.0]]), np.array([0.25, 0.75]))
    array([0.5])
    """
    taus = np.asarray(taus, dtype=np.float64)[None, :]
    u = y[:, None] - q
    loss = np.where(u >= 0, taus * u, (taus - 1.0) * u)
    return np.asarray(2.0 / q.shape[1] * loss.sum(axis=1))


def _tail_integrals(mass: FloatArray, scale: FloatArray, dist: FloatArray
                    ) -> tuple[FloatArray, FloatArray]:
    """An exponential tail ``G(x) = mass · exp(−d / scale)`` at distance d ≥ 0 from its knot:
    ``∫_dist^∞ G² dd`` and ``∫_0^dist (1 − G)² dd`` (a zero scale is a point mass)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        e1, e2 = np.exp(-dist / scale), np.exp(-2.0 * dist / scale)
        outer = np.where(scale > 0, mass**2 * scale / 2.0 * e2, 0.0)
        inner = dist - np.where(scale > 0, 2.0 * mass * scale * (1.0 - e1)
                                - mass**2 * scale / 2.0 * (1.0 - e2), 0.0)
    return outer, inner


def crps_quantile_density(y: FloatArray, q: FloatArray, taus: FloatArray) -> FloatArray:
    """Exact CRPS ``∫ (F(x) − 1{x ≥ y})² dx`` of the distribution of :func:`quantile_cdf`.

    Parameters
    ----------
    y : ndarray, shape (n,)
    q : ndarray, shape (n, K)
        Sorted quantile forecasts (:func:`rearrange`), K >= 2.
    taus : ndarray, shape (K,)

    Returns
    -------
    ndarray, shape (n,)
        Sum of closed-form integrals over the two exponential tails and the K − 1 segments
        where F is linear, each split at y.

    Examples
    --------
    >>> round(float(crps_quantile_density(np.array([0.0]), np.array([[-1.0, 1.0]]),
    ...                                   np.array([0.25, 0.75]))[0]), 6)
    0.354167
    """
    taus = np.asarray(taus, dtype=np.float64)
    bl, br = _tail_scales(taus, q)
    below, above = _tail_integrals(taus[0], bl, np.maximum(q[:, 0] - y, 0.0))
    total = below + above  # left tail: F² beyond y, (1 − F)² between y and q_1
    upper_tail, inner = _tail_integrals(1.0 - taus[-1], br, np.maximum(y - q[:, -1], 0.0))
    total += upper_tail + inner  # right tail with G = 1 − F
    lo, hi = q[:, :-1], q[:, 1:]  # segments (n, K − 1), F from taus[j] to taus[j + 1]
    a, b = taus[:-1][None, :], taus[1:][None, :]
    m = np.clip(y[:, None], lo, hi)
    width = hi - lo
    with np.errstate(divide="ignore", invalid="ignore"):
        fm = np.where(width > 0, a + (b - a) * (m - lo) / width, a)
    left = (m - lo) * (a**2 + a * fm + fm**2) / 3.0
    ua, ub = 1.0 - fm, 1.0 - b
    right = (hi - m) * (ua**2 + ua * ub + ub**2) / 3.0
    return np.asarray(total + (left + right).sum(axis=1))


def central_interval(q: FloatArray, taus: FloatArray, level: float
                     ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Median and central ``level`` interval of each row's predictive distribution.

    Parameters
    ----------
    q : ndarray, shape (n, K)
        Quantile forecasts as fitted (rearranged here); with K = 1 the forecast is the
        median and the bounds are NaN.
    taus : ndarray, shape (K,)
    level : float

    Returns
    -------
    median, lower, upper : ndarray, shape (n,)
        The fitted forecasts themselves where 0.5 and ``(1 ∓ level) / 2`` are among the τ.

    Examples
    --------
    >>> central_interval(np.array([[-1.0, 0.5, 2.0]]), np.array([0.1, 0.5, 0.9]), 0.8)
    (array([0.5]), array([-1.]), array([2.]))
    """
    taus = np.asarray(taus, dtype=np.float64)
    ordered = rearrange(q)
    if taus.size == 1:
        nan = np.full(q.shape[0], np.nan)
        return ordered[:, 0], nan, nan.copy()
    return (quantile_ppf(0.5, ordered, taus), quantile_ppf((1.0 - level) / 2.0, ordered, taus),
            quantile_ppf((1.0 + level) / 2.0, ordered, taus))
