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
eps · cond(Z). When cond(Z) exceeds
:data:`~attnreg.linear.decompositions.LAZY_U_MAX_COND`, or the design is small
(:data:`~attnreg.linear.decompositions.LAZY_U_MIN_CELLS`), the reduction is redone keeping
the Householder reflectors and
U = Q U_R is formed and stored exactly. Wide designs (n_obs ≤
the number of columns; ridge and PCR only) take the thin SVD of Z directly: its left side
is only n_obs × n_obs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.threads import narrow_blas
from attnreg.linear.decompositions import centring, decompose_tall, decompose_wide
from attnreg.linear.left_vectors import LeftVectors

Scaling = Literal["sd", "norm", "none"]


#: relative size of a column's QR diagonal below which the column is aliased (R's lm uses 1e-7)
ALIAS_TOL = 1e-10
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
        (False). By default U is recomputed when cond(Z) ≤
        :data:`~attnreg.linear.decompositions.LAZY_U_MAX_COND` and the design has more than
        :data:`~attnreg.linear.decompositions.LAZY_U_MIN_CELLS` cells.

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
    common = centring(X, y, cols, intercept, weights, tol)
    if n <= cols.size:
        return Spectrum(**decompose_wide(X, cols, scaling, tol, common))
    with narrow_blas(cols.size):  # row-block QRs of a narrow design: one thread is faster
        return Spectrum(**decompose_tall(X, cols, scaling, tol, lazy_u, common))


