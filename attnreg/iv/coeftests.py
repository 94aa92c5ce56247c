"""The coefficient tests of an IV fit, in memory or chunked, as AER's ``summary.ivreg``:
standard errors, t tests and intervals on ``df_resid`` df, the overall Wald test and
``car::linearHypothesis`` (a mixin of :class:`attnreg.iv.results.IVResults` and
:class:`attnreg.iv.chunked_results.ChunkedIVResults`: each gives ``vcov``)."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from attnreg.exceptions import OptionError

__all__ = ["IVCoefTests"]


class IVCoefTests:
    """Mixin: ``std_err``, ``t_value``, ``p_value``, ``conf_int``, ``f_test``, ``wald_test``
    from the fit's ``coef``, ``vcov`` and ``df_resid``."""

    if TYPE_CHECKING:
        from attnreg.iv.estimators import IVFit

        coef: pd.Series
        vcov: pd.DataFrame

        @property
        def fit(self) -> IVFit: ...

        @property
        def names(self) -> list[str]: ...

        @property
        def df_resid(self) -> int: ...

    @cached_property
    def std_err(self) -> pd.Series:
        """Standard errors, shape (k,)."""
        return pd.Series(np.sqrt(np.diag(self.vcov.to_numpy())), index=self.names, name="std_err")

    @cached_property
    def t_value(self) -> pd.Series:
        """coef / std_err."""
        return (self.coef / self.std_err).rename("t_value")

    @cached_property
    def p_value(self) -> pd.Series:
        """Two-sided p-values from Student's t on :attr:`df_resid` df (as AER)."""
        p = 2 * stats.t.sf(np.abs(self.t_value.to_numpy()), self.df_resid)
        return pd.Series(p, index=self.names, name="p_value")

    def conf_int(self, level: float = 0.95) -> pd.DataFrame:
        """Confidence intervals ``coef ± t_{(1+level)/2} std_err``, shape (k, 2) (R's ``confint``)."""
        if not 0 < level < 1:
            raise OptionError(f"level must be strictly between 0 and 1, however: {level=}")
        q = stats.t.ppf((1 + level) / 2, self.df_resid)
        lo, hi = self.coef - q * self.std_err, self.coef + q * self.std_err
        pct = [f"{100 * (1 - level) / 2:.3g} %", f"{100 * (1 + level) / 2:.3g} %"]
        return pd.DataFrame({pct[0]: lo, pct[1]: hi})

    @cached_property
    def f_test(self) -> pd.Series:
        """The overall test (AER's "Wald test"): every coefficient but the intercept is zero
        (the fixed effects are not tested); ``statistic`` (F), ``p_value``, ``df1``, ``df2``."""
        keep = [j for j, n in enumerate(self.names) if n != "(Intercept)"]
        b = self.fit.coef[keep]
        V = self.vcov.to_numpy()[np.ix_(keep, keep)]
        f = float(b @ np.linalg.solve(V, b)) / len(keep)
        p = float(stats.f.sf(f, len(keep), self.df_resid))
        return pd.Series({"statistic": f, "p_value": p, "df1": float(len(keep)),
                          "df2": float(self.df_resid)}, name="f_test")

    def wald_test(self, hypothesis: str | list[str]) -> Any:
        """Joint Wald F test of linear restrictions under the covariance in use, on
        (q, :attr:`df_resid`) df (``car::linearHypothesis(ivreg_fit, ..., test = "F")``);
        see :func:`attnreg.iv.hypotheses.iv_wald_test`. Returns a ``WaldTest``."""
        from attnreg.iv.hypotheses import iv_wald_test

        return iv_wald_test(self, hypothesis)  # type: ignore[arg-type]
