"""The linear quantile regression solver: Frisch–Newton interior point, then the exact vertex.

``min_b Σ ρ_τ(y_i − x_i'b)`` with ``ρ_τ(u) = u (τ − 1{u < 0})`` is a linear programme. Its
dual, ``max_a y'a`` subject to ``X'a = (1 − τ) X'1`` and ``0 ≤ a ≤ 1``, is solved by the
Mehrotra predictor–corrector primal–dual interior point method of Portnoy & Koenker (1997)
(R's ``quantreg::rq.fit.fnb``); every iteration solves one p × p system ``X'QX`` by Cholesky.
The coefficients are the dual's multipliers. The interior point stops near the optimum; the
solution of the LP interpolates p observations, so the p rows with the smallest absolute
residuals are refitted exactly and the vertex is kept when it is optimal (its subgradient
condition holds): what R's simplex (``method = "br"``) returns where the solution is unique.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from attnreg._typing import FloatArray

__all__ = ["QuantregFit", "check_loss", "rq_fit"]

_BETA = 0.99995  # fraction of the step to the boundary (R's rq.fit.fnb)
_EPS = 1e-10  # duality gap, relative to 1 + |objective|
_MAXIT = 100
_VERTEX_TOL = 1e-9  # slack on the vertex's subgradient bounds, relative


@dataclass(frozen=True)
class QuantregFit:
    """One τ's solution.

    Attributes
    ----------
    coef : ndarray, shape (p,)
    tau : float
    basis : ndarray of int, shape (p,) or (0,)
        Rows the solution interpolates (empty when the vertex check failed; rows of the
        distinct-row problem when repeated rows were merged).
    vertex : bool
        The coefficients are the exact vertex solution (optimality verified).
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


def _step(v: FloatArray, dv: FloatArray) -> float:
    """Largest step in [0, 1e20] keeping ``v + step·dv`` non-negative."""
    neg = dv < 0
    if not neg.any():
        return 1e20
    with np.errstate(over="ignore"):  # a tiny negative dv: a huge (harmless) step
        return float(np.min(-v[neg] / dv[neg]))


def _solve_normal(X: FloatArray, q: FloatArray, rhs: FloatArray) -> FloatArray:
    """``(X'QX)⁻¹ rhs`` by Cholesky of the p × p matrix ``X'QX``."""
    M = X.T @ (q[:, None] * X)
    return sla.cho_solve(sla.cho_factor(M, lower=False, check_finite=False), rhs,
                         check_finite=False)


def _steps(x: FloatArray, s: FloatArray, z: FloatArray, w: FloatArray, dx: FloatArray,
           dz: FloatArray, dw: FloatArray) -> tuple[float, float]:
    fp = min(_step(x, dx), _step(s, -dx))
    fd = min(_step(w, dw), _step(z, dz))
    return min(_BETA * fp, 1.0), min(_BETA * fd, 1.0)


def _newton_step(X: FloatArray, c: FloatArray, x: FloatArray, s: FloatArray, yd: FloatArray,
                 z: FloatArray, w: FloatArray, n: int) -> tuple[FloatArray, ...]:
    """One predictor–corrector iteration; returns the new ``(x, s, y_d, z, w)``."""
    q = 1.0 / (z / x + w / s)
    r = z - w
    rhs = X.T @ (q * r)
    dy = _solve_normal(X, q, rhs)
    dx = q * (X @ dy - r)
    dz, dw = -z * (dx / x + 1.0), -w * (-dx / s + 1.0)
    fp, fd = _steps(x, s, z, w, dx, dz, dw)
    if min(fp, fd) < 1.0:  # Mehrotra's corrector
        mu = z @ x + w @ s
        g = (z + fd * dz) @ (x + fp * dx) + (w + fd * dw) @ (s - fp * dx)
        mu = mu * (g / mu) ** 3 / (2 * n)
        dxdz, dsdw = dx * dz, -dx * dw
        xinv, sinv = 1.0 / x, 1.0 / s
        xi = mu * (xinv - sinv)
        dy = _solve_normal(X, q, rhs + X.T @ (q * (dxdz - dsdw - xi)))
        dx = q * (X @ dy + xi - r - dxdz + dsdw)
        dz = mu * xinv - z - xinv * z * dx - dxdz
        dw = mu * sinv - w + sinv * w * dx - dsdw
        fp, fd = _steps(x, s, z, w, dx, dz, dw)
    return x + fp * dx, s - fp * dx, yd + fd * dy, z + fd * dz, w + fd * dw


def _interior_point(X: FloatArray, y: FloatArray, tau: float) -> tuple[FloatArray, int]:
    """Frisch–Newton on the dual; returns the coefficients (−dual multipliers) and iterations.

    Primal variables ``x`` (the dual weights a, in [0, 1]) with slack ``s = 1 − x``; dual
    variables ``y_d`` (−coefficients), ``z, w ≥ 0`` with ``X y_d + z − w = −y``.
    """
    n = y.size
    c = -y
    x = np.full(n, 1.0 - tau)
    s = 1.0 - x
    b = X.T @ x
    yd = sla.lstsq(X, c, check_finite=False)[0]
    r = c - X @ yd
    shift = 1e-3 * max(float(np.mean(np.abs(r))), 1e-12)  # keep z and w strictly positive
    z, w = np.maximum(r, 0.0) + shift, np.maximum(-r, 0.0) + shift
    it = 0
    while it < _MAXIT:
        gap = c @ x - yd @ b + w.sum()
        if gap <= _EPS * (1.0 + abs(c @ x)):
            break
        it += 1
        try:
            with np.errstate(all="ignore"):  # a degenerate LP can drive a slack to zero
                state = _newton_step(X, c, x, s, yd, z, w, n)
        except np.linalg.LinAlgError:
            break
        if not all(np.all(np.isfinite(v)) for v in state):
            break  # keep the last finite iterate: the vertex step finishes the job
        x, s, yd, z, w = state
    return -yd, it


def _basis(X: FloatArray, r: FloatArray) -> np.ndarray | None:
    """p linearly independent rows, taken in order of increasing ``|r|`` (greedy Gram–Schmidt
    over the 4p smallest; ties such as repeated rows are skipped)."""
    n, p = X.shape
    cand = np.argsort(np.abs(r), kind="stable")[: min(n, 4 * p)]
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


def _vertex(X: FloatArray, y: FloatArray, tau: float,
            coef: FloatArray) -> tuple[FloatArray, np.ndarray] | None:
    """The vertex next to ``coef`` when it is optimal, else None.

    The p (independent) rows with the smallest absolute residuals are interpolated exactly;
    the vertex is optimal when the multipliers of those rows, solving
    ``X_h'a = −Σ_{i∉h} ψ_τ(r_i) x_i``, lie in [τ − 1, τ].
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
    if np.all(a >= tau - 1.0 - slack) and np.all(a <= tau + slack):
        return b, np.sort(h)
    return None


def rq_fit(X: FloatArray, y: FloatArray, tau: float,
           weights: FloatArray | None = None) -> QuantregFit:
    """Solve one linear quantile regression exactly.

    Parameters
    ----------
    X : ndarray, shape (n, p)
        The design (full column rank).
    y : ndarray, shape (n,)
    tau : float
        In (0, 1).
    weights : ndarray, shape (n,), optional
        Prior weights, as R's ``rq``: rows and responses multiplied by them.

    Returns
    -------
    QuantregFit
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if weights is not None:
        w = np.asarray(weights, dtype=np.float64)
        X, y = X * w[:, None], y * w
    fit = _solve(X, y, tau)
    if fit.vertex:
        return fit
    # repeated rows make the LP degenerate: the same problem with each distinct row once,
    # weighted by its count (ρ_τ(k r) = k ρ_τ(r)), usually has a clean vertex
    rows, counts = np.unique(np.column_stack([X, y]), axis=0, return_counts=True)
    if rows.shape[0] == X.shape[0]:
        return fit
    merged = _solve(rows[:, :-1] * counts[:, None], rows[:, -1] * counts, tau)
    return merged if merged.vertex else fit


def _solve(X: FloatArray, y: FloatArray, tau: float) -> QuantregFit:
    """Interior point on (already weighted) rows, then the vertex when it is optimal."""
    scale = float(np.max(np.abs(y))) or 1.0  # the solution is equivariant in the scale of y
    coef, it = _interior_point(X, y / scale, tau)
    coef = coef * scale
    found = _vertex(X, y, tau, coef)
    if found is None:
        return QuantregFit(coef, tau, np.empty(0, dtype=np.intp), False, it,
                           check_loss(y - X @ coef, tau))
    b, h = found
    return QuantregFit(b, tau, h, True, it, check_loss(y - X @ b, tau))
