"""Iterative refinement of OLS coefficients in extended precision (Björck).

The spectral fit is backward stable; its forward error still grows like cond(Z)² ‖r‖ for
least squares, and centring rounds the design. :func:`refine_ols` corrects the coefficients
on the augmented system with residuals in ``np.longdouble``, reusing the decomposition of
:mod:`attnreg.spectral`. :func:`attnreg.attnreg` applies it to OLS when cond(Z) exceeds
``REFINE_COND`` or the design has at most ``REFINE_MAX_SIZE`` cells.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from attnreg._tallqr import column_span, take_columns
from attnreg._typing import FloatArray
from attnreg.spectral import _BLOCK_BYTES, Spectrum

#: OLS coefficients are refined in extended precision when cond(Z) exceeds this, or when the
#: design has at most REFINE_MAX_SIZE cells (there the refinement costs under a millisecond;
#: at 1e4 x 11 it was a fifth of the whole fit-plus-summary)
REFINE_COND = 1e5
REFINE_MAX_SIZE = 20_000
_REFINE_WHOLE_BYTES = 16 * 200_000  # refine_ols converts X once up to this size


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

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg import spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> coef = spectral.apply_filter(sp, spectral.ols_filter(sp.s), 6).coef
    >>> from attnreg.refinement import refine_ols
    >>> refined = refine_ols(sp, X, y, coef)
    >>> print(f"{refined[5]:.8f}")  # residuals in extended precision, uncentred X
    1814.10135683
    """
    cols = sp.kept if sp.intercept is None else np.r_[sp.intercept, sp.kept]
    n = X.shape[0]
    span = column_span(cols)
    unit = not sp.weighted

    def convert(lo: int, hi: int) -> npt.NDArray[np.longdouble]:
        part = take_columns(X, slice(lo, hi), cols, span)
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
    z_r = sp.U.t_dot(f) - h_r
    dc_r = (sp.V @ (z_r / sp.s)) / d  # R_b^{-1}
    if not has_int:
        return dc_r
    root = np.sqrt(sp.sum_w)
    z0 = (sp.sqrt_w @ f) / root - g0 / root
    return np.r_[z0 / root - xb @ dc_r, dc_r]  # T^{-1}
