"""The Frisch–Newton interior point for linear quantile regression (Portnoy & Koenker 1997).

The dual LP ``max_a y'a`` subject to ``X'a = (1 − τ) X'1`` and ``0 ≤ a ≤ 1`` is solved by
Mehrotra's primal–dual predictor–corrector, as R's ``quantreg::rq.fit.fnb``; each iteration
solves one p × p system ``X'QX`` by Cholesky. The coefficients are minus the dual multipliers.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from attnreg._typing import FloatArray

__all__ = ["interior_point"]

_BETA = 0.99995  # fraction of the step to the boundary (R's rq.fit.fnb)
_EPS = 1e-10  # duality gap, relative to 1 + |objective|
_MAXIT = 100


def _step(v: FloatArray, dv: FloatArray) -> float:
    """Largest step in [0, 1e20] keeping ``v + step·dv`` non-negative."""
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        ratio = np.where(dv < 0, -v / dv, np.inf)  # a tiny negative dv: a huge (harmless) step
    return min(float(ratio.min()), 1e20)


def _factor_normal(X: FloatArray, q: FloatArray) -> tuple[FloatArray, bool]:
    """The Cholesky factor of the p × p matrix ``X'QX`` (``X'Q^½ Q^½X`` by a rank-k update)."""
    Xq = np.sqrt(q)[:, None] * X
    M = sla.blas.dsyrk(1.0, Xq.T, trans=0, lower=0)  # upper triangle of Xq'Xq (no copy)
    return sla.cho_factor(M, lower=False, check_finite=False)


def _solve_normal(X: FloatArray, q: FloatArray, rhs: FloatArray) -> FloatArray:
    """``(X'QX)⁻¹ rhs`` by Cholesky of the p × p matrix ``X'QX``."""
    return sla.cho_solve(_factor_normal(X, q), rhs, check_finite=False)


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
    factor = _factor_normal(X, q)  # shared by the predictor and the corrector
    dy = sla.cho_solve(factor, rhs, check_finite=False)
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
        dy = sla.cho_solve(factor, rhs + X.T @ (q * (dxdz - dsdw - xi)), check_finite=False)
        dx = q * (X @ dy + xi - r - dxdz + dsdw)
        dz = mu * xinv - z - xinv * z * dx - dxdz
        dw = mu * sinv - w + sinv * w * dx - dsdw
        fp, fd = _steps(x, s, z, w, dx, dz, dw)
    return x + fp * dx, s - fp * dx, yd + fd * dy, z + fd * dz, w + fd * dw


def interior_point(X: FloatArray, y: FloatArray, tau: float) -> tuple[FloatArray, int]:
    """Frisch–Newton on the dual; returns the coefficients (−dual multipliers) and iterations.

    Primal variables ``x`` (the dual weights a, in [0, 1]) with slack ``s = 1 − x``; dual
    variables ``y_d`` (−coefficients), ``z, w ≥ 0`` with ``X y_d + z − w = −y``.
    """
    n = y.size
    c = -y
    x = np.full(n, 1.0 - tau)
    s = 1.0 - x
    b = X.T @ x
    yd = _solve_normal(X, np.ones(n), X.T @ c)  # least squares start
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


