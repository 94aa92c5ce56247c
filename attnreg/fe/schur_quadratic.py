"""d'A⁺d (a row's hat value of the fixed effects' dummies) from the Schur solve of
:class:`attnreg.fe.solve.LevelSolver`, with only the entries of S⁺ that it needs.

With the largest fixed effect eliminated, d'A⁺d = 1/W_a + r'S⁺r for a row with big level a and
rest levels e (r = e − R_a', R = W_big⁻¹B): 1/W_a + e'S⁺e − 2 e'S⁺R_a' + R_a S⁺R_a'. Those need
S⁺ between rest levels sharing a big level or a row only, one solve per rest level involved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from attnreg._typing import FloatArray, IntArray

if TYPE_CHECKING:  # solve imports this module at run time
    from attnreg.fe.solve import _Schur

__all__ = ["inverse_on", "schur_quadratic"]


def inverse_on(schur: _Schur, pattern: sp.csc_matrix, step: int) -> sp.csc_matrix:
    """The entries of the grounded S⁺ on ``pattern`` (n_small × n_small, sorted indices): one
    solve per column with an entry, ``step`` columns at a time."""
    out = pattern.copy().astype(np.float64)
    cols = np.flatnonzero(np.diff(out.indptr))
    for lo in range(0, cols.size, step):
        block = cols[lo:lo + step]
        unit = np.zeros((schur.n_small, block.size))
        unit[block, np.arange(block.size)] = 1.0
        X = schur.solve_small(unit)  # (n_small, block): columns of S⁺
        assert X is not None  # not bounded: LevelSolver.quadratic solves those otherwise
        counts = np.diff(out.indptr)[block]
        ends = np.cumsum(counts)  # the stored entries of these columns, in order
        at = np.arange(ends[-1]) + np.repeat(out.indptr[block] - (ends - counts), counts)
        out.data[at] = X[out.indices[at], np.repeat(np.arange(block.size), counts)]
    return out


def schur_quadratic(schur: _Schur, a: IntArray, E: sp.csr_matrix, step: int) -> FloatArray:
    """d'A⁺d for rows with big level ``a`` and rest levels ``E`` (module docstring).

    Parameters
    ----------
    schur : attnreg.fe.solve._Schur
        The Schur solve (not bounded: its S is factored or solved by conjugate gradients).
    a : ndarray of int, shape (m,)
        Each row's level of the eliminated fixed effect.
    E : scipy.sparse.csr_matrix, shape (m, n_small)
        Each row's rest levels (ones).
    step : int
        Columns of S⁺ solved at a time.

    Returns
    -------
    ndarray, shape (m,)
    """
    ua, ia = np.unique(a, return_inverse=True)
    ia = ia.reshape(-1)
    B = schur.cross[ua]  # (n_a, n_small)
    Q = sp.csr_matrix((np.ones(a.size), (ia, np.arange(a.size))),
                      shape=(ua.size, a.size)) @ E  # (n_a, n_small)
    pattern = sp.csc_matrix(B.T @ B + B.T @ Q + E.T @ E)  # all positive: no cancellation
    pattern.sort_indices()
    Z = inverse_on(schur, pattern, step)
    R = schur.share[ua]
    RZ = sp.csr_matrix(R @ Z)  # (n_a, n_small): (S⁺R_a')_c where needed
    own = np.asarray(R.multiply(RZ).sum(axis=1)).ravel()
    cross = np.asarray(E.multiply(RZ[ia]).sum(axis=1)).ravel()
    quad = np.asarray(E.multiply(E @ Z).sum(axis=1)).ravel()
    return np.asarray(1.0 / schur.w_big[a] + quad - 2.0 * cross + own[ia])
