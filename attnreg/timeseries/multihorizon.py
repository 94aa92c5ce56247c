"""Forecasts of several horizons from the same origins (``forecast(..., horizon=[1, 4])``).

:class:`MultiHorizonForecasts` holds one :class:`~attnreg.timeseries.forecast_results.
ForecastResults` per horizon and indexes their tables by (horizon, target date).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from attnreg.report import Summary
from attnreg.timeseries.forecast_common import ByHorizon, DensityScoring, plot_results

if TYPE_CHECKING:
    from attnreg.timeseries.forecast_results import ForecastResults

__all__ = ["MultiHorizonForecasts"]


@dataclass(frozen=True)
class MultiHorizonForecasts(ByHorizon, DensityScoring):
    """Forecasts of several horizons from the same origins, indexed by (horizon, target date).

    Attributes
    ----------
    parts : tuple of ForecastResults
        One per horizon, in increasing horizon (``at_horizon(h)`` picks one).
    formula : str
        The formula as given (``h`` stands for the horizon).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> fh = ar.forecast("infl ~ lag(infl, h) + lag(unemp, h)", macro, start="2000Q1",
    ...                  horizon=[1, 4])
    >>> fh
    <attnreg forecasts: ols, recursive, horizons [1, 4], 39 targets, OOS R² 1: -0.0430, 4: -0.2112>
    >>> fh.at_horizon(4).plan.design.formula
    'infl ~ lag(infl, 4) + lag(unemp, 4)'
    >>> fh.forecasts.loc[4, ["origin", "forecast"]].head(2).round(3)  # doctest: +NORMALIZE_WHITESPACE
            origin  forecast
    target
    2000Q1  1999Q1     3.679
    2000Q2  1999Q2     3.054
    """

    parts: tuple[ForecastResults, ...]
    formula: str

    @property
    def horizons(self) -> list[int]:
        """The horizons, increasing."""
        return [p.plan.horizon for p in self.parts]

    @property
    def strategy(self) -> str:
        """``"direct"`` or ``"iterated"``."""
        return self.parts[0].plan.strategy

    @property
    def coef_path_frame(self) -> pd.DataFrame | None:
        """Coefficients (and λ or k) of every horizon, indexed by (horizon, origin)."""
        frames = [p.coef_path_frame for p in self.parts]
        if any(f is None for f in frames):
            return None
        return pd.concat(frames, keys=self.horizons, names=["horizon", "origin"])

    def ahead(self, interval: str | None = None, level: float | None = None) -> pd.DataFrame:
        """Forecasts past the end of the data at every horizon, with intervals.

        :meth:`ForecastResults.ahead` of every horizon, one row each, indexed by (horizon,
        target date).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fh = ar.forecast("infl ~ lag(infl, h)", macro, start="2000Q1", horizon=[1, 4])
        >>> fh.ahead(level=0.8)[["forecast", "lower", "upper"]].round(3)  # doctest: +NORMALIZE_WHITESPACE
                        forecast  lower  upper
        horizon target
        1       2009Q4     3.722  0.513  6.931
        4       2010Q3     3.754  0.149  7.358
        """
        from attnreg.timeseries.ahead import forecast_ahead

        return forecast_ahead(list(self.parts), interval, level)

    def summary(self, benchmark: Any = None) -> Summary:
        """Report: per-horizon accuracy, tests against the benchmark and interval coverage.

        With intervals or quantile forecasts, also the density scores (CRPS, log, interval,
        pinball) and the calibration tests (Kupiec, Christoffersen, Berkowitz).

        Parameters
        ----------
        benchmark : forecasts of the same target, optional
            Forecasts with intervals (or quantile forecasts) to test the CRPS against
            (Diebold-Mariano, :func:`~attnreg.timeseries.scores.diebold_mariano_scores`).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fh = ar.forecast("infl ~ lag(infl, h)", macro, start="2000Q1", horizon=[1, 2])
        >>> print(fh.summary())  # doctest: +ELLIPSIS
        <BLANKLINE>
        Out-of-sample forecasts at horizons 1, 2: infl ~ lag(infl, h)
        ...
        """
        from attnreg.timeseries.fcsummary import horizons_summary

        return horizons_summary(self, benchmark)

    def plot(self, kind: str = "forecast", **kw: Any) -> Any:
        """The forecasters' plots: ``kind`` as in :func:`attnreg.timeseries.fcplots.plot_forecasts`.

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import pandas as pd
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fh = ar.forecast("infl ~ lag(infl, h) + lag(unemp, h)", macro, start="1990Q1",
        ...                  horizon=[1, 4])
        >>> len(fh.plot("cumulative").lines) >= 2  # a line per horizon
        True
        """
        return plot_results(self, kind, kw)

    def __repr__(self) -> str:
        p, e = self.parts[0].plan, self.evaluation
        r2 = ", ".join(f"{h}: {v:.4f}" for h, v in zip(self.horizons, e["oos_r2"], strict=True))
        n = len(self.forecasts.index.get_level_values("target").unique())
        return (f"<attnreg forecasts: {p.method}, {p.scheme}, "
                + ("iterated, " if self.strategy == "iterated" else "")
                + f"horizons {self.horizons}, {n} targets, OOS R² {r2}>")
