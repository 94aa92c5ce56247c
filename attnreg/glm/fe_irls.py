"""GLMs with absorbed fixed effects (fixest's ``feglm``/``fepois``, ppmlhdfe): IRLS on demeaned
working responses, exact to the dummy-variable GLM.

Each Fisher scoring step is the weighted least-squares fit of the working response z on
[X, D] (D the fixed-effect dummies) with the working weights W. By the Frisch–Waugh–Lovell
theorem its β is the weighted least-squares fit of the W-demeaned z̃ on the W-demeaned X̃
(:func:`attnreg.fe.demean.demean`, to the rounding floor), and its fitted values are
z − (z̃ − X̃β): the new linear predictor needs no fixed-effect estimates. So every iterate equals
the dummy-variable IRLS's, without forming D. The β block of the inverse information is
(X̃'WX̃)⁻¹, from the R of the last step.

While far from the optimum a step needs no residuals per row: with two or more fixed effects
(:class:`attnreg.fe.reweight.ReweightedDemeaner`) it solves the normal equations of [z, X, D]
with the levels eliminated (X̃'WX̃ β = X̃'Wz̃ from sums per level, then the levels' part of
the fit), which is the same step up to the normal equations' rounding. Once η moves by less
than :data:`NORMAL_SWITCH` (relative), exact steps (residuals per row to the rounding floor,
then QR) take over until η stops changing, so the reported β, R and X̃ are the exact
steps', and R's convergence rule sees the same deviances to within that rounding. The steps
work on the rows sorted by the level of the fixed effect with the most levels (stably; the
per-row results are put back in the rows' own order): that fixed effect's level sums and
gathers then run through memory in order, and the pattern of levels that share a row is
found by one short sort (:mod:`attnreg.fe.reweight_pattern`).

Observations that no finite fixed effect can fit — every response of a level 0 (Poisson), or
every response of a level 0 or every one 1 (binomial) — make that level's effect infinite; they
are dropped first (repeatedly, as dropping may empty another level), as fixest and ppmlhdfe
do, and counted.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve, qr, solve_triangular

from attnreg._typing import BoolArray, FloatArray, IntArray
from attnreg.exceptions import DataError
from attnreg.fe.demean import FixedEffects, demean
from attnreg.fe.reweight import Normal, ReweightedDemeaner
from attnreg.fe.reweight_pattern import counting_order
from attnreg.glm.families import Family
from attnreg.glm.fe_rows import FeRows
from attnreg.glm.links import Link
from attnreg.linear.tallqr import streaming_r

__all__ = ["FeIrlsFit", "fe_irls", "perfectly_fitted"]

EPS = float(np.finfo(np.float64).eps)
#: a normal-equation step is taken only while no regressor loses more digits than this to
#: collinearity with the others and the fixed effects (else the exact step)
NORMAL_DIGITS = 6
#: the exact aliasing check is skipped when every column's part outside the fixed effects and
#: the earlier columns is, squared, at least this share of its squared norm
ESTIMABLE_FLOOR = 1e-8
#: normal-equation steps give way to exact ones once η moves by less than this, relative
NORMAL_SWITCH = 1e-10


@dataclass(frozen=True)
class FeIrlsFit:
    """The converged IRLS state of a GLM with absorbed fixed effects.

    Attributes
    ----------
    coef : ndarray, shape (n_kept,)
        Coefficients of the columns kept.
    kept, aliased : ndarray of int
        Columns estimated, and those absorbed by the fixed effects or collinear.
    eta, mu : ndarray, shape (n,)
        Linear predictor (fixed effects and offset included) and means.
    r : ndarray, shape (n_kept, n_kept)
        R of the last step's W-demeaned, weighted design: (X̃'WX̃)⁻¹ = R⁻¹R⁻ᵀ.
    working_weights : ndarray, shape (n,)
    demeaned_x : ndarray, shape (n, n_kept)
        X̃ of the last step (the scores of a sandwich are x̃ w r).
    deviance : float
    iter, iter_r : int
        Scoring steps (to the optimum; to R's rule).
    converged : bool
    demeaned : bool
        Every demeaning reached its rounding floor.
    """

    coef: FloatArray
    kept: IntArray
    aliased: IntArray
    eta: FloatArray
    mu: FloatArray
    r: FloatArray
    working_weights: FloatArray
    demeaned_x: FloatArray
    deviance: float
    iter: int
    iter_r: int
    converged: bool
    demeaned: bool


def perfectly_fitted(y: FloatArray, fe: FixedEffects, family: str) -> BoolArray:
    """Rows of levels whose responses are all 0 (Poisson; also all 1 for binomial), found
    repeatedly until no level is left so, shape (n,). After the first round only the levels
    that lost a row are counted again (the others cannot change)."""
    drop = np.zeros(y.size, dtype=bool)
    new: BoolArray | None = None
    while True:
        found = np.zeros(y.size, dtype=bool)
        for codes, n in zip(fe.codes, fe.n_levels, strict=True):
            rows: slice | IntArray
            if new is None:  # every row live: no selection
                rows, touched = slice(None), np.ones(n, dtype=bool)
            else:
                touched = np.zeros(n, dtype=bool)
                touched[codes[new]] = True
                rows = np.flatnonzero(touched[codes] & ~drop)
            count = np.bincount(codes[rows], minlength=n)
            total = np.bincount(codes[rows], weights=y[rows], minlength=n)
            bad = touched & (count > 0) & (total == 0)
            if family == "binomial":
                bad |= touched & (count > 0) & (total == count)
            found |= bad[codes] & ~drop
        if not found.any():
            return drop
        drop |= found
        new = found


def _aliased(Xd: FloatArray, X: FloatArray, w: FloatArray, tol: float) -> IntArray:
    """Columns whose demeaned part outside the earlier kept columns is below ``tol`` times the
    column's own weighted norm (absorbed by the fixed effects, or collinear)."""
    k = X.shape[1]
    R = np.triu(streaming_r(Xd, np.zeros(Xd.shape[0]), np.arange(k), np.zeros(k), w, 0.0)[:k, :k])
    norms = np.linalg.norm(X * w[:, None], axis=0)
    kept: list[int] = []
    aliased: list[int] = []
    for j in range(k):  # a loop over columns (a handful), not rows
        sub = qr(R[:, [*kept, j]], mode="r", check_finite=False)[0]
        rn = abs(float(sub[len(kept), len(kept)])) if sub.shape[0] > len(kept) else 0.0
        (aliased if norms[j] == 0 or rn < tol * norms[j] else kept).append(j)
    return np.asarray(aliased, dtype=np.intp)


def _clear(gram: FloatArray, norms: FloatArray, bound: float) -> bool:
    """Whether every Cholesky pivot of ``gram`` (columns residualised), squared, is at least
    ``bound`` times the column's squared weighted norm ``norms``."""
    try:
        c = cho_factor(gram, check_finite=False)
    except LinAlgError:
        return False
    return bool(np.all(np.diag(c[0]) ** 2 >= bound * norms))


class _Steps:
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


def fe_irls(X: FloatArray, y: FloatArray, wt: FloatArray, offset: FloatArray,
            fe: FixedEffects, family: Family, link: Link, *, epsilon: float = 1e-8,
            maxit: int = 25, tol: float = 1e-7) -> FeIrlsFit:
    """IRLS of a GLM with absorbed fixed effects, R's ``glm.fit`` rules, to the optimum.

    Parameters
    ----------
    X : ndarray, shape (n, k)
        Regressors (no intercept: the fixed effects hold it).
    y, wt, offset : ndarray, shape (n,)
    fe : FixedEffects
        Of the same n rows (perfectly fitted levels already dropped).
    family, link : Family, Link
    epsilon, maxit : float, int
        R's ``glm.control``; the steps continue after R's rule until η stops changing.
    tol : float
        Aliasing tolerance (relative to a column's norm).

    Returns
    -------
    FeIrlsFit
    """
    order = _by_largest(fe)
    if order is not None:  # rows by the largest fixed effect's level (module docstring)
        stack = _gathered(X, order)
        fit = fe_irls(stack[:, 1:], y[order], wt[order], offset[order], fe.reordered(order),
                      family, link, epsilon=epsilon, maxit=maxit, tol=tol)
        return _in_rows(fit, order, stack)
    s = _Steps(X, y, wt, offset, fe, family, link)
    aliased = np.zeros(0, dtype=np.intp)
    eta = link.linkfun(family.initialize(y, wt, link.name))
    dev, mu, _ = s.deviance(eta)
    if X.shape[1] and not s.clearly_estimable(eta, mu, tol):
        aliased = _aliased(s.residuals(X, wt), X, np.sqrt(wt), tol)
    s.kept = np.setdiff1d(np.arange(X.shape[1]), aliased)
    st = _State(eta, mu, dev, np.zeros(s.kept.size), np.zeros((0, 0)), wt,
                np.zeros((X.shape[0], 0)))
    converged = _scoring(s, st, epsilon, maxit)
    iter_r = st.it
    if converged:
        _to_optimum(s, st, maxit)
    if not st.r.size and s.kept.size:  # every step was a normal one: one exact step reports
        new, st.beta, st.r, st.W, st.Xt = s.step(st.eta, st.mu)
        st.eta, st.dev, st.mu = _halve(s, new, st.eta, maxit)
        st.it += 1
    return FeIrlsFit(st.beta, s.kept, aliased, st.eta, st.mu, st.r, st.W, st.Xt, st.dev, st.it,
                     iter_r, converged, s.demeaned)


def _by_largest(fe: FixedEffects) -> IntArray | None:
    """The stable order of the rows by the level of the fixed effect with the most levels,
    where the exact solve applies and the rows are not in that order already; else None."""
    if not ReweightedDemeaner.applies(fe):
        return None
    codes = fe.codes[int(np.argmax(fe.n_levels))]
    if bool(np.all(codes[1:] >= codes[:-1])):
        return None
    return counting_order(codes, max(fe.n_levels))


def _gathered(X: FloatArray, order: IntArray) -> FloatArray:
    """[·, X[order]], shape (n, 1 + k), C order: X's rows in ``order`` in the last columns of
    the array the steps stack z and X in (:meth:`_Steps.stacked`); gathered a block of rows
    at a time (no sorted copy of X besides)."""
    out = np.empty((X.shape[0], X.shape[1] + 1))
    step = max(1, (1 << 20) // (8 * max(X.shape[1], 1)))
    for lo in range(0, X.shape[0], step):
        out[lo:lo + step, 1:] = X[order[lo:lo + step]]
    return out


def _in_rows(fit: FeIrlsFit, order: IntArray, stack: FloatArray) -> FeIrlsFit:
    """``fit`` of the rows in ``order``, its per-row arrays back in the rows' own order; X̃
    into the last columns of ``stack`` (the sorted [z, X] the steps are done with: memory
    already in use, not a fresh array), a block of rows at a time."""
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size)

    def back(v: FloatArray) -> FloatArray:  # a gather: twice as fast as the scatter
        return np.take(v, inverse, axis=0)

    Xt = fit.demeaned_x
    if stack.shape == (Xt.shape[0], Xt.shape[1] + 1) and not np.may_share_memory(Xt, stack):
        step = max(1, (1 << 20) // (8 * max(Xt.shape[1], 1)))
        for lo in range(0, Xt.shape[0], step):
            stack[lo:lo + step, 1:] = Xt[inverse[lo:lo + step]]
        Xt = stack[:, 1:]
    else:
        Xt = back(Xt)
    return dataclasses.replace(fit, eta=back(fit.eta), mu=back(fit.mu),
                               working_weights=back(fit.working_weights), demeaned_x=Xt)


@dataclass
class _State:
    """The iterate: η, μ, deviance, and the last exact step's β, R, weights and X̃."""

    eta: FloatArray
    mu: FloatArray
    dev: float
    beta: FloatArray
    r: FloatArray
    W: FloatArray
    Xt: FloatArray
    it: int = 0
    changes: list[float] = field(default_factory=list)  # max |Δη| of each step

    def predicted(self) -> float:
        """The next step's max |Δη| if the steps converge quadratically (e₊ = e³/e₋²)."""
        if len(self.changes) < 2 or self.changes[-2] == 0:
            return np.inf
        return self.changes[-1] ** 3 / self.changes[-2] ** 2


def _scoring(s: _Steps, st: _State, epsilon: float, maxit: int) -> bool:
    """R's scoring loop and stopping rule (normal-equation steps, the last one exact);
    whether R's rule was met."""
    dev_old = st.dev
    while st.it < maxit:
        st.it += 1
        new = s.normal_step(st.eta, st.mu) if st.it < maxit else None
        if new is None:
            new, st.beta, st.r, st.W, st.Xt = s.step(st.eta, st.mu)
        new, st.dev, st.mu = _halve(s, new, st.eta, maxit)
        st.changes.append(float(np.max(np.abs(new - st.eta))))
        st.eta = new
        if abs(st.dev - dev_old) / (abs(st.dev) + 0.1) < epsilon:
            return True
        dev_old = st.dev
    return False


def _to_optimum(s: _Steps, st: _State, maxit: int) -> None:
    """On from R's rule until η stops changing: normal-equation steps while η moves by more
    than :data:`NORMAL_SWITCH` (or is predicted to, at the quadratic rate), then exact steps
    until the change is at the rounding of η (or stops shrinking)."""
    last = np.inf
    exact = st.predicted() <= NORMAL_SWITCH * float(np.max(np.abs(st.eta)))
    for _ in range(maxit):
        new = None if exact else s.normal_step(st.eta, st.mu)
        if new is not None:
            new, st.dev, st.mu = _halve(s, new, st.eta, maxit)
            change = float(np.max(np.abs(new - st.eta)))
            st.eta, st.it = new, st.it + 1
            st.changes.append(change)
            size = NORMAL_SWITCH * float(np.max(np.abs(new)))
            exact = change <= size or st.predicted() <= size or change >= last
            last = np.inf if exact else change
            continue
        exact = True
        new, beta, r, W, Xt = s.step(st.eta, st.mu)
        new, dev, mu = _halve(s, new, st.eta, maxit)
        change = float(np.max(np.abs(new - st.eta)))
        if change >= last and change > 0:
            return
        st.eta, st.dev, st.mu, st.beta, st.r, st.W, st.Xt = new, dev, mu, beta, r, W, Xt
        st.it += 1
        if change <= s.rounding:
            return
        last = change


def _halve(s: _Steps, new: FloatArray, old: FloatArray, maxit: int
           ) -> tuple[FloatArray, float, FloatArray]:
    """R's step-halving on η until the deviance is finite and (η, μ) valid."""
    dev, mu, valid = s.deviance(new)
    tries = 1
    while not (np.isfinite(dev) and valid):
        if tries > maxit:
            raise DataError("cannot correct the step size by halving")
        tries += 1
        new = (new + old) / 2
        dev, mu, valid = s.deviance(new)
    return new, dev, mu
