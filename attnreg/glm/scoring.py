"""One Fisher scoring step of a GLM, and the fit's state (:class:`IrlsFit`).

A step solves the weighted least-squares problem of the working response, by a thin QR
factorisation (the tall QR of the linear fits: no normal equations, no inverse) or, on the
way to the optimum, by the normal equations where their conditioning allows
(:data:`NORMAL_COND`). :func:`start` gives R's starting values; :class:`Problem` holds the
data of one fit with R's step-halving.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_solve, cholesky, solve_triangular

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError as ConvergenceError
from attnreg.glm.families import Family
from attnreg.glm.links import Link
from attnreg.glm.normal import RowPass, weighted_gram, working_response
from attnreg.linear.tallqr import streaming_r

__all__ = ["EPS", "NORMAL_COND", "IrlsFit", "Problem", "solve_normal", "start"]

#: the largest spread of the Cholesky factor's diagonal (a lower bound on the condition
#: number of √W X) at which a step is taken by the normal equations: their error, about
#: cond² · eps ≤ 1e-6 relative, only moves an early iterate, never what is reported
NORMAL_COND = 1e5
EPS = float(np.finfo(np.float64).eps)


@dataclass(frozen=True)
class IrlsFit:
    """The converged IRLS state, in R's conventions.

    Attributes
    ----------
    coef : ndarray, shape (n_kept,)
        Coefficients of the columns kept (not aliased).
    eta, mu : ndarray, shape (n,)
        Linear predictor (offset included) and fitted means.
    r : ndarray, shape (n_kept, n_kept)
        R of the last step's QR factorisation of the weighted design.
    working_weights : ndarray, shape (n,)
        The last step's IRLS weights (R's ``fit$weights``).
    deviance : float
    iter : int
        Fisher scoring iterations (the continuation's included).
    iter_r : int
        Iterations at which R's rule stopped.
    converged : bool
        R's rule was met within ``maxit`` iterations.
    boundary : bool
        The last step was halved (R's ``boundary``).
    n_halved : int
        Steps truncated by halving (R warns "step size truncated" for each).
    final_step : float
        The last change of the coefficients, relative to their size (inf when the fit
        stopped by R's rule alone): at rounding level once the optimum is reached.
    """

    coef: FloatArray
    eta: FloatArray
    mu: FloatArray
    r: FloatArray
    working_weights: FloatArray
    deviance: float
    iter: int
    iter_r: int
    converged: bool
    boundary: bool
    n_halved: int = 0
    final_step: float = float("inf")


def _wls_normal(X: FloatArray, z: FloatArray, w: FloatArray
                ) -> tuple[FloatArray, FloatArray] | None:
    """:func:`_wls` by the normal equations (a Cholesky factor of X'WX, several times cheaper
    than the tall QR), or None when their conditioning could cost more than a few digits of
    a step (the diagonal of the factor spans more than :data:`NORMAL_COND`)."""
    G, g = weighted_gram(X, z, w)
    c = _normal_factor(G)
    return None if c is None else (cho_solve((c, False), g, check_finite=False), c)


def _normal_factor(G: FloatArray) -> FloatArray | None:
    """The upper Cholesky factor of X'WX, or None when its diagonal spans more than
    :data:`NORMAL_COND` (or it is not positive definite)."""
    try:
        c = cholesky(G, lower=False, check_finite=False)
    except LinAlgError:
        return None
    d = np.abs(np.diag(c))
    return c if d.size and d.min() > d.max() / NORMAL_COND else None


def solve_normal(G: FloatArray, g: FloatArray) -> FloatArray | None:
    """G⁻¹g by the Cholesky factor (None as :func:`_normal_factor`, or if not finite)."""
    c = _normal_factor(G)
    if c is None:
        return None
    out = cho_solve((c, False), g, check_finite=False)
    return out if np.isfinite(out).all() else None


def _wls(X: FloatArray, z: FloatArray, w: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Coefficients of the weighted least-squares problem min ||w (z - X b)|| and the R of
    the thin QR factorisation of ``w X``: the R of [w X | w z] by the tall-skinny Householder
    QR of the linear fits (Q never formed; its last column is Q'(w z))."""
    k = X.shape[1]
    R = streaming_r(X, z, np.arange(k), np.zeros(k), w, 0.0)
    r = np.triu(R[:k, :k])
    return solve_triangular(r, R[:k, k]), r


class Problem:
    """The data and family of one fit, and R's ``eval``-and-check helpers."""

    def __init__(self, X: FloatArray, y: FloatArray, wt: FloatArray, offset: FloatArray,
                 family: Family, link: Link, trials: FloatArray | None = None) -> None:
        self.X, self.y, self.wt, self.offset = X, y, wt, offset
        #: the binomial trials of a ``cbind(successes, failures)`` response (R's start)
        self.trials = trials
        self.family, self.link = family, link
        self.n_halved = 0
        #: steps by the normal equations (the path to R's stopping rule; QR steps after it)
        self.cheap = False
        #: the fused passes over the rows that evaluate a point, when set (not for control="R")
        self.rows: RowPass | None = None

    def state(self, coef: FloatArray) -> tuple[FloatArray, FloatArray]:
        eta = self.X @ coef + self.offset
        return eta, self.link.linkinv(eta)

    def deviance(self, mu: FloatArray) -> float:
        with np.errstate(invalid="ignore", divide="ignore"):  # R: NaN, then step-halving
            return float(np.sum(self.family.dev_resids(self.y, mu, self.wt)))

    def valid(self, eta: FloatArray, mu: FloatArray) -> bool:
        return self.link.valideta(eta) and self.family.validmu(mu)

    def step(self, eta: FloatArray, mu: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """One Fisher scoring step from (η, μ): new coefficients, R and IRLS weights."""
        z, w, problem = working_response(self.family, self.link, eta, mu,
                                         (self.y, self.wt, self.offset), self.X.shape[1])
        if problem == "nan":
            raise ConvergenceError("NAs in V(mu): the fitted means left the family's range")
        if problem == "zero":
            raise ConvergenceError("0s in V(mu): a fitted mean reached the boundary of the "
                                   "family's range; check for separation")
        solved = _wls_normal(self.X, z, w) if self.cheap else None
        coef, r = solved if solved is not None else _wls(self.X, z, w)
        if not np.isfinite(coef).all():
            raise ConvergenceError("non-finite coefficients in an IRLS step; "
                                   "give other data or a different link")
        return coef, r, w

    def halve(self, coef: FloatArray, old: FloatArray | None, maxit: int
              ) -> tuple[FloatArray, FloatArray, FloatArray, float, bool]:
        """R's step-halving: towards the previous coefficients until the deviance is finite
        and (η, μ) valid."""
        eta, mu, dev, valid = self.evaluate(coef)
        halved = False
        for kind in ("finite", "valid"):
            tries = 1
            while not (np.isfinite(dev) if kind == "finite" else valid):
                if old is None:
                    raise ConvergenceError("no valid set of coefficients has been found: the "
                                           "starting values give an invalid fit")
                if tries > maxit:
                    raise ConvergenceError("cannot correct the step size by halving")
                tries, halved = tries + 1, True
                self.n_halved += 1 if tries == 2 else 0
                coef = (coef + old) / 2
                eta, mu, dev, valid = self.evaluate(coef)
        return coef, eta, mu, dev, halved

    def evaluate(self, coef: FloatArray) -> tuple[FloatArray, FloatArray, float, bool]:
        """η, μ, the deviance and their validity at ``coef``: by one threaded pass of
        :attr:`rows` where it is set (the path to the optimum), else by R's functions on
        whole vectors (``control="R"``)."""
        if self.rows is None:
            eta, mu = self.state(coef)
            return eta, mu, self.deviance(mu), self.valid(eta, mu)
        eta, mu = np.empty(self.y.size), np.empty(self.y.size)
        res = self.rows.run(coef, eta, mu, gram=False)
        return eta, mu, res.deviance, res.valid


def start(p: Problem) -> tuple[FloatArray, FloatArray]:
    """R's starting η and μ (``mustart`` through the link), checked; a ``cbind()`` response
    starts from ``(trials · y + 0.5) / (trials + 1)``."""
    mu = p.family.initialize(p.y, p.wt if p.trials is None else p.trials, p.link.name)
    eta = p.link.linkfun(mu)
    if not p.valid(eta, p.link.linkinv(eta)):
        raise ConvergenceError(f"cannot find valid starting values for family "
                               f"{p.family.name!r} with link {p.link.name!r}: the response is "
                               "outside its range")
    return eta, p.link.linkinv(eta)
