"""The paths of :func:`~attnreg.linear.spectral.decompose`: centring and weighting, the tall
design's QR (row blocks, U stored or recomputed) or the wide design's SVD, each giving the
fields of a :class:`~attnreg.linear.spectral.Spectrum`."""

from __future__ import annotations

from typing import Any, Literal, TypedDict

import numpy as np
import scipy.linalg as sla

from attnreg.linear.tallqr import TallQR, column_exponents, multipliers, streaming_r
from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import DataError
from attnreg.threads import small_lapack
from attnreg.linear.centring import offset_columns, two_term_means
from attnreg.linear.left_vectors import LeftVectors
from attnreg.scaling import (
    SAFE_EXPONENT,
    is_safe,
    binary_exponents,
    column_norms,
    unit_weights,
)


__all__ = ["LAZY_U_MAX_COND", "LAZY_U_MIN_CELLS", "Centring", "centring", "decompose_tall",
           "decompose_wide", "scaled_r", "scales", "small_svd"]

Scaling = Literal["sd", "norm", "none"]


class Centring(TypedDict):
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


#: U is recomputed from the design (U = Z V S⁻¹, error about eps · cond(Z)) up to this
#: condition number of Z; above it, U = Q U_R is formed from the Householder reflectors and kept
LAZY_U_MAX_COND = 1e4
#: ... and only for designs of more than this many cells (n_obs × columns): small designs keep
#: U exactly (it costs nothing there, and OLS refines them with it; see
#: :func:`attnreg.linear.refinement.refine_ols`)
LAZY_U_MIN_CELLS = 200_000




def centring(X: FloatArray, y: FloatArray, cols: IntArray, intercept: int | None,
              weights: FloatArray | None, tol: float) -> Centring:
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


def _weights_or_none(c: Centring) -> FloatArray | None:
    """sqrt(w), or None for an unweighted fit (its stride-0 vector of ones)."""
    return c["sqrt_w"] if c["sqrt_w"].strides[0] != 0 else None


def _weighted_yc(c: Centring) -> FloatArray:
    """sqrt(w)(y − ȳ), a new array."""
    yt = c["y"] - c["y_center"]
    yt -= c["y_center_lo"]
    sw = _weights_or_none(c)
    if sw is not None:
        yt *= sw
    return yt


def _no_columns(n: int, scale: FloatArray, kept: IntArray, aliased: IntArray,
                c: Centring) -> dict[str, Any]:
    """The spectrum of an intercept-only fit (or one whose every column is aliased)."""
    return dict(U=LeftVectors(n, 0, stored=np.zeros((n, 0))), s=np.zeros(0),
                    V=np.zeros((0, 0)), kept=kept, aliased=aliased, scale=scale,
                    uty=np.zeros(0), y_outside=c["yss"], **c)


def decompose_tall(X: FloatArray, cols: IntArray, scaling: Scaling, tol: float,
                    lazy_u: bool | None, c: Centring) -> dict[str, Any]:
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
        return dict(U=U, s=s, V=Vt.T, kept=kept, aliased=aliased, scale=scale,
                        uty=Ur.T @ R_aug[:m, m], y_outside=y_outside, **c)
    # ill-conditioned: redo the QR keeping its reflectors, and form U = Q U_R exactly
    qr, _ = _tall_qr(X, kept, center, sw, e, c["center_lo"])
    Ur, s, Vt = small_svd(scaled_r(qr.R, col_scale, e))
    U_arr = qr.q_times(Ur)  # overwrites the factorisation's buffer
    return dict(U=LeftVectors(n, m, stored=U_arr), s=s, V=Vt.T, kept=kept, aliased=aliased,
                    scale=scale, uty=U_arr.T @ _weighted_yc(c), y_outside=y_outside, **c)


def _decompose_tall_stored(X: FloatArray, cols: IntArray, scaling: Scaling, tol: float,
                           c: Centring) -> dict[str, Any]:
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
    return dict(U=LeftVectors(n, kept.size, stored=U_arr), s=s, V=Vt.T, kept=kept,
                    aliased=aliased, scale=scale, uty=uty, y_outside=float(out @ out), **c)


def decompose_wide(X: FloatArray, cols: IntArray, scaling: Scaling, tol: float,
                    c: Centring) -> dict[str, Any]:
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
    return dict(U=LeftVectors(n, r, stored=U), s=s, V=V, kept=kept, aliased=aliased,
                    scale=scale, uty=uty, y_outside=y_outside, **c)


def small_svd(R: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """SVD of the p × p triangular factor, on one BLAS thread (fast and load-proof at this size)."""
    with small_lapack():
        return np.linalg.svd(R)  # type: ignore[return-value]
