"""Satterthwaite df and HTZ Wald tests of the CR2 covariance with absorbed fixed effects.

The same statistics as :mod:`attnreg.inference.vcov.satterthwaite` (clubSandwich's
``coef_test(test = "Satterthwaite")`` and ``Wald_test(test = "HTZ")`` on the
dummy-variable ``lm``): for q contrasts of the components a = U'W^½y of the demeaned design,
p_j = A_j r_j with r = W^½ U C' (A_j the CR2 adjustment of cluster j, :mod:`attnreg.fe.cr2`)
and P_jk = p_j' [(I − H)(I − H)']_jk p_k under the working model Θ = I, H the full hat
matrix of [X D]. (I − H)(I − H)' is applied to the embedded p_k with the demeaned regressors
and exact sparse solves with D'WD (never an N × N or G × G matrix); P, of size
(J q)² for J clusters, is formed in blocks of clusters and kept (at most :data:`MAX_P`
numbers). Then, as the linear module: df = (tr P)² / ‖P‖²_F for one contrast, and for q,
ν = q (q + 1) / Σ_jk [tr(B_jk²) + (tr B_jk)²] with B_jk = Ω^(-1/2) P_jk Ω^(-1/2),
Ω = Σ_j P_jj.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sps

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.fe.cr2 import HatParts, cr2_apply
from attnreg.fe.solve import BLOCK_ENTRIES

if TYPE_CHECKING:
    from attnreg.fe.results import FixedEffectsResults

__all__ = ["MAX_P", "FixedEffectsSatterthwaite"]

#: the most numbers of the (J q) × (J q) matrix P of q contrasts over J clusters
MAX_P = 1 << 25
#: eigenvalues of Ω below this (relative to the largest) get a zero inverse square root
_OMEGA_TOL = 1e-12


class FixedEffectsSatterthwaite:
    """The Satterthwaite df and HTZ ν of contrasts of a fixed-effects fit under one-way CR2.

    Parameters
    ----------
    fit : FixedEffectsResults
        A fit whose covariance is ``"cluster"`` with ``type="CR2"``.
    """

    def __init__(self, fit: FixedEffectsResults) -> None:
        ids = fit.vcov_spec.option("cluster")
        self.codes = ids.codes[:, 0]
        self.n_groups = int(ids.n_clusters[0])
        self.parts = HatParts(fit)
        self.sp = fit.spectrum

    def _scores(self, C: FloatArray) -> FloatArray:
        """r = W^½ [c, U] C', shape (n_obs, q) (c the intercept's direction, if any)."""
        sp = self.sp
        c = sp.sqrt_w / sp.sum_w if sp.intercept is not None else np.zeros(sp.n_obs)
        out = np.empty((sp.n_obs, C.shape[0]))
        for start, stop, U in sp.U.blocks():
            out[start:stop] = (np.column_stack([c[start:stop], U]) @ C.T
                               * sp.sqrt_w[start:stop, None])
        return out

    def _omega(self, V: FloatArray) -> FloatArray:
        """(I − H)(I − H)' V on the response's scale, V shape (n_obs, m)."""
        p = self.parts
        D, w = p.fe.dummies, p.w[:, None]
        u = V - w * (p.Q @ (p.Q.T @ V)) - w * (D @ p.solver.solve(D.T @ V))
        wu = w * u
        return np.asarray(u - p.Q @ (p.Q.T @ wu) - D @ p.solver.solve(D.T @ wu))

    def adjusted(self, C: FloatArray) -> FloatArray:
        """p_j = A_j r_j of the contrasts ``C`` (rows, shape (q, 1 + rank)), stacked over the
        clusters: shape (n_obs, q)."""
        return cr2_apply(self.parts, self.codes, self.n_groups, self._scores(C))

    def blocks(self, pv: FloatArray) -> FloatArray:
        """P of the adjusted contrasts ``pv`` (:meth:`adjusted`, shape (n_obs, q)): shape
        (J, q, J, q)."""
        J, q, n = self.n_groups, pv.shape[1], self.codes.size
        if (J * q) ** 2 > MAX_P:
            raise OptionError(f"the Satterthwaite df of CR2 with absorbed fixed effects form "
                              f"a ({J} clusters × {q} contrasts)² matrix, more than {MAX_P} "
                              "numbers; use df='cluster' (default)")
        ind = [sps.csr_matrix((pv[:, s], (self.codes, np.arange(n))), shape=(J, n))
               for s in range(q)]
        out = np.empty((J, q, J, q))
        step = max(1, BLOCK_ENTRIES // max(n * q, 1))  # clusters per block
        for lo in range(0, J, step):
            hi = min(lo + step, J)
            rows = np.flatnonzero((self.codes >= lo) & (self.codes < hi))
            M = np.zeros((n, (hi - lo) * q))
            cols = (self.codes[rows] - lo)[:, None] * q + np.arange(q)
            M[rows[:, None], cols] = pv[rows]
            OM = self._omega(M).reshape(n, hi - lo, q)
            for s in range(q):
                out[:, s, lo:hi, :] = (ind[s] @ OM.reshape(n, -1)).reshape(J, hi - lo, q)
        return out

    def contrast_df(self, C: FloatArray) -> FloatArray:
        """Satterthwaite df of each contrast (row of ``C``) alone, shape (q,)."""
        pv = self.adjusted(C)
        out = np.empty(C.shape[0])
        for s in range(C.shape[0]):
            P = self.blocks(pv[:, s:s + 1])[:, 0, :, 0]
            with np.errstate(divide="ignore", invalid="ignore"):
                out[s] = np.trace(P) ** 2 / float((P * P).sum())
        return out

    def htz_nu(self, C: FloatArray) -> float:
        """ν of the HTZ test of the q contrasts ``C`` (rows)."""
        P = self.blocks(self.adjusted(C))
        q = C.shape[0]
        omega = np.einsum("jsjt->st", P)
        vals, vecs = np.linalg.eigh((omega + omega.T) / 2.0)
        ok = vals > _OMEGA_TOL * max(float(vals.max(initial=0.0)), np.finfo(float).tiny)
        root_inv = (vecs * np.where(ok, 1.0 / np.sqrt(np.where(ok, vals, 1.0)), 0.0)) @ vecs.T
        B = np.einsum("as,jskt,tb->jakb", root_inv, P, root_inv)
        total = np.einsum("jakb,jbka->", B, B) + float((np.einsum("jaka->jk", B) ** 2).sum())
        return float(q * (q + 1) / total)
