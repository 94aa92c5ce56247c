"""Iteratively reweighted least squares as R's ``glm.fit``, then on to the optimum.

With ``control="R"`` each step solves the weighted least-squares problem of the working
response by a thin QR factorisation (no normal equations, no inverse), as R does; by default
the path to the optimum takes cheaper steps and ends with QR steps
(:mod:`attnreg.glm.optimum`). Starting values, step-halving (a deviance
that is not finite, or a mean or linear predictor outside the family's or link's range) and
the stopping rule ``|dev - dev_old| / (|dev| + 0.1) < epsilon`` are R's. R's rule leaves
about ``sqrt(epsilon)``-sized errors in the coefficients; unless ``control="R"`` the
iterations then go on until the coefficients stop changing at working precision.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cholesky, qr

from attnreg._typing import FloatArray, IntArray
from attnreg.linear.tallqr import streaming_r
from attnreg.glm.families import Family
from attnreg.glm.links import Link
from attnreg.glm.normal import weighted_gram
from attnreg.glm.optimum import irls_optimum
from attnreg.glm.scoring import IrlsFit, Problem, start
from attnreg.threads import narrow_blas

__all__ = ["CLEAR_RANK_FLOOR", "IrlsFit", "aliased_columns", "clearly_full_rank", "irls"]

#: a column whose Cholesky pivot squared is at least this fraction of its squared norm is
#: clearly not aliased (:func:`clearly_full_rank`)
CLEAR_RANK_FLOOR = 1e-8


def aliased_columns(X: FloatArray, tol: float, sqrt_w: FloatArray | None = None) -> IntArray:
    """Columns that are (to ``tol``, relative to their norm) combinations of earlier ones:
    R's limited-pivoting QR (``dqrdc2``) moves these to the end and reports NA for them.

    One tall QR of ``diag(sqrt_w) X`` (:func:`aliased_from_factor` then works on its R alone;
    the rows are weighted leaf by leaf, no weighted copy of ``X`` is made).

    Parameters
    ----------
    X : ndarray, shape (n, p)
    tol : float
    sqrt_w : ndarray, shape (n,), optional
        Square roots of the prior weights.

    Returns
    -------
    ndarray of int
    """
    k = X.shape[1]
    if clearly_full_rank(X, tol, sqrt_w):
        return np.zeros(0, dtype=np.intp)
    R = streaming_r(X, np.zeros(X.shape[0]), np.arange(k), np.zeros(k), sqrt_w, 0.0)
    return aliased_from_factor(np.triu(R[:k, :k]), tol)


def clearly_full_rank(X: FloatArray, tol: float, sqrt_w: FloatArray | None = None) -> bool:
    """Whether every column of ``diag(sqrt_w) X`` keeps a part outside the span of the earlier
    columns far above ``tol`` times its norm, by the Cholesky factor of the Gram matrix (one
    pass over the rows, a fraction of the tall QR's cost).

    The squared pivot of column j is the squared norm of that part, computed with an error
    of a few ulps of the column's squared norm; a pivot squared at least
    :data:`CLEAR_RANK_FLOOR` (and ``tol``²) times the squared norm is eight orders of
    magnitude above that error, so no column is aliased. Anything closer (or a factor that
    fails) is left to the QR of :func:`aliased_columns`.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    tol : float
    sqrt_w : ndarray, shape (n,), optional
    """
    if X.shape[1] == 0 or X.shape[0] < X.shape[1]:
        return False
    w = np.ones(X.shape[0]) if sqrt_w is None else sqrt_w
    G, _ = weighted_gram(X, np.zeros(X.shape[0]), w)
    try:
        c = cholesky(G, lower=False, check_finite=False)
    except LinAlgError:
        return False
    norms = np.diag(G)
    return bool(np.isfinite(c).all() and np.all(np.diag(c) ** 2 >= max(tol ** 2, CLEAR_RANK_FLOOR)
                                                * norms) and np.all(norms > 0))


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


def irls(X: FloatArray, y: FloatArray, wt: FloatArray, offset: FloatArray, family: Family,
         link: Link, *, epsilon: float = 1e-8, maxit: int = 25, exact_r: bool = False,
         trials: FloatArray | None = None) -> IrlsFit:
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
    trials : ndarray, shape (n,), optional
        The binomial trials of a ``cbind(successes, failures)`` response: R starts from
        ``(trials · y + 0.5) / (trials + 1)`` (the prior weights ``wt`` then include them).

    Returns
    -------
    IrlsFit
    """
    with narrow_blas(X.shape[1]):  # the passes' threads are the row segments' (attnreg.threads)
        return _irls(Problem(X, y, wt, offset, family, link, trials), epsilon, maxit, exact_r)


def _irls(p: Problem, epsilon: float, maxit: int, exact_r: bool) -> IrlsFit:
    if not exact_r:
        return irls_optimum(p, epsilon, maxit)
    eta, mu = start(p)
    dev_old, old = p.deviance(mu), None
    converged, it = False, 0
    coef = np.zeros(p.X.shape[1])
    while it < maxit:
        it += 1
        coef, r, w = p.step(eta, mu)
        coef, eta, mu, dev, boundary = p.halve(coef, old, maxit)
        if abs(dev - dev_old) / (abs(dev) + 0.1) < epsilon:
            converged = True
            break
        dev_old, old = dev, coef
    iter_r = it
    return IrlsFit(coef, eta, mu, r, w ** 2, dev, it, iter_r, converged, boundary, p.n_halved)
