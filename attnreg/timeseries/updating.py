r"""Recursive (expanding) and rolling least squares by updating the Gram matrix.

The fit at origin ``t`` uses the Gram of ``Z = [X, y]`` over rows ``[s_t, t]``. It is carried
from origin to origin by one rank-two update (``z_new z_new' - z_old z_old'``, BLAS
``dsyr2``) and recomputed exactly every ``reset`` origins to stop drift (from the window's
rows; for an expanding window by pooling the exact Gram of the rows added since the last
recompute, Chan, Golub & LeVeque 1979). Sums are taken about the window mean at the last
recompute, so centring (``C = S2 - S1 S1'/n``) loses no digits. Each origin then costs
O(P^2) plus one in-place LAPACK factorisation while its Gram is in cache: Cholesky of the
bordered ``[[C, X'y], [y'X, y'y]]``, whose last row ``[l', rho]`` gives ``L' beta = l``
and ``rho^2 = RSS``. For P ~ 50 a direct call beats numpy's batched solvers per matrix;
the triangular solves and the λ search are vectorised over batches of origins.

**Ridge, λ by GCV.** With ``A = Xs'Xs`` the Gram of the window's centred (by default
standardised) regressors, ``r = Xs'y_c``, ``A = V diag(mu) V'``, ``z = V'r`` and the thin SVD
``Xs = U S V'`` (``S^2 = mu``, ``U'y_c = z / sqrt(mu)``), the fit is
``U diag(mu / (mu + lam)) U'y_c``, so

    RSS(lam) = ||y_c||^2 - sum_k [1 - (lam / (mu_k + lam))^2] z_k^2 / mu_k
             = ||y_c||^2 - sum_k z_k^2 (mu_k + 2 lam) / (mu_k + lam)^2,
    df(lam)  = intercept + sum_k mu_k / (mu_k + lam),     GCV = N RSS / (N - df)^2,

null directions having ``z_k = 0``. Instead of ``eigh``, ``[[A, r], [r', y_c'y_c]]`` is
reduced to tridiagonal form in place (``dsytrd``, upper, which leaves the last coordinate
alone): ``T = Q'AQ``, ``Q'r = e u_P``. With ``M = T + lam I`` both sums are
``e^2 (u_P'M^{-1}u_P + lam u_P'M^{-2}u_P)`` and ``P - lam tr(M^{-1})``, O(P) each from the
pivots of M (``_sweep``). GCV is minimised over ``log10(lam / mean(mu))`` in
``GCV_LOG10_BOUNDS`` (grid, then golden section), and ``gamma = e Q M^{-1}u_P``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal, NamedTuple

import numpy as np
from scipy.linalg import blas, lapack

from attnreg._typing import BoolArray, FloatArray, IntArray
from attnreg.exceptions import DataError, OptionError, RankDeficiencyWarning

__all__ = ["RecursiveFit", "recursive_ls"]

Method = Literal["ols", "ridge"]

#: A column counts as collinear when its squared Cholesky pivot is at most this share of its
#: centred sum of squares (1 - R^2 on the earlier columns), and as constant in the window when
#: its centred sum of squares is at most this share of its sum of squares about the shift.
RANK_RTOL = 1e-10
#: GCV search range of log10(lam / mean eigenvalue of the Gram), grid spacing (decades)
#: and golden-section tolerance on log10(lam).
GCV_LOG10_BOUNDS, GCV_GRID_STEP, GCV_LOG10_XTOL = (-8.0, 4.0), 2.0, 1e-3
#: Origins whose triangular solves (OLS, fixed λ) or λ search (GCV) are vectorised together.
BATCH_FIXED, BATCH_GCV = 256, 1024
_GOLDEN = (np.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True)
class RecursiveFit:
    """Coefficients at every forecast origin of a recursive or rolling fit.

    Attributes
    ----------
    origins : IntArray, shape (n_origins,)
        Row position of the last observation of each window (the forecast origin).
    coef : FloatArray, shape (n_origins, n_coef)
        Coefficients on the original scale, intercept first when ``intercept``.
    nobs : IntArray, shape (n_origins,)
        Rows in each window.
    lam : FloatArray or None, shape (n_origins,)
        Ridge penalty at each origin (standardised scale when standardising).
    std_err : FloatArray or None, shape (n_origins, n_coef)
        Classical OLS standard errors, when requested.
    rank_deficient : BoolArray, shape (n_origins,)
        True where the window's design is rank deficient; ``coef`` is NaN there.
    n_rank_deficient : int
        Number of rank-deficient windows.
    method : {"ols", "ridge"}
    window : int or None
        Rolling window length; None for an expanding window.
    intercept : bool
    """

    origins: IntArray
    coef: FloatArray
    nobs: IntArray
    lam: FloatArray | None
    std_err: FloatArray | None
    rank_deficient: BoolArray
    n_rank_deficient: int
    method: Method
    window: int | None
    intercept: bool

    def predict(self, X_next: FloatArray) -> FloatArray:
        """Forecasts ``x_j' coef_j``, one row of regressors (no intercept column) per origin.

        Parameters
        ----------
        X_next : array_like, shape (n_origins, n_regressors)
            For horizon ``h`` usually ``X[origins + h]``.

        Returns
        -------
        FloatArray, shape (n_origins,)
        """
        rows = np.asarray(X_next, dtype=np.float64).reshape(self.coef.shape[0], -1)
        fitted = np.einsum("ij,ij->i", rows, self.coef[:, 1:] if self.intercept else self.coef)
        return fitted + self.coef[:, 0] if self.intercept else fitted


@dataclass(frozen=True)
class _Spec:
    """Validated options of :func:`recursive_ls`."""

    window: int | None
    min_nobs: int
    intercept: bool
    method: Method
    lam: float | None  # None: chosen by GCV (ridge) or no penalty (OLS)
    standardize: bool
    reset: int
    return_se: bool

    @property
    def gcv(self) -> bool:
        """Whether λ is chosen by GCV."""
        return self.method == "ridge" and self.lam is None


def _positive_int(name: str, value: object) -> int:
    """Return ``value`` as an int >= 1, or raise OptionError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise OptionError(f"{name} must be a positive integer, however: {name}={value!r}.")
    return int(value)


def _check_spec(n_coef: int, window: object, min_nobs: object, reset: object, method: object,
                lam: object, return_se: object, **flags: object) -> _Spec:
    """Validate the options of :func:`recursive_ls` (see there)."""
    if method not in ("ols", "ridge"):
        raise OptionError(f"method must be 'ols' or 'ridge', however: {method=}.")
    if method == "ols" and lam is not None:
        raise OptionError(f"lam applies to method='ridge' only, however: {lam=}.")
    if method == "ridge" and return_se:
        raise OptionError("return_se=True gives classical OLS standard errors; use method='ols'.")
    fixed = lam not in (None, "gcv")
    number = isinstance(lam, (int, float)) and not isinstance(lam, bool)
    if fixed and not (number and 0 < lam < np.inf):  # type: ignore[operator]
        raise OptionError(f"lam must be a positive number or 'gcv', however: {lam=}.")
    win = None if window is None else _positive_int("window", window)
    first = _positive_int("min_nobs", (win or n_coef) if min_nobs is None else min_nobs)
    if win is not None and first > win:
        raise OptionError(f"min_nobs must not exceed window, however: {min_nobs=}, {window=}.")
    penalty = float(lam) if fixed else None  # type: ignore[arg-type]
    return _Spec(win, first, bool(flags["intercept"]), method,
                 penalty, bool(flags["standardize"]), _positive_int("reset", reset),
                 bool(return_se))


@dataclass
class _Running:
    """Sums of the current window about ``shift``, carried from origin to origin."""

    S2: FloatArray  # (K, K) Fortran order, one triangle: sum of (z - shift)(z - shift)'
    S1: FloatArray  # (K,) sum of (z - shift)
    shift: FloatArray  # (K,) window mean at the last exact recompute (zeros: no intercept)
    start: int  # first row of the current window
    lower: bool  # which triangle S2 keeps (Fortran order); the other stays zero
    exact: tuple[int, FloatArray, FloatArray]  # last row, mean and centred Gram at recompute


def _exact(Z: FloatArray, start: int, end: int, centre: bool, run: _Running | None,
           lower: bool) -> _Running:
    """Exact sums of rows ``[start, end]``, pooled with ``run``'s if both start at row 0."""
    pool = run is not None and run.start == start == 0
    first = run.exact[0] + 1 if run is not None and pool else start
    rows = Z[first : end + 1]  # (m, K)
    mean = rows.mean(axis=0) if centre else np.zeros(Z.shape[1])
    gram = (rows - mean).T @ (rows - mean)
    if run is not None and pool:  # C = C_a + C_b + n_a n_b / n (m_a - m_b)(m_a - m_b)'
        n_a, n_b = first, rows.shape[0]
        delta = run.exact[1] - mean
        gram += run.exact[2] + (n_a * n_b / (n_a + n_b)) * np.outer(delta, delta)
        mean = mean + n_a / (n_a + n_b) * delta
    tri = np.asfortranarray(np.tril(gram) if lower else np.triu(gram))
    return _Running(tri, np.zeros(Z.shape[1]), mean, start, lower, (end, mean, gram))


@dataclass
class _Work:
    """Buffers of one batch of origins, filled origin by origin."""

    grams: FloatArray  # (B, K, K) centred bordered Grams, factorised in place
    css: FloatArray  # (B, K) centred sums of squares, diag(C), before factorisation
    raw: FloatArray  # (B, K) sums of squares about the shift
    means: FloatArray  # (B, K) window means (zeros without intercept)
    nobs: IntArray  # (B,)
    centre: bool  # whether windows are centred (an intercept)
    out: dict[str, FloatArray]  # per-origin factorisation results (see the kernels)


Kernel = Callable[[_Work, int, FloatArray], None]


def _advance(Z: FloatArray, starts: IntArray, ends: IntArray, run: _Running, fresh: bool,
             work: _Work, at: int, kernel: Kernel) -> None:
    """Move ``run`` through windows ``[starts[j], ends[j]]`` (batch rows ``at + j``).

    A step adds row ``ends[j]`` and drops row ``starts[j-1]`` if the window moved, in one
    ``dsyr2``: ``z z' - w w' = [(z + w)(z - w)' + (z - w)(z + w)'] / 2``. The centred Gram
    goes to ``work.grams[at + j].T`` (Fortran order, one triangle) and ``kernel`` factorises
    it there while it is in cache.
    """
    lower, centre = int(run.lower), work.centre
    previous = np.concatenate([[run.start], starts[:-1]])
    step = np.ones(ends.size, dtype=bool)
    step[0] = not fresh
    added = np.where(step[:, None], Z[ends] - run.shift, 0.0)  # (B, K)
    removed = np.where((starts > previous)[:, None], Z[previous] - run.shift, 0.0)
    S1 = run.S1 + np.cumsum(added - removed, axis=0)
    plus, minus, n = added + removed, added - removed, ends - starts + 1
    for j in range(ends.size):
        if step[j]:
            blas.dsyr2(0.5, plus[j], minus[j], lower=lower, a=run.S2, overwrite_a=1)
        gram = work.grams[at + j].T
        gram[...] = run.S2
        if centre:  # C = S2 - S1 S1'/n: the Gram of deviations from the window mean
            blas.dsyr(-1.0 / n[j], S1[j], lower=lower, a=gram, overwrite_a=1)
        work.css[at + j] = gram.diagonal()
        kernel(work, at + j, gram)
    rows = slice(at, at + ends.size)
    work.raw[rows] = work.css[rows] + S1**2 / n[:, None] if centre else work.css[rows]
    work.means[rows] = run.shift + S1 / n[:, None] if centre else 0.0
    run.S1, run.start = S1[-1], int(starts[-1])


def _cholesky_kernel(spec: _Spec) -> Kernel:
    """Kernel factorising the bordered Gram (+ lam diag(scale^2) for ridge) by Cholesky."""
    def kernel(work: _Work, j: int, gram: FloatArray) -> None:
        if spec.lam is not None:  # scale^2 = css / n = diag(C) / n when standardising
            diagonal = work.grams[j].reshape(-1)[:: gram.shape[0] + 1][:-1]  # a view
            if spec.standardize:
                diagonal *= 1.0 + spec.lam / work.nobs[j]
            else:
                diagonal += spec.lam
        work.out["info"][j] = lapack.dpotrf(gram, lower=1, clean=0, overwrite_a=1)[1]
    return kernel


def _tridiagonal_kernel(spec: _Spec) -> Kernel:
    """Kernel scaling the bordered Gram to ``[[A, r], [r', yy]]`` and tridiagonalising it."""
    def kernel(work: _Work, j: int, gram: FloatArray) -> None:
        if spec.standardize:  # divide column k by its SD, sqrt(css_k / n); constant: by 1
            weights, css = np.ones(gram.shape[0]), work.css[j, :-1]
            np.sqrt(np.divide(work.nobs[j], css, out=weights[:-1], where=css > 0.0),
                    out=weights[:-1])
            gram *= weights[:, None]
            gram *= weights
        _, work.out["d"][j], work.out["e"][j], work.out["tau"][j], _ = lapack.dsytrd(
            gram, lower=0, overwrite_a=1)
    return kernel


def _fill(Z: FloatArray, starts: IntArray, ends: IntArray, first: int, spec: _Spec,
          run: _Running | None) -> tuple[_Work, _Running]:
    """Grams of the windows of origins ``first, first + 1, ...``, factorised in place."""
    B, K = ends.size, Z.shape[1]
    out = ({"d": np.empty((B, K)), "e": np.empty((B, K - 1)), "tau": np.empty((B, K - 1))}
           if spec.gcv else {"info": np.zeros(B)})
    work = _Work(np.empty((B, K, K)), np.empty((B, K)), np.empty((B, K)), np.empty((B, K)),
                 ends - starts + 1, spec.intercept, out)
    kernel = _tridiagonal_kernel(spec) if spec.gcv else _cholesky_kernel(spec)
    cuts = np.flatnonzero((first + np.arange(B)) % spec.reset == 0)
    bounds = np.unique(np.concatenate([[0], cuts, [B]]))
    for a, b in pairwise(bounds):
        fresh = run is None or (first + a) % spec.reset == 0
        if fresh or run is None:
            run = _exact(Z, int(starts[a]), int(ends[a]), spec.intercept, run, not spec.gcv)
        _advance(Z, starts[a:b], ends[a:b], run, fresh, work, int(a), kernel)
    return work, run  # type: ignore[return-value]


def _back_substitute(work: _Work) -> FloatArray:
    """Slopes (B, P) from the bordered Cholesky factors: ``L' beta = l`` (vectorised)."""
    factor = work.grams  # C order: factor[:, k, i] = L[i, k]
    P = factor.shape[1] - 1
    slopes = np.zeros((factor.shape[0], P))
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(P - 1, -1, -1):
            partial = np.einsum("bk,bk->b", factor[:, i, i + 1 : P], slopes[:, i + 1 :])
            slopes[:, i] = (factor[:, i, P] - partial) / factor[:, i, i]
    return slopes


def _std_err(work: _Work, ok: BoolArray) -> FloatArray:
    """Classical OLS standard errors, ``sigma^2 = RSS / (n - n_coef)`` with ``RSS = rho^2``."""
    B, K = work.grams.shape[:2]
    P = K - 1
    inv = np.zeros((B, P, P))  # L^{-1}; ``info == K`` (an exact fit) leaves L valid
    for j in np.flatnonzero(ok) if P else []:
        inv[j] = lapack.dtrtri(work.grams[j].T[:P, :P], lower=1)[0]
    rss = np.where(work.out["info"] == 0, work.grams[:, P, P] ** 2, 0.0)
    n_coef = P + work.centre
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma2 = np.where(work.nobs > n_coef, rss / (work.nobs - n_coef), np.nan)
    se = np.sqrt(sigma2[:, None] * np.einsum("bij,bij->bj", inv, inv))  # diag(C^{-1})
    if not work.centre:
        return se
    lev = np.einsum("bij,bj->bi", inv, work.means[:, :-1])  # L^{-1} xbar
    return np.column_stack([np.sqrt(sigma2 * (1.0 / work.nobs + (lev**2).sum(axis=1))), se])


class _Tri(NamedTuple):
    """Tridiagonal forms of a batch, reversed so that the direction of ``r`` comes first."""

    d: FloatArray  # (P, B, 1) diagonal of T
    e2: FloatArray  # (P-1, B, 1) squared off-diagonal of T
    s2: FloatArray  # (B, 1) ||r||^2 = e^2
    yy: FloatArray  # (B, 1) ||y_c||^2
    n: FloatArray  # (B, 1) window sizes
    n_fixed: float  # 1 with an intercept (its degree of freedom), else 0


def _sweep(d: FloatArray, e2: FloatArray, lam: FloatArray) -> tuple[FloatArray, ...]:
    """Pivots of ``M = T + lam I`` from the last row up, and their derivatives in lam.

    ``d`` (P, B, 1) is T's diagonal, ``e2`` (P-1, B, 1) its squared off-diagonal, ``lam``
    (B, G). The pivots ``phi_i = d_i + lam - e2_i / phi_{i+1}`` (positive for lam > 0) give
    ``det M = prod phi_i``, so ``tr M^{-1} = sum phi_i' / phi_i`` with ``phi_i' = 1 +
    phi_{i+1}' e2_i / phi_{i+1}^2`` (all terms positive: no cancellation), and
    ``(M^{-1})_00 = 1 / phi_0``, ``(M^{-2})_00 = phi_0' / phi_0^2``. Returns the pivots
    (P, B, G), ``phi_0'`` and the trace.
    """
    phi = np.empty((d.shape[0], *lam.shape))
    np.add(d[-1], lam, out=phi[-1])
    dphi, trace, q = np.ones(lam.shape), 1.0 / phi[-1], np.empty(lam.shape)
    for i in range(d.shape[0] - 2, -1, -1):
        np.divide(e2[i], phi[i + 1], out=q)
        np.add(d[i], lam, out=phi[i])
        phi[i] -= q
        q /= phi[i + 1]
        dphi *= q
        dphi += 1.0
        trace += dphi / phi[i]
    return phi, dphi, trace


def _gcv(tri: _Tri, lam: FloatArray) -> FloatArray:
    """GCV (B, G) at penalties ``lam`` (B, G)."""
    phi, dphi, trace = _sweep(tri.d, tri.e2, lam)
    rss = np.maximum(tri.yy - tri.s2 * (1.0 + lam * dphi / phi[0]) / phi[0], 0.0)
    resid_df = tri.n - (tri.n_fixed + tri.d.shape[0] - lam * trace)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(resid_df > 0.0, tri.n * rss / resid_df**2, np.inf)


def _golden(tri: _Tri, lo: FloatArray, hi: FloatArray
            ) -> tuple[FloatArray, FloatArray]:
    """Golden-section minimum of GCV over log10(lam) in ``[lo, hi]`` (B,), vectorised."""
    def f(x: FloatArray) -> FloatArray:
        return _gcv(tri, 10.0 ** x[:, None])[:, 0]

    x1, x2 = hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo)
    f1, f2 = f(x1), f(x2)
    width = float(np.max(hi - lo, initial=GCV_LOG10_XTOL))
    for _ in range(int(np.ceil(np.log(width / GCV_LOG10_XTOL) / -np.log(_GOLDEN)))):
        left = f1 <= f2  # the minimum lies in [lo, x2]
        lo, hi = np.where(left, lo, x1), np.where(left, x2, hi)
        x_new = np.where(left, hi - _GOLDEN * (hi - lo), lo + _GOLDEN * (hi - lo))
        f_new = f(x_new)
        x1, f1, x2, f2 = (np.where(left, x_new, x2), np.where(left, f_new, f2),
                          np.where(left, x1, x_new), np.where(left, f1, f_new))
    return np.where(f1 <= f2, x1, x2), np.minimum(f1, f2)


def _choose_lam(tri: _Tri, mean_eig: FloatArray) -> FloatArray:
    """GCV-minimising penalty per origin: grid, then golden section around the best point."""
    rel = np.arange(GCV_LOG10_BOUNDS[0], GCV_LOG10_BOUNDS[1] + GCV_GRID_STEP / 2, GCV_GRID_STEP)
    log_grid = np.log10(mean_eig)[:, None] + rel  # (B, G)
    values = _gcv(tri, 10.0**log_grid)
    rows, best = np.arange(mean_eig.size), np.argmin(values, axis=1)
    lo, hi = np.maximum(best - 1, 0), np.minimum(best + 1, rel.size - 1)
    x, fx = _golden(tri, log_grid[rows, lo], log_grid[rows, hi])
    return 10.0 ** np.where(fx <= values[rows, best], x, log_grid[rows, best])


def _apply_reflectors(grams: FloatArray, tau: FloatArray, x: FloatArray) -> FloatArray:
    """Apply ``Q = H_{K-2} ... H_0`` stored by ``dsytrd`` (upper) to ``x`` (B, K)."""
    for i in range(tau.shape[1]):
        v = grams[:, i + 1, : i + 1].copy()  # C-order row i+1 = Fortran column i+1 above i+1
        v[:, i] = 1.0
        w = tau[:, i] * np.einsum("bk,bk->b", v, x[:, : i + 1])
        x[:, : i + 1] -= w[:, None] * v
    return x


def _finish_gcv(work: _Work, spec: _Spec) -> tuple[FloatArray, FloatArray]:
    """Ridge slopes and GCV penalties of a batch from its tridiagonal forms (module doc)."""
    d, e, tau = work.out["d"], work.out["e"], work.out["tau"]
    B, P = d.shape[0], d.shape[1] - 1
    if P == 0:
        return np.zeros((B, 0)), np.full(B, np.nan)
    T_d, T_e, coupling = d[:, :P][:, ::-1], e[:, : P - 1][:, ::-1], e[:, P - 1]  # r first
    tri = _Tri(T_d.T[:, :, None], (T_e**2).T[:, :, None], coupling[:, None] ** 2, d[:, P:],
               work.nobs[:, None].astype(np.float64), float(spec.intercept))
    lam = _choose_lam(tri, np.maximum(T_d.mean(axis=1), np.finfo(float).tiny))
    phi = _sweep(tri.d, tri.e2, lam[:, None])[0][:, :, 0]  # (P, B)
    u = np.cumprod(np.concatenate([1.0 / phi[:1], -T_e.T / phi[1:]]), axis=0).T  # (B, P)
    x = np.zeros_like(d)
    x[:, :P] = coupling[:, None] * u[:, ::-1]  # gamma = e Q M^{-1} u_P
    css = work.css[:, :-1]  # the kernel divided column k by sqrt(css_k / n) where css_k > 0
    scale = np.sqrt(np.where(css > 0.0, css, work.nobs[:, None]) / work.nobs[:, None])
    gamma = _apply_reflectors(work.grams, tau, x)[:, :P]
    return (gamma / scale if spec.standardize else gamma), lam


class _Batch(NamedTuple):
    """Results for one batch of origins."""

    coef: FloatArray
    lam: FloatArray
    std_err: FloatArray | None
    deficient: BoolArray


def _finish(work: _Work, spec: _Spec) -> _Batch:
    """Coefficients, penalties, standard errors and rank flags of a factorised batch."""
    css, B, K = work.css[:, :-1], work.grams.shape[0], work.grams.shape[1]
    const: BoolArray = np.any(css <= RANK_RTOL * work.raw[:, :-1], axis=1)  # constant column
    deficient = const if spec.standardize or spec.method == "ols" else np.zeros_like(const)
    lam, std_err = np.full(B, np.nan if spec.lam is None else spec.lam), None
    if spec.gcv:
        slopes, lam = _finish_gcv(work, spec)
    else:
        ok = (work.out["info"] == 0) | (work.out["info"] == K)  # K: only rho failed (exact fit)
        slopes = _back_substitute(work)
        deficient |= ~ok
        if spec.method == "ols":
            pivots = np.diagonal(work.grams, axis1=1, axis2=2)[:, :-1]
            deficient |= (pivots**2 <= RANK_RTOL * css).any(axis=1)
        if spec.return_se:
            std_err = _std_err(work, ok)
            std_err[deficient] = np.nan
    coef = slopes
    if spec.intercept:
        const_term = work.means[:, -1] - np.einsum("bk,bk->b", work.means[:, :-1], slopes)
        coef = np.column_stack([const_term, slopes])
    coef[deficient] = np.nan
    return _Batch(coef, lam, std_err, deficient)


def recursive_ls(
    X: FloatArray,
    y: FloatArray,
    *,
    window: int | None = None,
    min_nobs: int | None = None,
    intercept: bool = True,
    method: Method = "ols",
    lam: float | Literal["gcv"] | None = None,
    standardize: bool = True,
    reset: int = 250,
    return_se: bool = False,
) -> RecursiveFit:
    """OLS or ridge coefficients at every origin of an expanding or rolling window.

    The window of origin ``t`` is rows ``[0, t]`` (``window=None``) or
    ``[max(0, t - window + 1), t]``; origins run from ``min_nobs - 1`` to ``T - 1`` (a
    rolling fit with ``min_nobs < window`` starts with expanding windows). Everything at
    origin ``t`` (Gram, means, scales, λ) uses rows ``<= t`` only. The module docstring
    describes the updating scheme and derives the GCV criterion.

    Parameters
    ----------
    X : array_like, shape (T, P)
        Regressors in time order, without an intercept column; P may be 0.
    y : array_like, shape (T,)
        Outcome aligned with ``X`` (for an h-step direct forecast, ``y`` led by h).
    window : int, optional
        Rolling window length; None (default) for an expanding window.
    min_nobs : int, optional
        Rows in the first window; default ``window`` if rolling, else ``P + intercept``.
    intercept : bool, default True
        Include an unpenalised intercept (each window is centred on its own means).
    method : {"ols", "ridge"}, default "ols"
    lam : float or "gcv", optional
        Ridge penalty (standardised scale when ``standardize``), or "gcv" (the ridge
        default) to minimise GCV at every origin. Must be None for OLS.
    standardize : bool, default True
        Ridge only: penalise coefficients of columns divided by the window's standard
        deviation (divisor n; root mean square without intercept). Coefficients are
        reported on the original scale; OLS is scale invariant.
    reset : int, default 250
        Recompute the window sums exactly every ``reset`` origins.
    return_se : bool, default False
        OLS only: classical standard errors ``sqrt(diag(sigma^2 (X'X)^{-1}))`` with
        ``sigma^2 = RSS / (n - n_coef)`` (NaN when ``n <= n_coef``).

    Returns
    -------
    RecursiveFit
        Rank-deficient windows (a column constant or collinear in the window; see
        ``RANK_RTOL``) get NaN rows, are flagged in ``rank_deficient``, counted, and
        reported by one RankDeficiencyWarning.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((50, 2))
    >>> y = 1.0 + X @ np.array([2.0, -1.0]) + 0.1 * rng.standard_normal(50)
    >>> fit = recursive_ls(X, y, window=20)
    >>> fit.coef.shape, int(fit.origins[0]), bool(np.allclose(fit.coef[-1], [1, 2, -1], atol=0.1))
    ((31, 3), 19, True)
    """
    Xa, ya = np.asarray(X, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if Xa.ndim != 2 or ya.ndim != 1 or Xa.shape[0] != ya.shape[0]:
        raise DataError(f"X must be (T, P) and y (T,), however: {Xa.shape=}, {ya.shape=}.")
    if not (np.isfinite(Xa).all() and np.isfinite(ya).all()):
        raise DataError("X and y must be finite; drop rows with NaN/inf (e.g. initial lags).")
    spec = _check_spec(Xa.shape[1] + bool(intercept), window, min_nobs, reset, method, lam,
                       return_se, intercept=intercept, standardize=standardize)
    ends = np.arange(spec.min_nobs - 1, ya.size)
    if ends.size == 0:
        raise DataError(f"need at least min_nobs={spec.min_nobs} rows, however: T={ya.size}.")
    starts = np.zeros_like(ends) if spec.window is None else np.maximum(ends - spec.window + 1, 0)
    Z = np.column_stack([Xa, ya])  # (T, K): y last, so the Gram is bordered by X'y and y'y
    batch, run, parts = BATCH_GCV if spec.gcv else BATCH_FIXED, None, []
    for a in range(0, ends.size, batch):
        work, run = _fill(Z, starts[a : a + batch], ends[a : a + batch], a, spec, run)
        parts.append(_finish(work, spec))
    deficient = np.concatenate([p.deficient for p in parts])
    if deficient.any():
        warnings.warn(f"{deficient.sum()} of {ends.size} windows are rank deficient; their "
                      "coefficients are NaN (see rank_deficient).", RankDeficiencyWarning,
                      stacklevel=2)
    lams = np.concatenate([p.lam for p in parts]) if spec.method == "ridge" else None
    std_err = np.concatenate([p.std_err for p in parts if p.std_err is not None]) \
        if spec.return_se else None
    return RecursiveFit(ends, np.concatenate([p.coef for p in parts]), ends - starts + 1, lams,
                        std_err, deficient, int(deficient.sum()), spec.method, spec.window,
                        spec.intercept)
