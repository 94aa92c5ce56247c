"""Dot products in twice the working precision (error-free transformations, vectorised).

Dekker's exact product and Knuth's exact sum turn a float64 product or sum into its rounded
value plus the rounding error, both float64. Accumulating the errors alongside gives dot
products as accurate as if computed in double-double and then rounded (Ogita, Rump and
Oishi's Dot2): relative error about eps + cond · eps², where plain float64 has cond · eps.
Used where cancellation decides what a result can be: the linear predictor and the score of
a GLM on an ill-conditioned design (:mod:`attnreg.glm.refine`).

The loops run over the columns and over blocks of rows, never over single rows.

Examples
--------
>>> import numpy as np
>>> from attnreg.compensated import column_dots, row_dots
>>> X = np.array([[1e16, 1.0, -1e16]])
>>> float((X @ np.ones(3))[0]), float(row_dots(X, np.ones(3))[0])
(0.0, 1.0)
>>> float(column_dots(np.array([[1e16], [1.0], [-1e16]]), np.ones(3))[0])
1.0
"""

from __future__ import annotations

import numpy as np

from attnreg._typing import FloatArray

__all__ = ["column_dots", "row_dots", "two_product", "two_sum"]

_SPLITTER = 134217729.0  # 2**27 + 1: Veltkamp's split of a float64 into two 26-bit halves
_BLOCK_BYTES = 2 ** 21


def _split(a: FloatArray) -> tuple[FloatArray, FloatArray]:
    c = _SPLITTER * a
    hi = c - (c - a)
    return hi, a - hi


def two_product(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(p, e) with p = fl(a·b) and p + e = a·b exactly (Dekker; |a·b| below 1e300)."""
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def two_sum(a: FloatArray, b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(s, e) with s = fl(a + b) and s + e = a + b exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def row_dots(X: FloatArray, b: FloatArray, start: FloatArray | None = None) -> FloatArray:
    """``start + X @ b`` as if in double-double, then rounded.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    b : ndarray, shape (p,)
    start : ndarray, shape (n,), optional
        Added exactly (an offset).

    Returns
    -------
    ndarray, shape (n,)
    """
    n, p = X.shape
    out = np.empty(n)
    rows = max(1, _BLOCK_BYTES // (8 * max(p, 1)))
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        s = np.zeros(hi - lo) if start is None else np.array(start[lo:hi], dtype=float)
        c = np.zeros(hi - lo)
        for j in range(p):  # a loop over columns
            prod, err = two_product(X[lo:hi, j], np.full(1, b[j]))
            s, q = two_sum(s, prod)
            c += q + err
        out[lo:hi] = s + c
    return out


def _tree_sum(s: FloatArray, c: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Sum the rows of (s, c), shape (m, p), pairwise with exact sums: (s, c) of shape (p,)."""
    while s.shape[0] > 1:
        if s.shape[0] % 2:  # an odd row count: a row of zeros makes it even
            s = np.vstack([s, np.zeros((1, s.shape[1]))])
            c = np.vstack([c, np.zeros((1, c.shape[1]))])
        half = s.shape[0] // 2
        new, q = two_sum(s[:half], s[half:])
        c = c[:half] + c[half:] + q
        s = new
    return s[0], c[0]


def column_dots(X: FloatArray, r: FloatArray) -> FloatArray:
    """``X.T @ r`` as if in double-double, then rounded.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    r : ndarray, shape (n,)

    Returns
    -------
    ndarray, shape (p,)
    """
    n, p = X.shape
    total, comp = np.zeros(p), np.zeros(p)
    rows = max(1, _BLOCK_BYTES // (8 * max(p, 1)))
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        prod, err = two_product(X[lo:hi], r[lo:hi, None])
        s, c = _tree_sum(prod, err)
        total, q = two_sum(total, s)
        comp += q + c
    return total + comp
