"""The fit statistics of a linear fit: RSS, degrees of freedom, σ, R², the overall F test and
the log-likelihood, each formed on the rescaled response so that none leaves float64's range.

:class:`FitStatistics` is a mixin of :class:`~attnreg.linear.results.LinearResults`.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from attnreg._warn import warn_user
from attnreg.exceptions import InferenceWarning, ScaleWarning
from attnreg.inference.tstats import f_sf
from attnreg.inference.contract import LinearFitContract
from attnreg.scaling import column_norms

__all__ = ["FTest", "FitStatistics"]


class FTest(NamedTuple):
    """Overall F test of the model against the intercept-only model (or the null model).

    Classical covariance: R's ``summary.lm`` F (ridge: with the effective df tr(H) − 1).
    Any other covariance: the Wald test b' V⁻¹ b / q of the non-intercept coefficients under
    it, on (q, df_inference) degrees of freedom (the residual df, or G − 1 for a cluster-robust
    covariance), as statsmodels' ``fvalue`` with a ``cov_type``
    and R's ``lmtest::waldtest(fit, vcov=)``; q is the rank (k for PCR), and for ridge and
    PCR the test is conditional on λ or k.
    """

    statistic: float
    df1: float
    df2: float
    p_value: float



class FitStatistics(LinearFitContract):
    """RSS, degrees of freedom, σ, R², the F test and the log-likelihood (a mixin)."""

    if TYPE_CHECKING:  # provided by LinearResults and its mixins
        @property
        def _rss_s(self) -> float: ...
        @property
        def _rss_underflows(self) -> bool: ...
        def _unscaled_square(self, value: float, what: str) -> float: ...
        def _wald(self) -> tuple[float, int]: ...

    @cached_property
    def rss(self) -> float:
        """(Weighted) residual sum of squares."""
        return self._unscaled_square(self._rss_s, "the residual sum of squares")

    @property
    def df_model(self) -> float:
        """Model degrees of freedom, excluding the intercept (effective for ridge/PCR)."""
        return self.edf - (1.0 if self.design.intercept else 0.0)

    @property
    def df_resid(self) -> float:
        """Residual degrees of freedom n − tr(H)."""
        return self.nobs - self.edf

    @cached_property
    def sigma(self) -> float:
        """Residual standard error sqrt(RSS / df_resid) (NaN with less than one residual df)."""
        if not self._df_ok:
            return float("nan")
        if self._rss_underflows:  # the residuals' own norm, safe from underflow
            return float(column_norms(self._resid_w[:, None])[0] / np.sqrt(self.df_resid))
        return float(np.ldexp(np.sqrt(self._rss_s / self.df_resid), self.spectrum.y_exponent))

    @property
    def _tss_s(self) -> float:
        # ||sqrt(w)(y − ȳ)||², with ȳ = 0 without an intercept: R's centred or uncentred TSS
        return self.spectrum.yss

    @cached_property
    def tss(self) -> float:
        """Total sum of squares: centred with an intercept, uncentred without (as R)."""
        return self._unscaled_square(self._tss_s, "the total sum of squares")

    @cached_property
    def r_squared(self) -> float:
        """R² = 1 − RSS/TSS (uncentred when there is no intercept, as in R)."""
        if self._tss_s == 0.0:
            warn_user("R-squared is not defined: the response has no variation (the total "
                  "sum of squares is 0); NaN", InferenceWarning)
            return float("nan")
        return 1.0 - self._rss_s / self._tss_s

    @property
    def adj_r_squared(self) -> float:
        """Adjusted R² = 1 − (1 − R²)(n − intercept)/df_resid (NaN with less than one df)."""
        if not self._df_ok:
            return float("nan")
        n0 = self.nobs - (1 if self.design.intercept else 0)
        return 1.0 - (1.0 - self.r_squared) * n0 / self.df_resid

    @cached_property
    def f_test(self) -> FTest:
        """Overall F test (see :class:`FTest`): R's F, or the Wald F under a robust covariance.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> print(f"{fit.f_test.statistic:.1f}")  # classical: (ESS / 5) / sigma²
        438.8
        >>> ft = fit.with_vcov("HC1").f_test  # Wald: b' V⁻¹ b / 5 with V the HC1 covariance
        >>> print(f"{ft.statistic:.1f} on {ft.df1:g} and {ft.df2:g} DF")
        538.6 on 5 and 10 DF
        """
        df1, df2 = self.df_model, self.df_resid
        nan = float("nan")
        if df1 <= 0 or not self._df_ok:
            return FTest(nan, df1, df2, nan)
        if self.vcov_spec.estimator.classical:
            rss, tss = self._rss_s, self._tss_s
            if self._rss_underflows:
                return self._f_test_apart(float(df1), float(self.df_inference))
            if rss == 0.0:  # F = (ESS / df1) / 0: infinite, or 0/0 when ESS is 0 too
                explained = tss > 0.0
                warn_user("essentially perfect fit (the residual sum of squares is 0): the F "
                      f"statistic is {'infinite' if explained else 'not defined (NaN)'}",
                      InferenceWarning)
                return FTest(math.inf if explained else nan, float(df1), float(df2),
                             0.0 if explained else nan)
            stat = ((tss - rss) / df1) / (rss / df2)
            dfi = self.df_inference  # df_resid, or inf under df=np.inf (then χ²(df1) of df1 F)
            return FTest(float(stat), float(df1), float(dfi), f_sf(stat, df1, dfi))
        stat, q = self._wald()
        df2 = self.df_inference
        if self.vcov_spec.option("df") == "satterthwaite" and math.isfinite(stat):
            from attnreg.inference.vcov.satterthwaite import overall_reference  # clubSandwich's HTZ

            stat, df2 = overall_reference(self, stat * q)
        return FTest(stat, float(q), float(df2), f_sf(stat, q, df2))

    def _f_test_apart(self, df1: float, df2: float) -> FTest:
        """F = (ESS / df1) / σ² when σ² does not fit the rescaled response's scale.

        Formed as (sqrt(ESS_s / df1) 2^e / σ)²; inf (with a ScaleWarning) when F itself
        exceeds float64's range.
        """
        ess_s = max(self._tss_s - self._rss_s, 0.0)
        with np.errstate(over="ignore"):
            root = float(np.ldexp(np.sqrt(ess_s / df1) / self.sigma, self.spectrum.y_exponent))
            stat = root * root
        if not math.isfinite(stat):
            warn_user(f"the F statistic is about 1e{2 * math.log10(root) if math.isfinite(root) else 308:.0f}"
                      ", beyond the float64 range: reported as inf (p-value 0)", ScaleWarning)
            return FTest(math.inf, df1, df2, 0.0)
        return FTest(stat, df1, df2, f_sf(stat, df1, df2))

    @cached_property
    def loglik(self) -> float:
        """Gaussian log-likelihood at the MLE of σ² (R's ``logLik.lm``, prior weights included)."""
        n = self.nobs
        w = self.design.weights
        log_w = float(np.sum(np.log(w))) if w is not None else 0.0
        log_rss = np.log(self._rss_s) + 2 * self.spectrum.y_exponent * np.log(2.0)
        return 0.5 * (log_w - n * (np.log(2 * np.pi) + 1.0 - np.log(n) + log_rss))
