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

import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import scipy.linalg as sla

from attnreg._typing import BoolArray, FloatArray, IntArray

Scaling = Literal["sd", "norm", "none"]
#: relative size of a column's QR diagonal below which the column is aliased (R's lm uses 1e-7)
ALIAS_TOL = 1e-10
_BLOCK_BYTES = 1 << 21  # row blocks of about 2 MiB for passes over (n_obs, rank) arrays


def _row_block(width: int) -> int:
    """Rows per block of an (n, width) float64 array so that a block is about 2 MiB."""
    return max(256, _BLOCK_BYTES // (8 * max(width, 1)))


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

    Notes
    -----
    Memory: besides ``X`` the decomposition holds one (n_obs, rank) buffer. The centred,
    weighted columns are written into it block of rows by block of rows, each block is
    QR-factorised while it is in cache (a tall-skinny QR: Householder QR of the blocks, then of
    their stacked R factors), and ``U`` finally overwrites the Householder vectors in place.
    """
    n, p = X.shape
    sqrt_w = np.ones(n) if weights is None else np.sqrt(weights)
    w = sqrt_w * sqrt_w
    sum_w = float(w.sum())
    center = np.zeros(p)
    cols = np.array([j for j in range(p) if j != intercept], dtype=np.int64)
    if intercept is not None:
        center[cols] = (w @ X)[cols] / sum_w  # w @ X[:, cols] would copy the design
    qr, R, keep, col_scale = _qr_drop_aliased(X, cols, center, sqrt_w, scaling, tol,
                                              weighted=weights is not None)
    aliased = cols[~keep]
    kept = cols[keep]
    scale = np.ones(p)
    scale[kept] = col_scale
    if R.shape[0]:
        Ur, s, Vt = np.linalg.svd(R)
        U = qr.q_times(Ur)  # overwrites the factorisation's buffer
    else:
        s, Vt, U = np.zeros(0), np.zeros((0, 0)), np.zeros((n, 0))
    y_center = float(w @ y / sum_w) if intercept is not None else 0.0
    yt = sqrt_w * (y - y_center)
    return Spectrum(U=U, s=s, V=Vt.T, kept=kept, aliased=aliased, center=center, scale=scale,
                    sqrt_w=sqrt_w, sum_w=sum_w, intercept=intercept, y_center=y_center,
                    uty=U.T @ yt, yss=float(yt @ yt), ytilde=yt)


def _qr_drop_aliased(X: FloatArray, cols: IntArray, center: FloatArray, sqrt_w: FloatArray,
                     scaling: Scaling, tol: float, *,
                     weighted: bool = True) -> tuple[_TallQR, FloatArray, BoolArray, FloatArray]:
    """Householder QR of the centred, weighted columns; a column whose R_jj is tiny relative to
    its norm is aliased and dropped, and the QR is redone without it.

    |R_jj| is the norm of column j after projection onto the earlier columns, so this is R's
    rule (column j is dropped when it is a linear combination of columns 1..j-1). The columns
    are factorised unscaled: Householder QR is column-scaling invariant, so the QR of the
    scaled columns Z' D^-1 is Q (R D^-1), and the column norms d are those of R (Q is
    orthonormal), which saves a pass over the design. Returns the factorisation (for Q), the
    scaled R, the kept mask and the column scales.
    """
    if cols.size == 0:  # intercept-only model
        return _TallQR.empty(X.shape[0]), np.zeros((0, 0)), np.zeros(0, dtype=bool), np.ones(0)
    qr = _TallQR(X, cols, center, sqrt_w if weighted else None)
    norms = np.sqrt(np.einsum("ij,ij->j", qr.R, qr.R))
    keep = (np.abs(_diagonal(qr.R, cols.size)) > tol * norms) & (norms > 0)
    if not keep.any():  # every column aliased: an intercept-only fit
        return _TallQR.empty(X.shape[0]), np.zeros((0, 0)), keep, np.ones(0)
    if not keep.all():
        qr = _TallQR(X, cols[keep], center, sqrt_w if weighted else None)
        norms = np.sqrt(np.einsum("ij,ij->j", qr.R, qr.R))
    if scaling == "norm":
        scale = norms.copy()
    elif scaling == "sd":
        scale = norms / np.sqrt(sqrt_w @ sqrt_w)
    else:
        scale = np.ones(norms.size)
    scale[~(scale > 0)] = 1.0
    return qr, qr.R / scale, keep, scale


def _diagonal(R: FloatArray, k: int) -> FloatArray:
    d = np.zeros(k)
    diag = np.diag(R)
    d[: diag.size] = diag
    return d


#: rows per leaf of the tall-skinny QR (a leaf's Householder panel stays in cache)
_QR_LEAF_ROWS = 2048
#: block size of LAPACK's compact-WY QR (geqrt) inside a leaf
_QR_NB = 32


class _TallQR:
    """Tall-skinny Householder QR of the centred, weighted columns ``cols`` of ``X``.

    The rows are cut into leaves of about ``_QR_LEAF_ROWS`` rows (at least 4 × the number of
    columns). Each leaf is written, centred and weighted, straight into its slot of one flat
    buffer and QR-factorised there (LAPACK geqrt, in place); the leaves' R factors are stacked
    and factorised the same way (recursively), giving R. Q is never formed on its own:
    :meth:`q_times` applies the Householder reflectors to a small matrix and writes the
    product, leaf by leaf, over the reflectors, so ``U = Q Ur`` ends up C-ordered in the same
    buffer. The reduction is made of Householder transformations only, so it is backward
    stable like a plain Householder QR, and much faster for tall matrices because each leaf's
    panel factorisation runs in cache.
    """

    k: int
    R: FloatArray  # (k, k) upper triangular
    top: _TallQR | None  # the factorisation of the stacked R factors of the leaves
    leaves: list[tuple[FloatArray, FloatArray]]  # (Householder vectors, T) of each leaf
    buffer: FloatArray  # bottom level only: the leaves' storage, then U
    bounds: list[tuple[int, int]]  # bottom level only: the leaves' rows

    def __init__(self, X: FloatArray | None, cols: IntArray, center: FloatArray | None,
                 sqrt_w: FloatArray | None, *, blocks: list[FloatArray] | None = None) -> None:
        if blocks is None:
            assert X is not None and center is not None
            self.k = cols.size
            n_blocks = self._plan_leaves(X.shape[0], self.k)
            source: Iterable[FloatArray] = self._fill_leaves(X, cols, center, sqrt_w)
        else:
            self.k, n_blocks, source = blocks[0].shape[1], len(blocks), blocks
        geqrt, self._gemqrt = _qr_lapack()
        self.leaves = []
        # the leaves' R factors go straight into the blocks of the next level (no extra copies)
        group = max(1, _leaf_rows(self.k) // self.k)
        n_up = -(-n_blocks // group)
        upper = [np.zeros((self.k * min(group, n_blocks - i * group), self.k), order="F")
                 for i in range(n_up)] if n_blocks > 1 else []
        R = np.zeros((0, self.k))
        for i, block in enumerate(source):  # each leaf is factorised right after it is filled
            nb = max(1, min(_QR_NB, *block.shape))
            v, t, info = geqrt(nb, block, overwrite_a=True)
            if info != 0:
                raise np.linalg.LinAlgError(f"QR factorisation failed (LAPACK info={info})")
            self.leaves.append((v, t))
            if upper:
                g, j = divmod(i, group)
                upper[g][j * self.k:(j + 1) * self.k] = np.triu(v[: self.k])
            else:
                R = np.triu(v[: min(v.shape[0], self.k)])
        self.top = None
        if upper:
            self.top = _TallQR(None, cols, None, None, blocks=upper)
            self.R = self.top.R
        else:
            self.R = R

    @classmethod
    def empty(cls, n: int) -> _TallQR:
        obj = cls.__new__(cls)
        obj.k, obj.leaves, obj.top, obj.R = 0, [], None, np.zeros((0, 0))
        obj.buffer, obj.bounds = np.zeros(0), [(0, n)]
        return obj

    def _plan_leaves(self, n: int, k: int) -> int:
        n_leaves = max(1, n // _leaf_rows(k))
        edges = np.linspace(0, n, n_leaves + 1).round().astype(np.int64)
        self.bounds = list(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))
        self.buffer = np.empty(n * k)
        return n_leaves

    def _fill_leaves(self, X: FloatArray, cols: IntArray, center: FloatArray,
                     sqrt_w: FloatArray | None) -> Iterator[FloatArray]:
        """Write each leaf (centred, weighted columns) into its slot of the buffer; yields it."""
        k = cols.size
        c = center[cols]
        contiguous = bool(k) and np.array_equal(cols, np.arange(cols[0], cols[0] + k))
        for lo, hi in self.bounds:
            leaf = self.buffer[lo * k:hi * k].reshape(k, hi - lo).T  # Fortran-ordered view
            leaf[...] = X[lo:hi, cols[0]:cols[0] + k] if contiguous else X[lo:hi].take(cols, axis=1)
            leaf -= c  # (copy, then subtract in place: a transposing subtract is twice as slow)
            if sqrt_w is not None:
                leaf *= sqrt_w[lo:hi, None]
            yield leaf

    def _parts(self, M: FloatArray) -> Iterator[FloatArray]:
        """The (k, r) pieces of Q_top M that each leaf's reflectors act on, leaf by leaf.

        They are produced lazily, one block of the level above at a time, so the full stack
        (one k-row piece per leaf) is never held.
        """
        if self.top is None:
            yield M
            return
        k = self.k
        for block in self.top._products(M):
            for j in range(block.shape[0] // k):
                yield block[j * k:(j + 1) * k]

    def _products(self, M: FloatArray) -> Iterator[FloatArray]:
        """Q M leaf by leaf (M has k rows): one (leaf rows, r) array per leaf."""
        for i, part in enumerate(self._parts(M)):
            yield self._leaf_times(i, part)

    def _leaf_times(self, i: int, M: FloatArray) -> FloatArray:
        v, t = self.leaves[i]
        out = np.zeros((v.shape[0], M.shape[1]), order="F")
        out[: M.shape[0]] = M[: v.shape[0]]
        out, info = self._gemqrt(v, t, out, overwrite_c=True)
        if info != 0:
            raise np.linalg.LinAlgError(f"applying Q failed (LAPACK info={info})")
        return out

    def q_times(self, M: FloatArray) -> FloatArray:
        """Q M for a square (k, k) ``M``, written C-ordered over this factorisation's buffer.

        The factorisation is consumed: afterwards the buffer holds the product.
        """
        n, k = self.bounds[-1][1], self.k
        U = self.buffer[: n * k].reshape(n, k)
        for (lo, hi), block in zip(self.bounds, self._products(M), strict=True):
            U[lo:hi] = block  # the leaf's reflectors, stored there, are no longer needed
        self.leaves, self.top = [], None
        return U


def _leaf_rows(k: int) -> int:
    return max(_QR_LEAF_ROWS, 4 * k)


@functools.cache
def _qr_lapack() -> tuple[Any, Any]:
    """LAPACK's double-precision geqrt and gemqrt (looked up once)."""
    return tuple(sla.get_lapack_funcs(("geqrt", "gemqrt"), (np.zeros((1, 1)),)))  # type: ignore[return-value]


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
    step = _row_block(sp.rank)
    for start in range(0, sp.n_obs, step):  # cache-sized blocks: U*U is never formed whole
        block = sp.U[start:start + step]
        h[start:start + step] = (block * block) @ f
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
_REFINE_WHOLE_BYTES = 16 * REFINE_MAX_SIZE  # refine_ols converts X once up to this size


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
    n = X.shape[0]
    every = np.array_equal(cols, np.arange(X.shape[1]))
    unit = bool(np.all(sp.sqrt_w == 1.0))

    def convert(lo: int, hi: int) -> npt.NDArray[np.longdouble]:
        part = X[lo:hi] if every else X[lo:hi].take(cols, axis=1)
        if not unit:
            part = part * sp.sqrt_w[lo:hi, None]
        return part.astype(np.longdouble)

    # A in extended precision: converted once when small, else a block of rows at a time (a
    # full extended-precision copy would be twice the size of X)
    whole = convert(0, n) if 16 * n * cols.size <= _REFINE_WHOLE_BYTES else None
    step = n if whole is not None else max(1, _BLOCK_BYTES // (16 * max(cols.size, 1)))
    blocks = [(lo, min(lo + step, n)) for lo in range(0, n, step)]

    def a_block(lo: int, hi: int) -> npt.NDArray[np.longdouble]:
        return whole[lo:hi] if whole is not None else convert(lo, hi)

    def a_times(v: FloatArray) -> npt.NDArray[np.longdouble]:
        vl = v.astype(np.longdouble)
        out = np.empty(n, dtype=np.longdouble)
        for lo, hi in blocks:
            out[lo:hi] = a_block(lo, hi) @ vl
        return out

    yl = (sp.sqrt_w * y).astype(np.longdouble)
    c = coef[cols].copy()
    r = (yl - a_times(c)).astype(np.float64)
    for _ in range(steps):
        cl = c.astype(np.longdouble)
        f = np.empty(n)
        gl = np.zeros(cols.size, dtype=np.longdouble)
        for lo, hi in blocks:  # one pass for both block equations' residuals
            A = a_block(lo, hi)
            rl = r[lo:hi].astype(np.longdouble)
            f[lo:hi] = yl[lo:hi] - rl - A @ cl
            gl -= A.T @ rl
        dc = _solve_augmented(sp, f, gl.astype(np.float64))
        r = r + f - a_times(dc).astype(np.float64)
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
