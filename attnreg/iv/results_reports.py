"""The reports of an IV fit: the summary, broom's tidy and glance, the Stock–Yogo critical
values and the first-stage statistics ``etable`` shows (a mixin of
:class:`attnreg.iv.results.IVResults`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg.iv.stock_yogo import stock_yogo
from attnreg.report import Summary

__all__ = ["IVReports"]


class IVReports:
    """Mixin: summary, tidy, glance, Stock–Yogo critical values, first-stage F statistics."""

    if TYPE_CHECKING:
        from attnreg.iv.frame import IVFrame
        from attnreg.iv.weak import WeakIV

        frame: IVFrame
        method: str
        vcov_kind: str
        coef: pd.Series
        std_err: pd.Series
        t_value: pd.Series
        p_value: pd.Series
        f_test: pd.Series

        @property
        def names(self) -> list[str]: ...

        @property
        def nobs(self) -> int: ...

        @property
        def r_squared(self) -> float: ...

        @property
        def adj_r_squared(self) -> float: ...

        @property
        def sigma(self) -> float: ...

        @property
        def df_resid(self) -> int: ...

        def conf_int(self, level: float = 0.95) -> pd.DataFrame: ...

        def weak_instruments(self, tau: float = 0.10) -> WeakIV: ...

    def summary(self) -> Summary:
        """R's ``summary(ivreg(...), diagnostics = TRUE)`` under the covariance in use, then
        the weak-instrument report (effective F, Kleibergen–Paap, Stock–Yogo critical values,
        the AR set)."""
        from attnreg.iv.report import iv_summary

        return iv_summary(self)  # type: ignore[arg-type]

    def stock_yogo(self) -> pd.Series:
        """Stock–Yogo (2005) critical values for the estimator in use, the number of
        endogenous regressors and of excluded instruments
        (:func:`attnreg.iv.stock_yogo.stock_yogo`; ivreg2's labels); empty when the tables do
        not cover the model. Compare them with the Cragg–Donald F (classical covariance) or
        the Kleibergen–Paap rk Wald F."""
        f = self.frame
        return stock_yogo(self.method, f.D.shape[1], f.Z.shape[1])

    def first_stage_f(self) -> pd.DataFrame:
        """fixest's ``ivf`` and ``ivwald`` per endogenous regressor, and the effective F:
        ``ivf`` the first-stage F test of the excluded instruments (classical), ``ivwald``
        the same test under the covariance in use (Wald / l, the robust first-stage F; equal
        to ``ivf`` under the classical covariance), ``effective_f`` Montiel Olea–Pflueger's
        (one endogenous regressor, NaN otherwise); shape (k2, 3)."""
        wk = self.weak_instruments()
        ivf = np.asarray(wk.f_classical, dtype=float)
        ivwald = ivf if self.vcov_kind == "classical" else np.asarray(wk.f_robust, dtype=float)
        eff = np.full(ivf.shape, wk.effective_f)
        return pd.DataFrame({"ivf": ivf, "ivwald": ivwald, "effective_f": eff},
                            index=pd.Index(self.frame.endog_names, name="endogenous"))

    def tidy(self, conf_int: bool = False, conf_level: float = 0.95) -> pd.DataFrame:
        """One row per coefficient, as ``broom::tidy``: term, estimate, std.error, statistic,
        p.value (and conf.low, conf.high)."""
        out = pd.DataFrame({"term": self.names, "estimate": self.coef.to_numpy(),
                            "std.error": self.std_err.to_numpy(),
                            "statistic": self.t_value.to_numpy(), "p.value": self.p_value.to_numpy()})
        if conf_int:
            ci = self.conf_int(conf_level).to_numpy()
            out["conf.low"], out["conf.high"] = ci[:, 0], ci[:, 1]
        return out

    def glance(self) -> pd.DataFrame:
        """One row of fit statistics: r.squared, adj.r.squared, sigma, statistic and p.value
        (the Wald test), df, df.residual, nobs; then per endogenous regressor ``d``
        ``ivf.d`` and ``ivwald.d`` and, with one endogenous regressor, ``effective.f``
        (:meth:`first_stage_f`)."""
        wt = self.f_test
        out: dict[str, Any] = {
            "r.squared": [self.r_squared], "adj.r.squared": [self.adj_r_squared],
            "sigma": [self.sigma], "statistic": [wt["statistic"]], "p.value": [wt["p_value"]],
            "df": [int(wt["df1"])], "df.residual": [self.df_resid], "nobs": [self.nobs]}
        fs = self.first_stage_f()
        for name, row in fs.iterrows():
            out[f"ivf.{name}"], out[f"ivwald.{name}"] = [row["ivf"]], [row["ivwald"]]
        if fs.shape[0] == 1:
            out["effective.f"] = [float(fs["effective_f"].iloc[0])]
        return pd.DataFrame(out)
