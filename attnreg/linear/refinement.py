"""Iterative refinement of OLS coefficients in extended precision (Björck).

The spectral fit is backward stable; its forward error still grows like cond(Z)² ‖r‖ for
least squares, and centring rounds the design. :func:`refine_ols` corrects the coefficients
on the augmented system with residuals in ``np.longdouble``, reusing the decomposition of
:mod:`attnreg.linear.spectral`, until the corrections stop shrinking. :func:`attnreg.attnreg`
applies it to OLS when cond(Z) exceeds ``REFINE_COND`` or the design has at most
``REFINE_MAX_SIZE`` cells.

The corrections shrink geometrically while the iterate is far from the solution and then
settle at the level of the rounding errors of the extended-precision residuals. A fixed
number of steps stops somewhere on that descent, at a point that depends on the accuracy of
the starting solution, and so on how the BLAS blocked its sums; iterating until the
corrections stop shrinking stops at the floor instead, which does not depend on where it
started. The stopping rule follows LAPACK's extra-precise refinement (``xGERFSX``; Demmel
et al., "Error bounds from extra-precise iterative refinement", ACM TOMS 32, 2006): stop when
a correction falls below the unit roundoff of the coefficients, when the corrections stop
shrinking by at least half, or after ``REFINE_MAX_STEPS`` corrections. "Stop shrinking" is
two corrections in a row that fail to halve the smallest one before them, not one: a step
that does not shrink can come just before one that does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from attnreg.linear.tallqr import column_span, take_columns
from attnreg._typing import FloatArray, IntArray
from attnreg.linear.centring import intercept
from attnreg.linear.spectral import Spectrum
from attnreg.scaling import BLOCK_BYTES, binary_exponents

#: OLS coefficients are refined in extended precision when cond(Z) exceeds this, or when the
#: design has at most REFINE_MAX_SIZE cells (there the refinement costs well under a
#: millisecond; at 1e4 x 11 it was a fifth of the whole fit-plus-summary)
REFINE_COND = 1e5
REFINE_MAX_SIZE = 20_000
#: most corrections one refinement computes (LAPACK's xGERFSX uses 10 as well); each costs
#: one pass over the design with three extended-precision products (A dc, A c, A'r)
REFINE_MAX_STEPS = 10
_REFINE_WHOLE_BYTES = 16 * 200_000  # refine_ols converts X once up to this size
ROUNDING = 2.0 ** -53  # unit roundoff of float64: a smaller relative correction changes nothing
SHRINK = 0.5  # a correction "shrinks" when it is at most this times the smallest before it
PATIENCE = 2  # corrections in a row that do not shrink before the refinement stops

Stop = Literal["converged", "stalled", "max_steps"]
_LongArray = npt.NDArray[np.longdouble]


@dataclass(frozen=True)
class Refinement:
    """What :func:`refine_ols_trace` did.

    Attributes
    ----------
    coef : ndarray, shape (n_coef,)
        Refined coefficients (NaN where aliased, as given).
    corrections : tuple of float
        Size of each correction computed, max_j |Δc_j| / |c_j| over the nonzero
        coefficients; its length is the number of residual evaluations (at most
        ``max_steps``).
    stop : {"converged", "stalled", "max_steps"}
        Why the refinement stopped: a correction fell below the unit roundoff of float64
        (it was applied), the corrections stopped shrinking (the iterate with the smallest
        correction is returned), or ``max_steps`` corrections were computed (the last is
        applied if it shrank, else the iterate with the smallest correction is returned).
    """

    coef: FloatArray
    corrections: tuple[float, ...]
    stop: Stop


def refine_ols(sp: Spectrum, X: FloatArray, y: FloatArray, coef: FloatArray,
               max_steps: int = REFINE_MAX_STEPS) -> FloatArray:
    """Iterative refinement of the least-squares solution on the augmented system.

    Björck's refinement of [I A; A' 0][r; c] = [y; 0] with A = sqrt(w)[X_kept] (intercept
    included): residuals of both block equations are computed in extended precision
    (``np.longdouble``) on the ORIGINAL, uncentred design, and each correction is solved with
    the existing factorisation. This removes the cond(Z)²‖r‖ term and the rounding of the
    centring, e.g. NIST's Wampler5 goes from 6 to 13 correct digits. It stops when the
    corrections stop shrinking (see :func:`refine_ols_trace`).

    Parameters
    ----------
    sp : Spectrum
    X : ndarray, shape (n_obs, n_coef)
    y : ndarray, shape (n_obs,)
    coef : ndarray, shape (n_coef,)
        Coefficients from :func:`apply_filter` with the OLS filter (NaN where aliased).
    max_steps : int
        Most corrections to compute (each costs one pass over X in extended precision).

    Returns
    -------
    ndarray, shape (n_coef,)

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> coef = filters.apply_filter(sp, filters.ols_filter(sp.s), 6).coef
    >>> from attnreg.linear.refinement import refine_ols
    >>> refined = refine_ols(sp, X, y, coef)
    >>> print(f"{refined[5]:.8f}")  # residuals in extended precision, uncentred X
    1814.10135683
    """
    return refine_ols_trace(sp, X, y, coef, max_steps).coef


def refine_ols_trace(sp: Spectrum, X: FloatArray, y: FloatArray, coef: FloatArray,
                     max_steps: int = REFINE_MAX_STEPS) -> Refinement:
    """:func:`refine_ols`, also reporting the size of each correction and why it stopped.

    The correction computed at an iterate estimates its error. The refinement stops when a
    correction is below the unit roundoff of float64 relative to every coefficient (it is
    applied: the iterate has converged), when two corrections in a row fail to halve the
    smallest one before them (the corrections have reached the rounding errors of the
    residuals; the iterate whose correction was smallest is returned, so a refinement that
    diverges returns the iterate it estimates best, not its last), or after ``max_steps``
    corrections (the last is applied if it shrank).

    Parameters
    ----------
    sp, X, y, coef, max_steps
        As for :func:`refine_ols`.

    Returns
    -------
    Refinement

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> from attnreg.linear.refinement import refine_ols_trace
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> coef = filters.apply_filter(sp, filters.ols_filter(sp.s), 6).coef
    >>> out = refine_ols_trace(sp, X, y, coef, max_steps=1)
    >>> len(out.corrections), out.stop
    (1, 'max_steps')
    """
    cols = sp.kept if sp.intercept is None else np.r_[sp.intercept, sp.kept]
    out = coef.copy()
    if max_steps < 1 or cols.size == 0:
        return Refinement(out, (), "max_steps")
    shift = _Shift.of(sp)
    res = _Residuals(sp, X, y, cols, shift.to_shifted(coef[cols]), shift)
    f, g = res.residuals(None)
    sizes: list[float] = []
    best, best_size, misses = res.c, np.inf, 0
    mag = np.abs(res.c)
    if sp.intercept is not None:  # the intercept's size, not that of its shifted form
        mag[0] = max(abs(float(coef[sp.intercept])), mag[0])
    while True:
        dc = _solve_augmented(sp, f, g, res.g_exponents, shift.rest)
        size = _relative_size(dc, np.maximum(np.abs(res.c), mag))
        sizes.append(size)
        misses = 0 if size <= SHRINK * best_size else misses + 1
        if size < best_size:
            best, best_size = res.c, size
        if size <= ROUNDING or misses == PATIENCE or len(sizes) == max_steps:
            break
        f, g = res.residuals(dc)
    stop: Stop = ("converged" if size <= ROUNDING
                  else "stalled" if misses == PATIENCE else "max_steps")
    # the last correction is applied unless it failed to shrink: then the iterate with the
    # smallest correction is the best estimate the refinement has
    applied = stop == "converged" or misses == 0
    out[cols] = shift.to_original(res.c if applied else best, dc if applied else None)
    return Refinement(out, tuple(sizes), stop)


#: a column (or the response) is refined shifted by its float64 mean when that mean exceeds
#: this many times its spread (RMS deviation): there x − x̄_hi is exact, while for a column
#: whose entries range over many binary orders the shift would round its small entries
SHIFT_RATIO = 2.0 ** 10


@dataclass(frozen=True)
class _Shift:
    """The refinement's coordinates: offset columns and response shifted by their float64 means.

    On the uncentred design, A c and A'r are sums of terms of the size of the offsets (x̄_j β_j,
    x̄_j r_i), whose rounding, even in extended precision, exceeds the residuals' own digits
    for columns of offset 1e12 and more. A column whose mean exceeds ``SHIFT_RATIO`` times its
    spread is shifted by its float64 mean x̄_hi (x − x̄_hi is exact near x̄_hi), and so is the
    response; the intercept becomes c₀ − ȳ_s + x_s'β (the shifts s), which starts at
    (ȳ − ȳ_s) − (x̄ − x_s)'β from the two-term means (:mod:`attnreg.linear.centring`), and the
    centre of a shifted column in these coordinates is x̄_lo.
    """

    x_shift: FloatArray | None  # (n_kept,) shifts of the kept columns (None: no intercept)
    rest: FloatArray  # (n_kept,) their means in the shifted coordinates (x̄_lo, or x̄_hi)
    x_lo: FloatArray  # (n_kept,) the rest of the means beyond x̄_hi
    y_shift: float  # shift of the response (on its own scale; 0 or ȳ_hi)
    y_rest: tuple[float, float]  # ȳ − y_shift as two terms

    @classmethod
    def of(cls, sp: Spectrum) -> _Shift:
        k = sp.kept.size
        if sp.intercept is None:
            return cls(None, np.zeros(k), np.zeros(k), 0.0, (0.0, 0.0))
        hi = sp.center[sp.kept]
        lo = np.zeros(k) if sp.center_lo is None else sp.center_lo[sp.kept]
        # the spread of a kept column: d_j ‖row j of V S‖ / sqrt(Σw) (Z = (X − x̄) / d = U S V')
        with np.errstate(over="ignore"):  # an infinite spread is not shifted, as it should not
            spread = sp.scale[sp.kept] * (np.linalg.norm(sp.V * sp.s, axis=1) / np.sqrt(sp.sum_w))
        shifted = np.abs(hi) / SHIFT_RATIO > spread
        e = sp.y_exponent
        y_hi, y_lo = float(np.ldexp(sp.y_center, e)), float(np.ldexp(sp.y_center_lo, e))
        y_spread = float(np.ldexp(np.sqrt(sp.yss / sp.sum_w), e))
        y_shift = y_hi if abs(y_hi) / SHIFT_RATIO > y_spread else 0.0
        return cls(np.where(shifted, hi, 0.0), np.where(shifted, lo, hi), lo, y_shift,
                   (y_hi - y_shift, y_lo))

    def to_shifted(self, c: FloatArray) -> FloatArray:
        """[c₀, β] to [(ȳ − y_s) − (x̄ − x_s)'β, β] (the exact intercept's shifted form)."""
        if self.x_shift is None:
            return c.copy()
        x_hi = np.where(self.x_shift != 0, 0.0, self.rest)  # x̄_hi − x_s (exact: one is 0)
        return np.r_[intercept(*self.y_rest, x_hi, self.x_lo, c[1:]), c[1:]]

    def to_original(self, c: FloatArray, dc: FloatArray | None) -> FloatArray:
        """c + dc, with [c₀ₛ, β] taken to [y_s + c₀ₛ − x_s'β, β].

        The intercept is formed in extended precision from c + dc before β is rounded to
        float64: x_s'β would otherwise carry β's rounding times the offsets.
        """
        if dc is None:
            dc = np.zeros_like(c)
        out = c + dc
        if self.x_shift is not None:
            ld = np.longdouble
            full = c.astype(ld) + dc.astype(ld)
            out[0] = float((ld(self.y_shift) - np.dot(self.x_shift.astype(ld), full[1:]))
                           + full[0])
        return out


def _relative_size(dc: FloatArray, c: FloatArray) -> float:
    """max_j |dc_j| / |c_j| over the nonzero coefficients (0 when all are zero)."""
    mag = np.abs(c)
    nonzero = mag > 0
    if not nonzero.any():
        return 0.0 if not np.any(dc) else float("inf")
    return float(np.max(np.abs(dc[nonzero]) / mag[nonzero]))


class _Residuals:
    """The refinement's iterate (c and r in float64) and its residuals in extended precision.

    A = sqrt(w) X[:, cols] in extended precision is converted once when small, else a block
    of rows at a time (a full extended-precision copy would be twice the size of X). A c is
    formed afresh at each iterate, so the rounding errors of the residuals do not accumulate
    from one step to the next (an accumulated A c would carry them into the fixed point
    unseen, and the corrections would then understate the error).
    """

    def __init__(self, sp: Spectrum, X: FloatArray, y: FloatArray, cols: IntArray,
                 c: FloatArray, shift: _Shift) -> None:
        n = X.shape[0]
        self._X, self._cols, self._span = X, cols, column_span(cols)
        self._sqrt_w = None if not sp.weighted else sp.sqrt_w
        #: the columns' shifts (0 for the intercept's column of ones)
        self._shift = (None if shift.x_shift is None or not shift.x_shift.any()
                       else np.r_[0.0, shift.x_shift].astype(np.longdouble))
        self._whole = self._convert(0, n) if 16 * n * cols.size <= _REFINE_WHOLE_BYTES else None
        step = n if self._whole is not None else max(1, BLOCK_BYTES // (16 * cols.size))
        self._blocks = [(lo, min(lo + step, n)) for lo in range(0, n, step)]
        # y − ȳ_hi in extended precision: exact near ȳ_hi, and no worse than y elsewhere
        self._y = sp.sqrt_w * (y.astype(np.longdouble) - np.longdouble(shift.y_shift))
        #: g is returned as g_j 2^-E_j: A'r is a product of the response's scale and a
        #: column's, which may leave float64 (and a float64 long double) where g_j / d_j,
        #: all the solve needs, does not
        scale = np.ones(cols.size)
        kept = slice(0 if sp.intercept is None else 1, None)
        scale[kept] = sp.scale[sp.kept]
        self.g_exponents = binary_exponents(scale)
        #: the kept columns' means in the shifted coordinates, when g is returned in centred
        #: coordinates (intercept)
        self._center = None if sp.intercept is None else shift.rest.astype(np.longdouble)
        self.c = c.copy()
        self._r = np.empty(n)  # the residual iterate
        self._f = np.empty(n)  # y − r − A c, the residual of the first block equation

    def _convert(self, lo: int, hi: int) -> _LongArray:
        part = take_columns(self._X, slice(lo, hi), self._cols, self._span)
        if self._shift is not None:  # in extended precision: exact where float64 rounds
            part = part.astype(np.longdouble) - self._shift
        if self._sqrt_w is not None:
            part = part * self._sqrt_w[lo:hi, None]
        return part.astype(np.longdouble)

    def residuals(self, dc: FloatArray | None) -> tuple[FloatArray, FloatArray]:
        """Apply the correction ``dc`` (None: start), then return f = y − r − A c, g = −A'r.

        One pass over the rows: A dc updates r (r += f − A dc, Björck's update of the
        residual; at the start r = y − A c), then both block equations' residuals are formed
        in extended precision. The returned f is a buffer that the next call overwrites.
        """
        if dc is None:
            V = self.c.astype(np.longdouble)[:, None]
        else:
            self.c = self.c + dc
            V = np.column_stack([dc, self.c]).astype(np.longdouble)
        g = np.zeros(self.c.size, dtype=np.longdouble)  # Σ_blocks −A'r 2^-E
        for lo, hi in self._blocks:
            A = self._whole[lo:hi] if self._whole is not None else self._convert(lo, hi)
            P = np.dot(A, V)  # [A dc,] A c (np.dot: numpy's matmul loop is slower on longdouble)
            if dc is None:
                self._r[lo:hi] = self._y[lo:hi] - P[:, 0]
            else:
                self._r[lo:hi] = self._r[lo:hi] + (self._f[lo:hi] - P[:, 0])
            rl = self._r[lo:hi].astype(np.longdouble)
            self._f[lo:hi] = self._y[lo:hi] - rl - P[:, -1]
            k = int(binary_exponents(np.max(np.abs(self._r[lo:hi]), initial=0.0)))
            g -= np.ldexp(np.dot(np.ldexp(rl, -k), A), k - self.g_exponents)  # exact powers of 2
        if self._center is not None:
            # to the centred coordinates here, in extended precision: g_r − x̄ g_0 in float64
            # cancels the columns' offsets against each other (digits lost on a design with
            # means of 1e4 at condition 1e6: 8 instead of 11)
            g0 = np.ldexp(g[0], int(self.g_exponents[0]))
            g[1:] -= np.ldexp(self._center, -self.g_exponents[1:]) * g0
        return self._f, g.astype(np.float64)


def _solve_augmented(sp: Spectrum, f: FloatArray, g: FloatArray, exponents: IntArray,
                     xb: FloatArray) -> FloatArray:
    """Solve A'A dc = A'f − g via A = Q_b R_b T (Q_b = [sqrt(w)/sqrt(Σw), U]).

    Coordinates of ``dc`` and ``g``: [intercept, kept...] (or only kept without an intercept).
    T maps the (shifted) coefficients to centred ones: T = [[1, x̄'], [0, I]], ``xb`` = x̄
    the kept columns' means in the refinement's coordinates (:class:`_Shift`). ``g`` is given
    in the centred coordinates (T^{-T} g, formed in extended precision by
    :meth:`_Residuals.residuals`) and as g_j 2^-E_j (``exponents`` E), so that no product of
    two scales is ever formed.
    """
    d = sp.scale[sp.kept]
    has_int = sp.intercept is not None
    e_r = exponents[1:] if has_int else exponents
    g0 = np.ldexp(g[0], exponents[0]) if has_int else 0.0
    gr = g[1:] if has_int else g
    d_r = np.ldexp(d, -e_r)  # d / 2^E, of order one
    g_d = gr / d_r  # (T^{-T} g) / d
    h_r = (sp.V.T @ g_d) / sp.s  # R_b^{-T} (rest block: (D V S)^{-1})
    z_r = sp.U.t_dot(f) - h_r
    dc_r = (sp.V @ (z_r / sp.s)) / d  # R_b^{-1}
    if not has_int:
        return dc_r
    root = np.sqrt(sp.sum_w)
    z0 = (sp.sqrt_w @ f) / root - g0 / root
    return np.r_[z0 / root - xb @ dc_r, dc_r]  # T^{-1}
