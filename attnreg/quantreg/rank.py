"""Rank-inversion confidence intervals of linear quantile regression (R's ``se = "rank"``).

Koenker (1994), as R's ``quantreg::rq.fit.br(..., ci = TRUE, interp = TRUE)``: for coefficient
``j``, the hypothesis ``β_j = b`` is tested by the regression rank-score statistic
``T(b) = x_j'(â(b) − (1 − τ)) / sqrt(q_j τ(1 − τ))``, where ``â(b)`` is the dual solution (the
regression rank scores) of the quantile regression of ``y − b x_j`` on the other columns and
``q_j`` is the squared norm of ``x_j`` net of the other columns (``iid=True``: 1 / [(X'X)⁻¹]_jj;
``iid=False``: the residual sum of squares of the weighted least squares of ``x_j`` on them,
with the Hendricks–Koenker densities as weights). ``â(b)`` is piecewise constant in ``b``:
it changes where a residual of the restricted fit crosses zero. From ``β̂_j``, the
breakpoints are followed upwards (then downwards) until ``|T| ≥ t_{1 − α/2, n − p}``; the bound
interpolates linearly, as R, between the start of the last segment accepted and the start of
the first rejected one. At each breakpoint the restricted fit's basis is kept or exchanged
with the row whose residual crossed zero (one simplex pivot), checked optimal by its dual.

Repeated rows are merged first (each distinct row once, weighted by its count), so the rank
scores are those of the exact optimum where copies cross zero together; rows that cross at
the same breakpoint (ties) are exchanged together. The bounds equal R's (``rqbr``) to 1e-8
where the restricted fits are not degenerate; with ties R's bound can follow the basis its
simplex holds (its interpolation starts from that basis' breakpoints), and where repeated
rows cross zero R's simplex flips one copy, so its interval can contain values the rank
test rejects. With ``iid=False``, a bandwidth that takes ``τ ± h`` out of (0, 1) is halved
(as ``summary.rq``'s ``"nid"``; R's ``rq.fit.br`` fails there).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import scipy.linalg as sla
from scipy import stats

from attnreg._typing import FloatArray
from attnreg._warn import warn_user
from attnreg.exceptions import InferenceWarning
from attnreg.quantreg.se import bandwidth_rq
from attnreg.quantreg.solver import rq_fit, vertex_rows

__all__ = ["rank_intervals"]

_TOL = np.finfo(float).eps ** (2 / 3)  # rq.fit.br's tol: the step past a breakpoint
_BIG = np.finfo(float).max  # an unbounded side, as R's .Machine$double.xmax
_TIE_RTOL = 1e-12  # breakpoints this close are one (rows whose residuals cross zero together)
_DUAL_SLACK = 1e-9  # dual feasibility of a basis, relative (as the solver's vertex check)


_State = tuple[FloatArray, FloatArray, FloatArray, bool]


def _basis_state(Z: FloatArray, y: FloatArray, xj: FloatArray, h: np.ndarray, b: float,
                 tau: float) -> _State | None:
    """For the basis rows ``h`` of the fit of ``y − b x_j`` on ``Z``: the residuals' intercepts
    ``A`` and slopes ``B`` in ``b`` (``r(b) = A − b B``), shape (n,) each, the dual ``u = â −
    (1 − τ)``, shape (n,), and whether ``u`` is feasible (in [τ − 1, τ]); None when singular."""
    Zh = Z[h]
    try:
        coef = np.linalg.solve(Zh, np.column_stack([y[h], xj[h]]))  # shape (p - 1, 2)
        fitted = Z @ coef
        A, B = y - fitted[:, 0], xj - fitted[:, 1]
        A[h] = 0.0
        B[h] = 0.0
        u: FloatArray = np.where(A - b * B < 0, tau - 1.0, tau)
        u[h] = 0.0
        u[h] = np.linalg.solve(Zh.T, -(Z.T @ u))
    except np.linalg.LinAlgError:  # a singular candidate (rows that are not independent)
        return None
    if not np.all(np.isfinite(u[h])):
        return None
    slack = _DUAL_SLACK * (1.0 + float(np.max(np.abs(u[h]))))
    ok = bool(np.all(u[h] >= tau - 1.0 - slack) and np.all(u[h] <= tau + slack))
    return A, B, u, ok


def _optimal_basis(Z: FloatArray, y: FloatArray, xj: FloatArray, h: np.ndarray,
                   crossed: np.ndarray, b: float, tau: float,
                   unverified: list[float]) -> tuple[np.ndarray, _State]:
    """The optimal basis at ``b`` just past the breakpoint where the rows ``crossed`` crossed
    zero, and its state: ``h`` itself, or ``h`` with one row exchanged for one of them (one
    simplex pivot; the rows whose dual leaves [τ − 1, τ] first); a fresh fit when none is."""
    state = _basis_state(Z, y, xj, h, b, tau)
    if state is not None and state[3]:
        return h, state
    order = np.arange(h.size)
    if state is not None:  # the basic rows whose dual is out of bounds leave first
        u = state[2][h]
        order = np.argsort(-np.maximum(u - tau, tau - 1.0 - u), kind="stable")
    for o in crossed:
        for k in order:
            cand = np.append(np.delete(h, k), o)
            found = _basis_state(Z, y, xj, cand, b, tau)
            if found is not None and found[3]:
                return cand, found
    return _with_state(Z, y, xj, _fresh_basis(Z, y, xj, b, tau, unverified, crossed.size), b,
                       tau)


def _with_state(Z: FloatArray, y: FloatArray, xj: FloatArray, h: np.ndarray, b: float,
                tau: float) -> tuple[np.ndarray, _State]:
    state = _basis_state(Z, y, xj, h, b, tau)
    if state is None:  # pragma: no cover - a basis of an optimal vertex is regular
        raise np.linalg.LinAlgError("singular basis in the rank-inversion path")
    return h, state


def _first_basis(Z: FloatArray, y: FloatArray, xj: FloatArray, full_basis: np.ndarray, b: float,
                 tau: float, unverified: list[float]) -> tuple[np.ndarray, _State]:
    """The restricted fit's basis just past ``β̂_j``, and its state: the full fit's p rows but
    one (the first whose dual is feasible), else a fresh fit."""
    for k in range(full_basis.size):
        cand = np.delete(full_basis, k)
        state = _basis_state(Z, y, xj, cand, b, tau)
        if state is not None and state[3]:
            return cand, state
    return _with_state(Z, y, xj, _fresh_basis(Z, y, xj, b, tau, unverified), b, tau)


def _fresh_basis(Z: FloatArray, y: FloatArray, xj: FloatArray, b: float, tau: float,
                 unverified: list[float], n_tied: int = 1) -> np.ndarray:
    """The basis of the quantile regression of ``y − b x_j`` on ``Z``, solved from scratch: the
    first optimal choice of ``p − 1`` rows among those with the smallest residuals (at a
    breakpoint where ``n_tied`` rows cross zero together, more than ``p − 1`` are near zero);
    when none is, the rows with the smallest residuals, ``b`` appended to ``unverified``."""
    yb = y - b * xj
    r = yb - Z @ rq_fit(Z, yb, tau).coef
    k = Z.shape[1]
    near = np.argsort(np.abs(r), kind="stable")[: k + n_tied + 1]
    for cand in itertools.combinations(near, k):  # few rows: the nearest first
        rows = np.asarray(cand, dtype=np.intp)
        state = _basis_state(Z, y, xj, rows, b, tau)
        if state is not None and state[3]:
            return rows
    rows_or_none = vertex_rows(Z, r)
    if rows_or_none is None:  # pragma: no cover - Z has full column rank
        raise np.linalg.LinAlgError("no basis for the restricted quantile regression")
    unverified.append(b)
    return rows_or_none


def _walk(Z: FloatArray, y: FloatArray, xj: FloatArray, full_basis: np.ndarray, start: float,
          tau: float, scale: float, cutoff: float, up: bool, unverified: list[float]) -> float:
    """One side's bound: follow the breakpoints of ``â(b)`` from ``start`` in one direction
    until ``|T(b)| ≥ cutoff``, then interpolate as R (``interp = TRUE``); the values of ``b``
    where no basis was verified optimal are appended to ``unverified``."""
    sign = 1.0 if up else -1.0
    b = start + sign * _TOL
    acc_b, acc_t = start, 0.0  # R's ci/tnmat rows 3 (2): the last segment accepted
    h, state = _first_basis(Z, y, xj, full_basis, b, tau, unverified)
    while True:
        A, B, u, _ = state
        tn = float(xj @ u) / scale
        if abs(tn) >= cutoff:  # the first segment rejected: interpolate
            rej_b = b - sign * _TOL
            return acc_b + sign * abs(rej_b - acc_b) * (cutoff - abs(acc_t)) / abs(tn - acc_t)
        acc_b, acc_t = b - sign * _TOL, tn
        with np.errstate(divide="ignore", invalid="ignore"):
            cross = A / B  # where each residual crosses zero
        ahead = (cross > b) if up else (cross < b)
        ahead[h] = False
        if not np.any(ahead):  # T never reaches the cutoff on this side
            return sign * _BIG
        idx = np.flatnonzero(ahead)
        nxt = float(np.min(cross[idx]) if up else np.max(cross[idx]))
        crossed = idx[np.isclose(cross[idx], nxt, rtol=_TIE_RTOL, atol=0)]  # ties cross together
        b = nxt + sign * _TOL
        h, state = _optimal_basis(Z, y, xj, h, crossed, b, tau, unverified)


def _qn_iid(X: FloatArray) -> FloatArray:
    """``1 / diag((X'X)⁻¹)``, shape (p,): the squared row norms of ``R⁻¹`` inverted."""
    R = sla.qr(X, mode="r", check_finite=False)[0][: X.shape[1]]
    Rinv = sla.solve_triangular(R, np.eye(X.shape[1]), check_finite=False)
    return 1.0 / np.sum(Rinv**2, axis=1)


def _qn_nid(X: FloatArray, y: FloatArray, tau: float) -> FloatArray:
    """R's ``iid = FALSE``: ``Σ (x_j − X_{−j} b_j)²`` with ``b_j`` the least squares of ``x_j``
    on the other columns weighted by the Hendricks–Koenker densities, shape (p,)."""
    n, p = X.shape
    h = bandwidth_rq(tau, n, hs=True)
    while tau - h < 0 or tau + h > 1:  # R would fail here; halved as summary.rq's "nid"
        h /= 2
    dyhat = X @ (rq_fit(X, y, tau + h).coef - rq_fit(X, y, tau - h).coef)
    bad = int(np.sum(dyhat <= 0))
    if bad:
        warn_user(f"{100 * bad / n:.15g} percent fis <=0: the fitted quantiles at tau ± h cross at "
                  f"{bad} row(s) (as R's rq.fit.br, their densities are set to {_TOL:.3g})",
                  InferenceWarning)
    sw = np.sqrt(np.maximum(_TOL, (2 * h) / (dyhat - _TOL)))
    qn = np.empty(p)
    for j in range(p):  # one weighted regression per coefficient
        others = np.delete(X, j, axis=1)
        coef = np.linalg.lstsq(sw[:, None] * others, sw * X[:, j], rcond=None)[0]
        qn[j] = float(np.sum((X[:, j] - others @ coef) ** 2))
    return qn


def rank_intervals(X: FloatArray, y: FloatArray, coef: FloatArray, tau: float, *,
                   weights: FloatArray | None = None, iid: bool = True,
                   alpha: float = 0.1) -> FloatArray:
    """Lower and upper bounds of the rank-inversion intervals of one τ's coefficients.

    Parameters
    ----------
    X : ndarray, shape (n, p)
        The design, p ≥ 2 (R gives no interval for one coefficient).
    y : ndarray, shape (n,)
    coef : ndarray, shape (p,)
        The fit at ``tau``.
    tau : float
    weights : ndarray, shape (n,), optional
        Prior weights (rows and responses multiplied by them, as R).
    iid : bool
        R's ``iid``: errors independent of the covariates (True) or Hendricks–Koenker densities.
    alpha : float
        The intervals' level is ``1 − alpha`` (R's default 0.1).

    Returns
    -------
    ndarray, shape (p, 2)
        ``[lower bd, upper bd]`` per coefficient; an unbounded side is ``±1.797693e+308``.
    """
    if weights is not None:
        X, y = X * weights[:, None], y * weights
    n, p = X.shape
    cutoff = float(stats.t.ppf(1 - alpha / 2, n - p))
    qn = _qn_iid(X) if iid else _qn_nid(X, y, tau)
    # repeated rows tie their residuals at every b: each distinct row once, weighted by its
    # count (ρ_τ(k r) = k ρ_τ(r)), whose dual is the sum of the copies' rank scores
    rows, counts = np.unique(np.column_stack([X, y]), axis=0, return_counts=True)
    Xm, ym = rows[:, :-1] * counts[:, None], rows[:, -1] * counts
    full = vertex_rows(Xm, ym - Xm @ coef)
    if full is None:  # pragma: no cover - X has full column rank
        raise np.linalg.LinAlgError("no basis for the quantile regression")
    out = np.empty((p, 2))
    unverified: list[float] = []
    for j in range(p):  # one walk per coefficient and side
        Z, xj = np.delete(Xm, j, axis=1), Xm[:, j]
        scale = math.sqrt(qn[j] * tau * (1 - tau))
        for side, up in ((0, False), (1, True)):
            out[j, side] = _walk(Z, ym, xj, full, float(coef[j]), tau, scale, cutoff, up,
                                 unverified)
    if unverified:
        warn_user(f"the rank-inversion paths met {len(unverified)} degenerate restricted "
                  "fit(s) (tied residuals, e.g. discrete data) and went on from a basis not "
                  "verified optimal: the bounds may differ from R's", InferenceWarning)
    return out
