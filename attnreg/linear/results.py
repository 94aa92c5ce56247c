"""Results of a spectral fit (OLS, ridge, PCR): the coefficient view and the attention view."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.threads import narrow_blas
from attnreg.formula.design import Design
from attnreg.exceptions import (
    DegenerateInferenceWarning,
    ScaleWarning,
)
from attnreg.inference.vcov.registry import VcovSpec
from attnreg.linear.rules import SpectralRule
from attnreg.linear.selection import Selection
from attnreg.linear.spectral import Spectrum
from attnreg.linear.centring import centred_residuals, needs_centred_residuals
from attnreg.scaling import column_norms
from attnreg.linear.filters import Filtered, hat_and_weight_stats, query_weight_stats
from attnreg.inference.bootstrap import Bootstrap
from attnreg.linear.coefficients import CoefficientInference
from attnreg.linear.fitstats import FitStatistics
from attnreg.linear.subfits import SubFits
from attnreg.diagnostics.reports import Diagnostics
from attnreg.inference.hypotheses import Hypotheses
from attnreg.inference.tidy import Tidy
from attnreg.views.linear import LinearViews

#: standard errors, tests and intervals need at least this many residual degrees of freedom
#: n − tr(H); with fewer (ridge or PCR on a handful of rows) they are NaN, with a warning
MIN_DF_RESID = 1.0
_TINY = float(np.finfo(np.float64).tiny)
#: below this RSS of the rescaled response the residuals' squares have left float64's range
_RSS_FLOOR = 2.0 ** -960



@dataclass(frozen=True)
class LinearResults(FitStatistics, CoefficientInference, Hypotheses, Diagnostics, Tidy,
                    LinearViews, Bootstrap, SubFits):
    """A fitted spectral model. Immutable; derived statistics are computed once, on first use.

    Attributes
    ----------
    design : Design
        The model frame (response, design matrix, names, row labels, weights).
    method : str
        ``"ols"``, ``"ridge"`` or ``"pcr"``.
    spectrum : Spectrum
        The decomposition of the scaled design.
    filtered : Filtered
        Filter factors, coefficients on the original scale and effective df.
    selection : Selection or None
        How λ (ridge) or k (PCR) was chosen.
    vcov_spec : VcovSpec
        The covariance estimator in use; change it with :meth:`with_vcov`.
    call : str
        The call, for reports.
    standardize : bool
        Whether predictors were standardised before filtering (ridge and PCR).
    rule : SpectralRule
        What the method declares (keyword only): unpenalised least squares or penalised by
        a named tuning parameter, its label and filter. Every operation asks the rule what
        the fit can do, never the method's name.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
    >>> fit.method, fit.nobs, fit.df_resid
    ('ols', 16, 10.0)
    >>> print(f"{fit.coef['UNEMP']:.4f} (se {fit.std_err['UNEMP']:.4f})")
    -1.9721 (se 0.3861)
    >>> print(f"R2 {fit.r_squared:.4f}, sigma {fit.sigma:.2f}")
    R2 0.9955, sigma 289.72
    """

    design: Design
    method: str
    spectrum: Spectrum = field(repr=False)
    filtered: Filtered = field(repr=False)
    selection: Selection | None
    vcov_spec: VcovSpec
    call: str
    standardize: bool
    rule: SpectralRule = field(kw_only=True, repr=False)

    # ------------------------------------------------------------ basic quantities
    @property
    def names(self) -> list[str]:
        """Design column (coefficient) names."""
        return self.design.column_names

    @property
    def nobs(self) -> int:
        """Number of observations used."""
        return self.design.n_obs

    @property
    def lam(self) -> float | None:
        """Ridge penalty λ (on the standardised scale), or None."""
        tuned = self.selection is not None and self.rule.tuning == "lam"
        return self.selection.value if tuned else None  # type: ignore[union-attr]

    @property
    def k(self) -> int | None:
        """Number of principal components (PCR), or None."""
        tuned = self.selection is not None and self.rule.tuning == "k"
        return int(self.selection.value) if tuned else None  # type: ignore[union-attr]

    @property
    def edf(self) -> float:
        """Effective degrees of freedom tr(H), counting the intercept (= rank for OLS)."""
        return self.filtered.edf

    @property
    def aliased(self) -> list[str]:
        """Names of coefficients not estimable (linear combinations of earlier columns)."""
        return [self.names[j] for j in self.spectrum.aliased]

    @cached_property
    def coef(self) -> pd.Series:
        """Coefficients on the original scale of the design (NaN where aliased)."""
        c = self.filtered.coef
        est = self._estimable
        if not np.isfinite(c[est]).all():
            bad = [self.names[j] for j in est[~np.isfinite(c[est])]]
            warn_user(f"coefficient(s) {', '.join(bad)} exceed the float64 range: the "
                  "response's scale over the column's is beyond 1.8e308; reported as "
                  "inf (rescale the column or the response)", ScaleWarning)
        return pd.Series(c, index=self.names, name="coef")

    @property
    def _estimable(self) -> IntArray:
        """Positions of the estimable coefficients (the intercept and the kept columns)."""
        sp = self.spectrum
        return np.sort(np.r_[sp.kept, [] if sp.intercept is None else [sp.intercept]]
                       ).astype(np.int64)

    @cached_property
    def fitted(self) -> pd.Series:
        """Fitted values, indexed by the row labels of the data.

        Rows of prior weight zero are included, though not part of the fit (as in R).
        """
        b = self._coef_zeroed
        zero = self.design.zero_weight
        fit = self.design.y - self._resid_fit if self._offsets_cancel else self.design.X @ b
        if zero is None:
            return pd.Series(fit, name="fitted", index=self.design.row_labels)
        return zero.all_rows(fit, self.design.row_labels, zero.X @ b, "fitted")

    @cached_property
    def resid(self) -> pd.Series:
        """Response residuals y − ŷ (unweighted), indexed by row labels (zero weights included)."""
        e, zero = self._resid_fit, self.design.zero_weight
        if zero is None:
            return pd.Series(e, index=self.design.row_labels, name="resid", copy=False)
        return zero.all_rows(e, self.design.row_labels,
                             zero.y - zero.X @ self._coef_zeroed, "resid")

    @cached_property
    def _coef_zeroed(self) -> FloatArray:
        """Coefficients with the aliased (NaN) ones set to 0 (an overflowed one stays inf)."""
        coef = self.filtered.coef
        return np.where(np.isnan(coef), 0.0, coef)

    @cached_property
    def _resid_fit(self) -> FloatArray:
        """Residuals of the rows in the fit (rows of weight zero left out)."""
        if self._offsets_cancel:
            return self._centred_resid()
        if "fitted" in self.__dict__ and self.design.zero_weight is None:
            return self.design.y - self.fitted.to_numpy()
        e = self.design.X @ self._coef_zeroed  # without caching the fitted values
        np.subtract(self.design.y, e, out=e)
        return e

    @cached_property
    def _offsets_cancel(self) -> bool:
        """Whether y − X c in float64 would lose the residuals' digits to the columns' offsets.

        Then the residuals are formed on the centred columns (:mod:`attnreg.linear.centring`).
        """
        sp = self.spectrum
        if sp.intercept is None or not sp.kept.size or (sp.center_lo is None
                                                         and sp.y_center_lo == 0.0):
            return False  # no offset column: centring would cancel as much as it saves
        coef = self._coef_zeroed
        scale = float(np.ldexp(np.sqrt(sp.y_outside / sp.sum_w), sp.y_exponent))
        return needs_centred_residuals(float(coef[sp.intercept]), sp.center[sp.kept],
                                       coef[sp.kept], scale)

    def _centred_resid(self) -> FloatArray:
        """y − X c with the offsets cancelled first: ((y − ȳ) − (X − x̄) β), two-term means."""
        sp, e = self.spectrum, self.spectrum.y_exponent
        lo = np.zeros(sp.kept.size) if sp.center_lo is None else sp.center_lo[sp.kept]
        return centred_residuals(self.design.X, self.design.y, sp.kept,
                                 self._coef_zeroed[sp.kept], sp.center[sp.kept], lo,
                                 float(np.ldexp(sp.y_center, e)),
                                 float(np.ldexp(sp.y_center_lo, e)))

    @cached_property
    def _resid_w(self) -> FloatArray:
        e = self._resid_fit
        return self.spectrum.sqrt_w * e if self.spectrum.weighted else e

    @cached_property
    def _resid_ws(self) -> FloatArray:
        """sqrt(w) e divided by the spectrum's ``y_scale`` (exactly): what sums of squares use."""
        e = self.spectrum.y_exponent
        return np.ldexp(self._resid_w, -e) if e else self._resid_w

    @cached_property
    def _rss_s(self) -> float:
        r = self._resid_ws
        return float(r @ r)

    @property
    def _sigma2_s(self) -> float:
        """σ² on the rescaled response (NaN without a residual degree of freedom).

        Formed as the square of σ's square root, so it is bit for bit ``sigma ** 2`` when the
        response is not rescaled.
        """
        if not self._df_ok or self._rss_underflows:
            return float("nan")
        return float(np.sqrt(self._rss_s / self.df_resid)) ** 2

    @cached_property
    def _rss_underflows(self) -> bool:
        """Whether the residuals are too small for their squares on the rescaled response.

        The response is divided by 2^e when its squares would overflow (a value near 1e308);
        residuals below about 1e-154 of that scale then have squares under float64's
        smallest normal number. Sigma is then taken from the residuals' own norm and R² and
        F from ratios, while the covariance (which needs σ² on the rescaled response) is
        NaN; a ScaleWarning says so once.
        """
        e = self.spectrum.y_exponent
        if e <= 0 or self._rss_s >= _RSS_FLOOR or not np.any(self._resid_w):
            return False
        norm = float(column_norms(self._resid_w[:, None])[0])
        warn_user(f"the residuals (norm {norm:.3g}) are below 1e-154 times the response's "
                  f"scale (2^{e}): float64 cannot hold their squares on that scale, so the "
                  "standard errors, t and p values and intervals are NaN; sigma, R-squared "
                  "and the F test are computed apart (rescale the response or examine the "
                  "rows with extreme values)", ScaleWarning)
        return True

    @cached_property
    def _df_ok(self) -> bool:
        """Whether inference is defined (at least MIN_DF_RESID residual df); warns once if not."""
        if self.df_resid >= MIN_DF_RESID:
            return True
        warn_user(f"inference is not defined: the residual degrees of freedom n - tr(H) = "
              f"{self.df_resid:.3g} are fewer than {MIN_DF_RESID:g} ({self.nobs} rows, "
              f"effective df {self.edf:.3g}); sigma, standard errors, t and p values, "
              "the F test, adjusted R-squared, intervals and studentised residuals are "
              "NaN", DegenerateInferenceWarning)
        return False

    def _unscaled_square(self, value: float, what: str) -> float:
        """A sum of squares of the rescaled response on the response's own scale (warns when
        that leaves the float64 range)."""
        e = self.spectrum.y_exponent
        if not e:
            return value
        with np.errstate(over="ignore", under="ignore"):
            out = float(np.ldexp(value, 2 * e))
        if value != 0.0 and math.isfinite(value) and not _TINY <= abs(out) < math.inf:
            size = math.log10(abs(value)) + 2 * e * math.log10(2.0)
            warn_user(f"{what} is about 1e{size:.0f}, outside the float64 range at the "
                  f"response's scale: reported as {out:g}; sigma, R-squared, standard "
                  "errors and tests are computed on the response divided by a power of "
                  "two and are unaffected", ScaleWarning)
        return out

    @cached_property
    def _query_rows(self) -> IntArray:
        """The summary's query rows: every training row for small n, else about
        2e7 / (n (rank + 1)) evenly spaced rows (at least 20)."""
        n, sp = self.nobs, self.spectrum
        m = int(min(n, max(20, 2e7 / max(n * (sp.rank + 1), 1))))
        return np.unique(np.linspace(0, n - 1, m).round().astype(np.int64))

    @cached_property
    def _row_pass(self) -> tuple[FloatArray, FloatArray, FloatArray, int]:
        """Hat values and the summary's sampled weight statistics, from one pass over the rows."""
        rows = self._query_rows
        with narrow_blas(self.spectrum.rank):  # products of row blocks with the (rank)-wide factors
            h, neg, lev = hat_and_weight_stats(self.spectrum, self.filtered.f, rows)
        return h, neg, lev, int(rows.size)

    @cached_property
    def _query_pass(self) -> tuple[FloatArray, FloatArray, FloatArray, IntArray]:
        """(hat values, negative mass, Σω²) of the query rows, and the rows.

        When every row is a query this is the hat values' own pass; otherwise only the
        queries' weights are formed (:func:`~attnreg.linear.filters.query_weight_stats`), and
        no other row's hat value.
        """
        rows = self._query_rows
        if rows.size == self.nobs:
            h, neg, lev, _ = self._row_pass
            return h[rows], neg, lev, rows
        h, neg, lev = query_weight_stats(self.spectrum, self.filtered.f, rows)
        return h, neg, lev, rows

    @cached_property
    def _hat(self) -> FloatArray:
        return self._row_pass[0]

    @property
    def hat_values(self) -> pd.Series:
        """Diagonal of the hat matrix by row label (R's ``hatvalues()``): each training row's
        leverage, which is also its attention weight on itself. Rows of weight zero are not
        part of the fit and have none."""
        return pd.Series(self._hat, index=self.design.row_labels, name="hat")

    @property
    def weighted_resid(self) -> pd.Series:
        """√w · (y − ŷ) by row label (R's ``weighted.residuals()``; the residuals without
        weights), rows of weight zero left out."""
        return pd.Series(self._resid_w, index=self.design.row_labels, name="weighted_resid")

    # ------------------------------------------------------------ reports
    def summary(self) -> Any:
        """The R ``summary.lm``-style report (a :class:`attnreg.report.Summary`).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> text = str(fit.summary())
        >>> "Coefficients:" in text and "Attention view" in text
        True
        >>> print([line for line in text.splitlines() if line.startswith("F-statistic")][0])
        F-statistic: 438.8 on 5 and 10 DF,  p-value: 2.242e-11
        """
        from attnreg.report import linear_summary

        with narrow_blas(len(self.names)):  # the row passes of a narrow design: see threads
            return linear_summary(self)

    def __repr__(self) -> str:
        coefs = ", ".join(f"{n}={v:.4g}" for n, v in self.coef.items())
        return f"<attnreg {self.method} fit: {self.design.formula}; n={self.nobs}; {coefs}>"
