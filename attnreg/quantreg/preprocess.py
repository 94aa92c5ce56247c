"""Portnoy & Koenker's (1997) preprocessing for large n (R's ``quantreg::rq.fit.pfn``).

A subsample of ``m = √p n^{2/3}`` rows gives a first fit and a band around it; rows far below
the band are merged into one pseudo-row (their sums of x and y), rows far above into another,
and the reduced problem (about 0.8 m rows) is solved. The check loss is convex and positively
homogeneous, so the reduced objective is at most the full one and equals it wherever the
merged rows keep their signs: a solution of the reduced problem whose merged rows all have the
sign assumed is optimal for the full problem. Rows found on the wrong side are moved back and
the reduced problem solved again; when there are too many, m is doubled.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from attnreg._typing import FloatArray
from attnreg.quantreg.interior import interior_point

__all__ = ["PREPROCESS_MIN_ROWS", "globbed_fit"]

#: Below this many rows the interior point runs on all of them.
PREPROCESS_MIN_ROWS = 20_000
_FIXUPS = 10
_SEED = 0  # the subsample only changes the speed: the answer is checked on every row


def _band(X: FloatArray, Xs: FloatArray) -> FloatArray:
    """``‖R⁻ᵀ x_i‖`` with ``Xs'Xs = R'R``: the scale of each row's fitted value."""
    R = sla.cholesky(Xs.T @ Xs, lower=False, check_finite=False)
    V = sla.solve_triangular(R, X.T, trans="T", check_finite=False)  # (p, n)
    return np.sqrt(np.einsum("ij,ij->j", V, V))


def _reduced(X: FloatArray, y: FloatArray, lo: np.ndarray,
             hi: np.ndarray) -> tuple[FloatArray, FloatArray]:
    keep = ~(lo | hi)
    Xr, yr = [X[keep]], [y[keep]]
    for glob in (lo, hi):
        if glob.any():
            Xr.append(X[glob].sum(axis=0)[None, :])
            yr.append(np.array([y[glob].sum()]))
    return np.vstack(Xr), np.concatenate(yr)


def _try(X: FloatArray, y: FloatArray, tau: float, m: int,
         rng: np.random.Generator) -> tuple[FloatArray | None, int]:
    """One subsample size: the solution, or None when too many rows need fixing up."""
    n = X.shape[0]
    s = rng.choice(n, m, replace=False)
    b, it = interior_point(X[s], y[s], tau)
    band = np.maximum(np.sqrt(np.finfo(float).eps), _band(X, X[s]))
    r = y - X @ b
    M = 0.8 * m
    qlo, qhi = max(1 / n, tau - M / (2 * n)), min(tau + M / (2 * n), (n - 1) / n)
    klo, khi = np.quantile(r / band, [qlo, qhi])
    lo, hi = r < band * klo, r > band * khi
    for _ in range(_FIXUPS):
        b, more = interior_point(*_reduced(X, y, lo, hi), tau)
        it += more
        r = y - X @ b
        bad = (lo & (r > 0)) | (hi & (r < 0))
        if not bad.any():
            return b, it
        if bad.sum() > 0.1 * M:
            return None, it
        lo, hi = lo & ~bad, hi & ~bad
    return None, it


def globbed_fit(X: FloatArray, y: FloatArray, tau: float) -> tuple[FloatArray, int]:
    """The interior point solution, with preprocessing when n is large.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)
    tau : float

    Returns
    -------
    coef : ndarray, shape (p,)
    iterations : int
        Interior point iterations, all fits together.
    """
    n, p = X.shape
    m = round(np.sqrt(p) * n ** (2 / 3))
    rng = np.random.default_rng(_SEED)
    total = 0
    while n >= PREPROCESS_MIN_ROWS and m < n // 2:
        b, it = _try(X, y, tau, m, rng)
        total += it
        if b is not None:
            return b, total
        m *= 2
    b, it = interior_point(X, y, tau)
    return b, total + it
