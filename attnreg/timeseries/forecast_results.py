"""Forecast results of one horizon: the forecasts table, coefficient and λ/k paths, evaluation.

The plan is run (updating or refits) by :mod:`attnreg.timeseries._running`; the attention
views and the leakage audit come from :mod:`attnreg.timeseries.forecast_attention`, the
scores and plots from :mod:`attnreg.timeseries.forecast_common`, the report from
:mod:`attnreg.timeseries.fcsummary`; several horizons:
:mod:`attnreg.timeseries.multihorizon`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.report import Summary
from attnreg.timeseries import evaluation as ev
from attnreg.timeseries.forecast_attention import ForecastAttention
from attnreg.timeseries.forecast_common import DensityScoring, plot_results, tuning_label
from attnreg.timeseries.plan import ForecastPlan, prevailing_means


@dataclass(frozen=True)
class ForecastResults(DensityScoring, ForecastAttention):
    """Out-of-sample forecasts, their evaluation, and the audit of look-ahead.

    Attributes
    ----------
    plan : ForecastPlan
        Design, training rows of every forecast, method and scheme.
    predictions : ndarray, shape (n_forecasts,)
    coef_path : ndarray, shape (n_forecasts, n_coef) or None
        Coefficients used for each forecast (spectral methods).
    tuning_path : ndarray or None
        λ (ridge) or k (PCR) used for each forecast.
    engine : str
        ``"updating"`` (rank-one Gram updates) or ``"refit"`` (a full fit per origin).
    models : dict of int to results, or None
        For methods whose fit starts from the previous origin's (softmax), the model fitted
        at each refit, by forecast position: the attention views use the very models that
        made the forecasts. Other methods are refitted exactly from the plan when needed.
    lower, upper : ndarray, shape (n_forecasts,), or None
        Forecast interval bounds (``interval=``), NaN where none is available yet.
    sigma_path : ndarray, shape (n_forecasts,), or None
        ``interval="gaussian"``: the residual standard error of the fit used by each forecast.
    df_path : ndarray, shape (n_forecasts,), or None
        ``interval="gaussian"`` at h = 1: the residual degrees of freedom of each forecast's
        fit, those of its t prediction interval; the forecast's predictive distribution is
        then the Student t with these df whose central ``level`` interval is
        ``[lower, upper]`` (:mod:`attnreg.timeseries.scores`). None at h > 1 (normal).
    quantile_path : ndarray, shape (n_forecasts, n_tau), or None
        Quantile methods (``method="quantreg"``): the forecast of every τ, as fitted at each
        origin (:mod:`attnreg.timeseries.quantile_forecasts`); ``predictions`` is the median.
    taus : tuple of float, or None
        The τ of ``quantile_path``, increasing.

    One horizon's results; :class:`MultiHorizonForecasts` holds several. Both answer
    :attr:`horizons` and :meth:`at_horizon`, so code can treat them alike.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="2000Q1")
    >>> fc
    <attnreg forecasts: ols, recursive, h=1, 39 forecasts, OOS R²=-0.0430>
    >>> fc.engine, fc.plan.n_forecasts
    ('updating', 39)
    """

    plan: ForecastPlan
    predictions: FloatArray = field(repr=False)
    coef_path: FloatArray | None = field(repr=False)
    tuning_path: FloatArray | None = field(repr=False)
    engine: str
    models: dict[int, Any] | None = field(default=None, repr=False)
    lower: FloatArray | None = field(default=None, repr=False)
    upper: FloatArray | None = field(default=None, repr=False)
    sigma_path: FloatArray | None = field(default=None, repr=False)
    df_path: FloatArray | None = field(default=None, repr=False)
    quantile_path: FloatArray | None = field(default=None, repr=False)
    taus: tuple[float, ...] | None = None

    @property
    def horizons(self) -> list[int]:
        """The horizons of these results: ``[h]``.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> ar.forecast("infl ~ lag(infl, 2)", macro, start="2000Q1", horizon=2).horizons
        [2]
        """
        return [self.plan.horizon]

    def at_horizon(self, h: int) -> ForecastResults:
        """The results of horizon ``h``: these results themselves (OptionError otherwise).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fc = ar.forecast("infl ~ lag(infl, 1)", macro, start="2000Q1")
        >>> fc.at_horizon(1) is fc
        True
        """
        if h != self.plan.horizon:
            raise OptionError(f"horizon={h!r} was not forecast; horizons: {self.horizons}")
        return self

    @property
    def method(self) -> str:
        """The method's name (``plan.method``)."""
        return self.plan.method

    @property
    def strategy(self) -> str:
        """``"direct"`` or ``"iterated"``."""
        return self.plan.strategy

    @cached_property
    def forecasts(self) -> pd.DataFrame:
        """One row per target date: origin, forecast, actual, error, benchmark, n_train.

        With ``interval=``, two more columns: ``lower`` and ``upper``; quantile forecasts
        add one column per τ, ``q0.05``, ``q0.5``, ... (as fitted).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="2000Q1")
        >>> table = fc.forecasts[["forecast", "actual", "benchmark"]]
        >>> table.head(2).round(3)  # doctest: +NORMALIZE_WHITESPACE
                forecast  actual  benchmark
        target
        2000Q1     3.311    3.76      4.305
        2000Q2     3.976    4.19      4.301
        """
        p, d = self.plan, self.plan.design
        actual = d.y[p.targets]
        bench = prevailing_means(p)
        return pd.DataFrame({
            "origin": p.origin_labels, "forecast": self.predictions, "actual": actual,
            "error": actual - self.predictions, "benchmark": bench,
            "benchmark_error": actual - bench, "n_train": p.train_stop - p.train_start,
            **({} if self.lower is None or self.upper is None else
               {"lower": self.lower, "upper": self.upper}),
            **({} if self.quantile_path is None or self.taus is None else
               {f"q{t:g}": self.quantile_path[:, k] for k, t in enumerate(self.taus)}),
        }, index=pd.Index(d.row_labels[p.targets], name="target"))

    @cached_property
    def coef(self) -> pd.DataFrame | None:
        """Coefficient path: the coefficients used at every origin (index: origin label).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="2000Q1")
        >>> fc.coef.iloc[0].round(3)
        (Intercept)      1.332
        lag(infl, 1)     0.721
        lag(unemp, 1)   -0.018
        Name: 1999Q4, dtype: float64
        """
        if self.coef_path is None:
            return None
        return pd.DataFrame(self.coef_path, columns=self.plan.design.column_names,
                            index=pd.Index(self.plan.origin_labels, name="origin"))

    @property
    def coef_path_frame(self) -> pd.DataFrame | None:
        """Alias of :attr:`coef` with λ or k appended as a column.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fr = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, method="ridge",
        ...                  scheme="rolling", window=40, start="2000Q1")
        >>> fr.coef_path_frame.iloc[:2].round(3)  # doctest: +NORMALIZE_WHITESPACE
                (Intercept)  lag(infl, 1)  lag(unemp, 1)  lambda
        origin
        1999Q4        1.546         0.315          0.063  11.191
        2000Q1        1.788         0.295          0.034  14.766
        """
        frame = self.coef
        if frame is None or self.tuning_path is None:
            return frame
        name = tuning_label(self.plan.method)
        return frame.assign(**{name: self.tuning_path})

    @cached_property
    def evaluation(self) -> pd.Series:
        """MSFE, RMSE, MAE, OOS R² and MSFE ratio against the benchmark, DM and Clark–West.

        With intervals, also ``n_intervals`` (forecasts that have one), ``coverage`` (share of
        those whose actual lies inside, bounds included), ``mean_width`` and ``level``.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="2000Q1")
        >>> fc.evaluation[["msfe", "oos_r2", "dm_p_value", "cw_p_value"]].round(3)
        msfe          11.222
        oos_r2        -0.043
        dm_p_value     0.887
        cw_p_value     0.106
        dtype: float64
        """
        f = self.forecasts
        y, m, b = f["actual"].to_numpy(), f["forecast"].to_numpy(), f["benchmark"].to_numpy()
        h = self.plan.horizon
        dm = ev.diebold_mariano(y - m, y - b, h=h)
        cw = ev.clark_west(y, m, b, h=h)
        return pd.Series({
            "n_forecasts": float(y.size), "msfe": ev.msfe(y, m), "rmse": ev.rmse(y, m),
            "mae": ev.mae(y, m), "benchmark_msfe": ev.msfe(y, b),
            "oos_r2": ev.oos_r2(y, m, b), "msfe_ratio": ev.msfe_ratio(y, m, b),
            "dm_statistic": dm.statistic, "dm_p_value": dm.p_value,
            "cw_statistic": cw.statistic, "cw_p_value": cw.p_value,
            **self._interval_evaluation()})

    def _interval_evaluation(self) -> dict[str, float]:
        if self.lower is None or self.upper is None:
            return {}
        cov = ev.interval_coverage(self.plan.design.y[self.plan.targets], self.lower, self.upper)
        return {"n_intervals": float(cov.n_intervals), "coverage": cov.coverage,
                "mean_width": cov.mean_width, "level": self.plan.level}

    def ahead(self, interval: str | None = None, level: float | None = None) -> pd.DataFrame:
        """Forecasts past the end of the data (ex ante), with intervals.

        The model re-estimated at the last row of the data by the run's own rules (method,
        options, rolling window; direct: the h-step regression on every row whose target is
        observed, at the regressors of the target built from data up to the last row;
        iterated: the one-step model iterated h times). See :mod:`attnreg.timeseries.ahead`.

        Parameters
        ----------
        interval : {None, "gaussian", "empirical"}
            None: the run's own ``interval``, else "gaussian" for ols/ridge/pcr (the fit's
            prediction interval) and "empirical" (quantiles of the run's own out-of-sample
            errors) for the other methods.
        level : float, optional
            Nominal coverage (default: the run's ``level``, 0.9).

        Returns
        -------
        DataFrame, shape (1, 5)
            Indexed by (horizon, target date, continuing the data's frequency); columns
            origin, forecast, lower, upper, n_train.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="2000Q1")
        >>> fc.ahead()[["forecast", "lower", "upper", "n_train"]].round(3)  # doctest: +NORMALIZE_WHITESPACE
                        forecast  lower  upper  n_train
        horizon target
        1       2009Q4      3.91 -0.292  8.112      202
        """
        from attnreg.timeseries.ahead import forecast_ahead
        from attnreg.timeseries.fcargs import refuse_for_iv

        refuse_for_iv(self.plan.design.formula, "ahead()")
        return forecast_ahead([self], interval, level)

    def score_inputs(self) -> Any:
        """The predictive distributions and intervals the scores start from
        (:func:`attnreg.timeseries.score_inputs.forecast_inputs`)."""
        from attnreg.timeseries.score_inputs import forecast_inputs

        return forecast_inputs(self)

    def summary(self, benchmark: Any = None) -> Summary:
        """Report: the setting, the accuracy of the forecasts and the tests against the benchmark.

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
        >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="2000Q1")
        >>> print(fc.summary())  # doctest: +ELLIPSIS
        <BLANKLINE>
        Out-of-sample forecasts: infl ~ lag(infl, 1) + lag(unemp, 1)
        method = 'ols', scheme = 'recursive', horizon = 1, estimated every 1 origin(s)
        ...
        OOS R-squared                   -0.0430      NA
        ...
        """
        from attnreg.timeseries.fcsummary import forecast_summary

        return forecast_summary(self, benchmark)

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
        >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="1990Q1")
        >>> len(fc.plot().lines), len(fc.plot("cumulative").lines)  # forecast, actual, mean
        (3, 2)
        """
        return plot_results(self, kind, kw)

    def __repr__(self) -> str:
        e = self.evaluation
        return (f"<attnreg forecasts: {self.plan.method}, {self.plan.scheme}, h={self.plan.horizon}, "
                f"{int(e.n_forecasts)} forecasts, OOS R²={e.oos_r2:.4f}>")
