"""CR2 (Bell–McCaffrey) cluster-robust covariance of fits with absorbed fixed effects.

clubSandwich's ``vcovCR(type = "CR2")`` of the dummy-variable regression on M = [X D]
multiplies the residuals e_g of cluster g by A_g = G_g^(-1/2) (eigenvalues below 1e-12 get a
zero inverse square root, as clubSandwich's ``matrix_power``), with the working model Θ = I
on the response's scale:

    G_g = [(I − H)(I − H)']_gg = I − H_gg − H_gg' + [H H']_gg,   H = M (M'WM)⁺ M'W.

H is the sum of the W-orthogonal projections on D and on the residualised regressors X̃
(D'WX̃ = 0), so with q_i = x̃_i R⁻¹ (R'R = X̃'WX̃) and y_i = (D'WD)⁺ d_i (one exact sparse
solve per row, :class:`attnreg.fe.solve.LevelSolver`, never a G × G inverse):

    H_ij = (q_i'q_j + d_i'y_j) w_j,
    [H H']_ij = q_i'K q_j + q_i'F y_j + y_i'F'q_j + y_i'C y_j,

K = R⁻ᵀX̃'W²X̃R⁻¹, F = R⁻ᵀX̃'W²D (k × G) and C = D'W²D (sparse G × G). Without weights
H is symmetric and idempotent and G_g = I − H_gg. Each G_g is n_g × n_g (as clubSandwich
forms it), built for all clusters of one size at once and split by ``numpy.linalg.eigh`` on
the stack: the cost is Σ_g n_g² numbers and one sparse solve per row, nothing N × N, and a
cluster of more than :data:`MAX_CLUSTER_ROWS` rows is refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sps

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import OptionError
from attnreg.fe.solve import BLOCK_ENTRIES, LevelSolver

if TYPE_CHECKING:
    from attnreg.fe.results import FixedEffectsResults

__all__ = ["MAX_CLUSTER_ROWS", "HatParts", "check_cluster_sizes", "cr2_apply",
           "fe_cr2_residuals"]

#: the most rows of one cluster under CR2 (its n_g × n_g block and eigendecomposition)
MAX_CLUSTER_ROWS = 5000
#: eigenvalues of G_g at or below this get a zero inverse square root (clubSandwich's 10^-12)
_EIG_TOL = 1e-12


class HatParts:
    """What every cluster's block of G needs: Q = X̃R⁻¹ (n × k), K, F, C and the solver."""

    def __init__(self, fit: FixedEffectsResults) -> None:
        kept = np.asarray(fit.spectrum.kept, dtype=np.int64)
        X = fit.design.X[:, kept]
        w = fit.design.weights
        self.w = np.ones(X.shape[0]) if w is None else np.asarray(w, dtype=np.float64)
        self.weighted = w is not None
        self.fe = fit.absorbed.fe
        self.solver: LevelSolver = fit._level_solver
        if kept.size:
            R = sla.cholesky(X.T @ (self.w[:, None] * X), lower=False)
            self.Q = np.asarray(sla.solve_triangular(R, X.T, trans="T").T)  # X̃ R⁻¹
        else:
            self.Q = np.zeros((X.shape[0], 0))
        if self.weighted:
            w2 = self.w**2
            self.K = self.Q.T @ (w2[:, None] * self.Q)
            D = self.fe.dummies
            self.F = np.asarray((D.T @ (w2[:, None] * self.Q)).T)  # (k, G)
            self.C = sps.csr_matrix(D.T @ sps.diags(w2) @ D)

    def blocks(self, rows: IntArray) -> FloatArray:
        """G_g for clusters of equal size, ``rows`` shape (J, s): shape (J, s, s)."""
        J, s = rows.shape
        flat = rows.ravel()
        Y = self.solver.solve(self.solver.indicators([c[flat] for c in self.fe.codes]))
        cols = np.arange(flat.size).reshape(J, 1, s)
        dy = np.zeros((J, s, s))  # d_a' y_c
        for k, code in enumerate(self.fe.codes):
            dy += Y[(code[rows] + self.fe.offsets[k])[:, :, None], cols]
        Qr = self.Q[rows]  # (J, s, k)
        hat = np.einsum("jak,jck->jac", Qr, Qr) + dy
        if not self.weighted:
            return np.eye(s) - (hat + np.swapaxes(hat, 1, 2)) / 2.0
        hat = hat * self.w[rows][:, None, :]
        Y3 = Y.reshape(Y.shape[0], J, s)
        CY3 = np.asarray(self.C @ Y).reshape(Y.shape[0], J, s)
        qfy = np.einsum("jak,kjc->jac", Qr, (self.F @ Y).reshape(-1, J, s))
        hh = (np.einsum("jak,kl,jcl->jac", Qr, self.K, Qr) + qfy + np.swapaxes(qfy, 1, 2)
              + np.einsum("gja,gjc->jac", Y3, CY3))
        G = np.eye(s) - hat - np.swapaxes(hat, 1, 2) + hh
        return (G + np.swapaxes(G, 1, 2)) / 2.0


def _inverse_root_apply(G: FloatArray, E: FloatArray) -> FloatArray:
    """G_g^(-1/2) E_g for a stack: G shape (J, s, s), E shape (J, s, c)."""
    vals, vecs = np.linalg.eigh(G)
    ok = vals > _EIG_TOL
    phi = np.where(ok, 1.0 / np.sqrt(np.where(ok, vals, 1.0)), 0.0)
    inner = np.einsum("jab,jac->jbc", vecs, E) * phi[:, :, None]
    return np.asarray(np.einsum("jab,jbc->jac", vecs, inner))


def _cluster_rows(codes: IntArray, n_groups: int) -> list[IntArray]:
    """The rows of the clusters of each size, one (J, s) array per distinct size s."""
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes, minlength=n_groups)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    out = []
    for s in np.unique(sizes[sizes > 0]):
        first = starts[sizes == s]
        out.append(order[first[:, None] + np.arange(s)])
    return out


def check_cluster_sizes(codes: IntArray, n_groups: int) -> None:
    """Refuse a cluster of more than :data:`MAX_CLUSTER_ROWS` rows (OptionError)."""
    sizes = np.bincount(codes, minlength=n_groups)
    if sizes.max(initial=0) > MAX_CLUSTER_ROWS:
        raise OptionError(f"type='CR2' with absorbed fixed effects forms each cluster's "
                          f"n_g × n_g block, however the largest cluster has {sizes.max()} "
                          f"rows (at most {MAX_CLUSTER_ROWS}); cluster on a finer variable "
                          "or use type='HC1'")


def cr2_apply(parts: HatParts, codes: IntArray, n_groups: int, V: FloatArray) -> FloatArray:
    """A_g V_g for every cluster g: ``V`` shape (n_obs, c) on the response's scale, the
    result the same shape (A_g = G_g^(-1/2), see the module docstring)."""
    check_cluster_sizes(codes, n_groups)
    out = np.empty_like(V)
    n_levels = max(int(parts.fe.offsets[-1]), 1)
    for rows in _cluster_rows(codes, n_groups):
        step = max(1, BLOCK_ENTRIES // (n_levels * rows.shape[1]))  # clusters per block
        for lo in range(0, rows.shape[0], step):
            block = rows[lo:lo + step]
            out[block] = _inverse_root_apply(parts.blocks(block), V[block])
    return out


def fe_cr2_residuals(fit: FixedEffectsResults, codes: IntArray, n_groups: int) -> FloatArray:
    """sqrt(w) A_g e_g for every cluster g on the fit's rescaled response, shape (n_obs,):
    the CR2-adjusted weighted residuals whose score sums make the meat.

    Parameters
    ----------
    fit : FixedEffectsResults
    codes : ndarray of int, shape (n_obs,)
        The cluster of each row, 0 … n_groups − 1.
    n_groups : int

    Returns
    -------
    ndarray, shape (n_obs,)
    """
    check_cluster_sizes(codes, n_groups)
    sp = fit.spectrum
    e = fit._resid_ws / sp.sqrt_w if sp.weighted else fit._resid_ws  # response's scale
    out = cr2_apply(HatParts(fit), codes, n_groups, e[:, None])[:, 0]
    return out * sp.sqrt_w if sp.weighted else out
