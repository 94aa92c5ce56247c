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
from scipy.linalg import LinAlgError, cho_solve, cholesky, qr, solve_triangular

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import DataError as ConvergenceError
from attnreg.linear.tallqr import streaming_r
from attnreg.glm.families import Family
from attnreg.glm.links import Link

__all__ = ["IrlsFit", "aliased_columns", "irls"]

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


def aliased_columns(X: FloatArray, tol: float) -> IntArray:
    """Columns that are (to ``tol``, relative to their norm) combinations of earlier ones:
    R's limited-pivoting QR (``dqrdc2``) moves these to the end and reports NA for them.

    One tall QR of ``X`` (:func:`aliased_from_factor` then works on its R alone).

    Parameters
    ----------
    X : ndarray, shape (n, p)
    tol : float

    Returns
    -------
    ndarray of int
    """
    k = X.shape[1]
    R = streaming_r(X, np.zeros(X.shape[0]), np.arange(k), np.zeros(k), None, 0.0)
    return aliased_from_factor(np.triu(R[:k, :k]), tol)


def aliased_from_factor(R: FloatArray, tol: float) -> IntArray:
    """:func:`aliased_columns` from the R factor of the design (R'R = X'X), shape (p, p).

    The part of column j outside the span of the earlier kept columns has the norm of the
    last diagonal entry of the R of those columns and j, a QR of a few columns of R.
    """
    kept: list[int] = []
    aliased: list[int] = []
    for j in range(R.shape[1]):  # a loop over columns (a handful), not rows
        norm = float(np.linalg.norm(R[:, j]))
        sub = qr(R[:, [*kept, j]], mode="r", check_finite=False)[0]
        rn = abs(float(sub[len(kept), len(kept)])) if sub.shape[0] > len(kept) else 0.0
        if norm == 0 or rn < tol * norm:
            aliased.append(j)
        else:
            kept.append(j)
    return np.asarray(aliased, dtype=np.intp)


def _wls_normal(X: FloatArray, z: FloatArray, w: FloatArray
                ) -> tuple[FloatArray, FloatArray] | None:
    """:func:`_wls` by the normal equations (a Cholesky factor of X'WX, several times cheaper
    than the tall QR), or None when their conditioning could cost more than a few digits of
    a step (the diagonal of the factor spans more than :data:`NORMAL_COND`)."""
    Xw = X * w[:, None]
    try:
        c = cholesky(Xw.T @ Xw, lower=False, check_finite=False)
    except LinAlgError:
        return None
    d = np.abs(np.diag(c))
    if d.size == 0 or not d.min() > d.max() / NORMAL_COND:
        return None
    return cho_solve((c, False), Xw.T @ (z * w), check_finite=False), c


def _wls(X: FloatArray, z: FloatArray, w: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Coefficients of the weighted least-squares problem min ||w (z - X b)|| and the R of
    the thin QR factorisation of ``w X``: the R of [w X | w z] by the tall-skinny Householder
    QR of the linear fits (Q never formed; its last column is Q'(w z))."""
    k = X.shape[1]
    R = streaming_r(X, z, np.arange(k), np.zeros(k), w, 0.0)
    r = np.triu(R[:k, :k])
    return solve_triangular(r, R[:k, k]), r


class _Problem:
    """The data and family of one fit, and R's ``eval``-and-check helpers."""

    def __init__(self, X: FloatArray, y: FloatArray, wt: FloatArray, offset: FloatArray,
                 family: Family, link: Link) -> None:
        self.X, self.y, self.wt, self.offset = X, y, wt, offset
        self.family, self.link = family, link
        self.n_halved = 0
        #: steps by the normal equations (the path to R's stopping rule; QR steps after it)
        self.cheap = False

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
    p.cheap = not exact_r  # R's own path is QR throughout
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
    step = float("inf")
    if converged and not exact_r:
        coef, eta, mu, r, w, dev, boundary, it, step = _to_optimum(p, coef, eta, mu, r, w, dev,
                                                                  boundary, it, maxit)
    return IrlsFit(coef, eta, mu, r, w ** 2, dev, it, iter_r, converged, boundary, p.n_halved,
                   step)


def _to_optimum(p: _Problem, coef: FloatArray, eta: FloatArray, mu: FloatArray, r: FloatArray,
                w: FloatArray, dev: float, boundary: bool, it: int, maxit: int) -> tuple:
    """Further scoring steps until the coefficients stop changing at working precision (the
    change is within a few ulps, or stops shrinking: the rounding floor). These are QR steps:
    they decide what is reported, to the accuracy of the tall QR."""
    p.cheap = False
    last, step = np.inf, np.inf
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
        if change <= 4 * EPS * scale:
            break
        last = change
    return coef, eta, mu, r, w, dev, boundary, it, step
