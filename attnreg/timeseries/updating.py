r"""Recursive (expanding) and rolling least squares by updating the Gram matrix.

The fit at origin ``t`` uses the Gram of ``Z = [X, y]`` over rows ``[s_t, t]``. It is carried
from origin to origin by one rank-two update (``z_new z_new' - z_old z_old'``, BLAS
``dsyr2``) and recomputed exactly every ``reset`` origins to stop drift (from the window's
rows; for an expanding window by pooling the exact Gram of the rows added since the last
recompute, Chan, Golub & LeVeque 1979). Sums are taken about the window mean at the last
recompute, so centring (``C = S2 - S1 S1'/n``) loses no digits. Each origin then costs
O(P^2) plus one in-place LAPACK factorisation while its Gram is in cache
(:mod:`attnreg.timeseries._gram`): for OLS and ridge with a fixed λ, Cholesky of the
Gram bordered by a column of ones and by y, ``[[n, S1x', S1y], [S1x, Sxx, Sxy],
[S1y, Syx, Syy]]`` (the first step centres it), whose last row ``[l0, l', rho]`` gives
``L' beta = l`` and ``rho^2 = RSS``; one BLAS ``dtrsv`` of the whole factor against the
last unit vector solves it in the same pass. For P ~ 50 direct LAPACK/BLAS calls per
origin beat numpy's batched solvers; everything else (window moments, standardising
scales, penalties) is vectorised over batches of origins.

**Ridge, λ by GCV** (:mod:`attnreg.timeseries._tuning`): the centred, standardised Gram
bordered by ``X'y`` is reduced to tridiagonal form at each origin, from which GCV and the
ridge solution at any λ cost O(P); λ is searched on a grid and refined, vectorised over
origins and candidate penalties.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
from scipy.linalg import blas, lapack

from attnreg._warn import warn_user
from attnreg._typing import BoolArray, FloatArray
from attnreg.exceptions import DataError, OptionError, RankDeficiencyWarning
from attnreg.timeseries import _gram
from attnreg.timeseries._tuning import GCV_LOG10_BOUNDS, ridge_by_gcv
from attnreg.timeseries.recursive_fit import Method, RecursiveFit

__all__ = ["GCV_LOG10_BOUNDS", "recursive_ls"]

#: the engine's two recursions, by the name of the algorithm: whether it carries a penalty λ
_PENALIZED: dict[str, bool] = {"ols": False, "ridge": True}

#: A column counts as collinear when its squared Cholesky pivot is at most this share of its
#: centred sum of squares (1 - R^2 on the earlier columns), and as constant in the window when
#: its centred sum of squares is at most this share of its sum of squares about the shift.
RANK_RTOL = 1e-10
#: Origins whose Grams are factorised, and then solved (OLS, fixed λ) or searched (GCV)
#: together.
BATCH_FIXED, BATCH_GCV = 512, 1024


@dataclass(frozen=True)
class _Spec:
    """Validated options of :func:`recursive_ls`."""

    window: int | None
    min_nobs: int
    intercept: bool
    method: Method
    penalized: bool  # the engine's ridge recursion (a penalty λ), else unpenalised OLS
    lam: float | None  # None: chosen by GCV (ridge) or no penalty (OLS)
    standardize: bool
    reset: int
    return_se: bool

    @property
    def gcv(self) -> bool:
        """Whether λ is chosen by GCV."""
        return self.penalized and self.lam is None


def _positive_int(name: str, value: object) -> int:
    """Return ``value`` as an int >= 1, or raise OptionError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise OptionError(f"{name} must be a positive integer, however: {name}={value!r}.")
    return int(value)


def _check_spec(n_coef: int, window: object, min_nobs: object, reset: object, method: object,
                lam: object, return_se: object, **flags: object) -> _Spec:
    """Validate the options of :func:`recursive_ls` (see there)."""
    if not isinstance(method, str) or method not in _PENALIZED:
        raise OptionError(f"method must be 'ols' or 'ridge', however: {method=}.")
    penalized = _PENALIZED[method]
    if not penalized and lam is not None:
        raise OptionError(f"lam applies to method='ridge' only, however: {lam=}.")
    if penalized and return_se:
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
    return _Spec(win, first, bool(flags["intercept"]), method, penalized,  # type: ignore[arg-type]
                 penalty, bool(flags["standardize"]), _positive_int("reset", reset),
                 bool(return_se))


def _slopes(work: _gram.Work) -> FloatArray:
    """Slopes (B, P) from the kernel's solves ``L' theta = e_m``: ``beta = -rho theta``.

    Where that fails (``rho = 0``: an exact fit whose last pivot is exactly zero, or a
    factorisation that stopped early), the slopes come from ``L' beta = l`` by vectorised
    back substitution instead.
    """
    m, P = work.grams.shape[1], work.css.shape[1] - 1
    off = m - P - 1  # 1 when bordered by the column of ones
    rho = work.grams[:, m - 1, m - 1]
    with np.errstate(all="ignore"):
        slopes = -work.out["theta"][:, off : m - 1] * rho[:, None]
    redo = (rho == 0.0) | ~np.isfinite(slopes).all(axis=1)
    if redo.any():
        slopes[redo] = _back_substitute(work.grams[redo], P)
    return slopes


def _back_substitute(factor: FloatArray, P: int) -> FloatArray:
    """Slopes (B, P) from bordered Cholesky factors: ``L' beta = l`` (vectorised)."""
    m = factor.shape[1]  # C order: factor[:, k, i] = L[i, k]
    off = m - P - 1
    slopes = np.zeros((factor.shape[0], P))
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(P - 1, -1, -1):
            row = factor[:, off + i]
            partial = np.einsum("bk,bk->b", row[:, off + i + 1 : m - 1], slopes[:, i + 1 :])
            slopes[:, i] = (row[:, m - 1] - partial) / row[:, off + i]
    return slopes


def _std_err(work: _gram.Work, ok: BoolArray) -> FloatArray:
    """Classical OLS standard errors, ``sigma^2 = RSS / (n - n_coef)`` with ``RSS = rho^2``."""
    B, m = work.grams.shape[:2]
    P = work.css.shape[1] - 1
    off = m - P - 1
    inv = np.zeros((B, P, P))  # L^{-1} of the regressors' block: the centred Gram's factor
    for j in np.flatnonzero(ok) if P else []:
        inv[j] = lapack.dtrtri(work.grams[j].T[off : off + P, off : off + P], lower=1)[0]
    rss = np.where(work.out["info"] == 0, work.grams[:, m - 1, m - 1] ** 2, 0.0)
    n_coef = P + work.centre
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma2 = np.where(work.nobs > n_coef, rss / (work.nobs - n_coef), np.nan)
    se = np.sqrt(sigma2[:, None] * np.einsum("bij,bij->bj", inv, inv))  # diag(C^{-1})
    if not work.centre:
        return se
    lev = np.einsum("bij,bj->bi", inv, work.means[:, :-1])  # L^{-1} xbar
    return np.column_stack([np.sqrt(sigma2 * (1.0 / work.nobs + (lev**2).sum(axis=1))), se])



def _prediction_leverage(work: _gram.Work, ok: BoolArray,
                         x_new: FloatArray) -> tuple[FloatArray, FloatArray]:
    """σ and ``x'(X'X)⁻¹x`` per origin, by one triangular solve with the window's factor."""
    m = work.grams.shape[1]
    P = work.css.shape[1] - 1
    off = m - P - 1
    rss = np.where(ok, work.grams[:, m - 1, m - 1] ** 2, np.nan)
    n_coef = P + work.centre
    with np.errstate(divide="ignore", invalid="ignore"):
        sigma = np.sqrt(np.where(work.nobs > n_coef, rss / (work.nobs - n_coef), np.nan))
    dev = x_new - work.means[:, :-1]  # means are zero without an intercept
    lev = np.where(ok, 1.0 / work.nobs if work.centre else 0.0, np.nan)
    for j in np.flatnonzero(ok) if P else []:  # L⁻¹ (x - x̄), L the centred Gram's factor
        v = blas.dtrsv(work.grams[j].T[off: off + P, off: off + P], dev[j], lower=1)
        lev[j] += v @ v
    return sigma, lev


class _Batch(NamedTuple):
    """Results for one batch of origins."""

    coef: FloatArray
    lam: FloatArray
    std_err: FloatArray | None
    deficient: BoolArray
    sigma: FloatArray | None = None
    leverage: FloatArray | None = None


def _finish(work: _gram.Work, spec: _Spec, x_new: FloatArray | None = None) -> _Batch:
    """Coefficients, penalties, standard errors and rank flags of a factorised batch."""
    css, (B, m) = work.css[:, :-1], work.grams.shape[:2]
    const: BoolArray = np.any(css <= RANK_RTOL * work.raw[:, :-1], axis=1)  # constant column
    deficient = const if spec.standardize or not spec.penalized else np.zeros_like(const)
    lam, std_err = np.full(B, np.nan if spec.lam is None else spec.lam), None
    sigma: FloatArray | None = None
    lev: FloatArray | None = None
    if spec.gcv:
        out = work.out
        slopes, lam = ridge_by_gcv(work.grams, out["d"], out["e"], out["tau"], css, work.nobs,
                                   spec.intercept, spec.standardize)
    else:
        ok = (work.out["info"] == 0) | (work.out["info"] == m)  # m: only rho failed (exact fit)
        slopes = _slopes(work)
        deficient |= ~ok
        if not spec.penalized:
            off = m - css.shape[1] - 1
            pivots = np.diagonal(work.grams, axis1=1, axis2=2)[:, off:-1]
            deficient |= (pivots**2 <= RANK_RTOL * css).any(axis=1)
        if spec.return_se:
            std_err = _std_err(work, ok)
            std_err[deficient] = np.nan
        if x_new is not None:
            sigma, lev = _prediction_leverage(work, ok & ~deficient, x_new)
    coef = slopes
    if spec.intercept:
        const_term = work.means[:, -1] - np.einsum("bk,bk->b", work.means[:, :-1], slopes)
        coef = np.column_stack([const_term, slopes])
    coef[deficient] = np.nan
    return _Batch(coef, lam, std_err, deficient, sigma, lev)


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
    x_new: FloatArray | None = None,
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
    x_new : array_like, shape (n_origins, P), optional
        OLS only: one row of regressors per origin (no intercept column); ``sigma`` and
        ``leverage`` then give the OLS prediction interval
        ``coef' x ± t · sigma · sqrt(1 + leverage)`` at each origin.

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
    Xn = None
    if x_new is not None:
        Xn = np.asarray(x_new, dtype=np.float64)
        if spec.penalized:
            raise OptionError("x_new gives the OLS prediction leverage; use method='ols'.")
        if Xn.shape != (ends.size, Xa.shape[1]):
            raise DataError(f"x_new must have one row per origin, shape {(ends.size, Xa.shape[1])}"
                            f", however: {Xn.shape=}.")
    starts = np.zeros_like(ends) if spec.window is None else np.maximum(ends - spec.window + 1, 0)
    Z = np.column_stack([Xa, ya])  # (T, K): y last, so the Gram is bordered by X'y and y'y
    if spec.gcv:
        batch, kind, kernel = BATCH_GCV, _gram.TRIDIAGONAL, _gram.tridiagonal_kernel(
            spec.standardize)
    else:
        batch, kind, kernel = BATCH_FIXED, _gram.CHOLESKY, _gram.cholesky_kernel(
            spec.lam, spec.standardize)
    run: _gram.Running | None = None
    parts = []
    for a in range(0, ends.size, batch):
        work, run = _gram.fill(Z, starts[a : a + batch], ends[a : a + batch], a,
                               centre=spec.intercept, reset=spec.reset, kind=kind,
                               kernel=kernel, run=run)
        parts.append(_finish(work, spec, None if Xn is None else Xn[a : a + batch]))
    deficient = np.concatenate([p.deficient for p in parts])
    if deficient.any():
        warn_user(f"{deficient.sum()} of {ends.size} windows are rank deficient; their "
                      "coefficients are NaN (see rank_deficient).", RankDeficiencyWarning)
    lams = np.concatenate([p.lam for p in parts]) if spec.penalized else None
    std_err = np.concatenate([p.std_err for p in parts if p.std_err is not None]) \
        if spec.return_se else None
    sigma = lev = None
    if Xn is not None:
        sigma = np.concatenate([p.sigma for p in parts if p.sigma is not None])
        lev = np.concatenate([p.leverage for p in parts if p.leverage is not None])
    return RecursiveFit(ends, np.concatenate([p.coef for p in parts]), ends - starts + 1, lams,
                        std_err, deficient, int(deficient.sum()), spec.method, spec.window,
                        spec.intercept, sigma, lev)
