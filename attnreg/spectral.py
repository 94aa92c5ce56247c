"""The one decomposition behind OLS, ridge and PCR, and their spectral filters.

The design is centred (when it has an intercept), weighted by sqrt(w) and column-scaled:

    Z = sqrt(w) * (X - x̄) / d  =  U S V'        (thin SVD via Householder QR, then SVD of R)

Every linear method here is a filter f_k on the same spectrum (DESIGN.md §2):

    coef_z = V diag(f / s) U' ỹ,     Ω_z = V diag(f / s²) V',     tr(H) = [intercept] + Σ f_k

    OLS: f = 1     ridge(λ): f = s² / (s² + λ)     PCR(k): f = 1 for the k largest s, else 0

X'X is never formed or inverted on the solve path; the QR of Z is backward stable, so the
accuracy is governed by cond(Z), not cond(Z)².
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import scipy.linalg as sla

from attnreg._typing import BoolArray, FloatArray, IntArray

Scaling = Literal["sd", "norm", "none"]
#: relative size of a column's QR diagonal below which the column is aliased (R's lm uses 1e-7)
ALIAS_TOL = 1e-10
_CHUNK_ROWS = 65536


@dataclass(frozen=True)
class Spectrum:
    """Thin SVD of the centred, weighted, column-scaled design.

    Attributes
    ----------
    U : ndarray, shape (n_obs, rank)
        Left singular vectors; orthonormal and orthogonal to sqrt(w) when centred.
    s : ndarray, shape (rank,)
        Singular values, descending.
    V : ndarray, shape (n_kept, rank)
        Right singular vectors over the kept (non-intercept, non-aliased) columns.
    kept : ndarray of int, shape (n_kept,)
        Design columns the spectrum spans (excludes the intercept and aliased columns).
    aliased : ndarray of int
        Design columns dropped as linear combinations of earlier ones.
    center : ndarray, shape (n_coef,)
        Column centres x̄ (weighted means; zero when there is no intercept).
    scale : ndarray, shape (n_coef,)
        Column scales d (1 for the intercept and aliased columns).
    sqrt_w : ndarray, shape (n_obs,)
        Square roots of the prior weights (ones when unweighted).
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
    ytilde : ndarray, shape (n_obs,)
        ỹ = sqrt(w) (y − ȳ).
    """

    U: FloatArray
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
    ytilde: FloatArray

    @property
    def n_obs(self) -> int:
        """Number of rows."""
        return int(self.U.shape[0])

    @property
    def rank(self) -> int:
        """Rank of the centred design (excluding the intercept)."""
        return int(self.s.shape[0])


def decompose(X: FloatArray, y: FloatArray, *, intercept: int | None, weights: FloatArray | None,
              scaling: Scaling, tol: float = ALIAS_TOL) -> Spectrum:
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

    Returns
    -------
    Spectrum
    """
    n, p = X.shape
    sqrt_w = np.ones(n) if weights is None else np.sqrt(weights)
    w = sqrt_w * sqrt_w
    sum_w = float(w.sum())
    center = np.zeros(p)
    cols = np.array([j for j in range(p) if j != intercept], dtype=np.int64)
    if intercept is not None:
        center[cols] = (w @ X[:, cols]) / sum_w
    Q, R, keep, col_scale = _qr_drop_aliased(X, cols, center, sqrt_w, scaling, tol)
    aliased = cols[~keep]
    kept = cols[keep]
    scale = np.ones(p)
    scale[kept] = col_scale
    if R.shape[0]:
        Ur, s, Vt = np.linalg.svd(R)
        U = _times_inplace(Q, Ur)
    else:
        s, Vt, U = np.zeros(0), np.zeros((0, 0)), Q
    y_center = float(w @ y / sum_w) if intercept is not None else 0.0
    yt = sqrt_w * (y - y_center)
    return Spectrum(U=U, s=s, V=Vt.T, kept=kept, aliased=aliased, center=center, scale=scale,
                    sqrt_w=sqrt_w, sum_w=sum_w, intercept=intercept, y_center=y_center,
                    uty=U.T @ yt, yss=float(yt @ yt), ytilde=yt)


@dataclass(frozen=True)
class _Scaled:
    matrix: FloatArray  # (n_obs, n_cols), Fortran order so LAPACK works in place
    scale: FloatArray  # (n_cols,)


def _scaled_columns(X: FloatArray, cols: IntArray, center: FloatArray, sqrt_w: FloatArray,
                    scaling: Scaling) -> _Scaled:
    n = X.shape[0]
    Z = np.empty((n, cols.size), order="F")
    scale = np.ones(cols.size)
    for out, j in enumerate(cols):  # a loop over columns, each a vectorised pass over rows
        z = Z[:, out]
        np.subtract(X[:, j], center[j], out=z)
        z *= sqrt_w
        if scaling == "norm":
            scale[out] = np.linalg.norm(z)
        elif scaling == "sd":
            scale[out] = np.linalg.norm(z) / np.sqrt(sqrt_w @ sqrt_w)
        if scale[out] > 0:
            z /= scale[out]
        else:
            scale[out] = 1.0
    return _Scaled(Z, scale)


def _qr_drop_aliased(X: FloatArray, cols: IntArray, center: FloatArray, sqrt_w: FloatArray,
                     scaling: Scaling, tol: float) -> tuple[FloatArray, FloatArray, BoolArray,
                                                           FloatArray]:
    """Householder QR of the scaled columns; a column whose R_jj is tiny relative to its norm is
    aliased and dropped, and the QR is redone without it.

    |R_jj| is the norm of column j after projection onto the earlier columns, so this is R's
    rule (column j is dropped when it is a linear combination of columns 1..j-1).
    """
    if cols.size == 0:  # intercept-only model
        return np.zeros((X.shape[0], 0)), np.zeros((0, 0)), np.zeros(0, dtype=bool), np.ones(0)
    Z = _scaled_columns(X, cols, center, sqrt_w, scaling)
    norms = np.sqrt(np.einsum("ij,ij->j", Z.matrix, Z.matrix))
    qr, tau = _geqrf(Z.matrix)  # overwrites Z: no second copy of the design
    keep = (np.abs(np.diag(qr[: cols.size, :])) > tol * norms) & (norms > 0)
    if not keep.all():
        Z = _scaled_columns(X, cols[keep], center, sqrt_w, scaling)
        qr, tau = _geqrf(Z.matrix)
    k = int(keep.sum())
    R = np.triu(qr[:k, :k])  # copy R out before Q overwrites the factor in place
    return _orgqr(qr[:, :k], tau[:k]), R, keep, Z.scale


def _geqrf(A: FloatArray) -> tuple[FloatArray, FloatArray]:
    (geqrf,) = sla.get_lapack_funcs(("geqrf",), (A,))
    qr, tau, _, info = geqrf(A, overwrite_a=True)
    if info != 0:
        raise np.linalg.LinAlgError(f"QR factorisation failed (LAPACK info={info})")
    return qr, tau


def _orgqr(qr: FloatArray, tau: FloatArray) -> FloatArray:
    (orgqr,) = sla.get_lapack_funcs(("orgqr",), (qr,))
    Q, _, info = orgqr(np.asfortranarray(qr), tau, overwrite_a=True)
    if info != 0:
        raise np.linalg.LinAlgError(f"forming Q failed (LAPACK info={info})")
    return Q


def _times_inplace(Q: FloatArray, M: FloatArray) -> FloatArray:
    """Q @ M for square M, row block by row block, reusing Q's memory."""
    out = np.ascontiguousarray(Q) if Q.shape[0] <= _CHUNK_ROWS else Q
    for start in range(0, out.shape[0], _CHUNK_ROWS):
        block = out[start:start + _CHUNK_ROWS]
        block[...] = block @ M
    return out


# ---------------------------------------------------------------- filters


def ols_filter(s: FloatArray) -> FloatArray:
    """OLS filter factors: all ones."""
    return np.ones_like(s)


def ridge_filter(s: FloatArray, lam: float) -> FloatArray:
    """Ridge filter factors f = s² / (s² + λ); λ = 0 is OLS."""
    s2 = s * s
    return s2 / (s2 + lam)


def pcr_filter(s: FloatArray, k: int) -> FloatArray:
    """PCR filter factors: 1 for the ``k`` largest singular values, 0 for the rest."""
    f = np.zeros_like(s)
    f[:k] = 1.0
    return f


@dataclass(frozen=True)
class Filtered:
    """A filter applied to a spectrum: coefficients, fitted values and degrees of freedom.

    Attributes
    ----------
    coef : ndarray, shape (n_coef,)
        Coefficients on the original scale of the design (NaN for aliased columns).
    f : ndarray, shape (rank,)
        Filter factors.
    edf : float
        Effective degrees of freedom tr(H), counting the intercept.
    """

    coef: FloatArray
    f: FloatArray
    edf: float


def apply_filter(sp: Spectrum, f: FloatArray, n_coef: int) -> Filtered:
    """Coefficients on the original scale for filter factors ``f``."""
    coef = np.full(n_coef, np.nan)
    beta = (sp.V @ (f / sp.s * sp.uty)) / sp.scale[sp.kept]
    coef[sp.kept] = beta
    if sp.intercept is not None:
        coef[sp.intercept] = sp.y_center - sp.center[sp.kept] @ beta
    edf = float(f.sum()) + (1.0 if sp.intercept is not None else 0.0)
    return Filtered(coef=coef, f=f, edf=edf)


def hat_diagonal(sp: Spectrum, f: FloatArray) -> FloatArray:
    """Diagonal of the (weighted) hat matrix, h_i = w_i/Σw + Σ_k f_k U_ik², shape (n_obs,)."""
    h = np.zeros(sp.n_obs)
    for start in range(0, sp.n_obs, _CHUNK_ROWS):
        block = sp.U[start:start + _CHUNK_ROWS]
        h[start:start + _CHUNK_ROWS] = (block * block) @ f
    if sp.intercept is not None:
        h += sp.sqrt_w**2 / sp.sum_w
    return h


def rss_of_filter(sp: Spectrum, f: FloatArray) -> FloatArray:
    """Weighted residual sum of squares for one or many filters (f shape (rank,) or (rank, G)).

    RSS = Σ_k (1 − f_k)² (U'ỹ)_k² + (‖ỹ‖² − ‖U'ỹ‖²).
    """
    u2 = sp.uty**2
    outside = max(sp.yss - float(u2.sum()), 0.0)
    g = (1.0 - f) ** 2
    return u2 @ g + outside


#: OLS coefficients are refined in extended precision when cond(Z) exceeds this, or when the
#: design is small enough for the refinement to cost nothing noticeable
REFINE_COND = 1e5
REFINE_MAX_SIZE = 200_000


def refine_ols(sp: Spectrum, X: FloatArray, y: FloatArray, coef: FloatArray,
               steps: int = 2) -> FloatArray:
    """Iterative refinement of the least-squares solution on the augmented system.

    Björck's refinement of [I A; A' 0][r; c] = [y; 0] with A = sqrt(w)[X_kept] (intercept
    included): residuals of both block equations are computed in extended precision
    (``np.longdouble``) on the ORIGINAL, uncentred design, and each correction is solved with
    the existing factorisation. This removes the cond(Z)²‖r‖ term and the rounding of the
    centring, e.g. NIST's Wampler5 goes from 6.5 to 13 correct digits.

    Parameters
    ----------
    sp : Spectrum
    X : ndarray, shape (n_obs, n_coef)
    y : ndarray, shape (n_obs,)
    coef : ndarray, shape (n_coef,)
        Coefficients from :func:`apply_filter` with the OLS filter (NaN where aliased).
    steps : int
        Refinement steps (each costs two extended-precision products with X).

    Returns
    -------
    ndarray, shape (n_coef,)
    """
    cols = sp.kept if sp.intercept is None else np.r_[sp.intercept, sp.kept]
    A = (X[:, cols] * sp.sqrt_w[:, None]).astype(np.longdouble)
    yl = (sp.sqrt_w * y).astype(np.longdouble)
    c = coef[cols].copy()
    r = (yl - A @ c.astype(np.longdouble)).astype(np.float64)
    for _ in range(steps):
        f = (yl - r.astype(np.longdouble) - A @ c.astype(np.longdouble)).astype(np.float64)
        g = (-(A.T @ r.astype(np.longdouble))).astype(np.float64)
        dc = _solve_augmented(sp, f, g)
        r = r + f - (A @ dc.astype(np.longdouble)).astype(np.float64)
        c = c + dc
    out = coef.copy()
    out[cols] = c
    return out


def _solve_augmented(sp: Spectrum, f: FloatArray, g: FloatArray) -> FloatArray:
    """Solve A'A dc = A'f − g via A = Q_b R_b T (Q_b = [sqrt(w)/sqrt(Σw), U]).

    Coordinates of ``dc`` and ``g``: [intercept, kept...] (or only kept without an intercept).
    T maps the uncentred coefficients to centred ones: T = [[1, x̄'], [0, I]].
    """
    d, xb = sp.scale[sp.kept], sp.center[sp.kept]
    has_int = sp.intercept is not None
    g0, gr = (g[0], g[1:]) if has_int else (0.0, g)
    gr = gr - xb * g0 if has_int else gr  # T^{-T} g
    h_r = (sp.V.T @ (gr / d)) / sp.s  # R_b^{-T} (rest block: (D V S)^{-1})
    z_r = sp.U.T @ f - h_r
    dc_r = (sp.V @ (z_r / sp.s)) / d  # R_b^{-1}
    if not has_int:
        return dc_r
    root = np.sqrt(sp.sum_w)
    z0 = (sp.sqrt_w @ f) / root - g0 / root
    return np.r_[z0 / root - xb @ dc_r, dc_r]  # T^{-1}
