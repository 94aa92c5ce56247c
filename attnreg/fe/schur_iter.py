"""Conjugate gradients on the Schur complement of two fixed effects, without forming it, and
on the whole of D'WD (:func:`level_pcg`, when a Schur complement is singular).

With the larger fixed effect eliminated, the normal equations of the other one are
S x = b, S = W_s − B'W_b⁻¹B (B = D_b'WD_s). On fixest's designs at 1e7 rows S has 10,000 levels
and is dense: forming it (B'W_b⁻¹B, a sparse product of about n_b · per_b² terms) and its
Cholesky factor (m³/3 flops) take 20–25 s on two cores, while S v costs two sparse products
with B (nnz(B) terms per column) and well-connected levels converge in a dozen iterations.
:func:`schur_pcg` runs Jacobi-preconditioned conjugate gradients on the grounded S, every
column at once, to the rounding floor of S x, and gives up (None) past the iteration count
whose cost would exceed that of the factor (:func:`iteration_budget`): a poorly connected
design then falls back to the factor, having spent at most about as much again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import scipy.sparse as sp

from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.exceptions import ConvergenceWarning

__all__ = ["ITERATE_MAX_RHS", "iteration_budget", "level_pcg", "schur_pcg"]

#: right-hand sides solved iteratively at most (more, e.g. the columns of S⁺ for hat values:
#: the factor pays)
ITERATE_MAX_RHS = 64
#: seconds per flop of a dense factor (LAPACK) and per nonzero and column of a sparse product,
#: measured on two shared cores (Cholesky of 10,000 levels 11.6 s; B'W⁻¹B 9 s for 2e8 terms;
#: S v 0.07 s at nnz(B) 2e6 and 11 columns): only their ratio matters
DENSE_FLOP_S = 3.5e-11
SPARSE_TERM_S = 3.5e-9
_EPS = np.finfo(np.float64).eps


def iteration_budget(n_free: int, n_big: int, per_big: float, nnz: int, n_cols: int) -> int:
    """Iterations costing about as much as forming and factoring S densely (at least 10).

    Examples
    --------
    >>> iteration_budget(10_000, 500_000, 20.0, 10_000_000, 11)
    33
    """
    factor = DENSE_FLOP_S * n_free ** 3 / 3 + 2 * SPARSE_TERM_S * n_big * per_big ** 2
    step = SPARSE_TERM_S * max(nnz, 1) * n_cols
    return max(10, int(factor / step))


def schur_pcg(cross: sp.csr_matrix, w_big: FloatArray, w_small: FloatArray, free: IntArray,
              rhs: FloatArray, max_iter: int, *, rest: sp.csr_matrix | None = None,
              sizes: Sequence[int] | None = None) -> FloatArray | None:
    """A solution of S x = rhs with the levels outside ``free`` 0, or None if not reached.

    Two fixed effects: S = W_s − B'W_b⁻¹B. Three or more (``rest``): S = D_r'WD_r − B'W_b⁻¹B
    with D_r'WD_r (the other fixed effects' level weights and pair weights) not diagonal.

    Parameters
    ----------
    cross : scipy.sparse.csr_matrix, shape (n_big, n_small)
        B, the summed weights of each pair of levels.
    w_big, w_small : ndarray, shapes (n_big,) and (n_small,)
        The level weights of the two fixed effects.
    free : ndarray of int
        The levels solved for (the others, grounded, are 0); S on them is positive definite.
    rhs : ndarray, shape (n_small, m)
    max_iter : int
        Iterations before giving up.
    rest : scipy.sparse.csr_matrix, shape (n_small, n_small), optional
        D_r'WD_r when the small levels are those of several fixed effects (its diagonal is
        ``w_small``); None: W_s, diagonal.
    sizes : sequence of int, optional
        With ``rest``: each of those fixed effects' number of levels (in order). The Jacobi
        preconditioner then gains a coarse correction on the constants of each (the shift
        between two fixed effects, null before grounding, is S's slowest direction after it:
        fixest's simple-3 design at 1e7 rows: one pass of the demeaning instead of two).

    Returns
    -------
    ndarray, shape (n_small, m), or None
        Every column's residual at the rounding floor of S x ((64 + sqrt(L)) eps (|S||x| +
        |rhs|) on every level, L the most big levels of a small level), or None when some
        column has not reached it within ``max_iter``.
    """
    crossT = sp.csr_matrix(cross.T)
    mask = np.zeros(w_small.size)
    mask[free] = 1.0
    inv_big = 1.0 / w_big
    own = sp.diags(w_small, format="csr") if rest is None else sp.csr_matrix(rest)
    abs_own = abs(own)
    # |D_r'WD_r| has row sums (k − 1) w_i (k − 1 fixed effects in the rest): with B'W⁻¹B's
    # w_i, the bound of S's |S||x| below is k w_i max|x|
    k = 1.0 + float(np.max(np.asarray(abs_own.sum(axis=1)).ravel()
                           / np.where(w_small > 0, w_small, 1.0), initial=1.0))

    def S(v: FloatArray) -> FloatArray:  # the grounded S times v (v zero off free)
        return mask[:, None] * (own @ v - crossT @ (inv_big[:, None] * (cross @ v)))

    diag = w_small - np.asarray(crossT.multiply(crossT) @ inv_big).ravel()
    jacobi = np.where(mask > 0, 1.0 / np.where(diag > 0, diag, 1.0), 0.0)[:, None]
    precond = _two_level(S, mask, jacobi, sizes if rest is not None else None)
    b = mask[:, None] * rhs
    x = np.zeros_like(b)
    r = b.copy()
    z = precond(r)
    p = z.copy()
    rz = np.einsum("ij,ij->j", r, z)
    w_max = float(w_small.max(initial=0.0))
    # a sum of L terms rounds by about sqrt(L) eps: the longest row of B' (a fixed effect of
    # 20 levels at 1e7 rows meets 500,000 big levels) widens the floor of 64 eps, else the
    # iterations, at the floor, would go on in rounding noise (and diverge)
    tol = (64 + np.sqrt(float(np.diff(crossT.indptr).max(initial=0)))) * _EPS
    for _ in range(max_iter):
        Sp = S(p)
        pSp = np.einsum("ij,ij->j", p, Sp)
        alpha = np.where(pSp > 0, rz / np.where(pSp > 0, pSp, 1.0), 0.0)
        x += alpha * p
        r -= alpha * Sp
        # (B'W⁻¹B|x|)_i ≤ w_i max|x| (B'W⁻¹B's row sums are W_s): a bound of the floor
        bound = tol * (k * w_max * np.abs(x).max(axis=0) + np.abs(b).max(axis=0))
        if np.all(np.abs(r).max(axis=0) <= bound):  # the true residual and floor, then
            r = b - S(x)
            floor = tol * (abs_own @ np.abs(x) + np.abs(b)
                                 + crossT @ (inv_big[:, None] * (cross @ np.abs(x))))
            if np.all(np.abs(r).max(axis=0) <= floor.max(axis=0)):
                return x
        z = precond(r)
        rz_new = np.einsum("ij,ij->j", r, z)
        p = z + np.where(rz > 0, rz_new / np.where(rz > 0, rz, 1.0), 0.0) * p
        rz = rz_new
    return None


def _two_level(S: Callable[[FloatArray], FloatArray], mask: FloatArray, jacobi: FloatArray,
               sizes: Sequence[int] | None) -> Callable[[FloatArray], FloatArray]:
    """z = J r (Jacobi), plus P (P'SP)⁺ P'r with P the free levels' indicator of each fixed
    effect of ``sizes`` (additive two-level: symmetric positive semi-definite)."""
    if sizes is None or len(sizes) < 2:
        return lambda r: jacobi * r
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    P = np.zeros((mask.size, len(sizes)))
    for j in range(len(sizes)):
        P[starts[j]:starts[j + 1], j] = mask[starts[j]:starts[j + 1]]
    P = P[:, P.sum(axis=0) > 0]
    E = P.T @ S(P)  # (c, c), c ≤ number of fixed effects

    def apply(r: FloatArray) -> FloatArray:
        coarse = np.linalg.lstsq(E, P.T @ r, rcond=None)[0]
        return jacobi * r + P @ coarse

    return apply


def level_pcg(A: sp.csr_matrix, precondition: Callable[[FloatArray], FloatArray],
              rhs: FloatArray, max_iter: int) -> FloatArray:
    """Preconditioned conjugate gradients on A x = rhs (A = D'WD), every column at once, until
    each level's residual is at the rounding floor of A x (or stagnates near it); a
    ConvergenceWarning after ``max_iter`` iterations short of it."""
    absA = abs(A)
    x = np.zeros_like(rhs)
    r = rhs.copy()
    z = precondition(r)
    p = z.copy()
    rz = np.einsum("ij,ij->j", r, z)
    active = np.abs(r).max(axis=0) > 0
    best = np.abs(r).max(axis=0)
    since = np.zeros(rhs.shape[1], dtype=np.int64)
    it = 0
    while active.any() and it < max_iter:
        Ap = A @ p
        pAp = np.einsum("ij,ij->j", p, Ap)
        alpha = np.where(active & (pAp > 0), rz / np.where(pAp > 0, pAp, 1.0), 0.0)
        x += alpha * p
        r = rhs - A @ x  # the true residual, for the stopping test
        err = np.abs(r).max(axis=0)
        floor = 64 * _EPS * (np.asarray(absA @ np.abs(x)) + np.abs(rhs)).max(axis=0)
        since = np.where(err < 0.5 * best, 0, since + 1)
        best = np.minimum(best, err)
        it += 1
        active &= (err > floor) & (since < 50)
        z = precondition(r)
        rz_new = np.einsum("ij,ij->j", r, z)
        beta = np.where(active, rz_new / np.where(rz > 0, rz, 1.0), 0.0)
        p = z + beta * p
        rz = rz_new
    if active.any():
        warn_user(f"the solve with the fixed effects' normal equations stopped after "
                  f"{it} iterations short of the rounding floor; raise max_iter",
                  ConvergenceWarning)
    return x
