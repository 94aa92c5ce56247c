"""The CR2 (Bell–McCaffrey) adjustment of every cluster, as clubSandwich's ``vcovCR``.

The residuals of cluster g are multiplied by A_g = G_g^(-1/2), G_g = [(I − H) Θ (I − H)']_gg
with the working model Θ = I on the response's scale (clubSandwich's target for ``lm``, with
or without weights; without weights and for OLS G_g = I − H_gg). The matrix
(I − H)(I − H)' is I + L S L' with the rows of L

    l_i = z_i                      (no weights; S = K − 2I),
    l_i = [z_i/√w_i, √w_i z_i]     (weights; S = [[K, −I], [−I, 0]]),

z_i the rows of the hat factor Z = [c, U] D (H̃ = Z Z' the weighted hat matrix) and K = Z'WZ.
So G_g − I = L_g S L_g' has rank at most m = 2(1 + rank), and A_g = I + L_g T_g L_g' with a
small symmetric T_g (m × m) from an eigenproblem per cluster, solved for all clusters at
once (``numpy.linalg.eigh`` on a stack); eigenvalues of G_g below 1e-12 get a zero inverse
square root, as clubSandwich's ``matrix_power``. :class:`Cr2Parts` keeps L's recipe, S, the
Gram matrices L_g'L_g and T_g: the adjusted residuals (:func:`cr2_residuals`) and the
Satterthwaite degrees of freedom (:mod:`attnreg.inference.vcov.satterthwaite`) use them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.inference.vcov._blocks import BLOCK_NUMBERS as _BLOCK_NUMBERS
from attnreg.inference.vcov._blocks import indicator as _indicator
from attnreg.inference.vcov._blocks import scores_c as _scores_c

if TYPE_CHECKING:
    from attnreg.linear.spectral import Spectrum

__all__ = ["Cr2Parts", "cr2_parts", "cr2_residuals", "hat_multipliers"]


def _row_block(width: int) -> int:
    return max(1, _BLOCK_NUMBERS // max(width, 1))


def hat_multipliers(sp: Spectrum, f: FloatArray) -> FloatArray:
    """D, shape (1 + rank,), with Z = [c, U] D the factor of the weighted hat matrix H̃ = Z Z'."""
    return np.r_[np.sqrt(sp.sum_w) if sp.intercept is not None else 0.0,
                 np.sqrt(np.maximum(f, 0))]


def _hat_factors(sp: Spectrum, f: FloatArray) -> tuple[FloatArray, FloatArray]:
    """D with Z = [c, U] D the factor of the weighted hat matrix H̃ = Z Z', and K = Z' W Z."""
    D = hat_multipliers(sp, f)
    c = _scores_c(sp)
    k = 1 + sp.rank
    K = np.zeros((k, k))
    for start, stop, U in sp.U.blocks():
        Z = np.column_stack([c[start:stop], U]) * D
        Zw = Z * sp.sqrt_w[start:stop, None]
        K += Zw.T @ Zw if sp.weighted else Z.T @ Z
    return D, K


@dataclass(frozen=True, eq=False)
class Cr2Parts:
    """A_g = I + L_g T_g L_g' for every cluster g, and (I − H)(I − H)' = I + L S L'.

    Attributes
    ----------
    sp : Spectrum
    D : ndarray, shape (1 + rank,)
        The hat factor's column multipliers (Z = [c, U] D).
    S : ndarray, shape (m, m)
    gram : ndarray, shape (n_groups, m, m)
        L_g' L_g.
    T : ndarray, shape (n_groups, m, m)
        Symmetric; A_g = I + L_g T_g L_g' on the response's scale.
    codes : ndarray of int, shape (n_obs,)
    n_groups : int
    """

    sp: Spectrum
    D: FloatArray
    S: FloatArray
    gram: FloatArray
    T: FloatArray
    codes: IntArray
    n_groups: int

    @property
    def m(self) -> int:
        """Columns of L: 1 + rank, or twice that with weights."""
        return int(self.S.shape[0])

    def l_rows(self, start: int, stop: int, U: FloatArray) -> FloatArray:
        """Rows ``start:stop`` of L, shape (stop − start, m), from that block of U."""
        sp = self.sp
        Z = np.column_stack([_scores_c(sp)[start:stop], U]) * self.D
        if not sp.weighted:
            return Z
        s = sp.sqrt_w[start:stop, None]
        return np.hstack([Z / s, Z * s])


def cr2_parts(sp: Spectrum, f: FloatArray, codes: IntArray, n_groups: int) -> Cr2Parts:
    """The CR2 adjustment of every cluster (see the module docstring).

    G_g = I + L_g S L_g': its inverse square root acts on span(L_g) only, through the
    eigenvalues of R_g S R_g' with L_g'L_g = R_g'R_g.
    """
    D, K = _hat_factors(sp, f)
    k = 1 + sp.rank
    m = 2 * k if sp.weighted else k
    S = (np.block([[K, -np.eye(k)], [-np.eye(k), np.zeros((k, k))]]) if sp.weighted
         else K - 2.0 * np.eye(k))
    parts = Cr2Parts(sp, D, S, np.zeros((n_groups, m, m)), np.zeros((n_groups, m, m)),
                     codes, n_groups)
    gram = np.zeros((n_groups, m * m))
    for start, stop, U in sp.U.blocks():
        L = parts.l_rows(start, stop, U)
        ones = _indicator(codes[start:stop], n_groups, np.ones(stop - start))
        step = _row_block(m * m)
        for lo in range(0, stop - start, step):
            hi = min(lo + step, stop - start)
            outer = np.einsum("bi,bj->bij", L[lo:hi], L[lo:hi]).reshape(hi - lo, m * m)
            gram += ones[:, lo:hi] @ outer
    gram3 = gram.reshape(n_groups, m, m)
    sig, Y = np.linalg.eigh(gram3)
    top = np.maximum(sig.max(axis=1, initial=0.0), np.finfo(float).tiny)
    keep = sig > top[:, None] * (m * np.finfo(float).eps * 16)
    root = np.where(keep, np.sqrt(np.where(keep, sig, 1.0)), 0.0)  # √σ on span(L_g), else 0
    inv_root = np.where(keep, 1.0 / np.where(keep, root, 1.0), 0.0)
    R = root[:, :, None] * np.swapaxes(Y, 1, 2)  # (G, m, m): rows √σ_a y_a'
    N = R @ S @ np.swapaxes(R, 1, 2)
    lam, V = np.linalg.eigh((N + np.swapaxes(N, 1, 2)) / 2.0)
    g = 1.0 + lam  # eigenvalues of G_g on span(L_g)
    phi = np.where(g > 1e-12, 1.0 / np.sqrt(np.where(g > 1e-12, g, 1.0)), 0.0)
    YV = (Y * inv_root[:, None, :]) @ V  # T_g = Y Σ^(-1/2) V diag(φ − 1) V' Σ^(-1/2) Y'
    T = (YV * (phi - 1.0)[:, None, :]) @ np.swapaxes(YV, 1, 2)
    return Cr2Parts(sp, D, S, gram3, (T + np.swapaxes(T, 1, 2)) / 2.0, codes, n_groups)


def cr2_residuals(sp: Spectrum, resid_w: FloatArray, f: FloatArray, codes: IntArray,
                  n_groups: int) -> FloatArray:
    """sqrt(w) A_g e_g for every cluster g (the CR2-adjusted weighted residuals), shape (n_obs,).

    ``resid_w`` are the weighted residuals sqrt(w) e (rescaled response); e_g the residuals
    of cluster g on the response's scale.
    """
    parts = cr2_parts(sp, f, codes, n_groups)
    weighted = sp.weighted
    e = resid_w / sp.sqrt_w if weighted else resid_w  # residuals on the response's scale
    Le = np.zeros((n_groups, parts.m))
    for start, stop, U in sp.U.blocks():
        Le += _indicator(codes[start:stop], n_groups, e[start:stop]) @ parts.l_rows(start, stop, U)
    z = np.einsum("gij,gj->gi", parts.T, Le)  # A_g e_g = e_g + L_g z_g
    out = np.empty(sp.n_obs)
    for start, stop, U in sp.U.blocks():
        L = parts.l_rows(start, stop, U)
        adjusted = e[start:stop] + np.einsum("bi,bi->b", L, z[codes[start:stop]])
        out[start:stop] = adjusted * sp.sqrt_w[start:stop] if weighted else adjusted
    return out
