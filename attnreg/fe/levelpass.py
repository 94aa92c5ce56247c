"""Passes over the rows for the demeaning: level sums D'W V and the subtraction V − D x.

Both work on the rows in blocks, never on an N × G matrix nor on a fresh N × n_cols
temporary: the subtraction gathers each block's level values into a reused buffer and
subtracts them in place, and the sums of absolute values (the scale of the orthogonality
test) take the absolute values of one block at a time. Unweighted fits skip every
multiplication by the weights.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from attnreg._typing import FloatArray

__all__ = ["BLOCK_BYTES", "level_sums", "subtract_levels"]

#: rows of a block: about this many bytes of the columns (a few blocks fit in cache)
BLOCK_BYTES = 1 << 20


def _block_rows(n_cols: int, at_least: int = 1) -> int:
    return max(at_least, BLOCK_BYTES // (8 * max(n_cols, 1)))


def _rows_of(D: sp.csr_matrix, lo: int, hi: int) -> sp.csr_matrix:
    """Rows lo:hi of the dummies D (K entries per row), sharing D's arrays."""
    k = int(D.indptr[1] - D.indptr[0]) if D.shape[0] else 0
    indptr = np.arange(0, k * (hi - lo) + 1, k, dtype=D.indptr.dtype)
    return sp.csr_matrix((D.data[k * lo:k * hi], D.indices[k * lo:k * hi], indptr),
                         shape=(hi - lo, D.shape[1]), copy=False)


def level_sums(D: sp.csr_matrix, V: FloatArray, w: FloatArray | None = None, *,
               absolute: bool = False) -> FloatArray:
    """D'W V, or D'W abs(V) with ``absolute``: the weighted sum of each column in each level.

    Parameters
    ----------
    D : scipy.sparse.csr_matrix, shape (n_obs, n_levels_total)
        The dummies (:attr:`attnreg.fe.demean.FixedEffects.dummies`), K ones per row.
    V : ndarray, shape (n_obs, n_cols)
    w : ndarray, shape (n_obs,), optional
        Prior weights (None: all one).
    absolute : bool
        Sum the absolute values.

    Returns
    -------
    ndarray, shape (n_levels_total, n_cols)

    Examples
    --------
    >>> D = sp.csr_matrix(np.array([[1.0, 0], [1, 0], [0, 1]]))
    >>> level_sums(D, np.array([[1.0], [-2], [4]]), absolute=True).ravel().tolist()
    [3.0, 4.0]
    """
    if not absolute:
        return np.asarray(D.T @ (V if w is None else w[:, None] * V))
    n, m = V.shape
    out = np.zeros((D.shape[1], m))
    step = _block_rows(m, at_least=4 * D.shape[1])  # each product's output ≤ its block
    buf = np.empty((min(step, n), m))
    for lo in range(0, n, step):
        hi = min(lo + step, n)
        part = np.abs(V[lo:hi], out=buf[:hi - lo])
        if w is not None:
            part *= w[lo:hi, None]
        out += _rows_of(D, lo, hi).T @ part
    return out


def subtract_levels(V: FloatArray, codes: tuple[np.ndarray, ...], offsets: np.ndarray,
                    x: FloatArray) -> None:
    """V −= D x in place: each row less the values of its levels.

    Parameters
    ----------
    V : ndarray, shape (n_obs, n_cols)
        Modified in place.
    codes : tuple of ndarray of int, each shape (n_obs,)
        Level codes of each fixed effect.
    offsets : ndarray of int, shape (K + 1,)
        Position of each fixed effect's first level in ``x``.
    x : ndarray, shape (n_levels_total, n_cols)

    Examples
    --------
    >>> V = np.array([[1.0], [2.0], [5.0]])
    >>> subtract_levels(V, (np.array([0, 0, 1]),), np.array([0, 2]), np.array([[1.5], [5.0]]))
    >>> V.ravel().tolist()
    [-0.5, 0.5, 0.0]
    """
    n, m = V.shape
    tables = [x[offsets[k]:offsets[k + 1]] for k in range(len(codes))]
    step = _block_rows(m)
    buf = np.empty((min(step, n), m))
    for lo in range(0, n, step):
        hi = min(lo + step, n)
        block, gathered = V[lo:hi], buf[:hi - lo]
        for code, table in zip(codes, tables, strict=True):
            np.take(table, code[lo:hi], axis=0, out=gathered, mode="clip")  # codes valid
            block -= gathered
