"""The scoring steps of a GLM with absorbed fixed effects (:func:`attnreg.glm.fe_irls.fe_irls`).

A step from (η, μ) is either exact — the stacked [z, X] residualised on the fixed effects per
row to the rounding floor, then QR — or, while far from the optimum, the normal equations with
the levels eliminated (:mod:`attnreg.fe.reweight`): the same step up to their rounding, with
no residuals per row. The first step's normal equations also decide whether the exact
aliasing check can be skipped.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, solve_triangular

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError
from attnreg.fe.demean import FixedEffects, demean
from attnreg.fe.reweight import Normal, ReweightedDemeaner
from attnreg.glm.families import Family
from attnreg.glm.fe_rows import FeRows
from attnreg.glm.links import Link
from attnreg.linear.tallqr import streaming_r

__all__ = ["ESTIMABLE_FLOOR", "NORMAL_DIGITS", "Steps"]

EPS = float(np.finfo(np.float64).eps)
#: a normal-equation step is taken only while no regressor loses more digits than this to
#: collinearity with the others and the fixed effects (else the exact step)
NORMAL_DIGITS = 6
#: the exact aliasing check is skipped when every column's part outside the fixed effects and
#: the earlier columns is, squared, at least this share of its squared norm
ESTIMABLE_FLOOR = 1e-8

def _clear(gram: FloatArray, norms: FloatArray, bound: float) -> bool:
    """Whether every Cholesky pivot of ``gram`` (columns residualised), squared, is at least
    ``bound`` times the column's squared weighted norm ``norms``."""
    try:
        c = cho_factor(gram, check_finite=False)
    except LinAlgError:
        return False
    return bool(np.all(np.diag(c[0]) ** 2 >= bound * norms))


class Steps:
    """Scoring steps on demeaned working responses, and R's step-halving on η."""

    def __init__(self, X: FloatArray, y: FloatArray, wt: FloatArray, offset: FloatArray,
                 fe: FixedEffects, family: Family, link: Link) -> None:
        self.X, self.y, self.wt, self.offset, self.fe = X, y, wt, offset, fe
        self.family, self.link = family, link
        self.rows = FeRows(y, wt, offset, family, link)
        self.kept = np.arange(X.shape[1])
        self.demeaned = True
        self.levels = ReweightedDemeaner(fe) if ReweightedDemeaner.applies(fe) else None
        self.rounding = 0.0  # of the last exact step's η
        self._stacked: FloatArray | None = None
        self._first: tuple[FloatArray, Normal] | None = None  # η and its normal equations
        self._buffers: list[FloatArray | None] = [None, None]  # of the residuals, in turn
        self._turn = 0

    def residuals(self, V: FloatArray, w: FloatArray) -> FloatArray:
        """V residualised on the fixed effects with weights w, to the rounding floor: the
        structure of the exact solve is kept across steps (:mod:`attnreg.fe.reweight`); the
        general demeaning when that solve is singular or stops short of the floor."""
        if self.levels is not None:
            r, exact = self.levels.residuals(V, w, out=self._buffer(V.shape))
            if exact:
                return r
        dm = demean(V, self.fe, w, method="auto")
        self.demeaned = self.demeaned and dm.converged
        return dm.resid

    def _buffer(self, shape: tuple[int, ...]) -> FloatArray:
        """One of two arrays for the residuals of the exact steps, in turn: the last step's
        (which the iteration may keep) is never overwritten by the next."""
        self._turn = 1 - self._turn
        buf = self._buffers[self._turn]
        if buf is None or buf.shape != shape:
            buf = self._buffers[self._turn] = np.empty(shape)
        return buf

    def deviance(self, eta: FloatArray) -> tuple[float, FloatArray, bool]:
        """The deviance and μ at η, and whether both are in range (:mod:`attnreg.glm.fe_rows`)."""
        return self.rows.deviance(eta)

    def clearly_estimable(self, eta: FloatArray, mu: FloatArray, tol: float) -> bool:
        """Whether every column keeps a part outside the fixed effects and the earlier
        columns far above ``tol`` times its norm, under the prior weights: its Cholesky pivot
        squared at least :data:`ESTIMABLE_FLOOR` (and ``tol``²) times the squared norm, eight
        orders of magnitude above the normal equations' rounding. Else the exact check decides
        which columns are aliased.

        The test reads the eliminated normal equations of the first scoring step (working
        weights W at (η, μ)), which that step then reuses: no factor of its own. Both sides of
        the test change with the weights by at most their ratio (a weighted least-squares
        residual under wt is at least that under W divided by max W/wt, a weighted norm at
        most that under W divided by min W/wt), so the bound is tightened by
        max(W/wt) / min(W/wt) and holds for the prior weights. Where that spread eats the
        margin (counts over many orders of magnitude), the normal equations with the prior
        weights themselves decide (one factor more).
        """
        if self.levels is None:
            return False
        floor = max(tol ** 2, ESTIMABLE_FLOOR)
        z, W = self._working(eta, mu)
        normal = self.levels.normal_equations(self.stacked(z), W)
        if normal is not None:
            self._first = (eta, normal)
            live = self.wt > 0
            ratio = W / self.wt if live.all() else W[live] / self.wt[live]
            spread = float(ratio.max() / ratio.min()) if ratio.size else np.inf
            if np.isfinite(spread) and _clear(normal.gram[1:, 1:], normal.norms[1:],
                                              spread * floor):
                return True
        prior = self.levels.normal_equations(self.X, self.wt)
        return prior is not None and _clear(prior.gram, prior.norms, floor)

    def stacked(self, z: FloatArray) -> FloatArray:
        """[z, X of the kept columns], shape (n, 1 + k), C order (as the weighting and the
        level sums read it: rows contiguous); X copied once, z not at all when
        :meth:`_working` wrote it there."""
        column = self._first_column(z.size)
        if not (z.base is self._stacked and z.ctypes.data == column.ctypes.data
                and z.strides == column.strides):
            column[:] = z
        assert self._stacked is not None
        return self._stacked

    def _first_column(self, n: int) -> FloatArray:
        """The first column of :meth:`stacked`'s array (made, with X, if need be; X given
        as the last columns of such an array, every column kept, is used in place)."""
        base = self.X.base
        if self._stacked is None and self.kept.size == self.X.shape[1] and \
                isinstance(base, np.ndarray) and base.flags.c_contiguous and \
                base.shape == (n, self.X.shape[1] + 1) and \
                self.X.ctypes.data == base.ctypes.data + base.itemsize and \
                self.X.strides == base.strides and base.dtype == np.float64:
            self._stacked = base
        if self._stacked is None or self._stacked.shape[1] != self.kept.size + 1:
            self._stacked = np.empty((n, self.kept.size + 1))
            every = self.kept.size == self.X.shape[1]  # all: a slice, no fancy-index copy
            self._stacked[:, 1:] = self.X if every else self.X[:, self.kept]
        return self._stacked[:, 0]

    def _working(self, eta: FloatArray, mu: FloatArray) -> tuple[FloatArray, FloatArray]:
        """The working response z (offset removed; written in the first column of
        :meth:`stacked`'s array) and working weights W at (η, μ)."""
        working = self.rows.working(eta, mu, z=self._first_column(eta.size))
        if working is None:
            raise DataError("0s or NAs in V(mu): a fitted mean reached the boundary of the "
                            "family's range; check for separation")
        return working

    def step(self, eta: FloatArray, mu: FloatArray
             ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]:
        """New η, β, R, working weights and X̃ from (η, μ): residuals per row and QR."""
        z, W = self._working(eta, mu)
        resid = self.residuals(self.stacked(z), W)
        if not np.isfinite(resid).all():
            raise DataError("the working weights of some rows underflowed (fitted means at the "
                            "boundary of the family's range); check for separation")
        zt, Xt = resid[:, 0], resid[:, 1:]  # views: the QR reads its columns of resid
        k = self.kept.size
        R = streaming_r(resid, zt, np.arange(1, k + 1), np.zeros(k + 1), np.sqrt(W), 0.0)
        r = np.triu(R[:k, :k])
        beta = solve_triangular(r, R[:k, k]) if k else np.zeros(0)
        fit = Xt @ beta
        # the rounding of the new η: a few units of the largest term that makes it
        self.rounding = 8 * EPS * float(np.max(np.abs(self.offset) + np.abs(z) + np.abs(zt)
                                               + np.abs(fit)))
        return self.offset + z - (zt - fit), beta, r, W, Xt

    def normal_step(self, eta: FloatArray, mu: FloatArray) -> FloatArray | None:
        """New η from the normal equations with the levels eliminated (no residuals per row:
        a step while far from the optimum), or None where they do not apply or a column is
        nearly collinear (more than :data:`NORMAL_DIGITS` digits lost)."""
        if self.levels is None or not self.kept.size:
            return None
        first, self._first = self._first, None
        normal: Normal | None
        if first is not None and first[0] is eta and \
                first[1].gram.shape[0] == self.kept.size + 1:  # the aliasing check's
            normal, X = first[1], self.X
        else:
            z, W = self._working(eta, mu)
            P = self.stacked(z)
            X, normal = P[:, 1:], self.levels.normal_equations(P, W)
        if normal is None:
            return None
        G = normal.gram
        try:
            c = cho_factor(G[1:, 1:], check_finite=False)
        except LinAlgError:
            return None
        if np.min(np.diag(c[0]) ** 2 / np.diag(G)[1:]) < 10.0 ** -NORMAL_DIGITS:
            return None
        beta = cho_solve(c, G[1:, 0], check_finite=False)
        new = self.offset + X @ beta + normal.effects_fit(np.concatenate([[1.0], -beta]))
        return new if np.isfinite(new).all() else None
