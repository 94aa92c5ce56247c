"""Diagnostic tests of a linear fit: heteroskedasticity, autocorrelation, normality, functional
form and collinearity (the battery behind ``fit.diagnostics()`` and ``fit.vif()``).

Every test works on the weighted model ỹ = √w y, X̃ = √w X, the rows of the fit in data order
(rows of weight zero and rows dropped for missing values are not part of it). The auxiliary
regressions of the tests reuse the fit's decomposition: the column space of X̃ is spanned by
q₀ = √w / ‖√w‖ (with an intercept) and the left singular vectors U, so a regression of any
vector v on X̃ is [q₀ U][q₀ U]' v, and a regression on [X̃ L] for a few extra columns L is
that plus the regression on L with X̃ partialled out (Frisch–Waugh–Lovell). Nothing of size
n_obs × n_coef is formed beyond what the fit holds.

References: lmtest's ``bptest``, ``dwtest``, ``bgtest`` and ``resettest``; statsmodels'
``het_white`` and ``jarque_bera``; car's ``vif`` (Fox and Monette 1992); R's ``kappa``.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import scipy.integrate as sint
import scipy.linalg as sla
from scipy import stats

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, OptionError
from attnreg.linear.contract import LinearFitContract
from attnreg.linear.spectral import Spectrum
from attnreg.report.summary import Summary
from attnreg.report.tables import (
    DiagnosticsSection,
    OutlierSection,
    diagnostic_lines,
    outlier_lines,
)

__all__ = ["DiagnosticTable", "breusch_godfrey", "breusch_pagan", "condition_numbers",
           "diagnostic_table", "durbin_watson", "jarque_bera", "perfect_fit_note", "reset_test",
           "vif_table", "white_test"]

#: the exact Durbin–Watson p-value (Imhof's integral over the eigenvalues of M A M) is used
#: below this many rows, the normal approximation from there on, as lmtest's default
DW_EXACT_MAX_N = 100
#: eigenvalues of M A M at or below this are the k structural zeros (lmtest's ``tol``)
_DW_EIG_TOL = 1e-10

_COLUMNS = ["test", "statistic", "df", "p_value", "note"]


@dataclass(frozen=True)
class DiagnosticTable:
    """The diagnostic tests of a fit: one row per test (immutable; pickles).

    Attributes
    ----------
    table : DataFrame
        Columns ``test``, ``statistic``, ``df`` (a string: ``"2"`` or ``"1, 37"`` for an F
        test; empty where there is none), ``p_value`` (NaN where not computed) and ``note``.
    title : str
        The first line of the printout.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> d = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df).diagnostics()
    >>> d.table["test"].tolist()[:3]
    ['Breusch-Pagan (studentized)', 'White', 'Durbin-Watson']
    >>> print(f"{d.statistic('Durbin-Watson'):.4f}")
    2.5897
    """

    table: pd.DataFrame
    title: str = "Regression diagnostics"

    def to_frame(self) -> pd.DataFrame:
        """A copy of :attr:`table`, indexed by test name.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> frame = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df).diagnostics().to_frame()
        >>> list(frame.columns)
        ['statistic', 'df', 'p_value', 'note']
        """
        return self.table.set_index("test").copy()

    def statistic(self, test: str) -> float:
        """The statistic of one test by its name (as in the ``test`` column).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> d = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df).diagnostics()
        >>> d.statistic("Jarque-Bera") >= 0
        True
        """
        return float(self._row(test)["statistic"])

    def p_value(self, test: str) -> float:
        """The p-value of one test by its name (NaN where none is computed).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> d = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df).diagnostics()
        >>> 0 <= d.p_value("RESET") <= 1
        True
        """
        return float(self._row(test)["p_value"])

    def _row(self, test: str) -> pd.Series:
        hit = self.table.index[self.table["test"] == test]
        if not len(hit):
            raise OptionError(f"test must be one of {', '.join(map(repr, self.table['test']))}, "
                              f"however: {test=}")
        return self.table.loc[hit[0]]

    def summary(self) -> Summary:
        """The tests as a report: the text (a blank line first), HTML, LaTeX, Markdown."""
        return Summary(self.title, (DiagnosticsSection(self.table, stars=False, heading=False,
                                                       title=self.title),))

    def to_latex(self) -> str:
        """The tests as a LaTeX tabular (booktabs)."""
        return self.summary().to_latex()

    def to_markdown(self) -> str:
        """The tests as a Markdown (pipe) table."""
        return self.summary().to_markdown()

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return "\n".join(diagnostic_lines(self.table, self.title))

    def __repr__(self) -> str:
        return str(self)


# ------------------------------------------------------------------ the column space of X̃
def _q0(sp: Spectrum) -> FloatArray | None:
    """√w / ‖√w‖, the intercept's direction in the weighted column space (None without one)."""
    if sp.intercept is None:
        return None
    return np.asarray(sp.sqrt_w / math.sqrt(sp.sum_w), dtype=np.float64)


def _coords(sp: Spectrum, v: FloatArray) -> tuple[float, FloatArray]:
    """(q₀'v, U'v) for v of shape (n_obs,) or (n_obs, m)."""
    q0 = _q0(sp)
    return (0.0 if q0 is None else q0 @ v), sp.U.t_dot(v)  # type: ignore[return-value]


def _projected_ss(sp: Spectrum, v: FloatArray) -> float:
    """‖P v‖² with P the projection on the columns of X̃ (its estimable part)."""
    a, b = _coords(sp, v)
    return float(np.square(a) + b @ b)


def _partial_out(sp: Spectrum, L: FloatArray) -> FloatArray:
    """(I − P) L for L of shape (n_obs, m): the columns of L with X̃ partialled out."""
    q0 = _q0(sp)
    out = L - sp.U.dot(sp.U.t_dot(L))
    if q0 is not None:
        out -= np.outer(q0, q0 @ L)
    return out


def _extra_ss(sp: Spectrum, e: FloatArray, L: FloatArray) -> tuple[float, int]:
    """What extra columns L add to the regression of the residuals e (⟂ X̃) on X̃: the sum of
    squares e' P_(ML) e of its fitted values, and the rank of ML."""
    ML = _partial_out(sp, L)
    coef, _, rank, _ = np.linalg.lstsq(ML, e, rcond=None)
    fitted = ML @ coef
    return float(fitted @ fitted), int(rank)


def _aux_rank(sp: Spectrum) -> int:
    return sp.rank + (0 if sp.intercept is None else 1)


def _resid_scaled(fit: LinearFitContract) -> tuple[FloatArray, FloatArray]:
    """(e, √w e) of the rows in the fit, divided by the spectrum's ``y_scale`` (exactly)."""
    ew = fit._resid_ws
    x = fit.spectrum.y_exponent
    e = np.ldexp(fit._resid_fit, -x) if x else fit._resid_fit
    return e, ew


def _weights(fit: LinearFitContract) -> FloatArray:
    w = fit.design.weights
    return np.ones(fit.nobs) if w is None else np.asarray(w, dtype=np.float64)


def _row(test: str, statistic: float, df: str, p_value: float, note: str = "") -> dict[str, Any]:
    return {"test": test, "statistic": float(statistic), "df": df, "p_value": float(p_value),
            "note": note}


def _df_text(*df: float) -> str:
    return ", ".join(f"{d:g}" for d in df)


# ------------------------------------------------------------------ the tests
def breusch_pagan(fit: LinearFitContract, studentize: bool = True) -> dict[str, Any]:
    """Breusch–Pagan test of the residual variance on the regressors (``lmtest::bptest``).

    Studentized (Koenker): n · Σ w f² / Σ v² with v = e² − σ̂², σ̂² = Σ w e² / n and f the
    fitted values of the weighted regression of v on X (n · R² without weights). Not
    studentized: ½ Σ w f² with f from the regression of e²/σ̂² − 1. χ² on rank(X) − 1 df.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.battery import breusch_pagan
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
    >>> row = breusch_pagan(fit)
    >>> row["test"], row["df"]
    ('Breusch-Pagan (studentized)', '2')
    """
    sp = fit.spectrum
    e, _ = _resid_scaled(fit)
    w = _weights(fit)
    n = fit.nobs
    df = _aux_rank(sp) - 1
    if df < 1:
        raise DataError("the Breusch-Pagan test needs at least one regressor besides the "
                        "intercept")
    e2 = e * e
    sigma2 = float(w @ e2) / n
    if studentize:
        v = e2 - sigma2
        stat = n * _projected_ss(sp, sp.sqrt_w * v) / float(v @ v)
        name = "Breusch-Pagan (studentized)"
    else:
        v = e2 / sigma2 - 1.0
        stat = 0.5 * _projected_ss(sp, sp.sqrt_w * v)
        name = "Breusch-Pagan"
    return _row(name, stat, _df_text(df), stats.chi2.sf(stat, df))


def white_products(X: FloatArray) -> FloatArray:
    """The products X_i X_j (i ≤ j) of every pair of columns, shape (n, p (p + 1) / 2).

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.diagnostics.battery import white_products
    >>> white_products(np.array([[1.0, 2.0], [1.0, 3.0]])).tolist()
    [[1.0, 2.0, 4.0], [1.0, 3.0, 9.0]]
    """
    i, j = np.triu_indices(X.shape[1])
    return np.ascontiguousarray(X[:, i] * X[:, j])


def white_test(fit: LinearFitContract) -> dict[str, Any]:
    """White's test: the studentized Breusch–Pagan test on the regressors, their squares and
    cross products (statsmodels' ``het_white``; duplicated products count once).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.battery import white_test
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
    >>> white_test(fit)["df"]  # 1, GNP, UNEMP, GNP², GNP·UNEMP, UNEMP²: rank 6 - 1
    '5'
    """
    from attnreg.linear import spectral

    e, _ = _resid_scaled(fit)
    w = _weights(fit)
    n = fit.nobs
    Z = white_products(fit.design.X)
    if n <= Z.shape[1]:
        raise DataError(f"White's test needs more rows than its {Z.shape[1]} auxiliary "
                        f"regressors (products of the {fit.design.n_coef} design columns), "
                        f"however the fit has {n} rows")
    e2 = e * e
    v = e2 - float(w @ e2) / n
    intercept = 0 if fit.design.intercept else None
    aux = spectral.decompose(Z, v, intercept=intercept, weights=fit.design.weights,
                             scaling="sd")
    ss = float(aux.uty @ aux.uty) * aux.y_scale**2
    if intercept is not None:
        ss += float(w @ v) ** 2 / float(w.sum())
    df = _aux_rank(aux) - 1
    stat = n * ss / float(v @ v)
    return _row("White", stat, _df_text(df), stats.chi2.sf(stat, df))


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
    >>> from attnreg.diagnostics.battery import durbin_watson
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR",
    ...                  data=longley.load_pandas().data)
    >>> row = durbin_watson(fit)
    >>> print(f"{row['statistic']:.4f} {row['p_value']:.4f}")
    2.5897 0.5727
    """
    _, ew = _resid_scaled(fit)
    sp = fit.spectrum
    n = fit.nobs
    d = np.diff(ew)
    stat = float(d @ d) / float(ew @ ew)
    if not fit.rule.least_squares:  # the exact p-value needs residuals orthogonal to X
        return _row("Durbin-Watson", stat, "", math.nan,
                    f"p-value for OLS only (this is {fit.method})")
    if n < 3:
        return _row("Durbin-Watson", stat, "", math.nan, "p-value needs 3 rows")
    k = _aux_rank(sp)
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
    return _row("Durbin-Watson", stat, "", p, note)


def _basis(sp: Spectrum) -> FloatArray:
    """An orthonormal basis [q₀ U] of the columns of X̃, shape (n_obs, rank (+ 1))."""
    U = sp.U.materialize()
    q0 = _q0(sp)
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
    >>> from attnreg.diagnostics.battery import breusch_godfrey
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
    >>> [r["test"] for r in breusch_godfrey(fit, order=2)]
    ['Breusch-Godfrey LM (order 2)', 'Breusch-Godfrey F (order 2)']
    """
    if isinstance(order, bool) or not isinstance(order, (int, np.integer)) or order < 1:
        raise OptionError(f"bg_order must be a positive integer, however: bg_order={order!r}")
    sp = fit.spectrum
    _, ew = _resid_scaled(fit)
    n, k = fit.nobs, _aux_rank(sp)
    names = (f"Breusch-Godfrey LM (order {order})", f"Breusch-Godfrey F (order {order})")
    if not fit.rule.least_squares:
        note = f"OLS only: the residuals of {fit.method} are not orthogonal to X"
        return [_row(names[0], math.nan, "", math.nan, note),
                _row(names[1], math.nan, "", math.nan, note)]
    if n - k - order < 1:
        raise DataError(f"the Breusch-Godfrey test of order {order} needs more than "
                        f"{k + order} rows, however the fit has {n}")
    rss = float(ew @ ew)
    ss, _ = _extra_ss(sp, ew, _lagged(ew, int(order)))
    lm = n * ss / rss
    df2 = n - k - order
    f = (ss / order) / ((rss - ss) / df2)
    return [_row(names[0], lm, _df_text(order), stats.chi2.sf(lm, order),
                 "rows in data order"),
            _row(names[1], f, _df_text(order, df2), stats.f.sf(f, order, df2),
                 "rows in data order")]


def jarque_bera(fit: LinearFitContract) -> dict[str, Any]:
    """Jarque–Bera test of normality of the (weighted) residuals, n/6 (S² + (K − 3)²/4) on
    2 df, with the moments about their mean (statsmodels' ``jarque_bera``).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.battery import jarque_bera
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
    >>> jarque_bera(fit)["df"]
    '2'
    """
    _, ew = _resid_scaled(fit)
    skew = float(stats.skew(ew))
    kurt = float(stats.kurtosis(ew, fisher=False))
    jb = ew.size / 6.0 * (skew**2 + 0.25 * (kurt - 3.0) ** 2)
    return _row("Jarque-Bera", jb, "2", stats.chi2.sf(jb, 2),
                f"skewness {skew:.4g}, kurtosis {kurt:.4g}")


def _check_power(power: Any) -> tuple[int, ...]:
    try:
        out = tuple(int(p) for p in power)
        ok = all(int(p) == p and not isinstance(p, bool) for p in power)
    except (TypeError, ValueError):
        ok, out = False, ()
    if not ok or not out or len(set(out)) != len(out) or min(out) < 2:
        raise OptionError("reset_power must be distinct integers of at least 2 (powers of the "
                          f"fitted values), however: reset_power={power!r}")
    return out


def reset_test(fit: LinearFitContract, power: Any = (2, 3)) -> dict[str, Any]:
    """Ramsey's RESET: the F test of adding powers of the fitted values to the regression
    (``lmtest::resettest(type = "fitted")``; weighted regressions for a weighted fit).

    The fitted values are centred (with an intercept, at the weighted mean response) and
    scaled before the powers are taken, as lmtest does with ``scale(y)``.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.battery import reset_test
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
    >>> reset_test(fit)["df"]
    '2, 11'
    """
    power = _check_power(power)
    sp = fit.spectrum
    _, ew = _resid_scaled(fit)
    n, k, q = fit.nobs, _aux_rank(sp), len(power)
    name = "RESET"
    if not fit.rule.least_squares:
        return _row(name, math.nan, "", math.nan,
                    f"OLS only: the residuals of {fit.method} are not orthogonal to X")
    df2 = n - k - q
    if df2 < 1:
        raise DataError(f"RESET with powers {power} needs more than {k + q} rows, however the "
                        f"fit has {n}")
    yhat = sp.y - np.ldexp(fit._resid_fit, -sp.y_exponent)  # fitted values / y_scale
    centre = sp.y_center if sp.intercept is not None else 0.0
    z = yhat - centre
    size = float(np.sqrt(np.mean(z * z))) or 1.0
    z /= size
    Z = np.column_stack([z**p for p in power]) * np.asarray(sp.sqrt_w)[:, None]
    rss = float(ew @ ew)
    ss, _ = _extra_ss(sp, ew, Z)
    stat = (df2 / q) * ss / (rss - ss)
    return _row(name, stat, _df_text(q, df2), stats.f.sf(stat, q, df2),
                "powers " + ", ".join(map(str, power)) + " of the fitted values")


def condition_numbers(fit: LinearFitContract) -> tuple[float, float]:
    """(κ of X̃ with unit-length columns, κ of X̃ itself): ratios of the largest to the
    smallest singular value, R's ``kappa(X, exact = TRUE)``; the second is statsmodels'
    ``condition_number``. The intercept column is included, not centred; inf when a column
    is aliased.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.battery import condition_numbers
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR",
    ...                  data=longley.load_pandas().data)
    >>> scaled, raw = condition_numbers(fit)
    >>> print(f"{scaled:.4g} {raw:.4g}")
    3.923e+04 4.756e+09
    """
    X = fit.design.X
    sw = fit.spectrum.sqrt_w
    Xw = X * np.asarray(sw)[:, None] if fit.spectrum.weighted else X
    norms = np.sqrt(np.einsum("ij,ij->j", Xw, Xw))
    if min(X.shape) < X.shape[1]:  # fewer rows than columns: singular
        return math.inf, math.inf
    R = sla.qr(Xw, mode="r", check_finite=False)[0][: X.shape[1]]
    out = []
    for B in (R / np.where(norms > 0, norms, 1.0), R):
        s = sla.svdvals(B, check_finite=False)
        out.append(float(s[0] / s[-1]) if s[-1] > 0 else math.inf)
    return out[0], out[1]


def perfect_fit_note(fit: LinearFitContract) -> str:
    """Why the residual tests are not defined on an essentially perfect fit ("" otherwise).

    R's ``summary.lm`` criterion: the residual variance Σ w e² / df_resid below 1e-30 of
    mean(f)² + var(f), f = √w · fitted. The residuals are then rounding errors (or exactly
    zero), and every residual-based statistic divides by their sum of squares.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> from attnreg.diagnostics.battery import perfect_fit_note
    >>> df = pd.DataFrame({"x": np.arange(10.0)})
    >>> perfect_fit_note(ar.attnreg("y ~ x", df.assign(y=0.1 + 0.3 * df.x)))[:21]
    'essentially perfect f'
    """
    df = float(fit.df_resid)
    e = fit._resid_ws  # on the rescaled response: no under- or overflow
    if not df > 0 or e.size < 2:
        return ""
    f = fit.design.y - fit._resid_fit
    if fit.spectrum.weighted:
        f = np.asarray(fit.spectrum.sqrt_w) * f
    f = np.ldexp(f, -fit.spectrum.y_exponent)
    resvar = float(e @ e) / df
    if not resvar < (float(f.mean()) ** 2 + float(f.var(ddof=1))) * 1e-30:
        return ""
    return "essentially perfect fit: the residuals are rounding errors, the test is not defined"


def diagnostic_table(fit: LinearFitContract, *, bg_order: int = 1, reset_power: Any = (2, 3),
                     studentize: bool = True, dw_exact: bool | None = None) -> DiagnosticTable:
    """The battery of :meth:`~attnreg.linear.results.LinearResults.diagnostics`.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.battery import diagnostic_table
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
    >>> len(diagnostic_table(fit, bg_order=2).table)
    9
    """
    power = _check_power(reset_power)
    if isinstance(bg_order, bool) or not isinstance(bg_order, (int, np.integer)) or bg_order < 1:
        raise OptionError(f"bg_order must be a positive integer, however: {bg_order=}")
    bp = "Breusch-Pagan (studentized)" if studentize else "Breusch-Pagan"
    bg = (f"Breusch-Godfrey LM (order {bg_order})", f"Breusch-Godfrey F (order {bg_order})")
    rows: list[dict[str, Any]] = []
    perfect = perfect_fit_note(fit)
    for names, run in (((bp,), lambda: [breusch_pagan(fit, studentize)]),
                       (("White",), lambda: [white_test(fit)]),
                       (("Durbin-Watson",), lambda: [durbin_watson(fit, dw_exact)]),
                       (bg, lambda: breusch_godfrey(fit, bg_order)),
                       (("Jarque-Bera",), lambda: [jarque_bera(fit)]),
                       (("RESET",), lambda: [reset_test(fit, power)])):
        if perfect:  # no residuals to test: NaN, and why
            rows += [_row(name, math.nan, "", math.nan, perfect) for name in names]
            continue
        try:
            rows += run()
        except DataError as exc:  # a test the data cannot support: NaN, and why
            rows += [_row(name, math.nan, "", math.nan, str(exc)) for name in names]
    scaled, raw = condition_numbers(fit)
    rows.append(_row("Condition number (scaled)", scaled, "", math.nan,
                     "kappa of sqrt(w) X with unit-length columns, intercept included"))
    rows.append(_row("Condition number", raw, "", math.nan, "kappa of sqrt(w) X as is"))
    rule = fit.rule
    title = "Regression diagnostics"
    if not rule.least_squares:
        title += f" ({fit.method}: residuals conditional on the chosen {rule.parameter})"
    return DiagnosticTable(pd.DataFrame(rows, columns=_COLUMNS), title)


# ------------------------------------------------------------------ collinearity
def vif_table(fit: LinearFitContract) -> pd.DataFrame:
    """Variance inflation factors (``car::vif``): see
    :meth:`~attnreg.linear.results.LinearResults.vif`.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.battery import vif_table
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
    >>> vif_table(fit).columns.tolist()
    ['VIF']
    """
    from attnreg.linear.filters import ols_filter
    from attnreg.linear.inference import vcov_scaled

    design, sp = fit.design, fit.spectrum
    if not design.intercept:
        raise OptionError("vif() needs a model with an intercept: without one the variance "
                          "inflation factors are not defined (car::vif warns that they 'may "
                          "not be sensible')")
    if sp.aliased.size:
        names = ", ".join(design.column_names[j] for j in sp.aliased)
        raise DataError(f"vif() is not defined when coefficients are aliased ({names}); drop "
                        "the aliased columns")
    slices = [(name, sl) for name, sl in design.design_info.term_name_slices.items()
              if name != "Intercept"]
    if len(slices) < 2:
        raise DataError(f"vif() needs at least 2 terms besides the intercept, however the "
                        f"model has {len(slices)}")
    if design.n_obs <= design.n_coef:
        raise DataError("vif() needs more rows than design columns (an OLS covariance)")
    middle = np.eye(1 + sp.rank)
    middle[0, 0] = 1.0 / sp.sum_w
    Vz, _ = vcov_scaled(sp, ols_filter(sp.s), design.n_coef, middle)
    keep = np.arange(1, design.n_coef)
    V = Vz[np.ix_(keep, keep)]
    d = np.sqrt(np.diag(V))
    R = V / np.outer(d, d)
    _, logdet = np.linalg.slogdet(R)
    gvif, dfs = [], []
    for _, sl in slices:
        sub = np.arange(sl.start, sl.stop) - 1
        rest = np.setdiff1d(np.arange(keep.size), sub)
        a = np.linalg.slogdet(R[np.ix_(sub, sub)])[1]
        b = np.linalg.slogdet(R[np.ix_(rest, rest)])[1]
        gvif.append(math.exp(a + b - logdet))
        dfs.append(sub.size)
    index = pd.Index([name for name, _ in slices], name="term")
    if all(d == 1 for d in dfs):
        return pd.DataFrame({"VIF": gvif}, index=index)
    g, k = np.array(gvif), np.array(dfs)
    return pd.DataFrame({"GVIF": g, "Df": k, "GVIF^(1/(2*Df))": g ** (1.0 / (2.0 * k))},
                        index=index)


# ------------------------------------------------------------------ outliers
@dataclass(frozen=True)
class OutlierTest:
    """Bonferroni outlier test on the externally studentized residuals (``car::outlierTest``).

    Attributes
    ----------
    table : DataFrame
        Indexed by row label: ``rstudent``, ``unadjusted p-value`` (two-sided t on
        df_resid − 1 df) and ``Bonferroni p`` (n times the unadjusted p, not capped at 1,
        as car stores it; printed as NA above 1). The rows with Bonferroni p at most
        ``cutoff`` (at most ``n_max``, smallest first), or the largest |rstudent| when none.
    signif : bool
        Whether any row has Bonferroni p at most ``cutoff``.
    cutoff : float

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> ot = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df).outlier_test()
    >>> ot.signif
    False
    >>> print(ot)
    No Studentized residuals with Bonferroni p < 0.05
    Largest |rstudent|:
      rstudent unadjusted p-value Bonferroni p
    9 2.220099           0.053555      0.85689
    """

    table: pd.DataFrame
    signif: bool
    cutoff: float

    def summary(self) -> Summary:
        """The test as a report: the text (a blank line first), HTML, LaTeX, Markdown."""
        return Summary("Outlier test", (OutlierSection(
            self.table, stars=False, heading=False, signif=self.signif, cutoff=self.cutoff),))

    def to_latex(self) -> str:
        """The rows as a LaTeX tabular (booktabs)."""
        return self.summary().to_latex()

    def to_markdown(self) -> str:
        """The rows as a Markdown (pipe) table."""
        return self.summary().to_markdown()

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return "\n".join(outlier_lines(self.table, self.signif, self.cutoff))

    def __repr__(self) -> str:
        return str(self)


def outlier_table(rstudent: pd.Series, df: float, cutoff: float, n_max: int) -> OutlierTest:
    """:class:`OutlierTest` of externally studentized residuals on ``df`` degrees of freedom.

    Examples
    --------
    >>> import pandas as pd
    >>> from attnreg.diagnostics.battery import outlier_table
    >>> ot = outlier_table(pd.Series([0.5, -6.0, 1.0], index=["a", "b", "c"]), 20.0, 0.05, 10)
    >>> ot.signif, ot.table.index.tolist()
    (True, ['b'])
    """
    if isinstance(cutoff, bool) or not isinstance(cutoff, (int, float)) or not 0 < cutoff <= 1:
        raise OptionError(f"cutoff must be a probability in (0, 1], however: {cutoff=}")
    if isinstance(n_max, bool) or not isinstance(n_max, (int, np.integer)) or n_max < 1:
        raise OptionError(f"n_max must be a positive integer, however: {n_max=}")
    r = rstudent[rstudent.notna()]
    if not len(r):
        raise DataError("outlier_test() has no studentized residuals (every row has "
                        "leverage 1, or there are too few residual degrees of freedom)")
    values = r.to_numpy()
    p = 2.0 * stats.t.sf(np.abs(values), df)
    bonf = r.size * p
    order = np.argsort(bonf, kind="stable")
    hit = order[bonf[order] <= cutoff]
    signif = bool(hit.size)
    rows = hit[:n_max] if signif else np.array([int(np.argmax(np.abs(values)))])
    table = pd.DataFrame({"rstudent": values[rows], "unadjusted p-value": p[rows],
                          "Bonferroni p": bonf[rows]}, index=r.index[rows])
    return OutlierTest(table, signif, float(cutoff))
