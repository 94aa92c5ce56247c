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

from functools import partial

import numpy as np
from scipy.linalg import LinAlgError, cholesky, qr

from attnreg._typing import FloatArray, IntArray
from attnreg.linear.tallqr import streaming_r
from attnreg.glm.families import Family
from attnreg.glm.links import Link
from attnreg.glm.normal import PassResult, weighted_gram
from attnreg.glm.optimum import irls_optimum
from attnreg.glm.scoring import IrlsFit, Problem, start
from attnreg.threads import narrow_blas

__all__ = ["CLEAR_RANK_FLOOR", "AliasingUnsure", "IrlsFit", "aliased_columns", "clearly_full_rank",
           "gram_clearly_full_rank", "irls"]

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
    return gram_clearly_full_rank(G, tol)


def gram_clearly_full_rank(G: FloatArray, tol: float, spread: float = 1.0) -> bool:
    """:func:`clearly_full_rank` from the Gram matrix ``G`` = X'VX, shape (p, p), of the
    design under other positive weights V, whose ratios to the prior weights lie within a
    factor ``spread`` (largest over smallest) of each other.

    Measured in the V-norm instead of the prior weights', a column's part outside the span
    of the earlier columns, relative to its norm, changes by at most √spread either way: the
    test asks each squared pivot for ``spread`` times :data:`CLEAR_RANK_FLOOR` (and tol²)
    relative to the column's squared norm, so that what it certifies holds under the prior
    weights too. The IRLS pass from R's start gives such a G for free
    (:func:`attnreg.glm.optimum.irls_optimum`).
    """
    if not (np.isfinite(spread) and spread >= 1.0):
        return False
    try:
        c = cholesky(G, lower=False, check_finite=False)
    except (LinAlgError, ValueError):
        return False
    norms = np.diag(G)
    floor = spread * max(tol ** 2, CLEAR_RANK_FLOOR)
    return bool(np.isfinite(c).all() and np.all(norms > 0)
                and np.all(np.diag(c) ** 2 >= floor * norms))


class AliasingUnsure(Exception):
    """The first pass of :func:`irls` could not certify that no column is aliased."""


def _check_full_rank(first: PassResult, tol: float) -> None:
    """Raise :class:`AliasingUnsure` unless the start pass's Gram matrix certifies full rank."""
    if first.G is None or first.weight_range is None:
        raise AliasingUnsure
    low, high = first.weight_range
    if not (low > 0 and gram_clearly_full_rank(first.G, tol, high / low)):
        raise AliasingUnsure


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
         trials: FloatArray | None = None, alias_tol: float | None = None) -> IrlsFit:
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
    alias_tol : float, optional
        ``X`` may have aliased columns (as :func:`aliased_columns` with this tolerance): the
        path to the optimum certifies that it has none from its first pass
        (:func:`gram_clearly_full_rank`) and raises :class:`AliasingUnsure` when it cannot,
        before any step. Not with ``exact_r``.

    Returns
    -------
    IrlsFit

    Raises
    ------
    AliasingUnsure
        With ``alias_tol``: some column may be aliased (run :func:`aliased_columns`).
    """
    if alias_tol is not None and exact_r:
        raise ValueError("alias_tol= needs the path to the optimum (exact_r=False)")
    with narrow_blas(X.shape[1]):  # the passes' threads are the row segments' (attnreg.threads)
        return _irls(Problem(X, y, wt, offset, family, link, trials), epsilon, maxit, exact_r,
                     alias_tol)


def _irls(p: Problem, epsilon: float, maxit: int, exact_r: bool,
          alias_tol: float | None) -> IrlsFit:
    if not exact_r:
        check = None if alias_tol is None else partial(_check_full_rank, tol=alias_tol)
        return irls_optimum(p, epsilon, maxit, check)
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
