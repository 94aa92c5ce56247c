"""The pairs bootstrap: refits on drawn rows (or clusters) as frequency weights, a block at once.

In the orthonormal scores Tn = [sqrt(w)/sqrt(Σw), U] (θn with bz = Mn θn) a refit is
θn = (Tn' N Tn)⁻¹ Tn' N ỹ with N the counts. Clusters: everything comes from the
per-cluster sums C_g = Σ Tn_i Tn_i' and t_g = Σ Tn_i ỹ_i (O(G k²) per replication; the
refit's cluster scores are t_g − C_g θn). Rows: the products Tn_i Tn_i' (upper triangle,
kept when they fit in 2**24 numbers) weighted by the counts.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from attnreg._typing import BoolArray, FloatArray
from attnreg._warn import warn_user
from attnreg.exceptions import InferenceWarning
from attnreg.inference.bootstrap_draws import draw_rows
from attnreg.inference.bootstrap_engines import cluster_grams, z_blocks
from attnreg.inference.vcov.cluster import group_score_sums

if TYPE_CHECKING:
    from attnreg.inference.bootstrap_run import BootstrapRun

__all__ = ["pairs_replications"]

#: the products Tn_i Tn_i' of all rows are kept when they fit in this many numbers
_CACHED_NUMBERS = 1 << 24


class _Scores:
    """The active orthonormal scores of a fit and the packed upper triangle of their products."""

    def __init__(self, run: BootstrapRun) -> None:
        sp = run.sp
        self.sp, self.n = sp, sp.n_obs
        self.act = np.flatnonzero(run.d > 0)
        self.ka = ka = self.act.size
        self.norm = np.r_[math.sqrt(sp.sum_w) if sp.intercept is not None else 0.0,
                          np.ones(sp.rank)][self.act]
        self.Mn = run.Mz[:, self.act] / self.norm[None, :]  # (K, ka)
        self.y = sp.sqrt_w * sp.y  # (n_obs,)
        self.iu, self.il = np.triu_indices(ka)
        self.n_pack = self.iu.size

    def unpack(self, packed: FloatArray) -> FloatArray:
        """Symmetric (B, ka, ka) matrices from their packed upper triangles (B, n_pack)."""
        full = np.empty((packed.shape[0], self.ka, self.ka))
        full[:, self.iu, self.il] = packed
        full[:, self.il, self.iu] = packed
        return full


class _ClusterPairs(_Scores):
    """Drawn clusters: the refits from the per-cluster sums C_g and t_g."""

    def __init__(self, run: BootstrapRun, grams: FloatArray) -> None:
        super().__init__(run)
        assert run.codes is not None
        act, norm = self.act, self.norm
        self.C = grams[:, act][:, :, act] * np.outer(norm, norm)[None]  # (G, ka, ka)
        self.ty = group_score_sums(self.sp, self.y, run.codes, run.G)[:, act] * norm[None, :]
        self.C_pack = self.C[:, self.iu, self.il]
        self.sizes = np.bincount(run.codes, minlength=run.G).astype(np.float64)
        self.m = run.G
        self.width = run.G * (self.ka + 2) + 4 * self.ka * self.ka

    def gram_rhs(self, cnt: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Tn' N Tn (B, ka, ka) and Tn' N ỹ (B, ka) for the counts ``cnt`` (B, G)."""
        return self.unpack(cnt @ self.C_pack), cnt @ self.ty

    def meat(self, cnt: FloatArray, theta: FloatArray) -> FloatArray:
        """Σ_g N_g s_g s_g' of the refits' cluster scores s_g = t_g − C_g θn, (B, ka, ka)."""
        s = self.ty[None] - np.einsum("gac,bc->bga", self.C, theta)
        return np.einsum("bg,bga,bgc->bac", cnt, s, s)

    def n_rows(self, cnt: FloatArray) -> FloatArray:
        """Rows of each resample, shape (B,)."""
        return cnt @ self.sizes


class _RowPairs(_Scores):
    """Drawn rows: the refits from the products Tn_i Tn_i', block by block of rows."""

    def __init__(self, run: BootstrapRun) -> None:
        super().__init__(run)
        self.m = self.n
        self.width = 3 * self.n + 4 * self.ka * self.ka
        self.cached = self.n * self.n_pack <= _CACHED_NUMBERS
        if self.cached:
            T_all = (np.vstack([t for _, _, t in self._tn_blocks()]) if self.n
                     else np.zeros((0, self.ka)))
            self._all = (0, self.n, T_all, T_all[:, self.iu] * T_all[:, self.il])

    def _tn_blocks(self) -> Iterator[tuple[int, int, FloatArray]]:
        for lo, hi, Z in z_blocks(self.sp):
            yield lo, hi, Z[:, self.act] * self.norm[None, :]

    def products(self) -> Iterator[tuple[int, int, FloatArray, FloatArray]]:
        """(lo, hi, Tn rows, their packed products) block by block of rows."""
        if self.cached:
            yield self._all
            return
        for lo, hi, T in self._tn_blocks():
            yield lo, hi, T, T[:, self.iu] * T[:, self.il]

    def gram_rhs(self, cnt: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Tn' N Tn (B, ka, ka) and Tn' N ỹ (B, ka) for the counts ``cnt`` (B, n_obs)."""
        gram_p, rhs = np.zeros((cnt.shape[0], self.n_pack)), np.zeros((cnt.shape[0], self.ka))
        for a, b, T, outer in self.products():
            gram_p += cnt[:, a:b] @ outer
            rhs += cnt[:, a:b] @ (T * self.y[a:b, None])
        return self.unpack(gram_p), rhs

    def meat(self, cnt: FloatArray, theta: FloatArray) -> FloatArray:
        """Σ_i N_i r_i² Tn_i Tn_i' of the refits' residuals r, shape (B, ka, ka)."""
        meat_p = np.zeros((cnt.shape[0], self.n_pack))
        for a, b, T, outer in self.products():
            r = self.y[a:b, None] - T @ theta.T  # the refits' residuals (rows, B)
            meat_p += (cnt[:, a:b] * (r * r).T) @ outer
        return self.unpack(meat_p)

    def n_rows(self, cnt: FloatArray) -> FloatArray:
        """Rows of each resample, shape (B,)."""
        return cnt.sum(1)


def _refit(gram: FloatArray, rhs: FloatArray) -> tuple[FloatArray, FloatArray, BoolArray]:
    """θn (B, ka), the (pseudo-)inverse Gram matrices (B, ka, ka) and which are regular (B,)."""
    lam, vec = np.linalg.eigh(gram)
    good = lam[:, 0] > lam[:, -1] * 1e-10
    inv = np.where(good[:, None], 1.0 / np.where(good[:, None], lam, 1.0), 0.0)
    ginv = np.einsum("bij,bj,bkj->bik", vec, inv, vec)
    return np.einsum("bij,bj->bi", ginv, rhs), ginv, good


def _counts(run: BootstrapRun, B: int, m: int) -> FloatArray:
    """How often each of ``m`` rows (clusters) is drawn in each of ``B`` resamples, (B, m)."""
    idx = draw_rows(run.rng, B, m)
    flat = (idx + m * np.arange(B)[:, None]).ravel()
    return np.bincount(flat, minlength=B * m).reshape(B, m).astype(np.float64)


def pairs_replications(run: BootstrapRun) -> tuple[FloatArray, FloatArray, FloatArray, int]:
    """The pairs bootstrap of ``run``: (δz (reps × K), var_z (reps × K), the fit's own HC1 /
    CR1 var_z (K), the number of refits left out for a singular resampled design)."""
    grams = None if run.codes is None else cluster_grams(run.sp, run.codes, run.G)
    eng: _ClusterPairs | _RowPairs = (_RowPairs(run) if grams is None
                                      else _ClusterPairs(run, grams))
    delta = np.full((run.reps, run.K), np.nan)
    var = np.full((run.reps, run.K), np.nan)
    failed = 0
    for lo, hi in run.blocks(eng.width):
        cnt = _counts(run, hi - lo, eng.m)
        theta, ginv, good = _refit(*eng.gram_rhs(cnt))
        failed += int((~good).sum())
        Lb = np.einsum("ja,bac->bjc", eng.Mn, ginv)  # (B, K, ka)
        v = np.einsum("bja,bac,bjc->bj", Lb, eng.meat(cnt, theta), Lb)
        n_b = eng.n_rows(cnt)
        fac = (run.G / (run.G - 1.0) * (n_b - 1.0) / (n_b - run.fit.edf) if grams is not None
               else n_b / (n_b - run.fit.edf))
        d = (theta @ eng.Mn.T) - run.bz[None, :]
        d[~good] = np.nan
        v[~good] = np.nan
        delta[lo:hi], var[lo:hi] = d, v * fac[:, None] / run.factor
    if failed:
        warn_user(f"{failed} of {run.reps} pairs bootstrap replications have a singular "
                  "resampled design (a column without variation in the drawn rows) and "
                  "are left out", InferenceWarning)
    plain_eng = run.wild_engine(run.Mz, run.u, grams)  # the fit's own HC1 / CR1
    return delta, var, np.diag(plain_eng.plain()), failed
