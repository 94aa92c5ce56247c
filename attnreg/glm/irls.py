"""Iteratively reweighted least squares as R's ``glm.fit``, then on to the optimum.

Each step solves the weighted least-squares problem of the working response by a thin QR
factorisation (no normal equations, no inverse). Starting values, step-halving (a deviance
that is not finite, or a mean or linear predictor outside the family's or link's range) and
the stopping rule ``|dev - dev_old| / (|dev| + 0.1) < epsilon`` are R's. R's rule leaves
about ``sqrt(epsilon)``-sized errors in the coefficients; unless ``control="R"`` the
iterations then go on until the coefficients stop changing at working precision.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import DataError as ConvergenceError
from attnreg.glm.families import Family
from attnreg.glm.links import Link

__all__ = ["IrlsFit", "aliased_columns", "irls"]

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


def aliased_columns(X: FloatArray, tol: float) -> IntArray:
    """Columns that are (to ``tol``, relative to their norm) combinations of earlier ones:
    R's limited-pivoting QR (``dqrdc2``) moves these to the end and reports NA for them.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    tol : float

    Returns
    -------
    ndarray of int
    """
    kept: list[int] = []
    aliased: list[int] = []
    q = np.zeros((X.shape[0], 0))
    for j in range(X.shape[1]):  # a loop over columns (a handful), not rows
        col = X[:, j]
        norm = float(np.linalg.norm(col))
        rest = col - q @ (q.T @ col)
        rest = rest - q @ (q.T @ rest)  # twice is enough (Kahan-Parlett)
        rn = float(np.linalg.norm(rest))
        if norm == 0 or rn < tol * norm:
            aliased.append(j)
            continue
        kept.append(j)
        q = np.column_stack([q, rest / rn])
    return np.asarray(aliased, dtype=np.intp)


def _wls(X: FloatArray, z: FloatArray, w: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Coefficients of the weighted least-squares problem min ||w (z - X b)|| and the R of
    the thin QR factorisation of ``w X``."""
    q, r = np.linalg.qr(X * w[:, None])
    return solve_triangular(r, q.T @ (z * w)), r


class _Problem:
    """The data and family of one fit, and R's ``eval``-and-check helpers."""

    def __init__(self, X: FloatArray, y: FloatArray, wt: FloatArray, offset: FloatArray,
                 family: Family, link: Link) -> None:
        self.X, self.y, self.wt, self.offset = X, y, wt, offset
        self.family, self.link = family, link
        self.n_halved = 0

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
        var = self.family.variance(mu)
        if not np.isfinite(var).all():
            raise ConvergenceError("NAs in V(mu): the fitted means left the family's range")
        if (var == 0).any():
            raise ConvergenceError("0s in V(mu): a fitted mean reached the boundary of the "
                                   "family's range; check for separation")
        d = self.link.mu_eta(eta)
        z = eta - self.offset + (self.y - mu) / d
        w = np.sqrt(self.wt * d ** 2 / var)
        coef, r = _wls(self.X, z, w)
        if not np.isfinite(coef).all():
            raise ConvergenceError("non-finite coefficients in an IRLS step; "
                                   "give other data or a different link")
        return coef, r, w

    def halve(self, coef: FloatArray, old: FloatArray | None, maxit: int
              ) -> tuple[FloatArray, FloatArray, FloatArray, float, bool]:
        """R's step-halving: towards the previous coefficients until the deviance is finite
        and (η, μ) valid."""
        eta, mu = self.state(coef)
        dev, halved = self.deviance(mu), False
        for kind in ("finite", "valid"):
            tries = 1
            while not (np.isfinite(dev) if kind == "finite" else self.valid(eta, mu)):
                if old is None:
                    raise ConvergenceError("no valid set of coefficients has been found: the "
                                           "starting values give an invalid fit")
                if tries > maxit:
                    raise ConvergenceError("cannot correct the step size by halving")
                tries, halved = tries + 1, True
                self.n_halved += 1 if tries == 2 else 0
                coef = (coef + old) / 2
                eta, mu = self.state(coef)
                dev = self.deviance(mu)
        return coef, eta, mu, dev, halved


def irls(X: FloatArray, y: FloatArray, wt: FloatArray, offset: FloatArray, family: Family,
         link: Link, *, epsilon: float = 1e-8, maxit: int = 25, exact_r: bool = False) -> IrlsFit:
    """Fit a GLM by IRLS with R's ``glm.fit`` conventions.

    Parameters
    ----------
    X : ndarray, shape (n, k)
        Design of full column rank (aliased columns already removed).
    y, wt, offset : ndarray, shape (n,)
        Response, prior weights (positive) and offset.
    family, link : Family, Link
    epsilon, maxit : float, int
        R's ``glm.control``.
    exact_r : bool
        Stop where R stops; otherwise continue to the optimum.

    Returns
    -------
    IrlsFit
    """
    p = _Problem(X, y, wt, offset, family, link)
    mu = family.initialize(y, wt, link.name)
    eta = link.linkfun(mu)
    if not p.valid(eta, link.linkinv(eta)):
        raise ConvergenceError(f"cannot find valid starting values for family {family.name!r} "
                               f"with link {link.name!r}: the response is outside its range")
    mu = link.linkinv(eta)
    dev_old, old = p.deviance(mu), None
    converged, it = False, 0
    coef = np.zeros(X.shape[1])
    while it < maxit:
        it += 1
        coef, r, w = p.step(eta, mu)
        coef, eta, mu, dev, boundary = p.halve(coef, old, maxit)
        if abs(dev - dev_old) / (abs(dev) + 0.1) < epsilon:
            converged = True
            break
        dev_old, old = dev, coef
    iter_r = it
    if converged and not exact_r:
        coef, eta, mu, r, w, dev, boundary, it = _to_optimum(p, coef, eta, mu, r, w, dev,
                                                            boundary, it, maxit)
    return IrlsFit(coef, eta, mu, r, w ** 2, dev, it, iter_r, converged, boundary, p.n_halved)


def _to_optimum(p: _Problem, coef: FloatArray, eta: FloatArray, mu: FloatArray, r: FloatArray,
                w: FloatArray, dev: float, boundary: bool, it: int, maxit: int) -> tuple:
    """Further scoring steps until the coefficients stop changing at working precision (the
    change is within a few ulps, or stops shrinking: the rounding floor)."""
    last = np.inf
    for _ in range(maxit):
        new, r_new, w_new = p.step(eta, mu)
        new, eta_new, mu_new, dev_new, halved = p.halve(new, coef, maxit)
        change = float(np.max(np.abs(new - coef), initial=0.0))
        scale = float(np.max(np.abs(new), initial=0.0))
        if change >= last and change > 0:  # rounding noise: keep the previous step
            break
        coef, eta, mu, r, w, dev, boundary, it = new, eta_new, mu_new, r_new, w_new, dev_new, \
            halved, it + 1
        if change <= 4 * EPS * scale:
            break
        last = change
    return coef, eta, mu, r, w, dev, boundary, it
