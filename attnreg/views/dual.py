"""The dual view of a spectral fit: the attention embedding, from the spectrum and the filter.

A filtered spectral fit predicts ŷ* = x*' β = Σ_i ω_i y_i with weights ω = F* diag(w) F'
over the training rows: factor scores F = X W from the encoder W, and the metric
Ω = W W'. Everything here is formula-free algebra on a :class:`Spectrum`; the results and
the forecasting engine's leakage audit call it instead of redoing the decomposition algebra.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.inference.vcov.registry import scale_back
from attnreg.scaling import binary_exponents, out_of_range
from attnreg.views.attention import Embedding

if TYPE_CHECKING:
    from attnreg.linear.spectral import Spectrum

__all__ = ["embedding_of", "scaled_metric"]


def scaled_metric(sp: Spectrum, f: FloatArray) -> FloatArray:
    """Ω on the centred, scaled kept columns: V diag(f / s²) V', shape (rank, rank).

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.linear import filters, spectral
    >>> rng = np.random.default_rng(0)
    >>> X = np.column_stack([np.ones(30), rng.normal(size=(30, 2))])
    >>> sp = spectral.decompose(X, rng.normal(size=30), intercept=0, weights=None,
    ...                         scaling="none", tol=1e-10)
    >>> Z = X[:, 1:] - X[:, 1:].mean(axis=0)
    >>> bool(np.allclose(scaled_metric(sp, filters.ols_filter(sp.s)), np.linalg.inv(Z.T @ Z)))
    True
    """
    return (sp.V * (f / sp.s**2)) @ sp.V.T


def embedding_of(sp: Spectrum, f: FloatArray, names: list[str],
                 row_labels: pd.Index) -> tuple[Embedding, npt.NDArray[np.bool_]]:
    """The encoder W, the metric Ω = W W' and the training factor scores of a filtered fit.

    Parameters
    ----------
    sp : Spectrum
    f : ndarray, shape (rank,)
        Filter factors.
    names : list of str
        Design column names.
    row_labels : pandas.Index
        Labels of the training rows.

    Returns
    -------
    embedding : Embedding
    lost : ndarray of bool, shape (n_coef, n_coef)
        Entries of Ω outside the float64 range at the data's scale (reported as inf or 0).
    """
    active = f > 0
    n_fac = int(active.sum()) + (1 if sp.intercept is not None else 0)
    W = np.zeros((len(names), n_fac))
    E = (sp.V[:, active] * (np.sqrt(f[active]) / sp.s[active])) / sp.scale[sp.kept][:, None]
    F_train = np.empty((len(row_labels), n_fac))
    col = 0
    if sp.intercept is not None:
        W[sp.intercept, 0] = 1.0 / np.sqrt(sp.sum_w)
        W[sp.intercept, 1:] = -sp.center[sp.kept] @ E
        F_train[:, 0] = 1.0 / np.sqrt(sp.sum_w)
        col = 1
    W[sp.kept, col:] = E
    root = np.sqrt(np.where(active, f, 0.0))
    U = sp.U if sp.U.is_stored else sp.U.columns(np.flatnonzero(active))
    scale = root[active] if not sp.U.is_stored else root
    for lo, hi, B in U.blocks(col_scale=scale):
        block = B[:, active] if sp.U.is_stored else B
        if sp.weighted:
            block = block / sp.sqrt_w[lo:hi, None]
        F_train[lo:hi, col:] = block
    factor_names = (["const"] if sp.intercept is not None else []) + [
        f"F{i + 1}" for i in range(n_fac - col)]
    encoder = pd.DataFrame(W, index=names, columns=factor_names)
    # Ω = W W' from rows divided by powers of two (exact), so that only entries that are
    # themselves outside float64 (ratios of very different column scales) overflow
    t = binary_exponents(np.abs(W).max(axis=1, initial=0.0))
    Wz = np.ldexp(W, -t[:, None])
    omega_z = Wz @ Wz.T
    omega = scale_back(omega_z, t)
    embedding = Embedding(encoder=encoder, omega=pd.DataFrame(omega, index=names, columns=names),
                          train_factors=pd.DataFrame(F_train, index=row_labels,
                                                     columns=factor_names, copy=False))
    return embedding, out_of_range(omega_z, omega)
