"""Least squares on fixed-effect dummies by preconditioned conjugate gradients (CGLS).

The general demeaning of :func:`attnreg.fe.demean.demean` for fixed effects that the exact
Schur solve does not cover: the iteration updates the residual itself and tests the levels'
weighted residual sums computed from it at every step.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from attnreg._typing import FloatArray

__all__ = ["cgls"]


def cgls(D: sp.csr_matrix, w: FloatArray, diag: FloatArray, V: FloatArray, scale: FloatArray,
          floor: float, max_iter: int) -> tuple[FloatArray, FloatArray, FloatArray, int]:
    """Least squares of each column of V on D by conjugate gradients on the normal equations
    (CGLS), with the columns of D scaled by the level weights (Jacobi preconditioning).

    The iteration updates the residual r itself (each update is D times a vector, so r − V
    stays in the span of D), and D'W r is computed from r at every step: the stopping test is
    on the true orthogonality of the returned residual, not on a recursively updated
    estimate. A column stops when its orthogonality reaches ``floor``, or when it has not
    improved for a stretch of iterations (rounding has taken over).
    """
    root = np.sqrt(diag)[:, None]
    r = V
    alpha_sum = np.zeros((D.shape[1], V.shape[1]))  # α with V − r = D α
    s = np.asarray(D.T @ (w[:, None] * r))  # D'W r
    q = np.abs(s).max(axis=0) / scale
    best, since = q.copy(), np.zeros(q.size, dtype=np.int64)
    s = s / root  # B'r for B = W^½ D M^-½
    p = s.copy()
    gamma = np.einsum("ij,ij->j", s, s)
    active = (q > floor) & (gamma > 0)
    it = 0
    while it < max_iter and active.any():
        step = p / root  # M^-½ p: the update of α
        u = np.asarray(D @ step)  # D M^-½ p, shape (n_obs, n_cols)
        uu = np.einsum("ij,ij,i->j", u, u, w)
        alpha = np.where(active & (uu > 0), gamma / np.where(uu > 0, uu, 1.0), 0.0)
        r = r - alpha * u
        alpha_sum += alpha * step
        raw = np.asarray(D.T @ (w[:, None] * r))
        q_now = np.abs(raw).max(axis=0) / scale
        s = raw / root
        gamma_new = np.einsum("ij,ij->j", s, s)
        improved = q_now < 0.5 * best
        since = np.where(improved, 0, since + 1)
        best = np.minimum(best, q_now)
        q = np.where(active, q_now, q)
        it += 1
        active &= (q_now > floor) & (since < 200 + it) & (gamma_new > 0)
        beta = np.where(active, gamma_new / np.where(gamma > 0, gamma, 1.0), 0.0)
        p = s + beta * p
        gamma = gamma_new
    return r, q, alpha_sum, it
