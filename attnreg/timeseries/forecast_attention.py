"""The attention views and the leakage audit of one horizon's forecasts (a mixin).

:class:`ForecastAttention` gives :class:`~attnreg.timeseries.forecast_results.ForecastResults`
the weights of each forecast over the rows it was estimated from
(:mod:`attnreg.timeseries.views`) and the audit of look-ahead
(:mod:`attnreg.timeseries.leakage`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd

from attnreg.views.attention import AttentionWeights
from attnreg.exceptions import OptionError
from attnreg.timeseries.fcargs import refuse_for_iv
from attnreg.timeseries.quantile_votes import quantile_vote
from attnreg.timeseries.views import attention_shares, forecast_attention

if TYPE_CHECKING:
    from attnreg.timeseries.forecast_results import ForecastResults

__all__ = ["ForecastAttention"]


class ForecastAttention:
    """Attention over the past and the leakage audit of direct forecasts."""

    plan: Any
    forecasts: pd.DataFrame

    def _direct_only(self, what: str) -> None:
        refuse_for_iv(self.plan.design.formula, what)
        if self.plan.strategy == "iterated":
            raise OptionError(f"{what} describes the fit that made a forecast; an iterated "
                              "forecast chains several one-step predictions: use "
                              "strategy='direct'")

    def _index_of(self, target: Any) -> int:
        labels = self.forecasts.index
        try:
            position = labels.get_loc(target)
        except KeyError:
            raise OptionError(f"{target!r} is not a forecast target date (from {labels[0]!r} "
                              f"to {labels[-1]!r})") from None
        if not isinstance(position, (int, np.integer)):  # target dates are unique
            raise OptionError(f"{target!r} matches more than one forecast target date")
        return int(position)

    def attention(self, target: Any, *, chunk_size: int | None = None,
                  tau: float | None = None) -> AttentionWeights:
        """Weights of the forecast for ``target`` over the rows it was estimated from.

        Quantile forecasts (``method="quantreg"``): the exact vote of the τ forecast (``tau=``,
        default 0.5 when fitted) over the p rows its fit interpolates
        (:mod:`attnreg.timeseries.quantile_votes`); ``weights @ y_train`` is that forecast.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="2000Q1")
        >>> w = fc.attention("2008Q4")
        >>> w.weights.shape, round(float(w.weights.to_numpy().sum()), 6)
        ((1, 198), 1.0)
        """
        self._direct_only("attention()")
        res = cast("ForecastResults", self)
        if res.quantile_path is not None:
            return quantile_vote(res, self._index_of(target), tau, chunk_size)
        if tau is not None:
            raise OptionError(f"tau applies to quantile forecasts (method='quantreg'), however: "
                              f"{tau=} with method {res.plan.method!r}")
        return forecast_attention(res, self._index_of(target), chunk_size)

    def attention_shares(self, recent: tuple[int, ...] = (4, 20)) -> pd.DataFrame:
        """Share of absolute attention on the most recent rows, for every forecast.

        Column ``last_k`` is Σ|ω| over the k most recent training rows divided by Σ|ω|.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="2000Q1")
        >>> fc.attention_shares().head(2).round(3)  # doctest: +NORMALIZE_WHITESPACE
                last_4  last_20
        target
        2000Q1   0.046    0.181
        2000Q2   0.046    0.174
        """
        self._direct_only("attention_shares()")
        return attention_shares(cast("ForecastResults", self), recent)

    def attention_over_time(self, origins: Any = None, buckets: Any = (4, 20, 40)) -> Any:
        """Attention weights by age of the past period, for every (or the chosen) origin.

        :func:`attnreg.timeseries.views.attention_over_time` of these forecasts: signed sums
        (``.weight``) and absolute shares (``.share``) over the last 4, 5–20, 21–40 and older
        periods, or by calendar decade with ``buckets="decade"``.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="2000Q1")
        >>> att = fc.attention_over_time(origins=slice("1999Q4", "2000Q2"))
        >>> att.weight.shape[0], bool(np.allclose(att.weight.sum(axis=1), 1.0))
        (3, True)
        """
        from attnreg.timeseries.views import attention_over_time

        refuse_for_iv(self.plan.design.formula, "attention_over_time()")
        return attention_over_time(self, origins, buckets)

    def leakage_audit(self) -> Any:
        """The same forecasts with the full-sample metric: how much better they look.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="2000Q1")
        >>> audit = fc.leakage_audit()
        >>> round(audit.oos_r2_honest, 4), round(audit.oos_r2_leaky, 4)
        (-0.043, -0.018)
        """
        from attnreg.timeseries.leakage import leakage_audit

        self._direct_only("leakage_audit()")
        return leakage_audit(cast("ForecastResults", self))
