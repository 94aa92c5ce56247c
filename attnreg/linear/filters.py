"""Spectral filters and what they give: coefficients, hat values and the RSS of a filter.

OLS, ridge and PCR are filters f of the singular values of one decomposition
(:mod:`attnreg.linear.spectral`): all ones, s² / (s² + λ), and the k largest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.linear.spectral import Spectrum
from attnreg.linear.centring import intercept
from attnreg.scaling import BLOCK_BYTES, LAZY_BLOCK_BYTES
from attnreg.threads import narrow_blas, parallel_map

__all__ = ["Filtered", "apply_filter", "hat_and_weight_stats", "hat_diagonal", "ols_filter",
           "pcr_filter", "query_weight_stats", "ridge_filter", "rss_of_filter"]

#: blocks of rows per task of the hat-value pass (one worker thread's share at a time)
HAT_SEGMENT_BLOCKS = 16


def ols_filter(s: FloatArray) -> FloatArray:
    """OLS filter factors: all ones.

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.linear.filters import ols_filter, pcr_filter, ridge_filter
    >>> s = np.array([3.0, 2.0, 1.0])
    >>> ols_filter(s).tolist(), pcr_filter(s, 2).tolist()
    ([1.0, 1.0, 1.0], [1.0, 1.0, 0.0])
    >>> ridge_filter(s, 1.0).tolist()  # s² / (s² + λ)
    [0.9, 0.8, 0.5]
    """
    return np.ones_like(s)


def ridge_filter(s: FloatArray, lam: float) -> FloatArray:
    """Ridge filter factors f = s² / (s² + λ); λ = 0 is OLS.

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.linear.filters import ridge_filter
    >>> s = np.array([2.0, 1.0])
    >>> ridge_filter(s, 0.0).tolist(), ridge_filter(s, 4.0).tolist()
    ([1.0, 1.0], [0.5, 0.2])
    """
    with np.errstate(over="ignore", invalid="ignore"):
        s2 = s * s
        f = s2 / (s2 + lam)
    f[np.isinf(s2)] = 1.0  # s² beyond float64 (unstandardised huge columns): the limit
    return f


def pcr_filter(s: FloatArray, k: int) -> FloatArray:
    """PCR filter factors: 1 for the ``k`` largest singular values, 0 for the rest.

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.linear.filters import pcr_filter
    >>> pcr_filter(np.array([5.0, 3.0, 1.0, 0.5]), 1).tolist()
    [1.0, 0.0, 0.0, 0.0]
    """
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
    """Coefficients on the original scale for filter factors ``f``.

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> ridge = filters.apply_filter(sp, filters.ridge_filter(sp.s, 1.0), 6)
    >>> print(f"edf {ridge.edf:.4f}, UNEMP {ridge.coef[2]:.4f}")
    edf 3.7694, UNEMP -0.7730
    >>> pcr = filters.apply_filter(sp, filters.pcr_filter(sp.s, 2), 6)
    >>> pcr.edf
    3.0
    """
    coef = np.full(n_coef, np.nan)
    beta = (sp.V @ (f / sp.s * sp.uty)) / sp.scale[sp.kept]
    coef[sp.kept] = beta
    if sp.intercept is not None:
        x_lo = np.zeros(beta.size) if sp.center_lo is None else sp.center_lo[sp.kept]
        coef[sp.intercept] = intercept(sp.y_center, sp.y_center_lo, sp.center[sp.kept], x_lo,
                                       beta)  # extended precision: the offsets cancel
    if sp.y_scale != 1.0:  # back to the response's scale (exact; inf only if it overflows)
        with np.errstate(over="ignore"):
            coef = np.ldexp(coef, sp.y_exponent)
    edf = float(f.sum()) + (1.0 if sp.intercept is not None else 0.0)
    return Filtered(coef=coef, f=f, edf=edf)


def hat_diagonal(sp: Spectrum, f: FloatArray) -> FloatArray:
    """Diagonal of the (weighted) hat matrix, h_i = w_i/Σw + Σ_k f_k U_ik², shape (n_obs,).

    One pass over cache-sized blocks of rows of U √f (only the components with f > 0):
    U ∘ U is never formed whole.

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> h = filters.hat_diagonal(sp, filters.ols_filter(sp.s))
    >>> print(f"{h.sum():.4f} {h.max():.4f}")  # trace = number of coefficients
    6.0000 0.6516
    """
    return hat_and_weight_stats(sp, f, np.zeros(0, dtype=np.int64))[0]


def hat_and_weight_stats(sp: Spectrum, f: FloatArray,
                         rows: IntArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Hat values of every row, and the attention weights of training rows ``rows`` as queries.

    The weights of query j are ω_ji = w_i/Σw + (√w_i/√w_j) Σ_k f_k U_jk U_ik (the row of the
    hat matrix). One pass over blocks of B = U √f gives the hat values (row sums of B²) and,
    with the queries' rows B_q, the weights ω = B_q B' block by block; only their negative
    mass and sum of squares are kept.

    Returns
    -------
    hat : ndarray, shape (n_obs,)
    negative_mass : ndarray, shape (len(rows),)
        Σ_i min(ω_ji, 0).
    leverage : ndarray, shape (len(rows),)
        Σ_i ω_ji² (the query's leverage; equal to its hat value for OLS and PCR).

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> h, neg, lev = filters.hat_and_weight_stats(sp, filters.ols_filter(sp.s),
    ...                                             np.array([0, 7]))
    >>> print(f"{h[0]:.4f} {lev[0]:.4f} {neg[0]:.4f}")  # H = H², so Σ ω² = h for OLS
    0.4018 0.4018 -0.3576
    """
    n = sp.n_obs
    active = np.flatnonzero(f > 0)
    root = np.sqrt(f[active])
    m = rows.size
    width = max(active.size, m, 1)
    if sp.U.is_stored:
        stored = sp.U.materialize()
        step = max(64, BLOCK_BYTES // (8 * width))

        def block(key: Any) -> FloatArray:
            return stored[key][:, active] * root if active.size < f.size else stored[key] * root
    else:
        U = sp.U.columns(active) if active.size < f.size else sp.U
        step = max(64, LAZY_BLOCK_BYTES // (8 * max(width, U.n_source_columns)))

        def block(key: Any) -> FloatArray:
            return U.rows(key, root)
    base = 1.0 / sp.sum_w if sp.intercept is not None else None
    w_all = sp.sqrt_w**2 if sp.weighted else None
    query = block(rows)
    if sp.weighted:
        query /= sp.sqrt_w[rows, None]
    h = np.empty(n)

    def task(bounds: tuple[int, int]) -> tuple[FloatArray, FloatArray]:
        """Hat values of rows ``bounds`` (written into h) and the queries' partial sums."""
        neg, lev = np.zeros(m), np.zeros(m)
        for lo in range(bounds[0], bounds[1], step):
            hi = min(lo + step, bounds[1])
            B = block(slice(lo, hi))
            np.einsum("ij,ij->i", B, B, out=h[lo:hi])
            if not m:
                continue
            _add_weight_stats(query @ B.T, sp, lo, hi, base, w_all, neg, lev)
        return neg, lev

    # row segments as tasks of the worker threads (fixed by the shape: the same sums in the
    # same order on any number of threads); numpy's products release the GIL
    seg = step * HAT_SEGMENT_BLOCKS
    with narrow_blas(width):
        parts = parallel_map(task, [(lo, min(lo + seg, n)) for lo in range(0, n, seg)])
    neg, lev = np.zeros(m), np.zeros(m)
    for neg_part, lev_part in parts:
        neg += neg_part
        lev += lev_part
    if base is not None:
        h += w_all * base if w_all is not None else base
    return h, neg, lev


def query_weight_stats(sp: Spectrum, f: FloatArray,
                       rows: IntArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """:func:`hat_and_weight_stats` for the query rows alone: no other row's hat value.

    The weights of the m queries over every row, ω = B_q B' with B = U √f, are formed as
    (U Q)' with Q = √f B_q' of shape (rank, m): for a U recomputed from the design that is
    a product of the design with m columns, not with rank (what the hat values of every
    row cost).

    Returns
    -------
    hat : ndarray, shape (len(rows),)
        The hat values of the query rows.
    negative_mass : ndarray, shape (len(rows),)
    leverage : ndarray, shape (len(rows),)

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> sp = spectral.decompose(X, df["TOTEMP"].to_numpy(), intercept=0, weights=None,
    ...                         scaling="sd", lazy_u=True)
    >>> h, neg, lev = filters.query_weight_stats(sp, filters.ols_filter(sp.s), np.array([0, 7]))
    >>> print(f"{h[0]:.4f} {lev[0]:.4f} {neg[0]:.4f}")
    0.4018 0.4018 -0.3576
    """
    m = rows.size
    active = np.flatnonzero(f > 0)
    root = np.sqrt(f[active])
    base = 1.0 / sp.sum_w if sp.intercept is not None else None
    w_all = sp.sqrt_w**2 if sp.weighted else None
    query = sp.U.rows(rows)[:, active] * root  # B_q, (m, n_active)
    h = np.einsum("ij,ij->i", query, query)
    if base is not None:
        h += w_all[rows] * base if w_all is not None else base
    if sp.weighted:
        query /= sp.sqrt_w[rows, None]
    Q = np.zeros((sp.rank, m))
    Q[active] = (query * root).T  # ω = (U Q)', inactive components contributing exactly 0
    neg, lev = np.zeros(m), np.zeros(m)
    for lo, hi, UQ in sp.U.product_blocks(Q):
        _add_weight_stats(UQ.T, sp, lo, hi, base, w_all, neg, lev)  # UQ.T: (m, hi - lo)
    return h, neg, lev


def _add_weight_stats(w: FloatArray, sp: Spectrum, lo: int, hi: int, base: float | None,
                      w_all: FloatArray | None, neg: FloatArray, lev: FloatArray) -> None:
    """Add the queries' Σω² and negative mass over training rows ``lo:hi`` to ``lev`` and
    ``neg``; ``w`` (m, hi - lo) holds the centred weights and is overwritten."""
    if w_all is not None:
        w *= sp.sqrt_w[None, lo:hi]
        if base is not None:
            w += w_all[None, lo:hi] * base
    elif base is not None:
        w += base
    lev += np.einsum("ij,ij->i", w, w)
    neg += np.minimum(w, 0, out=w).sum(axis=1)


def rss_of_filter(sp: Spectrum, f: FloatArray, fc: FloatArray | None = None) -> FloatArray:
    """Weighted residual sum of squares for one or many filters (f shape (rank,) or (rank, G)).

    RSS = Σ_k (1 − f_k)² (U'ỹ)_k² + ‖ỹ − U U'ỹ‖² (the last term from the QR); ``fc`` is
    1 − f when it is known more accurately than by subtraction. In units of ``sp.y_scale``²,
    as every sum of squares of the spectrum.

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> F = np.column_stack([filters.ols_filter(sp.s), filters.pcr_filter(sp.s, 2)])
    >>> print(np.round(filters.rss_of_filter(sp, F), 1))
    [  839348.  15037467.5]
    """
    u2 = sp.uty**2
    g = ((1.0 - f) if fc is None else fc) ** 2
    return u2 @ g + sp.y_outside
