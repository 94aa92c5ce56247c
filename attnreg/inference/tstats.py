"""t statistics, p-values, intervals and information criteria of a fitted linear model.

:class:`StudentInference` is a mixin of every linear result (in memory,
:class:`~attnreg.linear.results.LinearResults`; over chunks,
:class:`~attnreg.large.results.ChunkedResults`): given the coefficients, their standard errors
under the covariance in use, the covariance's degrees of freedom and the log-likelihood, the
rest follows the same way for both.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from attnreg.exceptions import OptionError

__all__ = ["StudentInference", "check_level", "f_sf", "is_z"]


def check_level(level: Any, what: str = "level") -> float:
    """A coverage level: a number (not a bool) strictly between 0 and 1, returned as a float.

    ``what`` names the argument in the error (``"level"``, ``"conf_level"``).
    """
    ok = isinstance(level, (int, float, np.integer, np.floating)) and not isinstance(level, bool)
    if not ok or not 0.0 < float(level) < 1.0:
        raise OptionError(f"{what} must be strictly between 0 and 1, however: {what}={level!r}")
    return float(level)


def is_z(df: float) -> bool:
    """Whether tests on ``df`` degrees of freedom are z and χ² tests (``df = inf``)."""
    return math.isinf(df)


def f_sf(stat: float, df1: float, df2: float) -> float:
    """P(F(df1, df2) > stat); with df2 = inf, P(χ²(df1) > df1 · stat) (scipy gives NaN)."""
    if is_z(df2):
        return float(stats.chi2.sf(df1 * stat, df1))
    return float(stats.f.sf(stat, df1, df2))


def _pct(p: float) -> str:
    return f"{100 * p:.3g} %"


class StudentInference:
    """t tests, intervals, AIC and BIC from ``coef``, ``std_err`` and the df (a mixin)."""

    if TYPE_CHECKING:  # provided by the results class
        vcov_spec: Any

        @property
        def names(self) -> list[str]: ...
        @property
        def nobs(self) -> int: ...
        @property
        def coef(self) -> pd.Series: ...
        @property
        def std_err(self) -> pd.Series: ...
        @property
        def df_resid(self) -> float: ...
        @property
        def edf(self) -> float: ...
        @property
        def loglik(self) -> float: ...

    @property
    def df_inference(self) -> float:
        """Degrees of freedom of the t and F reference distributions under the covariance in
        use: the residual df n − tr(H), or G − 1 for a cluster-robust covariance (the smallest
        G − 1 over the dimensions of a multi-way one) unless it was asked for with
        ``df="residual"``; ``inf`` under ``with_vcov(..., df=np.inf)`` (z and χ² tests); NaN
        under ``df="satterthwaite"``, where each coefficient has its own (:attr:`df_coef`)."""
        return float(self.vcov_spec.df_inference(self.df_resid))

    @property
    def df_coef(self) -> pd.Series:
        """Degrees of freedom of each coefficient's t test and interval: :attr:`df_inference`
        for all, unless the covariance gives each its own (``df="satterthwaite"``)."""
        return pd.Series(self.df_inference, index=self.names, name="df")

    @cached_property
    def t_value(self) -> pd.Series:
        """t statistics coef / std_err."""
        return (self.coef / self.std_err).rename("t_value")

    @cached_property
    def p_value(self) -> pd.Series:
        """Two-sided p-values from Student's t on :attr:`df_coef` degrees of freedom (the
        normal under ``df=np.inf``, as ``lmtest::coeftest(df = Inf)``)."""
        p = 2.0 * stats.t.sf(np.abs(self.t_value.to_numpy()), self.df_coef.to_numpy())
        return pd.Series(p, index=self.names, name="p_value")

    def conf_int(self, level: float = 0.95) -> pd.DataFrame:
        """Confidence intervals for the coefficients (columns named like R's ``confint``).

        Parameters
        ----------
        level : float
            Coverage, strictly between 0 and 1.

        Returns
        -------
        DataFrame
            One row per coefficient, columns ``"2.5 %"`` and ``"97.5 %"`` (for level 0.95);
            Student's t on :attr:`df_coef` degrees of freedom and the current covariance.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> ci = fit.conf_int(0.9)
        >>> list(ci.columns)
        ['5 %', '95 %']
        >>> print(f"{ci.loc['UNEMP', '5 %']:.4f} {ci.loc['UNEMP', '95 %']:.4f}")
        -2.6719 -1.2724
        """
        check_level(level)
        q = stats.t.ppf(0.5 + level / 2.0, self.df_coef.to_numpy())
        lo, hi = self.coef - q * self.std_err, self.coef + q * self.std_err
        a = (1.0 - level) / 2.0
        return pd.DataFrame({_pct(a): lo, _pct(1.0 - a): hi})

    @property
    def aic(self) -> float:
        """AIC = −2 logLik + 2 (edf + 1); σ counts as a parameter, as in R."""
        return -2.0 * self.loglik + 2.0 * (self.edf + 1.0)

    @property
    def bic(self) -> float:
        """BIC = −2 logLik + log(n) (edf + 1), as in R."""
        return -2.0 * self.loglik + np.log(self.nobs) * (self.edf + 1.0)
