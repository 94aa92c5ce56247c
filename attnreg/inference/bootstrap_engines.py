"""The wild bootstrap's engines: the replications' coefficients and their robust variances.

:class:`WildCluster` works from per-cluster score sums (nothing of size n_obs per
replication), :class:`WildRows` (each row its own cluster) from blocks of rows; the algebra
is in :mod:`attnreg.inference.bootstrap`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.inference.vcov.cluster import group_score_sums

if TYPE_CHECKING:
    from attnreg.linear.spectral import Spectrum

__all__ = ["BLOCK_NUMBERS", "WildCluster", "WildRows", "cluster_grams", "z_blocks"]

#: numbers per block of replications (the largest temporary array of a block)
BLOCK_NUMBERS = 1 << 22


def _c_scores(sp: Spectrum) -> FloatArray:
    """c_i = sqrt(w_i) / Σw with an intercept (zeros without), shape (n_obs,)."""
    return sp.sqrt_w / sp.sum_w if sp.intercept is not None else np.zeros(sp.n_obs)


def z_blocks(sp: Spectrum) -> Iterator[tuple[int, int, FloatArray]]:
    """(lo, hi, Z[lo:hi]) with the score rows z_i = [c_i, U_i]."""
    c = _c_scores(sp)
    for lo, hi, U in sp.U.blocks():
        yield lo, hi, np.column_stack([c[lo:hi], U])


def cluster_grams(sp: Spectrum, codes: IntArray, n_groups: int) -> FloatArray:
    """C_g = Σ_{i∈g} z_i z_i', shape (G, k, k)."""
    import scipy.sparse as sps

    k = 1 + sp.rank
    out = np.zeros((n_groups, k * k))
    step = max(1, BLOCK_NUMBERS // (k * k))
    for lo, hi, Z in z_blocks(sp):
        for a in range(0, hi - lo, step):
            b = min(a + step, hi - lo)
            outer = np.einsum("bi,bj->bij", Z[a:b], Z[a:b]).reshape(b - a, k * k)
            ind = sps.csr_matrix((np.ones(b - a), (codes[lo + a:lo + b], np.arange(b - a))),
                                 shape=(n_groups, b - a))
            out += ind @ outer
    return out.reshape(n_groups, k, k)


class WildCluster:
    """Wild cluster bootstrap of the rows L (m × k) of the coefficient map, residuals u."""

    def __init__(self, sp: Spectrum, L: FloatArray, u: FloatArray, codes: IntArray,
                 n_groups: int, d: FloatArray, grams: FloatArray) -> None:
        self.L, self.G, self.m = L, n_groups, L.shape[0]
        self.S = group_score_sums(sp, u, codes, n_groups)  # (G, k)
        self.A = self.S @ L.T  # (G, m): the projected score sums l' S_g
        k = L.shape[1]
        self.T = np.einsum("al,glj->gaj", L, grams * d[None, None, :]).reshape(-1, k)

    def width(self) -> int:
        """Numbers held per replication."""
        return self.G * self.m + self.G

    def plain(self) -> FloatArray:
        """Σ_g (L S_g)(L S_g)', shape (m, m): the meat of the fit's own covariance."""
        return self.A.T @ self.A

    def run(self, V: FloatArray, full: bool) -> tuple[FloatArray, FloatArray]:
        """(L S'v, Σ_g (l' s*_g)²) for the rows v of V (B × G); (m, B) and (m, B) or (B, m, m)."""
        W = self.S.T @ V.T  # (k, B)
        num = self.L @ W
        sc = V.T[:, None, :] * self.A[:, :, None]
        sc -= (self.T @ W).reshape(self.G, self.m, -1)  # (G, m, B)
        if full:
            return num, np.einsum("gib,gjb->bij", sc, sc)
        return num, np.einsum("gib,gib->ib", sc, sc)


class WildRows:
    """Wild bootstrap with each row its own cluster (heteroskedastic): row blocks."""

    def __init__(self, sp: Spectrum, L: FloatArray, u: FloatArray, d: FloatArray) -> None:
        self.sp, self.L, self.u, self.d, self.m = sp, L, u, d, L.shape[0]
        self.G = sp.n_obs
        meat = np.zeros((self.m, self.m))
        for lo, hi, Z in z_blocks(sp):
            P = (Z @ L.T) * u[lo:hi, None]
            meat += P.T @ P
        self._plain = meat

    def width(self) -> int:
        return 2 * self.G + self.m * self.m

    def plain(self) -> FloatArray:
        return self._plain

    def run(self, V: FloatArray, full: bool) -> tuple[FloatArray, FloatArray]:
        k = self.L.shape[1]
        W = np.zeros((k, V.shape[0]))
        for lo, hi, Z in z_blocks(self.sp):
            W += Z.T @ (self.u[lo:hi, None] * V[:, lo:hi].T)
        num = self.L @ W
        DW = self.d[:, None] * W
        var = np.zeros((V.shape[0], self.m, self.m)) if full else np.zeros((self.m, V.shape[0]))
        for lo, hi, Z in z_blocks(self.sp):
            e = self.u[lo:hi, None] * V[:, lo:hi].T - Z @ DW  # refit residuals (rows, B)
            P = Z @ self.L.T  # (rows, m)
            if full:
                var += np.einsum("ia,ic,ib->bac", P, P, e * e)
            else:
                var += (P * P).T @ (e * e)
        return num, var


