"""The one decomposition behind OLS, ridge and PCR, and their spectral filters.

The design is centred (when it has an intercept), weighted by sqrt(w) and column-scaled:

    Z = sqrt(w) * (X - x̄) / d  =  U S V'        (thin SVD via Householder QR, then SVD of R)

Every linear method here is a filter f_k on the same spectrum (DESIGN.md §2):

    coef_z = V diag(f / s) U' ỹ,     Ω_z = V diag(f / s²) V',     tr(H) = [intercept] + Σ f_k

    OLS: f = 1     ridge(λ): f = s² / (s² + λ)     PCR(k): f = 1 for the k largest s, else 0

X'X is never formed or inverted on the solve path; the QR of Z is backward stable, so the
accuracy is governed by cond(Z), not cond(Z)².

Extreme scales. Every decision (aliasing, rank) is taken on the column-scaled design, and
column norms are computed so that their squares neither overflow nor underflow, so a column
multiplied by 1e300 or 1e-300 gives the same decisions and the coefficients scaled back. A
response whose squares would leave the float64 range is divided by a power of two (exactly)
and the spectrum records it (:attr:`Spectrum.y_scale`); a design whose QR overflows (a value
near 1e308) is refactorised with its columns multiplied by powers of two.

Tall designs (more rows than columns) are reduced by a streaming Householder QR of [Z | ỹ]
that keeps nothing of size n_obs: U' ỹ comes out of the appended column, and U itself is
never stored. Its rows are recomputed on demand, block by block, as U = Z V S⁻¹ (one matrix
product with the design; :class:`LeftVectors`), which is accurate to about
eps · cond(Z). When cond(Z) exceeds :data:`LAZY_U_MAX_COND`, or the design is small
(:data:`LAZY_U_MIN_CELLS`), the reduction is redone keeping the Householder reflectors and
U = Q U_R is formed and stored exactly. Wide designs (n_obs ≤
the number of columns; ridge and PCR only) take the thin SVD of Z directly: its left side
is only n_obs × n_obs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal, TypedDict

import numpy as np
import scipy.linalg as sla

from attnreg.linear.tallqr import TallQR, streaming_r
from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import DataError
from attnreg.threads import narrow_blas, small_lapack
from attnreg.linear.centring import offset_columns, two_term_means
from attnreg.linear.left_vectors import LeftVectors
from attnreg.linear.scaling import (
    SAFE_EXPONENT,
    column_exponents,
    is_safe,
    multipliers,
    binary_exponents,
    column_norms,
    unit_weights,
)

Scaling = Literal["sd", "norm", "none"]


class _Centring(TypedDict):
    """What every decomposition path shares: centring, weights and the response."""

    center: FloatArray  # (p,) weighted column means (zeros without an intercept)
    center_lo: FloatArray | None  # (p,) what float64 could not hold of them (None: zeros)
    sqrt_w: FloatArray  # (n,) sqrt(w); a stride-0 vector of ones when unweighted
    sum_w: float
    intercept: int | None  # column of the intercept
    y_center: float  # (in units of y_scale, as the next three)
    y_center_lo: float  # what float64 could not hold of ȳ
    yss: float  # ||sqrt(w)(y - ȳ)||²
    y: FloatArray
    y_scale: float  # a power of two: the response is y * y_scale
    tol: float  # the aliasing tolerance used


#: relative size of a column's QR diagonal below which the column is aliased (R's lm uses 1e-7)
ALIAS_TOL = 1e-10
#: U is recomputed from the design (U = Z V S⁻¹, error about eps · cond(Z)) up to this
#: condition number of Z; above it, U = Q U_R is formed from the Householder reflectors and kept
LAZY_U_MAX_COND = 1e4
#: ... and only for designs of more than this many cells (n_obs × columns): small designs keep
#: U exactly (it costs nothing there, and OLS refines them with it; see
#: :func:`attnreg.linear.refinement.refine_ols`)
LAZY_U_MIN_CELLS = 200_000




@dataclass(frozen=True)
class Spectrum:
    """Thin SVD of the centred, weighted, column-scaled design.

    Attributes
    ----------
    U : LeftVectors, shape (n_obs, rank)
        Left singular vectors; orthonormal and orthogonal to sqrt(w) when centred. Rows are
        read as ``U[rows]``; for well-conditioned tall designs they are recomputed from the
        design on demand rather than stored.
    s : ndarray, shape (rank,)
        Singular values, descending.
    V : ndarray, shape (n_kept, rank)
        Right singular vectors over the kept (non-intercept, non-aliased) columns.
    kept : ndarray of int, shape (n_kept,)
        Design columns the spectrum spans (excludes the intercept and aliased columns).
    aliased : ndarray of int
        Design columns dropped as linear combinations of earlier ones (wide designs: constant
        columns only).
    center : ndarray, shape (n_coef,)
        Column centres x̄ (weighted means; zero when there is no intercept).
    scale : ndarray, shape (n_coef,)
        Column scales d (1 for the intercept and aliased columns).
    sqrt_w : ndarray, shape (n_obs,)
        Square roots of the prior weights (a read-only vector of ones when unweighted).
    sum_w : float
        Σ w.
    intercept : int or None
        Index of the intercept column.
    y_center : float
        Weighted mean of y (0 without an intercept).
    uty : ndarray, shape (rank,)
        U' ỹ with ỹ = sqrt(w) (y − ȳ).
    yss : float
        ‖ỹ‖², the (weighted, centred when there is an intercept) total sum of squares.
    y : ndarray, shape (n_obs,)
        The response (a reference, not a copy, when ``y_scale`` is 1).
    y_outside : float
        ‖ỹ − U U' ỹ‖², the part of ỹ outside the column space (the OLS RSS; from the QR).
    y_scale : float
        A power of two, 1 unless the response's squares would leave the float64 range: then
        ``y``, ``y_center``, ``uty``, ``yss`` and ``y_outside`` are those of the response
        divided by ``y_scale`` (exactly), and so are the sums of squares computed from them.
        :func:`apply_filter` returns coefficients on the response's own scale.
    tol : float
        The aliasing tolerance the decomposition used.
    center_lo : ndarray, shape (n_coef,), or None
        The rest of the column means beyond ``center`` (the means are ``center + center_lo``
        to twice float64's precision; :mod:`attnreg.linear.centring`); the design is
        centred as (X − center) − center_lo. None: zeros.
    y_center_lo : float
        The rest of the response's mean beyond ``y_center`` (in units of ``y_scale``).

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> sp.n_obs, sp.rank, sp.kept.tolist(), sp.aliased.tolist()
    (16, 5, [1, 2, 3, 4, 5], [])
    >>> print(np.round(sp.s, 4))
    [7.6179 4.3265 1.7797 0.2705 0.0944]
    >>> print(f"{sp.y_outside:.1f}")  # the OLS residual sum of squares
    839348.0
    """

    U: LeftVectors
    s: FloatArray
    V: FloatArray
    kept: IntArray
    aliased: IntArray
    center: FloatArray
    scale: FloatArray
    sqrt_w: FloatArray
    sum_w: float
    intercept: int | None
    y_center: float
    uty: FloatArray
    yss: float
    y: FloatArray
    y_outside: float
    y_scale: float = 1.0
    tol: float = ALIAS_TOL
    center_lo: FloatArray | None = None
    y_center_lo: float = 0.0

    @property
    def y_exponent(self) -> int:
        """e with ``y_scale`` = 2^e."""
        return int(np.frexp(self.y_scale)[1]) - 1

    @property
    def n_obs(self) -> int:
        """Number of rows."""
        return int(self.U.shape[0])

    @property
    def rank(self) -> int:
        """Rank of the centred design (excluding the intercept)."""
        return int(self.s.shape[0])

    @property
    def weighted(self) -> bool:
        """Whether prior weights were given."""
        return self.sqrt_w.strides[0] != 0

    @property
    def ytilde(self) -> FloatArray:
        """ỹ = sqrt(w) (y − ȳ), shape (n_obs,) (computed on each access)."""
        yt = self.y - self.y_center
        yt -= self.y_center_lo
        if self.weighted:
            yt *= self.sqrt_w
        return yt

    def with_stored_u(self) -> Spectrum:
        """The same spectrum with U formed and held (for many passes over all rows)."""
        if self.U.is_stored:
            return self
        U = LeftVectors(self.n_obs, self.rank, stored=self.U.materialize())
        return dataclasses.replace(self, U=U)


def decompose(X: FloatArray, y: FloatArray, *, intercept: int | None, weights: FloatArray | None,
              scaling: Scaling, tol: float = ALIAS_TOL, lazy_u: bool | None = None) -> Spectrum:
    """Centre, weight and scale the design, find aliased columns, and take its thin SVD.

    Parameters
    ----------
    X : ndarray, shape (n_obs, n_coef)
        Design matrix (the intercept, if any, is a column of ones at index ``intercept``).
    y : ndarray, shape (n_obs,)
    intercept : int or None
    weights : ndarray, shape (n_obs,) or None
    scaling : {"sd", "norm", "none"}
        Column scale d: the (weighted, population) standard deviation, the column norm (numerics
        only: OLS is invariant), or none.
    tol : float
        A column is aliased when its QR diagonal is below ``tol`` times its norm.
    lazy_u : bool, optional
        Tall designs: recompute U from the design on demand (True) or form and keep it
        (False). By default U is recomputed when cond(Z) ≤ :data:`LAZY_U_MAX_COND` and the
        design has more than :data:`LAZY_U_MIN_CELLS` cells.

    Returns
    -------
    Spectrum

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> print(f"{sp.s[0] / sp.s[-1]:.1f}")  # condition number of the standardised design
    80.7
    >>> ols = filters.apply_filter(sp, filters.ols_filter(sp.s), 6)
    >>> print(" ".join(f"{c:.4f}" for c in ols.coef[1:]))
    -0.0320 -1.9721 -1.0200 -0.0775 1814.1014

    Notes
    -----
    Memory (tall designs, U recomputed): besides ``X`` only one leaf of rows (a few MiB) and
    (n_coef × n_coef) factors are held; ``X`` and ``y`` are referenced, not copied. The leaves
    of [Z | ỹ] are written, centred and weighted, into a small buffer under the R factor of the
    rows before them and QR-factorised there (LAPACK geqrt), so the reduction is made of
    Householder transformations only (backward stable, like a plain Householder QR).
    """
    n = X.shape[0]
    cols = np.array([j for j in range(X.shape[1]) if j != intercept], dtype=np.int64)
    common = _centring(X, y, cols, intercept, weights, tol)
    if n <= cols.size:
        return _decompose_wide(X, cols, scaling, tol, common)
    with narrow_blas(cols.size):  # row-block QRs of a narrow design: one thread is faster
        return _decompose_tall(X, cols, scaling, tol, lazy_u, common)


def _centring(X: FloatArray, y: FloatArray, cols: IntArray, intercept: int | None,
              weights: FloatArray | None, tol: float) -> _Centring:
    """Weights, the columns' and response's means (two terms) and the response's scale."""
    n, p = X.shape
    if weights is None:
        sqrt_w, sum_w = unit_weights(n), float(n)
    else:
        sqrt_w, sum_w = np.sqrt(weights), float(weights.sum())
    center, center_lo = np.zeros(p), None
    y_center = y_lo = 0.0
    if intercept is not None:  # means to twice float64's precision (attnreg.linear.centring)
        center, lo = two_term_means(weights, X, cols, sum_w)
        center_lo = lo if lo.any() else None
        y_hi, y_los = two_term_means(weights, y[:, None], np.zeros(1, dtype=np.int64), sum_w)
        y_center, y_lo = float(y_hi[0]), float(y_los[0])
    yt = y - y_center
    yt -= y_lo
    if weights is not None:
        yt *= sqrt_w
    big = max(float(yt.max(initial=0.0)), -float(yt.min(initial=0.0)))
    y_exp = 0 if big == 0.0 or is_safe(np.array(big)) else int(binary_exponents(np.array(big)))
    y_exp = min(y_exp, 1023)  # y_scale = 2^y_exp must be finite (2^1024 is not): |ỹ| / 2^1023 < 2
    if y_exp:  # squares would overflow or underflow: the response / 2^y_exp, exactly
        y, y_center, yt = np.ldexp(y, -y_exp), float(np.ldexp(y_center, -y_exp)), np.ldexp(yt, -y_exp)
        y_lo = float(np.ldexp(y_lo, -y_exp))
    return {"center": center, "center_lo": center_lo, "y_center_lo": y_lo, "sqrt_w": sqrt_w,
            "sum_w": sum_w, "intercept": intercept, "y_center": y_center,
            "yss": float(yt @ yt), "y": y, "y_scale": float(np.ldexp(1.0, y_exp)),
            "tol": float(tol)}


def scales(norms: FloatArray, scaling: Scaling, sum_w: float, e: IntArray) -> FloatArray:
    """Column scales d from the norms of the columns divided by 2^e (the QR's pre-scaling).

    A norm that overflows (values near 1e308 in several rows) falls back to the standard
    deviation, which cannot: OLS, the only user of ``"norm"``, does not depend on d.
    """
    if scaling == "norm":
        with np.errstate(over="ignore"):
            scale = np.ldexp(norms, e)  # (exact: e = 0 unless the QR was pre-scaled)
        if not np.isfinite(scale).all():
            scale = np.where(np.isfinite(scale), scale, np.ldexp(norms / np.sqrt(sum_w), e))
    elif scaling == "sd":
        scale = np.ldexp(norms / np.sqrt(sum_w), e)
    else:
        scale = np.ones(norms.size)
    scale[~(scale > 0)] = 1.0
    return scale


def scaled_r(R: FloatArray, col_scale: FloatArray, e: IntArray) -> FloatArray:
    """R of the design divided by the column scales, from the R of the design divided by 2^e."""
    out = R / np.ldexp(col_scale, -e)
    if not np.isfinite(out).all():
        raise DataError("the unstandardised design is too large for float64 arithmetic (values "
                        "near 1e308); standardise the predictors or rescale them")
    return out


def _tall_qr(X: FloatArray, cols: IntArray, center: FloatArray, sqrt_w: FloatArray | None,
             e: IntArray | None = None, center_lo: FloatArray | None = None,
             ) -> tuple[TallQR, IntArray]:
    """TallQR of the centred columns, each divided by 2^e; e found (and the QR redone) when the
    plain QR overflows. Returns the QR and e (zeros when no column needed it)."""
    if e is None:
        qr = TallQR(X, cols, center, sqrt_w, center_lo=center_lo)
        if _in_range(qr.R):
            return qr, np.zeros(cols.size, dtype=np.int64)
        e = column_exponents(X, cols, center, sqrt_w)
    return TallQR(X, cols, center, sqrt_w, col_mult=multipliers(e), center_lo=center_lo), e


def _in_range(R: FloatArray) -> bool:
    """Whether a QR's R is safely inside float64's range.

    A finite R does not suffice: R's diagonal near 1e308 means the Householder vectors
    (x − α e₁, up to twice as large) overflowed, and Q with them.
    """
    return bool(np.isfinite(R).all() and np.abs(R).max(initial=0.0) <= 2.0**SAFE_EXPONENT)


def _weights_or_none(c: _Centring) -> FloatArray | None:
    """sqrt(w), or None for an unweighted fit (its stride-0 vector of ones)."""
    return c["sqrt_w"] if c["sqrt_w"].strides[0] != 0 else None


def _weighted_yc(c: _Centring) -> FloatArray:
    """sqrt(w)(y − ȳ), a new array."""
    yt = c["y"] - c["y_center"]
    yt -= c["y_center_lo"]
    sw = _weights_or_none(c)
    if sw is not None:
        yt *= sw
    return yt


def _no_columns(n: int, scale: FloatArray, kept: IntArray, aliased: IntArray,
                c: _Centring) -> Spectrum:
    """The spectrum of an intercept-only fit (or one whose every column is aliased)."""
    return Spectrum(U=LeftVectors(n, 0, stored=np.zeros((n, 0))), s=np.zeros(0),
                    V=np.zeros((0, 0)), kept=kept, aliased=aliased, scale=scale,
                    uty=np.zeros(0), y_outside=c["yss"], **c)


def _decompose_tall(X: FloatArray, cols: IntArray, scaling: Scaling, tol: float,
                    lazy_u: bool | None, c: _Centring) -> Spectrum:
    n, p = X.shape
    sw = _weights_or_none(c)
    center, y = c["center"], c["y"]
    if lazy_u is False or (lazy_u is None and n * cols.size <= LAZY_U_MIN_CELLS):
        return _decompose_tall_stored(X, cols, scaling, tol, c)
    keep = np.zeros(0, dtype=bool)
    e = np.zeros(cols.size, dtype=np.int64)
    if cols.size:
        lows = (c["center_lo"], c["y_center_lo"])
        R_aug = streaming_r(X, y, cols, center, sw, c["y_center"], lows=lows)
        k = cols.size
        if not _in_range(R_aug[:k, :k]):  # overflow: columns / 2^e, exactly
            e = column_exponents(X, cols, center, sw)
            R_aug = streaming_r(X, y, cols, center, sw, c["y_center"], multipliers(e), lows)
        norms = column_norms(R_aug[:k, :k])
        keep = (np.abs(np.diag(R_aug)[:k]) > tol * norms) & (norms > 0)
        if keep.any() and not keep.all():  # drop the aliased columns: re-triangularise R
            with small_lapack():
                R_aug = np.triu(sla.qr(R_aug[:, np.r_[np.flatnonzero(keep), k]], mode="r")[0])
            norms, e = norms[keep], e[keep]
    kept, aliased = cols[keep], cols[~keep]
    scale = np.ones(p)
    if not kept.size:  # intercept-only (or every column aliased)
        return _no_columns(n, scale, kept, aliased, c)
    m = kept.size
    col_scale = scales(norms, scaling, c["sum_w"], e)
    scale[kept] = col_scale
    Ur, s, Vt = small_svd(scaled_r(R_aug[:m, :m], col_scale, e))
    y_outside = float(R_aug[m, m] ** 2)
    use_lazy = lazy_u if lazy_u is not None else (
        n * cols.size > LAZY_U_MIN_CELLS and s[0] <= LAZY_U_MAX_COND * s[-1])
    if use_lazy:
        G = (Vt.T / s) / col_scale[:, None]
        lo = c["center_lo"]
        U = LeftVectors(n, m, X=X, cols=kept, center=center[kept], sqrt_w=sw, G=G,
                        center_lo=None if lo is None else lo[kept])
        return Spectrum(U=U, s=s, V=Vt.T, kept=kept, aliased=aliased, scale=scale,
                        uty=Ur.T @ R_aug[:m, m], y_outside=y_outside, **c)
    # ill-conditioned: redo the QR keeping its reflectors, and form U = Q U_R exactly
    qr, _ = _tall_qr(X, kept, center, sw, e, c["center_lo"])
    Ur, s, Vt = small_svd(scaled_r(qr.R, col_scale, e))
    U_arr = qr.q_times(Ur)  # overwrites the factorisation's buffer
    return Spectrum(U=LeftVectors(n, m, stored=U_arr), s=s, V=Vt.T, kept=kept, aliased=aliased,
                    scale=scale, uty=U_arr.T @ _weighted_yc(c), y_outside=y_outside, **c)


def _decompose_tall_stored(X: FloatArray, cols: IntArray, scaling: Scaling, tol: float,
                           c: _Centring) -> Spectrum:
    """Small (or explicitly exact) tall designs: one Householder QR keeping its reflectors.

    A column is aliased when its R diagonal is tiny relative to its norm; the QR is then
    redone without it. U = Q U_R is formed and stored.
    """
    n, p = X.shape
    sw, center = _weights_or_none(c), c["center"]
    keep = np.zeros(0, dtype=bool)
    qr: TallQR | None = None
    e = np.zeros(cols.size, dtype=np.int64)
    if cols.size:
        qr, e = _tall_qr(X, cols, center, sw, center_lo=c["center_lo"])
        norms = column_norms(qr.R)
        diag = np.zeros(cols.size)
        diag[: min(qr.R.shape)] = np.diag(qr.R)
        keep = (np.abs(diag) > tol * norms) & (norms > 0)
    kept, aliased = cols[keep], cols[~keep]
    scale = np.ones(p)
    if not kept.size or qr is None:
        return _no_columns(n, scale, kept, aliased, c)
    if not keep.all():
        qr, e = _tall_qr(X, kept, center, sw, e[keep], c["center_lo"])
        norms = column_norms(qr.R)
    col_scale = scales(norms, scaling, c["sum_w"], e)
    scale[kept] = col_scale
    Ur, s, Vt = small_svd(scaled_r(qr.R, col_scale, e))
    U_arr = qr.q_times(Ur)  # overwrites the factorisation's buffer
    yt = _weighted_yc(c)
    uty = U_arr.T @ yt
    out = yt - U_arr @ uty
    return Spectrum(U=LeftVectors(n, kept.size, stored=U_arr), s=s, V=Vt.T, kept=kept,
                    aliased=aliased, scale=scale, uty=uty, y_outside=float(out @ out), **c)


def _decompose_wide(X: FloatArray, cols: IntArray, scaling: Scaling, tol: float,
                    c: _Centring) -> Spectrum:
    """n_obs ≤ columns: the thin SVD of Z itself (its left side is only n_obs × n_obs).

    With more columns than rows the sequential aliasing rule would drop every column past
    the (n_obs − 1)-th, so only columns that are constant (zero after centring) are aliased;
    ridge and PCR are defined on the rest. Singular values below n·eps·s_max are dropped.
    """
    n, p = X.shape
    sw = _weights_or_none(c)
    Zc = X[:, cols] - c["center"][cols]
    if c["center_lo"] is not None:
        Zc -= c["center_lo"][cols]
    # a column is constant when its centred norm is negligible beside what the centring
    # rounds: its own norm, or for a column with a large offset (centred on two-term means,
    # exact near the mean) its norm about the float64 mean
    offset = offset_columns(X, cols, c["center"][cols])
    Xw = X[:, cols] - np.where(offset, c["center"][cols], 0.0)
    if sw is not None:
        Xw *= sw[:, None]
    raw = column_norms(Xw)
    del Xw
    if sw is not None:
        Zc *= sw[:, None]
    norms = column_norms(Zc)
    keep = (norms > tol * raw) & (norms > 0)
    kept, aliased = cols[keep], cols[~keep]
    scale = np.ones(p)
    if not kept.size:
        return _no_columns(n, scale, kept, aliased, c)
    col_scale = scales(norms[keep], scaling, c["sum_w"], np.zeros(int(keep.sum()), dtype=np.int64))
    scale[kept] = col_scale
    Z = Zc[:, keep] / col_scale
    del Zc
    try:
        with small_lapack():  # n_obs x p with few rows
            U, s, Vt = sla.svd(Z, full_matrices=False, lapack_driver="gesdd")
    except np.linalg.LinAlgError:  # pragma: no cover - gesdd rarely fails to converge
        U, s, Vt = sla.svd(Z, full_matrices=False, lapack_driver="gesvd")
    r = int(np.sum(s > s[0] * max(Z.shape) * np.finfo(float).eps)) if s.size and s[0] > 0 else 0
    U, s, V = np.ascontiguousarray(U[:, :r]), s[:r], Vt[:r].T
    yt = _weighted_yc(c)
    uty = U.T @ yt
    if r >= n - (1 if c["intercept"] is not None else 0):
        y_outside = 0.0  # Z spans everything orthogonal to sqrt(w): an exact fit at λ = 0
    else:
        out = yt - U @ uty
        y_outside = float(out @ out)
    return Spectrum(U=LeftVectors(n, r, stored=U), s=s, V=V, kept=kept, aliased=aliased,
                    scale=scale, uty=uty, y_outside=y_outside, **c)


def small_svd(R: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """SVD of the p × p triangular factor, on one BLAS thread (fast and load-proof at this size)."""
    with small_lapack():
        return np.linalg.svd(R)  # type: ignore[return-value]
