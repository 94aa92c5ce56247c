"""Autocorrelation tests of a linear fit: Durbin–Watson (exact by Imhof's integral, as
``lmtest::dwtest``) and Breusch–Godfrey (``lmtest::bgtest``)."""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.integrate as sint
import scipy.linalg as sla
from scipy import stats

from attnreg._typing import FloatArray
from attnreg.diagnostics.projection import (
    aux_rank,
    df_text,
    extra_ss,
    intercept_direction,
    resid_scaled,
    table_row,
)
from attnreg.exceptions import DataError, OptionError
from attnreg.inference.contract import LinearFitContract

if TYPE_CHECKING:
    from attnreg.linear.spectral import Spectrum

__all__ = ["DW_EXACT_MAX_N", "breusch_godfrey", "durbin_watson"]

#: the exact Durbin–Watson p-value (Imhof's integral over the eigenvalues of M A M) is used
#: below this many rows, the normal approximation from there on, as lmtest's default
DW_EXACT_MAX_N = 100
#: eigenvalues of M A M at or below this are the k structural zeros (lmtest's ``tol``)
_DW_EIG_TOL = 1e-10


def durbin_watson(fit: LinearFitContract, exact: bool | None = None) -> dict[str, Any]:
    """Durbin–Watson statistic Σ (ẽ_t − ẽ_{t−1})² / Σ ẽ_t² and its p-value against positive
    autocorrelation (``lmtest::dwtest``, alternative ``"greater"``).

    Exact (the default below :data:`DW_EXACT_MAX_N` rows, as lmtest): P(d ≤ d_obs) =
    P(Σ (λ_k − d_obs) z_k² ≤ 0) with λ the non-zero eigenvalues of M A M (M = I − P, A the
    first-difference matrix D'D), by Imhof's integral. Otherwise lmtest's normal
    approximation with the exact mean and variance of d. OLS only (the p-value assumes the
    residuals of a projection); rows are taken in data order.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.autocorrelation import durbin_watson
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR",
    ...                  data=longley.load_pandas().data)
    >>> row = durbin_watson(fit)
    >>> print(f"{row['statistic']:.4f} {row['p_value']:.4f}")
    2.5897 0.5727
    """
    _, ew = resid_scaled(fit)
    sp = fit.spectrum
    n = fit.nobs
    d = np.diff(ew)
    stat = float(d @ d) / float(ew @ ew)
    if not fit.rule.least_squares:  # the exact p-value needs residuals orthogonal to X
        return table_row("Durbin-Watson", stat, "", math.nan,
                    f"p-value for OLS only (this is {fit.method})")
    if n < 3:
        return table_row("Durbin-Watson", stat, "", math.nan, "p-value needs 3 rows")
    k = aux_rank(sp)
    if exact is None:
        exact = n < DW_EXACT_MAX_N
    if exact:
        Q = _basis(sp)
        M = -Q @ Q.T
        M[np.diag_indices(n)] += 1.0
        MA = _apply_a(M)  # M A (A symmetric: rows of M times A)
        ev = sla.eigvalsh(MA @ M)
        ev = ev[ev > _DW_EIG_TOL]
        p = _imhof_below_zero(ev - stat)
        note = "exact p-value (Imhof), alternative: rho > 0; rows in data order"
    else:
        Q = _basis(sp)
        AQ = _apply_a(Q.T).T
        QAQ = Q.T @ AQ
        P = 2.0 * (n - 1) - float(np.trace(QAQ))
        Qv = 2.0 * (3 * n - 4) - 2.0 * float(np.sum(AQ * AQ)) + float(np.sum(QAQ * QAQ.T))
        mean = P / (n - k)
        var = 2.0 / ((n - k) * (n - k + 2)) * (Qv - P * mean)
        p = float(stats.norm.cdf(stat, loc=mean, scale=math.sqrt(var)))
        note = "normal approximation of the p-value, alternative: rho > 0; rows in data order"
    return table_row("Durbin-Watson", stat, "", p, note)


def _basis(sp: Spectrum) -> FloatArray:
    """An orthonormal basis [q₀ U] of the columns of X̃, shape (n_obs, rank (+ 1))."""
    U = sp.U.materialize()
    q0 = intercept_direction(sp)
    return U if q0 is None else np.column_stack([q0, U])


def _apply_a(B: FloatArray) -> FloatArray:
    """B A for B of shape (m, n), with A = D'D the (n, n) matrix of the Durbin–Watson form."""
    out = 2.0 * B
    out[:, 0] -= B[:, 0]
    out[:, -1] -= B[:, -1]
    out[:, 1:] -= B[:, :-1]
    out[:, :-1] -= B[:, 1:]
    return out


def _imhof_below_zero(mu: FloatArray) -> float:
    """P(Σ μ_k z_k² < 0) for independent standard normal z (Imhof 1961), mu of shape (m,)."""
    if not mu.size:
        return math.nan
    if (mu > 0).all():
        return 0.0
    if (mu < 0).all():
        return 1.0
    scale = float(np.abs(mu).max())
    m = mu / scale

    def integrand(u: float) -> float:
        theta = 0.5 * float(np.arctan(m * u).sum())
        log_rho = 0.25 * float(np.log1p((m * u) ** 2).sum())
        return math.sin(theta) / (u * math.exp(log_rho)) if u > 0 else 0.5 * float(m.sum())

    total = 0.0
    edges = [0.0, 1.0, 10.0, 100.0, 1e3, 1e4, np.inf]
    for lo, hi in itertools.pairwise(edges):
        part, _ = sint.quad(integrand, lo, hi, limit=500, epsabs=1e-15, epsrel=1e-13)
        total += part
    return min(1.0, max(0.0, 0.5 - total / math.pi))


def _lagged(e: FloatArray, order: int) -> FloatArray:
    """Columns e_{t−1}, …, e_{t−order}, the first rows filled with 0 (lmtest's ``fill = 0``)."""
    L = np.zeros((e.size, order))
    for j in range(1, order + 1):
        L[j:, j - 1] = e[:-j]
    return L


def breusch_godfrey(fit: LinearFitContract, order: int = 1) -> list[dict[str, Any]]:
    """Breusch–Godfrey test of serial correlation up to ``order`` (``lmtest::bgtest``): the
    regression of the residuals on X̃ and their lags (rows before the first lag filled with
    0); LM = n R² (χ² on ``order`` df) and the F form on (order, n − k − order) df.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.autocorrelation import breusch_godfrey
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
    >>> [r["test"] for r in breusch_godfrey(fit, order=2)]
    ['Breusch-Godfrey LM (order 2)', 'Breusch-Godfrey F (order 2)']
    """
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order < 1:
        raise OptionError(f"bg_order must be a positive integer, however: bg_order={order!r}")
    sp = fit.spectrum
    _, ew = resid_scaled(fit)
    n, k = fit.nobs, aux_rank(sp)
    names = (f"Breusch-Godfrey LM (order {order})", f"Breusch-Godfrey F (order {order})")
    if not fit.rule.least_squares:
        note = f"OLS only: the residuals of {fit.method} are not orthogonal to X"
        return [table_row(names[0], math.nan, "", math.nan, note),
                table_row(names[1], math.nan, "", math.nan, note)]
    if n - k - order < 1:
        raise DataError(f"the Breusch-Godfrey test of order {order} needs more than "
                        f"{k + order} rows, however the fit has {n}")
    rss = float(ew @ ew)
    ss, _ = extra_ss(sp, ew, _lagged(ew, int(order)))
    lm = n * ss / rss
    df2 = n - k - order
    f = (ss / order) / ((rss - ss) / df2)
    return [table_row(names[0], lm, df_text(order), stats.chi2.sf(lm, order),
                 "rows in data order"),
            table_row(names[1], f, df_text(order, df2), stats.f.sf(f, order, df2),
                 "rows in data order")]
