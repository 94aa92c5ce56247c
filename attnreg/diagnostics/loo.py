"""Leave-one-out closed forms of an OLS/WLS fit: σ₍ᵢ₎, rstudent, dfbeta(s), dffits, covratio.

With ẽ = √w e the weighted residuals and h the hat values, deleting row i gives

    RSS₍ᵢ₎ = RSS − ẽᵢ² / (1 − hᵢ),       σ₍ᵢ₎² = RSS₍ᵢ₎ / (n − p − 1),
    b − b₍ᵢ₎ = (X'WX)⁻¹ xᵢ wᵢ eᵢ / (1 − hᵢ) = M [cᵢ ; Uᵢ] ẽᵢ / (1 − hᵢ),

with M the coefficient map of :func:`attnreg.inference.vcov.registry.coef_map` (coef = M [c'ỹ ; U'ỹ],
c = √w / Σw): column i of (X'WX)⁻¹ X̃' is M [cᵢ ; Uᵢ]. Nothing is refitted, no inverse of
X'X is formed, and the rows are processed in blocks (memory: one block of U at a time
besides the n × p output). These hold for a projection (OLS/WLS); for ridge and PCR the
functions here are not defined.

Everything is computed on the rescaled response (the spectrum's ``y_scale``) and with the
coefficient map's exponents, so the scale-free measures (rstudent, dfbetas, dffits,
covratio) are right at any scale of the data. Rows with hᵢ = 1 (to 10 ε, as R's
``lm.influence``) have dfbeta 0, σ₍ᵢ₎ = sqrt(RSS / (n − p − 1)) and NaN for the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.inference.vcov.registry import coef_map

if TYPE_CHECKING:
    from attnreg.linear.spectral import Spectrum

__all__ = ["dfbeta_blocks", "hat_one", "loo_sigma_scaled"]

_HAT_ONE = 1.0 - 10.0 * np.finfo(np.float64).eps


def hat_one(h: FloatArray) -> FloatArray:
    """Hat values with those above 1 − 10 ε set to exactly 1 (R's ``lm.influence``).

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.diagnostics.loo import hat_one
    >>> hat_one(np.array([0.5, 1.0 - 1e-16])).tolist()
    [0.5, 1.0]
    """
    return np.where(h > _HAT_ONE, 1.0, h)


def loo_sigma_scaled(ew: FloatArray, h: FloatArray, df_resid: float) -> FloatArray:
    """σ₍ᵢ₎ of each row, shape (n_obs,), on the scale of the weighted residuals ``ew``.

    ``h`` from :func:`hat_one`; ``df_resid`` = n − p. NaN when n − p − 1 < 1.

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.diagnostics.loo import loo_sigma_scaled
    >>> e, h = np.array([1.0, -1.0, 2.0, -2.0]), np.full(4, 0.25)
    >>> loo_sigma_scaled(e, h, 3.0).round(4).tolist()  # (10 - e² / 0.75) / 2
    [2.0817, 2.0817, 1.5275, 1.5275]
    """
    df = df_resid - 1.0
    if df < 1.0:
        return np.full(ew.shape, np.nan)
    rss = float(ew @ ew)
    inside = h < 1.0
    drop = np.zeros_like(ew)
    np.divide(ew * ew, 1.0 - h, out=drop, where=inside)
    return np.sqrt(np.maximum(rss - drop, 0.0) / df)


def dfbeta_blocks(sp: Spectrum, f: FloatArray, n_coef: int, est: IntArray, ew: FloatArray,
                  h: FloatArray, sigma_i: FloatArray) -> tuple[FloatArray, FloatArray,
                                                                 IntArray]:
    """dfbetas and dfbeta of the estimable coefficients ``est``, row block by row block.

    Parameters
    ----------
    sp : Spectrum
    f : ndarray, shape (rank,)
        Filter factors (OLS: ones).
    n_coef : int
    est : ndarray of int, shape (p,)
        Positions of the estimable coefficients.
    ew : ndarray, shape (n_obs,)
        √w e on the rescaled response (divided by ``sp.y_scale``).
    h : ndarray, shape (n_obs,)
        Hat values from :func:`hat_one`.
    sigma_i : ndarray, shape (n_obs,)
        :func:`loo_sigma_scaled` of ``ew``.

    Returns
    -------
    dfbetas : ndarray, shape (n_obs, p)
        (b − b₍ᵢ₎)_j / (σ₍ᵢ₎ sqrt((X'WX)⁻¹_jj)), scale free.
    dfbeta_z : ndarray, shape (n_obs, p)
        b − b₍ᵢ₎ divided by 2^E_j (exactly) ...
    E : ndarray of int, shape (p,)
        ... with these exponents: dfbeta = ``np.ldexp(dfbeta_z, E)``.

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.linear import filters, spectral
    >>> from attnreg.diagnostics.loo import dfbeta_blocks, hat_one, loo_sigma_scaled
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([np.ones(12), rng.normal(size=12)])
    >>> y = X @ [1.0, 2.0] + rng.normal(size=12)
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> f = filters.ols_filter(sp.s)
    >>> b = filters.apply_filter(sp, f, 2).coef
    >>> e, h = y - X @ b, hat_one(filters.hat_diagonal(sp, f))
    >>> _, dfb_z, E = dfbeta_blocks(sp, f, 2, np.array([0, 1]), e, h,
    ...                             loo_sigma_scaled(e, h, 10.0))
    >>> b1 = np.linalg.lstsq(X[1:], y[1:], rcond=None)[0]  # the fit without row 0
    >>> bool(np.allclose(np.ldexp(dfb_z[0], E), b - b1))
    True
    """
    Mz, E = coef_map(sp, f, n_coef)
    Mz, E = Mz[est], E[est]  # coef = 2^E Mz [c'ỹ ; U'ỹ] on the rescaled response, as ew
    D = np.ones(1 + sp.rank)
    D[0] = 1.0 / sp.sum_w if sp.intercept is not None else 0.0
    norm = np.sqrt(np.einsum("ij,j,ij->i", Mz, D, Mz))  # sqrt((X'WX)⁻¹_jj) / 2^E_j
    c = np.asarray(sp.sqrt_w, dtype=np.float64) / sp.sum_w if sp.intercept is not None else None
    inside = h < 1.0
    scale = np.zeros_like(ew)
    np.divide(ew, 1.0 - h, out=scale, where=inside)  # ẽᵢ / (1 − hᵢ); 0 where h = 1 (as R)
    n, p = ew.size, est.size
    dfb_z = np.empty((n, p))
    for lo, hi, U in sp.U.blocks():
        G = U @ Mz[:, 1:].T
        if c is not None:
            G += np.outer(c[lo:hi], Mz[:, 0])
        G *= scale[lo:hi, None]
        dfb_z[lo:hi] = G
    with np.errstate(divide="ignore", invalid="ignore"):
        dfbetas = dfb_z / np.outer(sigma_i, norm)
    return dfbetas, dfb_z, E
