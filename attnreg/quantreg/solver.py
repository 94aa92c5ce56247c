"""The linear quantile regression solver: Frisch–Newton interior point, then the exact vertex.

``min_b Σ ρ_τ(y_i − x_i'b)`` with ``ρ_τ(u) = u (τ − 1{u < 0})`` is a linear programme, solved
by the interior point of :mod:`attnreg.quantreg.interior` (R's ``rq.fit.fnb``), on a reduced
problem when n is large (:mod:`attnreg.quantreg.preprocess`). The interior point stops near
the optimum; the
solution of the LP interpolates p observations, so the p rows with the smallest absolute
residuals are refitted exactly and the vertex is kept when it is optimal (its subgradient
condition holds): what R's simplex (``method = "br"``) returns where the solution is unique.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from attnreg._typing import FloatArray
from attnreg.quantreg.preprocess import globbed_fit
from attnreg.threads import narrow_blas

__all__ = ["QuantregFit", "check_loss", "rq_fit", "vertex_rows"]

_VERTEX_TOL = 1e-9  # slack on the vertex's subgradient bounds, relative


@dataclass(frozen=True)
class QuantregFit:
    """One τ's solution.

    Attributes
    ----------
    coef : ndarray, shape (p,)
    tau : float
    basis : ndarray of int, shape (p,) or (0,)
        Rows the solution interpolates (rows of the distinct-row problem when repeated rows
        were merged; empty when the coefficients are the interior point's).
    vertex : bool
        The coefficients are a vertex verified optimal. When False (a degenerate problem, with
        more zero residuals than coefficients or several solutions), they are the vertex next
        to the interior point's solution when its loss is no larger, else that solution (its
        loss within about 1e-10, relative, of the optimum).
    iterations : int
        Interior point iterations.
    objective : float
        ``Σ w_i ρ_τ(y_i − x_i'b)`` on the (weighted) data the solver saw.
    """

    coef: FloatArray
    tau: float
    basis: np.ndarray
    vertex: bool
    iterations: int
    objective: float


def check_loss(r: FloatArray, tau: float) -> float:
    """``Σ ρ_τ(r_i)``, the quantile (check) loss of residuals ``r``."""
    return float(np.sum(r * (tau - (r < 0))))


def _basis(X: FloatArray, r: FloatArray) -> np.ndarray | None:
    """p linearly independent rows, taken in order of increasing ``|r|`` (greedy Gram–Schmidt
    over the 4p smallest; ties such as repeated rows are skipped)."""
    n, p = X.shape
    k = min(n, 4 * p)
    near = np.argpartition(np.abs(r), k - 1)[:k]
    cand = near[np.argsort(np.abs(r[near]), kind="stable")]
    Q = np.zeros((p, 0))
    chosen: list[int] = []
    for i in cand:  # at most 4p rows, not all of them
        v = X[i] - Q @ (Q.T @ X[i])
        norm = float(np.linalg.norm(v))
        if norm > 1e-10 * float(np.linalg.norm(X[i])):
            Q = np.column_stack([Q, v / norm])
            chosen.append(int(i))
            if len(chosen) == p:
                return np.asarray(chosen, dtype=np.intp)
    return None


def vertex_rows(X: FloatArray, r: FloatArray) -> np.ndarray | None:
    """The p independent rows a vertex solution with residuals ``r`` interpolates (those with
    the smallest ``|r|``), shape (p,), or None when no p independent rows are found."""
    return _basis(X, r)


def _vertex(X: FloatArray, y: FloatArray, tau: float,
            coef: FloatArray) -> tuple[FloatArray, np.ndarray, bool] | None:
    """The vertex next to ``coef``, its rows and whether it is verified optimal (None when no
    p independent rows are found).

    The p (independent) rows with the smallest absolute residuals are interpolated exactly;
    the vertex is optimal when the multipliers of those rows, solving
    ``X_h'a = −Σ_{i∉h} ψ_τ(r_i) x_i``, lie in [τ − 1, τ] (a sufficient condition: with
    other zero residuals, a degenerate vertex may be optimal and fail it).
    """
    h = _basis(X, y - X @ coef)
    if h is None:
        return None
    lu = sla.lu_factor(X[h], check_finite=False)
    b = sla.lu_solve(lu, y[h], check_finite=False)
    rv = y - X @ b
    rv[h] = 0.0
    psi = tau - (rv < 0)
    psi[h] = 0.0
    a = sla.lu_solve(lu, -(X.T @ psi), trans=1, check_finite=False)
    slack = _VERTEX_TOL * (1.0 + float(np.max(np.abs(a))))
    ok = bool(np.all(a >= tau - 1.0 - slack) and np.all(a <= tau + slack))
    return b, np.sort(h), ok


def rq_fit(X: FloatArray, y: FloatArray, tau: float, weights: FloatArray | None = None,
           start: FloatArray | None = None) -> QuantregFit:
    """Solve one linear quantile regression exactly.

    With ``start`` (a warm start: the solution of a neighbouring problem, such as the previous
    forecast origin's window), the vertex next to it is tried first and returned, with no
    interior point (``iterations == 0``), when it is verified optimal; otherwise the problem
    is solved from scratch. A verified vertex is an optimum, so the answer is the cold one
    whenever the solution is unique.

    Parameters
    ----------
    X : ndarray, shape (n, p)
        The design (full column rank).
    y : ndarray, shape (n,)
    tau : float
        In (0, 1).
    weights : ndarray, shape (n,), optional
        Prior weights, as R's ``rq``: rows and responses multiplied by them.
    start : ndarray, shape (p,), optional
        Coefficients to start from.

    Returns
    -------
    QuantregFit
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        X, y = X * w[:, None], y * w
    with narrow_blas(X.shape[1]):  # the project's thread policy: narrow designs on one thread
        if start is not None:
            found = _vertex(X, y, tau, np.asarray(start, dtype=np.float64))
            if found is not None and found[2]:  # verified optimal: no interior point needed
                b, h, _ = found
                return QuantregFit(b, tau, h, True, 0, check_loss(y - X @ b, tau))
        return _solve_or_merge(X, y, tau)


def _solve_or_merge(X: FloatArray, y: FloatArray, tau: float) -> QuantregFit:
    fit = _solve(X, y, tau)
    if fit.vertex:
        return fit
    # repeated rows make the LP degenerate: the same problem with each distinct row once,
    # weighted by its count (ρ_τ(k r) = k ρ_τ(r)), usually has a clean vertex
    rows, counts = np.unique(np.column_stack([X, y]), axis=0, return_counts=True)
    if rows.shape[0] == X.shape[0]:
        return fit
    merged = _solve(rows[:, :-1] * counts[:, None], rows[:, -1] * counts, tau)
    return merged if merged.vertex or merged.objective < fit.objective else fit


def _solve(X: FloatArray, y: FloatArray, tau: float) -> QuantregFit:
    """Interior point on (already weighted) rows, then the vertex when it is optimal."""
    scale = float(np.max(np.abs(y))) or 1.0  # the solution is equivariant in the scale of y
    coef, it = globbed_fit(X, y / scale, tau)
    coef = coef * scale
    ip_loss = check_loss(y - X @ coef, tau)
    found = _vertex(X, y, tau, coef)
    if found is not None:
        b, h, ok = found
        loss = check_loss(y - X @ b, tau)
        if ok or loss <= ip_loss:  # unverified: kept when no worse than the interior point
            return QuantregFit(b, tau, h, ok, it, loss)
    return QuantregFit(coef, tau, np.empty(0, dtype=np.intp), False, it, ip_loss)
