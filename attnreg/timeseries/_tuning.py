r"""Ridge at every origin with λ minimising GCV, from the tridiagonal form of each window's Gram.

With ``A = Xs'Xs`` the Gram of the window's centred (by default standardised) regressors,
``r = Xs'y_c``, ``A = V diag(mu) V'``, ``z = V'r`` and the thin SVD ``Xs = U S V'``
(``S^2 = mu``, ``U'y_c = z / sqrt(mu)``), the fit is ``U diag(mu / (mu + lam)) U'y_c``, so

    RSS(lam) = ||y_c||^2 - sum_k [1 - (lam / (mu_k + lam))^2] z_k^2 / mu_k
             = ||y_c||^2 - sum_k z_k^2 (mu_k + 2 lam) / (mu_k + lam)^2,
    df(lam)  = intercept + sum_k mu_k / (mu_k + lam),     GCV = N RSS / (N - df)^2,

null directions having ``z_k = 0``. Instead of ``eigh``, ``[[A, r], [r', y_c'y_c]]`` is
reduced to tridiagonal form in place (``dsytrd``, upper, which leaves the last coordinate
alone): ``T = Q'AQ``, ``Q'r = e u_P``. With ``M = T + lam I`` both sums are
``e^2 (u_P'M^{-1}u_P + lam u_P'M^{-2}u_P)`` and ``P - lam tr(M^{-1})``, O(P) each from the
pivots of M (:func:`sweep`), vectorised over origins and candidate penalties. GCV is
minimised over ``log10(lam / mean(mu))`` in ``GCV_LOG10_BOUNDS``: a coarse grid, zoomed
grids and a parabolic refinement around the best point (:func:`choose_lam`), and
``gamma = e Q M^{-1}u_P`` gives the coefficients at the chosen penalty.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from attnreg._typing import FloatArray, IntArray

#: GCV search range of log10(lam / mean eigenvalue of the Gram) and spacing (decades) of
#: the coarse grid over it.
GCV_LOG10_BOUNDS, GCV_GRID_STEP = (-8.0, 4.0), 2.0
#: Points of the zoomed grids (odd), each spanning the neighbours of the best point so far:
#: the spacing shrinks by ``(points + 1) / 2`` per grid.
GCV_ZOOMS = (7, 5, 5)
#: Half-width (decades) of the final three-point stencil around the parabola's vertex.
GCV_STENCIL = 0.002


class Tri(NamedTuple):
    """Tridiagonal forms of a batch, reversed so that the direction of ``r`` comes first.

    Origins run along the last axis, so that every vectorised operation is contiguous.
    """

    d: FloatArray  # (P, B) diagonal of T
    e2: FloatArray  # (P-1, B) squared off-diagonal of T
    s2: FloatArray  # (B,) ||r||^2 = e^2
    yy: FloatArray  # (B,) ||y_c||^2
    n: FloatArray  # (B,) window sizes
    n_fixed: float  # 1 with an intercept (its degree of freedom), else 0


def sweep(d: FloatArray, e2: FloatArray, lam: FloatArray, keep: bool = False
          ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray | None]:
    """Pivots of ``M = T + lam I`` from the last row up, and their derivatives in lam.

    ``d`` (P, B) is T's diagonal, ``e2`` (P-1, B) its squared off-diagonal, ``lam`` (G, B).
    The pivots ``phi_i = d_i + lam - e2_i / phi_{i+1}`` (positive for lam > 0) give
    ``det M = prod phi_i``, so ``tr M^{-1} = sum phi_i' / phi_i`` with ``phi_i' = 1 +
    (phi_{i+1}' / phi_{i+1}) e2_i / phi_{i+1}`` (all terms positive: no cancellation), and
    ``(M^{-1})_00 = 1 / phi_0``, ``(M^{-2})_00 = phi_0' / phi_0^2``. Returns ``1 / phi_0``,
    ``phi_0'``, the trace (each (G, B)) and, with ``keep``, all pivots (P, G, B).
    """
    shifted = d[:, None, :] + lam  # (P, G, B): d_i + lam, overwritten by the pivots
    phi = shifted[-1]
    ratio = 1.0 / phi  # phi_i' / phi_i
    trace, q = ratio.copy(), np.empty(lam.shape)
    for i in range(d.shape[0] - 2, -1, -1):
        np.divide(e2[i], phi, out=q)  # e2_i / phi_{i+1}
        phi = np.subtract(shifted[i], q, out=shifted[i])
        ratio *= q  # phi_i' / phi_i = (1 + (phi_{i+1}' / phi_{i+1}) e2_i / phi_{i+1}) / phi_i
        ratio += 1.0
        ratio /= phi
        trace += ratio
    recip = 1.0 / phi
    dphi = ratio * phi
    return recip, dphi, trace, shifted if keep else None


def gcv(tri: Tri, log_lam: FloatArray) -> FloatArray:
    """GCV (G, B) at penalties ``10**log_lam`` (G, B)."""
    lam = 10.0**log_lam
    g0, dphi, trace, _ = sweep(tri.d, tri.e2, lam)
    rss = np.maximum(tri.yy - tri.s2 * g0 * (1.0 + lam * dphi * g0), 0.0)
    resid_df = tri.n - (tri.n_fixed + tri.d.shape[0] - lam * trace)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(resid_df > 0.0, tri.n * rss / resid_df**2, np.inf)


def _vertex(x: FloatArray, f: FloatArray, h: float) -> FloatArray:
    """Vertex of the parabola through ``(x - h, x, x + h)`` with values ``f`` (3, B).

    Falls back to ``x`` where the values are not finite or not convex; never moves by more
    than ``h``.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        curvature = f[0] - 2.0 * f[1] + f[2]
        step = 0.5 * h * (f[0] - f[2]) / curvature
    ok = np.isfinite(step) & (curvature > 0.0)
    return x + np.where(ok, np.clip(step, -h, h), 0.0)


def choose_lam(tri: Tri, mean_eig: FloatArray) -> FloatArray:
    """GCV-minimising penalty per origin (B,), vectorised over origins.

    A coarse grid over ``GCV_LOG10_BOUNDS`` (relative to the mean eigenvalue) finds the
    basin; grids of ``GCV_ZOOMS`` points between the neighbours of the best point so far
    narrow it (robust to the lopsided, corner-like minima GCV often has in log λ); a
    parabola through the best point and its neighbours, and another on a ``GCV_STENCIL``
    stencil around that vertex, finish. Every point evaluated is a candidate and the lowest
    GCV wins, so the parabolas can only improve on the grids.
    """
    lo_rel, hi_rel = GCV_LOG10_BOUNDS
    base = np.log10(mean_eig)
    lo, hi = base + lo_rel, base + hi_rel
    cols = np.arange(base.size)
    xs = base + np.arange(lo_rel, hi_rel + GCV_GRID_STEP / 2, GCV_GRID_STEP)[:, None]
    fs = gcv(tri, xs)
    best = np.argmin(fs, axis=0)
    x_best, f_best = xs[best, cols], fs[best, cols]
    step = GCV_GRID_STEP
    for points in GCV_ZOOMS:
        half, step = points // 2, 2.0 * step / (points + 1)
        centre = np.clip(x_best, lo + half * step, hi - half * step)
        xs = centre + step * np.arange(-half, half + 1)[:, None]
        fs = gcv(tri, xs)
        best = np.argmin(fs, axis=0)
        x_best, f_best = _keep_best(xs[best, cols], fs[best, cols], x_best, f_best)
    inner = np.clip(best, 1, xs.shape[0] - 2)  # parabola through it and its neighbours
    x_new = _vertex(xs[inner, cols], fs[inner + np.arange(-1, 2)[:, None], cols], step)
    h = GCV_STENCIL
    xs = np.clip(x_new, lo + h, hi - h) + h * np.arange(-1, 2)[:, None]
    fs = gcv(tri, xs)
    x_best, f_best = _keep_best(xs[1], fs[1], x_best, f_best)
    x_new = _vertex(xs[1], fs, h)
    x_best, f_best = _keep_best(x_new, gcv(tri, x_new[None, :])[0], x_best, f_best)
    return 10.0**x_best


def _keep_best(x: FloatArray, f: FloatArray, x_best: FloatArray, f_best: FloatArray
               ) -> tuple[FloatArray, FloatArray]:
    """The better of two candidates per origin."""
    better = f < f_best
    return np.where(better, x, x_best), np.where(better, f, f_best)


def _apply_reflectors(grams: FloatArray, tau: FloatArray, x: FloatArray) -> FloatArray:
    """Apply ``Q = H_{K-2} ... H_0`` stored by ``dsytrd`` (upper) to ``x`` (B, K) in place.

    ``H_i = I - tau_i v v'`` with ``v = [grams[:, i+1, :i], 1, 0...]`` (C-order row i+1 =
    Fortran column i+1 above the diagonal).
    """
    for i in range(tau.shape[1]):
        v = grams[:, i + 1, :i]
        w = tau[:, i] * (np.einsum("bk,bk->b", v, x[:, :i]) + x[:, i])
        x[:, :i] -= w[:, None] * v
        x[:, i] -= w
    return x


def ridge_by_gcv(grams: FloatArray, d: FloatArray, e: FloatArray, tau: FloatArray,
                 css: FloatArray, nobs: IntArray, intercept: bool, standardize: bool
                 ) -> tuple[FloatArray, FloatArray]:
    """Slopes (B, P) and GCV penalties (B,) of a batch from its tridiagonal forms.

    ``grams`` (B, K, K) hold ``dsytrd``'s reflectors (C order: the transposed Fortran
    output), ``d``, ``e``, ``tau`` its other outputs, ``css`` (B, P) the regressors' centred
    sums of squares (the kernel divided column k by ``sqrt(css_k / n)`` where positive).
    """
    B, P = d.shape[0], d.shape[1] - 1
    if P == 0:
        return np.zeros((B, 0)), np.full(B, np.nan)
    T_d, T_e, coupling = d[:, :P][:, ::-1], e[:, : P - 1][:, ::-1], e[:, P - 1]  # r first
    n = nobs.astype(np.float64)
    tri = Tri(np.ascontiguousarray(T_d.T), np.ascontiguousarray((T_e**2).T), coupling**2,
              d[:, P], n, float(intercept))
    lam = choose_lam(tri, np.maximum(T_d.mean(axis=1), np.finfo(float).tiny))
    phi = sweep(tri.d, tri.e2, lam[None, :], keep=True)[3][:, 0]  # type: ignore[index]
    u = np.cumprod(np.concatenate([1.0 / phi[:1], -T_e.T / phi[1:]]), axis=0).T  # (B, P)
    x = np.zeros_like(d)
    x[:, :P] = coupling[:, None] * u[:, ::-1]  # gamma = e Q M^{-1} u_P
    gamma = _apply_reflectors(grams, tau, x)[:, :P]
    if not standardize:
        return gamma, lam
    scale = np.sqrt(np.where(css > 0.0, css, n[:, None]) / n[:, None])
    return gamma / scale, lam
