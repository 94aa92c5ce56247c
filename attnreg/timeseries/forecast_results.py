"""Forecast results: the forecasts table, coefficient and λ/k paths, evaluation, attention, audit.

The plan is run (updating or refits) by :mod:`attnreg.timeseries._running`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.views.attention import AttentionWeights
from attnreg.exceptions import OptionError
from attnreg.report import Summary
from attnreg.report.fcfigures import ForecastSetup, TuningRange
from attnreg.report.sections import Coefficients, Lines
from attnreg.timeseries import evaluation as ev
from attnreg.methods import get_method
from attnreg.timeseries.plan import ForecastPlan, prevailing_means
from attnreg.timeseries.views import attention_shares, forecast_attention


class DensityScoring:
    """What one- and several-horizon forecasts share: their density and interval scores, their
    calibration and, for quantile forecasts, the scores of each quantile."""

    def evaluate(self, scores: Any = ("crps", "log", "interval", "pinball")) -> pd.DataFrame:
        """Mean density and interval scores per horizon (:mod:`attnreg.timeseries.scores`)."""
        from attnreg.timeseries.scores import evaluate_scores

        return evaluate_scores(self, scores)

    def calibration(self) -> Any:
        """PIT values; Kupiec, Christoffersen, Berkowitz tests (:mod:`.calibration`)."""
        from attnreg.timeseries.calibration import calibration

        return calibration(self)

    def quantile_evaluation(self) -> pd.DataFrame:
        """Quantile forecasts: pinball loss, hit rate and Kupiec test per horizon and τ
        (:func:`attnreg.timeseries.quantile_scores.quantile_evaluation`)."""
        from attnreg.timeseries.quantile_scores import quantile_evaluation

        return quantile_evaluation(self)


@dataclass(frozen=True)
class ForecastResults(DensityScoring):
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
        name = _tuning_label(self.plan.method)
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
        oos_r2        -0.036
        dm_p_value     0.905
        cw_p_value     0.101
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

        return forecast_ahead([self], interval, level)

    def summary(self) -> Summary:
        """Report: the setting, the accuracy of the forecasts and the tests against the benchmark.

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
        p, e = self.plan, self.evaluation
        f = self.forecasts
        refits = np.flatnonzero(p.refit)
        setup = ForecastSetup(
            str(p.design.formula), p.method, p.scheme, p.window, int(p.horizon), p.strategy,
            p.interval, None if p.interval is None else float(p.level),
            int(np.diff(refits).min()) if refits.size > 1 else None, len(f), str(f.index[0]),
            str(f.index[-1]), str(f["origin"].iloc[0]), int(f["n_train"].iloc[0]), self.engine)
        tuning: list[TuningRange] = []
        table = pd.DataFrame({"Estimate": [e.msfe, e.rmse, e.mae, e.benchmark_msfe, e.oos_r2,
                                           e.msfe_ratio, e.dm_statistic, e.cw_statistic],
                              "p-value": [np.nan] * 6 + [e.dm_p_value, e.cw_p_value]},
                             index=["MSFE", "RMSE", "MAE", "MSFE (prevailing mean)",
                                    "OOS R-squared", "MSFE ratio",
                                    "Diebold-Mariano (HLN), vs mean", "Clark-West, vs mean"])
        intervals: tuple[Any, ...] = ()
        if p.interval is not None:
            rows = pd.DataFrame({"Nominal": [p.level], "Coverage": [e.coverage],
                                 "Mean width": [e.mean_width], "n": [e.n_intervals]},
                                index=[f"{p.interval} intervals"])
            intervals = (Lines(("", "Forecast intervals:")),
                         Coefficients(rows, stars=False, heading=False))
        footer = ["OOS R-squared = 1 - MSFE / MSFE(prevailing mean) (Campbell-Thompson).",
                  f"DM: two-sided, squared loss, Harvey-Leybourne-Newbold correction, "
                  f"{p.horizon - 1} lags; CW: one-sided (model better), Newey-West "
                  f"{p.horizon - 1} lags.",
                  "Every forecast re-estimates the model from rows observed at its origin "
                  "(centring, scaling, spectrum, lambda/k"
                  + (", heads" if get_method(p.method).warm is not None else "") + ")."]
        if p.strategy == "iterated":
            footer.append(f"Iterated strategy: the one-step model fitted at the origin, iterated "
                          f"{p.horizon} time(s).")
        from attnreg.timeseries.fcsummary import interval_note

        footer += interval_note(self)
        if self.quantile_path is not None:
            from attnreg.timeseries.quantile_scores import crossing_note

            footer += crossing_note(self)
        if self.tuning_path is not None:
            name = _tuning_label(p.method)
            tuning.append(TuningRange(name, "origins", float(np.nanmin(self.tuning_path)),
                                      float(np.nanmedian(self.tuning_path)),
                                      float(np.nanmax(self.tuning_path))))
        return Summary("attnreg forecast evaluation",
                       (setup, Coefficients(table, stars=False, heading=False), *intervals,
                        Lines(tuple(footer), lead_blank=True), *tuning))

    # ------------------------------------------------------------ attention over the past
    def _direct_only(self, what: str) -> None:
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

    def attention(self, target: Any, *, chunk_size: int | None = None) -> AttentionWeights:
        """Weights of the forecast for ``target`` over the rows it was estimated from.

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
        return forecast_attention(self, self._index_of(target), chunk_size)

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
        return attention_shares(self, recent)

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
        return leakage_audit(self)

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
        return _plot(self, kind, kw)

    def __repr__(self) -> str:
        e = self.evaluation
        return (f"<attnreg forecasts: {self.plan.method}, {self.plan.scheme}, h={self.plan.horizon}, "
                f"{int(e.n_forecasts)} forecasts, OOS R²={e.oos_r2:.4f}>")


@dataclass(frozen=True)
class MultiHorizonForecasts(DensityScoring):
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

    def at_horizon(self, h: int) -> ForecastResults:
        """The :class:`ForecastResults` of horizon ``h`` (indexed by target date).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fh = ar.forecast("infl ~ lag(infl, h)", macro, start="2000Q1", horizon=[1, 2])
        >>> fh.at_horizon(2)
        <attnreg forecasts: ols, recursive, h=2, 39 forecasts, OOS R²=-0.2450>
        """
        for part in self.parts:
            if part.plan.horizon == h:
                return part
        raise OptionError(f"horizon={h!r} was not forecast; horizons: {self.horizons}")

    @cached_property
    def forecasts(self) -> pd.DataFrame:
        """Every horizon's :attr:`ForecastResults.forecasts`, indexed by (horizon, target)."""
        return pd.concat([p.forecasts for p in self.parts], keys=self.horizons,
                         names=["horizon", "target"])

    @cached_property
    def evaluation(self) -> pd.DataFrame:
        """:attr:`ForecastResults.evaluation` of every horizon, one row per horizon."""
        return pd.DataFrame([p.evaluation for p in self.parts],
                            index=pd.Index(self.horizons, name="horizon"))

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

    def summary(self) -> Summary:
        """Report: per-horizon accuracy, tests against the benchmark and interval coverage.

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

        return horizons_summary(self)

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
        return _plot(self, kind, kw)

    def __repr__(self) -> str:
        p, e = self.parts[0].plan, self.evaluation
        r2 = ", ".join(f"{h}: {v:.4f}" for h, v in zip(self.horizons, e["oos_r2"], strict=True))
        n = len(self.forecasts.index.get_level_values("target").unique())
        return (f"<attnreg forecasts: {p.method}, {p.scheme}, "
                + ("iterated, " if self.strategy == "iterated" else "")
                + f"horizons {self.horizons}, {n} targets, OOS R² {r2}>")


def _plot(res: Any, kind: str, kw: dict[str, Any]) -> Any:
    """``plot_forecasts(res, kind, **kw)`` from :mod:`attnreg.timeseries.fcplots`."""
    try:
        from attnreg.timeseries.fcplots import plot_forecasts
    except ModuleNotFoundError as err:
        if err.name != "attnreg.timeseries.fcplots":
            raise
        if kind == "forecast" and isinstance(res, ForecastResults):  # the original plot
            from attnreg.plots import plot_forecast

            return plot_forecast(res, **kw)
        raise ImportError(f"plot(kind={kind!r}) needs the module attnreg.timeseries.fcplots, "
                          "which this installation does not have") from None
    return plot_forecasts(res, kind, **kw)


def _tuning_label(method: str) -> str:
    """How the summary names a method's tuning parameter (``lambda`` or ``k``)."""
    return "lambda" if get_method(method).tuning == "lam" else "k"
