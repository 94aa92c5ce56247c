"""Column means to twice float64's precision, for columns whose offset dwarfs their spread.

A column such as ``1e15 + 0.125 * (row % 3)``, or ids near 2^63, has a mean that float64
cannot hold to better than half a unit in its last place: 0.0625 at 1e15, about the size of
the column's spread. Centring on that rounded mean leaves the column with a mean of that
size, and the slope computed from it is off by the square of (that mean / the spread):
1e-7 at an offset of 1e12, 1e-3 at 1e14. The mean is therefore held as two float64 numbers,
``hi`` (the mean rounded to float64) and ``lo`` (what is left of it), and a column is centred
as ``(x − hi) − lo``: ``x − hi`` is exact when x lies within a factor of two of ``hi``
(Sterbenz's lemma), and subtracting ``lo`` then rounds at the size of the spread, not of the
offset. For a column whose float64 mean is large beside its spread (judged on a sample of
rows), the sums are taken a second time around that mean K, ``mean = K + Σ w (x − K) / Σ w``,
so their rounding errors, and that of Σw, are of the size of the spread; other columns keep
``lo`` = 0 and cost one BLAS pass, as before.

The same holds for the intercept ``ȳ − x̄'β`` and for the residuals: :func:`intercept` forms
the first in extended precision, and :func:`centred_residuals` the second on the centred
columns, when ``y − X c`` in float64 would lose their digits to the offsets.
"""

from __future__ import annotations

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.linear.tallqr import column_span, take_columns
from attnreg.scaling import row_block, weighted_means

__all__ = ["centred_residuals", "intercept", "needs_centred_residuals", "offset_columns",
           "two_term_means"]

#: residuals are formed on the centred columns when the rounding of y − X c in float64
#: (eps times the size of the intercept and of the x̄_j β_j) exceeds this fraction of the
#: residuals' size (the OLS residual standard deviation): below it they lose < 1e-9
RESID_CANCEL = 2.0 ** -30
_EPS = float(np.finfo(np.float64).eps)


def two_term_means(w: FloatArray | None, X: FloatArray, cols: IntArray,
                   sum_w: float) -> tuple[FloatArray, FloatArray]:
    """Weighted means of the columns ``cols`` of ``X`` as ``hi + lo`` (two float64 terms).

    Parameters
    ----------
    w : ndarray, shape (n_obs,), or None
        Prior weights (None: unweighted).
    X : ndarray, shape (n_obs, p)
    cols : ndarray of int, shape (k,)
    sum_w : float
        Σ w.

    Returns
    -------
    hi, lo : ndarray, shape (p,)
        ``hi`` is the mean rounded to float64 and ``lo`` the rest, for the columns ``cols``
        (zeros elsewhere). A column whose mean is not large beside its spread, or whose
        shifted sums overflow (values near 1e308 of both signs), has the plain float64 mean
        (one BLAS pass) and ``lo`` = 0.

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.linear.centring import two_term_means
    >>> X = 1e16 + 2.0 * (np.arange(4.0) % 2)[:, None]  # 1e16 and 1e16 + 2: the mean is 1e16 + 1
    >>> hi, lo = two_term_means(None, X, np.array([0]), 4.0)
    >>> print(hi[0] - 1e16, lo[0])  # float64 cannot hold 1e16 + 1 (its spacing there is 2)
    0.0 1.0
    """
    p, n = X.shape[1], X.shape[0]
    hi, lo = np.zeros(p), np.zeros(p)
    if cols.size == 0 or n == 0:
        return hi, lo
    hi[cols] = weighted_means(np.ones(n) if w is None else w, X, sum_w)[cols]  # one BLAS pass
    offset = cols[offset_columns(X, cols, hi[cols])]
    if not offset.size:
        return hi, lo
    span = column_span(offset)
    shift = hi[offset]
    acc = np.zeros(offset.size)
    step = row_block(offset.size)
    with np.errstate(over="ignore", invalid="ignore"):
        for a in range(0, n, step):
            B = take_columns(X, slice(a, a + step), offset, span) - shift  # exact near x̄
            acc += (np.ones(B.shape[0]) if w is None else w[a:a + step]) @ B
        s = acc / sum_w
        h = shift + s
        b = h - shift  # TwoSum: the exact rounding error of shift + s
        low = (shift - (h - b)) + (s - b)
    ok = np.isfinite(h) & np.isfinite(low)  # else (values near 1e308): the float64 mean
    hi[offset[ok]], lo[offset[ok]] = h[ok], low[ok]
    return hi, lo


#: rows sampled (evenly spaced) to tell the columns whose offset needs the second term
_SAMPLE_ROWS = 1024
#: a column is summed a second time, around its float64 mean, when that mean exceeds this
#: many times the range of the sampled rows; below it the mean's rounding (at most about
#: n eps |x̄| ≤ OFFSET_RATIO · 2 sqrt(n) eps times the spread, since the spread is at least
#: half the sample's range over sqrt(n)) moves the slopes by less than its square
OFFSET_RATIO = 16.0


def offset_columns(X: FloatArray, cols: IntArray, mean: FloatArray) -> np.ndarray:
    """Which of ``cols`` have a mean beyond ``OFFSET_RATIO`` times a row sample's range."""
    n = X.shape[0]
    sample = X[:: max(1, n // _SAMPLE_ROWS)].take(cols, axis=1)
    with np.errstate(over="ignore", invalid="ignore"):
        spread = sample.max(axis=0) - sample.min(axis=0)
        return np.abs(mean) > OFFSET_RATIO * spread


def intercept(y_hi: float, y_lo: float, x_hi: FloatArray, x_lo: FloatArray,
              beta: FloatArray) -> float:
    """ȳ − x̄'β in extended precision, from the two-term means (shapes (k,) for x̄ and β)."""
    ld = np.longdouble
    beta_l = beta.astype(ld)
    out = (ld(y_hi) - np.dot(x_hi.astype(ld), beta_l)) + (ld(y_lo) - np.dot(x_lo.astype(ld), beta_l))
    return float(out)


def needs_centred_residuals(c0: float, center: FloatArray, beta: FloatArray,
                            resid_scale: float) -> bool:
    """Whether y − X c in float64 would lose more than ``RESID_CANCEL`` of the residuals.

    The rounding of X c is about eps (|c0| + Σ_j |x̄_j β_j|) per row (the offsets' part of
    the fitted values); ``resid_scale`` is the size of the residuals (their RMS).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        size = abs(c0) + float(np.abs(center) @ np.abs(beta))
    return bool(np.isfinite(size) and _EPS * size > RESID_CANCEL * resid_scale)


def centred_residuals(X: FloatArray, y: FloatArray, cols: IntArray, beta: FloatArray,
                      x_hi: FloatArray, x_lo: FloatArray, y_hi: float, y_lo: float) -> FloatArray:
    """((y − ȳ_hi) − ȳ_lo) − ((X[:, cols] − x̄_hi) − x̄_lo) β, a block of rows at a time.

    The residuals of the slopes ``beta`` with the intercept ȳ − x̄'β taken exactly: the
    offsets cancel before any product is formed, so the residuals are accurate to the size
    of the spread of the columns, not of their offsets.

    Parameters
    ----------
    X : ndarray, shape (n_obs, p)
    y : ndarray, shape (n_obs,)
    cols : ndarray of int, shape (k,)
        Columns of the slopes (the intercept excluded).
    beta : ndarray, shape (k,)
    x_hi, x_lo : ndarray, shape (k,)
        Two-term means of those columns (:func:`two_term_means`).
    y_hi, y_lo : float
        Two-term mean of the response.

    Returns
    -------
    ndarray, shape (n_obs,)
    """
    n = X.shape[0]
    out = (y - y_hi) - y_lo
    span = column_span(cols)
    step = row_block(cols.size)
    for a in range(0, n, step):
        B = take_columns(X, slice(a, a + step), cols, span) - x_hi
        B -= x_lo
        out[a:a + step] -= B @ beta
    return out
