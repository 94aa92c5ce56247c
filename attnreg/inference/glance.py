"""``tidy()`` and ``glance()`` of a linear fit, with broom's column names: from the
coefficients, their covariance and the fit statistics only, so that the in-memory
(:class:`~attnreg.linear.results.LinearResults`) and the chunked
(:class:`~attnreg.large.results.ChunkedResults`) fits share them. The conventions are those
of :mod:`attnreg.inference.tidy`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

import numpy as np
import pandas as pd

from attnreg.exceptions import OptionError
from attnreg.inference.tstats import check_level

__all__ = ["FTestValues", "TidyFit", "TidyGlance"]


class FTestValues(NamedTuple):
    """The overall F test of a fit (statistic, numerator and denominator df, p-value)."""

    statistic: float
    df1: float
    df2: float
    p_value: float


class TidyFit(Protocol):
    """What the frames read of a fit beyond :class:`LinearFitContract` (for typing)."""

    @property
    def t_value(self) -> pd.Series: ...
    @property
    def p_value(self) -> pd.Series: ...
    @property
    def f_test(self) -> FTestValues: ...
    @property
    def r_squared(self) -> float: ...
    @property
    def adj_r_squared(self) -> float: ...
    @property
    def loglik(self) -> float: ...
    @property
    def aic(self) -> float: ...
    @property
    def bic(self) -> float: ...
    @property
    def rss(self) -> float: ...
    @property
    def fitted(self) -> pd.Series: ...
    @property
    def resid(self) -> pd.Series: ...
    def conf_int(self, level: float = 0.95) -> pd.DataFrame: ...
    def predict(self, newdata: Any = None, *, interval: str = "none",
                level: float = 0.95) -> pd.Series | pd.DataFrame: ...



class TidyGlance:
    """``tidy()`` and ``glance()``: from the coefficients, their covariance and the fit
    statistics only (a mixin of the in-memory and the chunked linear results)."""

    if TYPE_CHECKING:  # provided by the results class
        @property
        def names(self) -> list[str]: ...
        @property
        def nobs(self) -> int: ...
        @property
        def coef(self) -> pd.Series: ...
        @property
        def std_err(self) -> pd.Series: ...
        @property
        def sigma(self) -> float: ...
        @property
        def df_resid(self) -> float: ...

    # ------------------------------------------------------------ tidy
    def tidy(self, conf_int: bool = False, conf_level: float = 0.95) -> pd.DataFrame:
        """One row per coefficient, as ``broom::tidy(lm)``, under the covariance in use.

        Parameters
        ----------
        conf_int : bool
            Add the confidence interval (``conf.low``, ``conf.high``).
        conf_level : float
            Its coverage, strictly between 0 and 1.

        Returns
        -------
        DataFrame, shape (n_coef, 5) or (n_coef, 7)
            Columns ``term``, ``estimate``, ``std.error``, ``statistic`` (t), ``p.value``
            (Student's t on :attr:`df_inference` degrees of freedom), then ``conf.low`` and
            ``conf.high``. Under a robust covariance these are
            ``broom::tidy(lmtest::coeftest(fit, vcov = ...))``. Aliased coefficients are NaN.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> td = fit.tidy(conf_int=True)
        >>> list(td.columns)
        ['term', 'estimate', 'std.error', 'statistic', 'p.value', 'conf.low', 'conf.high']
        >>> row = td.set_index("term").loc["UNEMP"]
        >>> print(f"{row['estimate']:.4f} {row['std.error']:.4f} {row['conf.low']:.4f}")
        -1.9721 0.3861 -2.8324
        >>> print(f"{fit.with_vcov('HC1').tidy().loc[2, 'std.error']:.4f}")  # robust
        0.4566
        """
        if not isinstance(conf_int, (bool, np.bool_)):
            raise OptionError(f"conf_int must be True or False, however: {conf_int=}")
        level = check_level(conf_level, "conf_level")  # checked even when unused
        fit = cast(TidyFit, self)
        out = pd.DataFrame({"term": self.names,
                            "estimate": self.coef.to_numpy(),
                            "std.error": self.std_err.to_numpy(),
                            "statistic": fit.t_value.to_numpy(),
                            "p.value": fit.p_value.to_numpy()})
        if conf_int:
            ci = fit.conf_int(level).to_numpy()
            out["conf.low"], out["conf.high"] = ci[:, 0], ci[:, 1]
        return out

    # ------------------------------------------------------------ glance
    def glance(self) -> pd.DataFrame:
        """One row of model statistics, as ``broom::glance(lm)``.

        Returns
        -------
        DataFrame, shape (1, 12)
            ``r.squared``, ``adj.r.squared``, ``sigma``; ``statistic``, ``p.value`` and ``df``:
            the overall F test and its numerator degrees of freedom (:attr:`f_test`: R's F
            under the classical covariance, the Wald F under any other; NaN for an
            intercept-only model); ``logLik``, ``AIC``, ``BIC``; ``deviance`` (the weighted
            residual sum of squares); ``df.residual`` (n − tr(H)) and ``nobs`` (rows in the
            fit; rows of weight zero are not counted).

            For ridge and PCR the degrees of freedom are the effective ones: ``df`` is
            tr(H) − 1 (with an intercept) and ``df.residual`` n − tr(H), both fractional for
            ridge; ``AIC`` and ``BIC`` count tr(H) + 1 parameters. Everything is conditional
            on the chosen λ or k.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> g = fit.glance()
        >>> list(g.columns)  # doctest: +NORMALIZE_WHITESPACE
        ['r.squared', 'adj.r.squared', 'sigma', 'statistic', 'p.value', 'df', 'logLik',
         'AIC', 'BIC', 'deviance', 'df.residual', 'nobs']
        >>> print(f"{g.loc[0, 'statistic']:.1f} on {g.loc[0, 'df']:g}, n = {g.loc[0, 'nobs']}")
        438.8 on 5, n = 16
        >>> ridge = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df,
        ...                    method="ridge", lam=0.1)
        >>> print(f"{ridge.glance().loc[0, 'df.residual']:.3f}")  # n - tr(H), effective
        11.533
        """
        fit = cast(TidyFit, self)
        ft = fit.f_test
        nan = float("nan")
        slopes = ft.df1 > 0
        row = {"r.squared": fit.r_squared, "adj.r.squared": fit.adj_r_squared,
               "sigma": self.sigma,
               "statistic": ft.statistic if slopes else nan,
               "p.value": ft.p_value if slopes else nan,
               "df": float(ft.df1) if slopes else nan,
               "logLik": float(fit.loglik), "AIC": float(fit.aic), "BIC": float(fit.bic),
               "deviance": fit.rss, "df.residual": float(self.df_resid),
               "nobs": int(self.nobs)}
        return pd.DataFrame({k: [v] for k, v in row.items()})
