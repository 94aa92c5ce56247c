"""IRLS to the optimum: R's path to its stopping rule, then on to working precision.

The steps are scoring increments by the normal equations, one pass over the rows each
(:class:`~attnreg.glm.normal.RowPass`), then QR steps that decide what is reported
(:func:`qr_to_optimum`). An increment's error is relative to the increment, which vanishes at
the optimum, so the increments reach the QR steps' rounding floor at a fraction of their cost.
Where the last two steps predict (at Newton's quadratic rate) that the next one is within
:data:`LIGHT_PREDICTED`, the point is evaluated without normal equations; if it meets R's rule
the QR step from it is the last, and if not its pass is taken again with them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.linalg.lapack import dtrcon

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError as ConvergenceError
from attnreg.glm.normal import PassResult, RowPass
from attnreg.glm.refine import refine
from attnreg.glm.scoring import EPS, IrlsFit, Problem, solve_normal, start

__all__ = ["CHEAP_FLOOR", "LIGHT_PREDICTED", "QR_ACCEPT", "irls_optimum", "qr_to_optimum"]

#: the Newton increments by the normal equations stop at this change relative to the
#: coefficients (or when the change stops shrinking): Newton's error after the next step is
#: then of the order of its square, far below rounding, and the next step is a QR step
CHEAP_FLOOR = 1e-9
SQRT_EPS = float(np.sqrt(EPS))
#: a point whose next step is predicted below this (relative) takes no normal equations when
#: it meets R's rule: the QR step from it is then the last (:data:`QR_ACCEPT`, with a margin
#: for the prediction), and the weights and R it reports are those of the optimum to about
#: this much
LIGHT_PREDICTED = 1e-12
#: after the increments reached their floor, one QR step is the last when its change,
#: relative to the coefficients and divided by the condition of R, is below this: Newton's
#: error after it is of the order of the square of that change, far below rounding
QR_ACCEPT = 1e-10



def qr_to_optimum(p: Problem, coef: FloatArray, eta: FloatArray, mu: FloatArray,
                   floor: bool, it: int, maxit: int) -> tuple:
    """QR scoring steps from (coef, η, μ) until the change is within a few ulps times the
    condition of R, or stops shrinking (the rounding floor): a QR step always decides what
    is reported, to the accuracy of the tall QR, and gives the R of the covariance. After
    increments that reached their own floor (``floor``), one step whose change is below
    :data:`QR_ACCEPT` (relative, over the condition) is the last: Newton's error after it is
    of the order of the square of that change."""
    last, step = np.inf, np.inf
    r = w = np.zeros(0)
    dev, boundary = np.nan, False
    for _ in range(maxit):
        new, r_new, w_new = p.step(eta, mu)
        new, eta_new, mu_new, dev_new, halved = p.halve(new, coef, maxit)
        change = float(np.max(np.abs(new - coef), initial=0.0))
        scale = float(np.max(np.abs(new), initial=0.0))
        step = change / max(scale, 1.0)
        if change >= last and change > 0:  # rounding noise: keep the previous step
            break
        coef, eta, mu, r, w, dev, boundary, it = new, eta_new, mu_new, r_new, w_new, dev_new, \
            halved, it + 1
        cond = _condition(r)
        if change <= 4 * EPS * cond * scale or (floor and change <= QR_ACCEPT * scale / cond):
            break
        floor = False
        last = change
    return coef, eta, mu, r, w, dev, boundary, it, step


def _condition(r: FloatArray) -> float:
    """An estimate of the condition number of the triangular ``r`` (LAPACK's trcon, 1-norm):
    the relative change a QR step may show from rounding alone is a few ulps times it."""
    if r.size == 0:
        return 1.0
    rcond, info = dtrcon(np.asfortranarray(r), norm="1", uplo="U", diag="N")
    return 1.0 / rcond if info == 0 and rcond > 0 else np.inf


def irls_optimum(p: Problem, epsilon: float, maxit: int,
                 check: Callable[[PassResult], None] | None = None) -> IrlsFit:
    """IRLS to the optimum: R's path to its stopping rule and on, by scoring increments from
    the normal equations (one :class:`~attnreg.glm.normal.RowPass` per step), then QR steps.

    The increments' error is relative to the increment
    (:func:`~attnreg.glm.scoring.solve_normal`), which vanishes at the optimum, so they reach
    the rounding floor of the QR steps at a fraction of their cost. They stop when the change
    stops shrinking or is within :data:`CHEAP_FLOOR`. A step the normal equations cannot take
    (too ill-conditioned) is a QR step. ``check`` sees the first pass (from R's start) before
    any step and may raise.
    """
    eta, mu = start(p)
    rows = RowPass(p.X, p.y, p.wt, p.offset, p.family, p.link)
    first = rows.run(None, eta, mu, gram=True)  # R's devold and the first step, one pass
    if check is not None:
        check(first)
    dev_old = first.deviance
    p.cheap = True
    coef = solve_normal(first.G, first.g) if first.G is not None and first.g is not None \
        else None
    if coef is None:
        coef = p.step(eta, mu)[0]
    p.rows = rows
    walk = _Walk(p, rows)
    it, converged, light = _rs_path(walk, coef, dev_old, epsilon, maxit)
    iter_r = it
    if not converged:
        return walk.fit(it, iter_r, converged)
    if light and walk.boundary:  # a halved point: its normal equations after all
        walk.redo(maxit)
        light = False
    floor, last = light, np.inf  # a light point is at the increments' floor already
    while not light and it < maxit:
        before = walk.coef
        target = walk.next_coef()
        # a change within the floor makes this point the last of the increments: the QR
        # step from it forms its own weights, so the pass needs no normal equations
        last_one = float(np.max(np.abs(target - before), initial=0.0)) <= CHEAP_FLOOR * max(
            float(np.max(np.abs(target), initial=0.0)), 1.0)
        walk.go(target, before, maxit, gram=not last_one)
        change = float(np.max(np.abs(walk.coef - before), initial=0.0))
        scale = max(float(np.max(np.abs(walk.coef), initial=0.0)), 1.0)
        if not change < last:  # the rounding floor: back to the previous point
            walk.back()
            floor = bool(last <= SQRT_EPS * scale)
            break
        it += 1
        if change <= CHEAP_FLOOR * scale:
            floor = True
            break
        last = change
    p.cheap = False  # what is reported comes from QR steps
    coef, eta, mu, r, w, dev, boundary, it, step = qr_to_optimum(
        p, walk.coef, walk.eta, walk.mu, floor, it, maxit)  # not written to
    refined = refine(p, coef, r)  # ill-conditioned: on to the optimum of the float64 data
    if refined is not None and refined.steps:
        coef, eta, mu, dev = refined.coef, refined.eta, refined.mu, refined.deviance
    return IrlsFit(coef, eta, mu, r, w ** 2, dev, it, iter_r, True, boundary, p.n_halved, step)


def _rs_path(walk: _Walk, coef: FloatArray, dev_old: float, epsilon: float,
             maxit: int) -> tuple[int, bool, bool]:
    """The scoring steps to R's stopping rule from the first iterate ``coef``: (iterations,
    converged, whether the last point was evaluated without its normal equations).

    A point whose next step is predicted within :data:`LIGHT_PREDICTED` takes none (a light
    point: the QR step is next). One whose next step times the predicted change of the
    weights is within it takes the increment's right-hand side alone: if it meets R's rule,
    the next step is a chord step by the last normal equations (its error is the step's
    times the weights' change, :class:`~attnreg.glm.normal.PassResult`), whose point is the
    last of the increments. Either point's pass is taken again with its normal equations
    where R's rule is not met, the step was halved, or (chord) the measured change of the
    weights is larger than predicted.
    """
    old: FloatArray | None = None
    it, converged, light = 0, False, False
    sizes: list[float] = []  # relative sizes of the full scoring steps taken
    ratio = np.inf  # the weights' change over the relative step size, last measured
    while it < maxit:
        it += 1
        size = _relative(coef, walk.coef) if old is not None else np.inf
        # a point whose next step the steps so far predict far within what one last QR step
        # may change needs no normal equations if it meets R's rule: that QR step is next
        predicted = _contraction(sizes) * size ** 2
        light = predicted <= LIGHT_PREDICTED
        chord = not light and _chord(predicted, ratio * size)
        dev = walk.go(coef, old, maxit, gram=not (light or chord), score=chord)
        change = walk.result.weight_change if walk.result is not None else np.inf
        if abs(dev - dev_old) / (abs(dev) + 0.1) < epsilon:
            converged = True
            if chord and (walk.boundary or not _chord(predicted, change)):
                walk.redo(maxit)
            break
        halved = walk.boundary
        if light or chord:  # R's rule not met after all: this point's normal equations
            walk.redo(maxit)
            light = False
        sizes = [*sizes, size] if not halved and np.isfinite(size) else []
        ratio = change / size if not halved and 0 < size < np.inf else np.inf
        dev_old, old, coef = dev, walk.coef, walk.next_coef()
    return it, converged, light


def _chord(predicted: float, change: float) -> bool:
    """Whether a chord step from a point whose next Newton step is ``predicted`` (relative)
    and whose weights differ by ``change`` from those of the last normal equations lands
    within :data:`LIGHT_PREDICTED` of the optimum (its error is at most about their
    product)."""
    return predicted * change <= LIGHT_PREDICTED


def _relative(new: FloatArray, old: FloatArray) -> float:
    """The change from ``old`` to ``new``, relative to ``new`` (at least 1)."""
    change = float(np.max(np.abs(new - old), initial=0.0))
    return change / max(float(np.max(np.abs(new), initial=0.0)), 1.0)


def _contraction(sizes: list[float]) -> float:
    """Newton's constant C, a step of relative size s being followed by one of about C s²,
    from the last two steps taken (inf with fewer, or when they do not shrink). It only
    predicts: a wrong prediction costs a pass, never accuracy (:func:`irls_optimum`)."""
    if len(sizes) < 2 or not 0 < sizes[-1] < sizes[-2] < 1:
        return np.inf
    return sizes[-1] / sizes[-2] ** 2


class _Walk:
    """The iterates of :func:`_irls_optimum`: the current point's η and μ in one of two
    buffer pairs (the other receives the next point, so that a step can be taken back)."""

    def __init__(self, p: Problem, rows: RowPass) -> None:
        n = p.X.shape[0]
        self.p, self.rows = p, rows
        self._bufs = [(np.empty(n), np.empty(n)), (np.empty(n), np.empty(n))]
        self._cur = 0
        self.coef = np.zeros(p.X.shape[1])
        self.result: PassResult | None = None
        self.boundary = False
        self._prev: tuple = ()

    @property
    def eta(self) -> FloatArray:
        return self._bufs[self._cur][0]

    @property
    def mu(self) -> FloatArray:
        return self._bufs[self._cur][1]

    def go(self, coef: FloatArray, old: FloatArray | None, maxit: int, gram: bool = True,
           score: bool = False) -> float:
        """Move to ``coef``, halved towards ``old`` as R does until the deviance is finite
        and (η, μ) valid; the new point's deviance (its normal equations when ``gram``, the
        increment's right-hand side alone when ``score``)."""
        self._prev = (self._cur, self.coef, self.result, self.boundary)
        spare = 1 - self._cur
        eta, mu = self._bufs[spare]
        res = self.rows.run(coef, eta, mu, gram=gram, score=score)
        halved = False
        for kind in ("finite", "valid"):
            tries = 1
            while not (np.isfinite(res.deviance) if kind == "finite" else res.valid):
                if old is None:
                    raise ConvergenceError("no valid set of coefficients has been found: the "
                                           "starting values give an invalid fit")
                if tries > maxit:
                    raise ConvergenceError("cannot correct the step size by halving")
                tries, halved = tries + 1, True
                self.p.n_halved += 1 if tries == 2 else 0
                coef = (coef + old) / 2
                res = self.rows.run(coef, eta, mu, gram=gram, score=score)
        self._cur, self.coef, self.result, self.boundary = spare, coef, res, halved
        return res.deviance

    def redo(self, maxit: int) -> None:
        """The pass at the current point again, with its normal equations."""
        cur, prev, boundary = self.coef, self._prev, self.boundary
        self.go(cur, None, maxit)
        self._prev, self.boundary = prev, boundary

    def back(self) -> None:
        """Return to the point before the last :meth:`go`."""
        self._cur, self.coef, self.result, self.boundary = self._prev

    def next_coef(self) -> FloatArray:
        """The next scoring iterate: an increment by the normal equations (the last ones
        formed, for a point that formed its right-hand side alone: a chord step), or a QR
        step."""
        res = self.result
        G = None if res is None else res.G if res.G is not None else self.rows.last.G
        if res is not None and G is not None and res.g is not None:
            delta = solve_normal(G, res.g)
            if delta is not None:
                return self.coef + delta
        self.p.cheap = False
        try:
            return self.p.step(self.eta, self.mu)[0]
        finally:
            self.p.cheap = True

    @property
    def deviance(self) -> float:
        return float("nan") if self.result is None else self.result.deviance

    def fit(self, it: int, iter_r: int, converged: bool) -> IrlsFit:
        """The state as an :class:`IrlsFit` (R's rule not met: the last step's R by QR)."""
        self.p.cheap = False
        _, r, w = self.p.step(self.eta, self.mu)
        return IrlsFit(self.coef, self.eta.copy(), self.mu.copy(), r, w ** 2, self.deviance,
                       it, iter_r, converged, self.boundary, self.p.n_halved)
