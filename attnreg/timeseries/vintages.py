"""Real-time forecasts: at each origin, the data as they were published by then.

Macro data are revised. A real-time pseudo-out-of-sample exercise estimates the model of the
origin t on the latest vintage published at or before t (a vintage is the whole data set as
released on one date) and builds the forecast's regressors (lags included) from that vintage
too; nothing revised or published later enters. ``forecast(formula, vintages, vintage="vintage")``:

- ``data``: the vintages in long form, a DataFrame indexed by observation date with a column
  naming the vintage (its release date, comparable with the dates: the same Period frequency,
  Timestamps, or numbers), or a dict ``{vintage: DataFrame indexed by date}``;
- origin t of the target s = t + h (positions in the latest vintage's dates): the vintage
  ``v = max{v ≤ t}``, its rows dated ≤ t, the direct h-step regression on every row of that
  frame (``scheme="rolling"``: the last ``window``), its forecast at the regressors of s built
  from the same frame (so every regressor must be lagged at least h periods, as in
  :func:`attnreg.forecast`; the formula is checked on the latest vintage first);
- benchmark: the prevailing mean of the response in vintage v up to t;
- evaluation (``evaluate_on=``): against the first release of the target (``"first"``, the
  default), its k-th release (an integer k ≥ 1; NaN until released k times), or the
  latest vintage (``"latest"``);
- intervals (``interval=``): ``"gaussian"`` and ``"quantile"`` from the fit at the origin on
  its vintage, as in :func:`attnreg.forecast`; ``"empirical"`` and ``"aci"`` from the errors
  known in real time: an earlier forecast's error against its target's FIRST release, known
  from the vintage that published it (:func:`real_time_bounds`); coverage is reported
  against ``evaluate_on``;
- several horizons (``horizon=[1, 4]``): :mod:`attnreg.timeseries.realtime`; many series
  (``by=``): each series' vintages as above (:mod:`attnreg.timeseries.panel`);
- the leakage audit (:meth:`RealTimeForecasts.leakage_audit`): the same forecasts made from
  the latest vintage cut at each origin (the usual pseudo-out-of-sample exercise on revised
  data, which looks ahead through the revisions), column ``revised_forecast``, against the
  same actuals.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, OptionError
from attnreg.formula.design import build_design
from attnreg.timeseries import evaluation as ev
from attnreg.timeseries import intervals as iv
from attnreg.timeseries.forecast_common import DensityScoring
from attnreg.timeseries.vintage_origin import forecast_at_origin

__all__ = ["RealTimeForecasts", "as_vintages", "forecast_vintages", "real_time_bounds",
           "releases"]


def as_vintages(data: Any, vintage: str | None) -> dict[Any, pd.DataFrame]:
    """Each vintage's data, indexed by date, in increasing vintage order (the input is kept).

    Examples
    --------
    >>> long = pd.DataFrame({"v": [1, 1, 2, 2, 2], "y": [1.0, 2.0, 1.1, 2.1, 3.0]},
    ...                     index=[0, 1, 0, 1, 2])
    >>> {k: f.y.tolist() for k, f in as_vintages(long, "v").items()}
    {1: [1.0, 2.0], 2: [1.1, 2.1, 3.0]}
    """
    if isinstance(data, Mapping):
        if vintage is not None:
            raise OptionError("data is a dict of vintages already: leave vintage=None (it names "
                              "the vintage column of data in long form)")
        frames = dict(data)
    elif isinstance(data, pd.DataFrame):
        if not isinstance(vintage, str) or vintage not in data.columns:
            raise DataError(f"vintage={vintage!r} is not a column of the data: name the column "
                            "holding each row's release date")
        frames = {k: g.drop(columns=vintage) for k, g in data.groupby(vintage, sort=False)}
    else:
        raise DataError("real-time forecasts need the vintages as a DataFrame in long form "
                        "(with vintage=) or a dict of DataFrames by vintage")
    if not frames:
        raise DataError("the data hold no vintage")
    try:
        keys = sorted(frames)
    except TypeError:
        raise DataError("the vintages cannot be ordered: give them release dates of one "
                        "type (periods, timestamps or numbers)") from None
    out = {}
    for k in keys:
        frame = frames[k]
        if not isinstance(frame, pd.DataFrame):
            raise DataError(f"data is a dict, read as vintages {{release date: DataFrame}}, but "
                            f"its entry {k!r} is not a DataFrame: pass ordinary data as a "
                            "DataFrame")
        if not frame.index.is_unique:
            raise DataError(f"vintage {k!r} has a date twice: each vintage holds one row per date")
        out[k] = frame if frame.index.is_monotonic_increasing else frame.sort_index()
    return out


def releases(formula: str, vintages: dict[Any, pd.DataFrame], env: Any,
             namespace: dict[str, Any]) -> pd.DataFrame:
    """The response of every vintage, shape (n_dates, n_vintages): dates × vintages, NaN
    where a vintage does not have the date."""
    from attnreg.timeseries.lookahead import observed_response

    cols = {}
    for k, frame in vintages.items():  # the response's code on every row of the vintage
        design = build_design(formula, frame, eval_env=env, extra_names=namespace)
        cols[k] = pd.Series(observed_response(design, frame), index=frame.index)
    return pd.concat(cols, axis=1).sort_index()


def _actuals(table: pd.DataFrame, evaluate_on: Any) -> pd.Series:
    """The release each forecast is evaluated against, by date."""
    if evaluate_on == "latest":
        return table.ffill(axis=1).iloc[:, -1]
    k = 1 if evaluate_on == "first" else evaluate_on
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise OptionError(f"evaluate_on must be 'first', 'latest' or a release number k >= 1, "
                          f"however: {evaluate_on=!r}")
    seen = table.notna().cumsum(axis=1)
    return table.where(table.notna() & (seen == k)).bfill(axis=1).iloc[:, 0]


@dataclass(frozen=True)
class RealTimeForecasts(DensityScoring):
    """Forecasts made from the data vintage published by each origin.

    Scores, calibration and plots are those of :class:`~attnreg.timeseries.forecast_results.
    ForecastResults`, against the release each forecast is evaluated on (``evaluate_on``),
    over the forecasts whose release is out: :meth:`evaluate`, :meth:`calibration`,
    :meth:`quantile_evaluation` (quantile forecasts), :meth:`plot` and :meth:`summary`.

    Attributes
    ----------
    forecasts : DataFrame, shape (n_forecasts, 10) or (n_forecasts, 12)
        Indexed by target date: ``origin``, ``vintage`` (the one used), ``forecast``,
        ``actual`` (the release of ``evaluate_on``; NaN when not yet released), ``error``,
        ``benchmark`` (prevailing mean in that vintage), ``benchmark_error``,
        ``first_release``, ``n_train`` and ``revised_forecast`` (the same model at the same
        origin from the latest vintage: revised data, for the leakage audit); with
        ``interval=``, ``lower`` and ``upper``; quantile methods add one column per τ,
        ``q0.05``, ``q0.5``, ... (as fitted).
    formula, method, scheme : str
    horizon : int
    evaluate_on : str or int
    interval : str or None
        ``"gaussian"``, ``"empirical"``, ``"aci"``, ``"quantile"`` or None.
    level : float
        Nominal coverage of the intervals.
    df_path : ndarray, shape (n_forecasts,), or None
        ``interval="gaussian"`` at h = 1: the residual df of each origin's fit, those of its
        t prediction interval (the predictive distribution of the scores).
    quantile_path : ndarray, shape (n_forecasts, n_tau), or None
        Quantile methods: the forecast of every τ at each origin, as fitted.
    taus : tuple of float, or None
        The τ of ``quantile_path``, increasing.
    n_errors : ndarray of int, shape (n_forecasts,), or None
        ``interval="empirical"`` or ``"aci"``: the first-release errors known at each origin
        (the interval's pool, the predictive ensemble of the scores).
    min_errors : int, or None
        ``interval="empirical"`` or ``"aci"``: the errors an interval needs.
    aci_gamma : float, or None
        ``interval="aci"``: the step size of the adaptive miss rate (fan charts redo the
        intervals at other levels with it).
    """

    forecasts: pd.DataFrame
    formula: str
    method: str
    scheme: str
    horizon: int
    evaluate_on: Any
    interval: str | None = None
    level: float = 0.9
    df_path: FloatArray | None = field(default=None, repr=False)
    quantile_path: FloatArray | None = field(default=None, repr=False)
    taus: tuple[float, ...] | None = None
    n_errors: np.ndarray | None = field(default=None, repr=False)
    min_errors: int | None = None
    aci_gamma: float | None = None

    @property
    def horizons(self) -> list[int]:
        """``[horizon]`` (as :class:`~attnreg.timeseries.realtime.RealTimeHorizons`)."""
        return [self.horizon]

    def at_horizon(self, h: int) -> RealTimeForecasts:
        """These forecasts when ``h`` is their horizon (OptionError otherwise)."""
        if h != self.horizon:
            raise OptionError(f"horizon={h!r} was not forecast; horizons: {self.horizons}")
        return self

    @cached_property
    def evaluation(self) -> pd.Series:
        """MSFE, RMSE, MAE, prevailing-mean MSFE, OOS R² and the DM test against it, over
        the forecasts whose actual is released; with ``interval=``, ``n_intervals``,
        ``coverage`` (against the same actuals), ``mean_width`` and ``level``."""
        f = self.forecasts.dropna(subset=["actual"])
        y, m, b = (f[c].to_numpy() for c in ("actual", "forecast", "benchmark"))
        dm = ev.diebold_mariano(y - m, y - b, h=self.horizon)
        out = {"n_forecasts": float(y.size), "msfe": ev.msfe(y, m), "rmse": ev.rmse(y, m),
               "mae": ev.mae(y, m), "benchmark_msfe": ev.msfe(y, b),
               "oos_r2": ev.oos_r2(y, m, b), "dm_statistic": dm.statistic,
               "dm_p_value": dm.p_value}
        if self.interval is not None:
            cov = ev.interval_coverage(y, f["lower"].to_numpy(), f["upper"].to_numpy())
            out.update(n_intervals=float(cov.n_intervals), coverage=cov.coverage,
                       mean_width=cov.mean_width, level=self.level)
        return pd.Series(out)

    def score_inputs(self) -> Any:
        """The predictive distributions and intervals the scores start from, against the
        ``evaluate_on`` release (:func:`attnreg.timeseries.score_inputs.real_time_inputs`)."""
        from attnreg.timeseries.score_inputs import real_time_inputs

        return real_time_inputs(self)

    def summary(self, benchmark: Any = None) -> Any:
        """Report: accuracy against the ``evaluate_on`` release, intervals, density scores and
        calibration tests (:func:`attnreg.timeseries.rtreport.real_time_summary`).

        Parameters
        ----------
        benchmark : forecasts of the same target, optional
            With intervals: the Diebold-Mariano test of the CRPS against them.
        """
        from attnreg.timeseries.rtreport import real_time_summary

        return real_time_summary(self, benchmark)

    def plot(self, kind: str = "forecast", **kw: Any) -> Any:
        """Plots of :func:`attnreg.timeseries.rtreport.plot_real_time` (``"forecast"``,
        ``"cumulative"``, ``"oos_r2"``, ``"pit"``, ``"coverage"``, ``"fan"``)."""
        from attnreg.timeseries.rtreport import plot_real_time

        return plot_real_time(self, kind, **kw)

    def leakage_audit(self) -> pd.Series:
        """Real-time against revised-data forecasts, evaluated on the same actuals.

        Returns
        -------
        Series
            ``oos_r2_real_time``, ``oos_r2_revised`` (forecasts from the latest vintage cut
            at each origin, against the real-time prevailing mean) and ``oos_r2_gain``
            (revised − real time: how much better the exercise on revised data looks).
        """
        f = self.forecasts.dropna(subset=["actual"])
        y, b = f["actual"].to_numpy(), f["benchmark"].to_numpy()
        honest = ev.oos_r2(y, f["forecast"].to_numpy(), b)
        revised = ev.oos_r2(y, f["revised_forecast"].to_numpy(), b)
        return pd.Series({"oos_r2_real_time": honest, "oos_r2_revised": revised,
                          "oos_r2_gain": revised - honest})

    def __repr__(self) -> str:
        e = self.evaluation
        return (f"<attnreg real-time forecasts: {self.method}, {self.scheme}, h={self.horizon}, "
                f"{int(e.n_forecasts)} forecasts vs {self.evaluate_on!r} release, "
                f"OOS R²={e.oos_r2:.4f}>")


def forecast_vintages(formula: str, data: Any, method: str, *, vintage: str | None,
                      evaluate_on: Any, horizon: int, scheme: str, start: Any,
                      window: int | None, known: Any, env: Any, namespace: dict[str, Any],
                      options: dict[str, Any], plan_forecasts: Any, interval: str | None = None,
                      level: float = 0.9, min_errors: int = 20,
                      aci_gamma: float = 0.005) -> RealTimeForecasts:
    """Real-time forecasts (see the module's notes); ``plan_forecasts`` checks the formula,
    ``start``, the window and the interval on the latest vintage, as :func:`attnreg.forecast`
    would."""
    if scheme == "fixed":
        raise OptionError("real-time forecasts re-estimate at every origin on its vintage: "
                          "use scheme='recursive' or 'rolling'")
    vintages = as_vintages(data, vintage)
    table = releases(formula, vintages, env, namespace)
    actual = _actuals(table, evaluate_on)
    latest = vintages[list(vintages)[-1]]
    plan = plan_forecasts(formula, latest, method, scheme=scheme, start=start, window=window,
                          horizon=horizon, refit_every=1, benchmark="mean", known=known,
                          env=env, namespace=namespace, options=options, interval=interval,
                          level=level)
    keys = pd.Index(list(vintages))
    names = keys.tolist()  # the vintages as Python objects (for messages and the table)
    targets = plan.design.row_labels[plan.targets]
    rows, used, points = [], [], []
    for origin, target in zip(plan.origin_labels, targets, strict=True):  # one fit per origin
        at = int(keys.searchsorted(origin, side="right")) - 1
        if at < 0:
            raise DataError(f"no vintage is published by origin {origin!r} (the first is "
                            f"{names[0]!r}): start later")
        point = forecast_at_origin(formula, vintages[names[at]], latest.index, origin, target, method,
                     options, window, env, namespace, interval, level, horizon)
        bench = float(table[names[at]].loc[:origin].mean())  # prevailing mean in the vintage
        revised = forecast_at_origin(formula, latest, latest.index, origin, target, method, options,
                       window, env, namespace).forecast
        rows.append((origin, names[at], point.forecast, bench, point.n_train, revised,
                     point.lower, point.upper))
        used.append(at)
        points.append(point)
    f = pd.DataFrame(rows, columns=["origin", "vintage", "forecast", "benchmark", "n_train",
                                    "revised_forecast", "lower", "upper"],
                     index=pd.Index(targets, name="target"))
    y: FloatArray = actual.reindex(f.index).to_numpy()
    first = _actuals(table, "first").reindex(f.index)
    f.insert(3, "actual", y)
    f.insert(4, "error", y - f["forecast"].to_numpy())
    f.insert(6, "benchmark_error", y - f["benchmark"].to_numpy())
    f.insert(7, "first_release", first.to_numpy())
    n_errors = None
    if interval in ("empirical", "aci"):
        published = _first_published(table, f.index)
        f["lower"], f["upper"] = real_time_bounds(f, published, np.asarray(used), interval,
                                                  level, min_errors, aci_gamma)
        n_errors = np.searchsorted(np.maximum.accumulate(published), used, side="right")
    if interval is None:
        f = f.drop(columns=["lower", "upper"])
    quantiles = np.array([p.quantiles for p in points]) if points[0].quantiles else None
    taus = points[0].taus or None
    if quantiles is not None and taus is not None:  # one column per τ, as ForecastResults
        f = f.assign(**{f"q{t:g}": quantiles[:, k] for k, t in enumerate(taus)})
    df = np.array([p.df for p in points])
    return RealTimeForecasts(forecasts=f, formula=formula, method=method, scheme=scheme,
                             horizon=horizon, evaluate_on=evaluate_on, interval=interval,
                             level=level, df_path=df if interval == "gaussian" and horizon == 1
                             else None, quantile_path=quantiles, taus=taus, n_errors=n_errors,
                             min_errors=min_errors if n_errors is not None else None,
                             aci_gamma=aci_gamma if interval == "aci" else None)


def _first_published(table: pd.DataFrame, targets: pd.Index) -> FloatArray:
    """Position (in vintage order) of the vintage that first published each target; inf
    for a target no vintage holds."""
    has = table.reindex(targets).notna().to_numpy()
    return np.where(has.any(axis=1), has.argmax(axis=1), np.inf)


def real_time_bounds(f: pd.DataFrame, published: FloatArray, used: np.ndarray,
                     interval: str, level: float, min_errors: int,
                     aci_gamma: float) -> tuple[FloatArray, FloatArray]:
    """Empirical or adaptive intervals from the errors known in real time.

    The error of an earlier forecast is its target's first release minus the forecast, and
    it is known at an origin once the vintage that published that release is the origin's
    vintage or an earlier one (``published[j] <= used[i]``; a later target counts only once
    every earlier one is published, so the pool grows in target order).

    Parameters
    ----------
    f : DataFrame, shape (n, ...)
        The forecasts table (columns ``forecast`` and ``first_release``), in target order.
    published : ndarray, shape (n,)
        Vintage position of each target's first release (inf: never published).
    used : ndarray of int, shape (n,)
        Vintage position used at each origin.
    """
    from attnreg.timeseries.conformal import aci_bounds

    order = np.maximum.accumulate(published)
    known = np.searchsorted(order, used, side="right")  # errors known at each origin
    pos = np.arange(len(f))
    pred, first = f["forecast"].to_numpy(), f["first_release"].to_numpy()
    if interval == "aci":
        lo, up, _ = aci_bounds(pred, first, pos, known - 1, level, min_errors, aci_gamma)
        return lo, up
    lo, up, _ = iv.empirical_bounds(pred, first - pred, pos, known - 1, level, min_errors)
    return lo, up
