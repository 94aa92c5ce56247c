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

from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import qr

from attnreg._typing import BoolArray, FloatArray, IntArray
from attnreg.exceptions import DataError
from attnreg.fe.demean import FixedEffects
from attnreg.glm.families import Family
from attnreg.glm.fe_order import by_largest, gathered, in_rows
from attnreg.glm.fe_steps import Steps
from attnreg.glm.links import Link
from attnreg.linear.tallqr import streaming_r

__all__ = ["FeIrlsFit", "fe_irls", "perfectly_fitted"]

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
    order = by_largest(fe)
    if order is not None:  # rows by the largest fixed effect's level (module docstring)
        stack = gathered(X, order)
        fit = fe_irls(stack[:, 1:], y[order], wt[order], offset[order], fe.reordered(order),
                      family, link, epsilon=epsilon, maxit=maxit, tol=tol)
        return in_rows(fit, order, stack)
    s = Steps(X, y, wt, offset, fe, family, link)
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


def _scoring(s: Steps, st: _State, epsilon: float, maxit: int) -> bool:
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


def _to_optimum(s: Steps, st: _State, maxit: int) -> None:
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


def _halve(s: Steps, new: FloatArray, old: FloatArray, maxit: int
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
