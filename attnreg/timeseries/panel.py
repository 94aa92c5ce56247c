"""Many series in one call: ``forecast(formula, long_df, by="country")``.

The long frame holds every series' rows, its index the dates (repeated across series). Each
series' rows (sorted by date, stably, when they are not in order) are forecast exactly as
:func:`attnreg.forecast` forecasts them alone, with every no-look-ahead rule per series, and
the results are gathered in a :class:`PanelForecasts`, indexed by series.

A series that cannot be forecast (too short for ``start``, the window or the coefficients,
or ``start`` not among its dates) is left out with a :class:`SkippedSeriesWarning` naming
it and the reason; when no series can be forecast, the first series' error is raised.

Pooled comparison with the prevailing mean (Pesaran & Timmermann-style pooling):

* pooled OOS R² = 1 − Σ_i SSE_i / Σ_i SSE_i(benchmark), sums over series and targets;
* panel Diebold–Mariano: with ``d_it = e_it² − b_it²`` (squared-error loss differential of
  series i at target date t), ``d̄_t`` is the mean of ``d_it`` over the series forecast at
  t; the test is :func:`attnreg.timeseries.evaluation.dm_differential` on the time series
  ``d̄_t`` (HLN-corrected, rectangular HAC with h − 1 lags, Student-t(T − 1), two-sided).
  Averaging across series before the HAC variance makes the standard error robust to any
  correlation between the series at the same date.

Several horizons (``horizon=[1, 4]``): each series gives a
:class:`~attnreg.timeseries.multihorizon.MultiHorizonForecasts`; ``at_horizon(h)`` is the
panel of one horizon, and :attr:`PanelForecasts.pooled_by_horizon` the pooled OOS R² and
panel DM test of every horizon (each with its own h − 1 lags).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg._warn import warn_user
from attnreg.exceptions import DataError, OptionError, SkippedSeriesWarning
from attnreg.report import Summary
from attnreg.timeseries import evaluation as ev
from attnreg.timeseries.forecast_results import ForecastResults
from attnreg.timeseries.multihorizon import MultiHorizonForecasts

__all__ = ["PanelForecasts", "forecast_by", "split_series"]


def split_series(data: pd.DataFrame, by: str) -> dict[Any, pd.DataFrame]:
    """Each series' rows, in date order, by series id (ids sorted when they sort).

    Parameters
    ----------
    data : DataFrame, shape (n_rows, n_columns)
        The long frame; its index holds the dates.
    by : str
        The column naming the series.

    Returns
    -------
    dict of id to DataFrame
        Copies of the rows of each series (the input is not changed).

    Examples
    --------
    >>> df = pd.DataFrame({"g": ["b", "a", "b"], "y": [1.0, 2.0, 3.0]}, index=[2, 1, 1])
    >>> {k: v.y.tolist() for k, v in split_series(df, "g").items()}
    {'a': [2.0], 'b': [3.0, 1.0]}
    """
    if not isinstance(data, pd.DataFrame):
        raise DataError("forecast(by=...) needs a pandas DataFrame of the series in long form")
    if not isinstance(by, str) or by not in data.columns:
        raise DataError(f"by={by!r} is not a column of the data: name the column that holds "
                        f"the series ids (columns: {', '.join(map(str, data.columns[:10]))})")
    ids = data[by]
    if ids.isna().any():
        row = data.index[int(np.flatnonzero(ids.isna().to_numpy())[0])]
        raise DataError(f"column {by!r} has a missing series id (first at row {row!r}): "
                        "drop those rows or fill the id")
    try:
        codes, uniques = pd.factorize(ids, sort=True)
    except TypeError:  # ids of mixed types: order of first appearance
        codes, uniques = pd.factorize(ids, sort=False)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(uniques) + 1))
    out: dict[Any, pd.DataFrame] = {}
    for k, key in enumerate(uniques):
        rows = data.iloc[order[bounds[k]:bounds[k + 1]]]
        if not rows.index.is_monotonic_increasing:
            rows = rows.sort_index(kind="stable")
        out[key] = rows
    return out


def forecast_by(run: Callable[..., Any], formula: str, data: pd.DataFrame, method: str, *,
                by: str, eval_env: Any, **kw: Any) -> PanelForecasts:
    """``run`` (:func:`attnreg.forecast`, passed in by it) on each series of ``data`` (see the
    module's notes).

    Series run in parallel (:func:`attnreg.threads.parallel_map`) when attnreg's thread
    cap is not set and the method does not use torch, each series on one BLAS thread
    (:func:`attnreg.threads.small_lapack` around them all, so that no worker restores
    another's BLAS setting); the results do not depend on it.
    """
    from attnreg.methods import get_method
    from attnreg.threads import get_threads, parallel_map, small_lapack

    series = split_series(data, by)
    parallel = get_threads() is None and not get_method(method).capabilities.torch
    if parallel and kw.get("progress") is None:
        kw["progress"] = False

    def one(item: tuple[Any, pd.DataFrame]) -> ForecastResults | MultiHorizonForecasts | \
            Exception:
        try:
            return run(formula, item[1], method, eval_env=eval_env, **kw)
        except (DataError, OptionError) as err:
            return err

    if parallel:  # the threads are the series', not BLAS's: one BLAS setting for them all,
        with small_lapack():  # so that no worker restores another's (attnreg.threads)
            outs = parallel_map(one, series.items())
    else:
        outs = [one(item) for item in series.items()]
    results, skipped = {}, []
    for key, out in zip(series, outs, strict=True):
        if isinstance(out, Exception):
            skipped.append((key, str(out)))
        else:
            results[key] = out
    if not results:
        key, first = next(iter(series)), outs[0]
        assert isinstance(first, Exception)
        raise type(first)(f"no series of {by!r} can be forecast; series {key!r}: {first}") \
            from first
    for key, why in skipped:
        warn_user(f"series {key!r} of column {by!r} is left out of the forecasts: {why}",
                  SkippedSeriesWarning)
    return PanelForecasts(results=results, by=by, skipped=tuple(k for k, _ in skipped))


@dataclass(frozen=True)
class PanelForecasts:
    """The forecasts of many series by one specification, indexed by series.

    Attributes
    ----------
    results : dict of id to ForecastResults or MultiHorizonForecasts
        Each series' results, as :func:`attnreg.forecast` on its rows alone returns them
        (MultiHorizonForecasts for several horizons).
    by : str
        The column of the series ids.
    skipped : tuple
        Ids of the series left out (too short to forecast).

    Examples
    --------
    >>> import attnreg as ar
    >>> rng = np.random.default_rng(0)
    >>> dates = pd.period_range("2000Q1", periods=40, freq="Q")
    >>> long = pd.DataFrame({"g": np.repeat(["a", "b"], 40), "y": rng.normal(size=80)},
    ...                     index=dates.append(dates))
    >>> panel = ar.forecast("y ~ lag(y, 1)", long, by="g")
    >>> panel.series, panel["a"].plan.n_forecasts
    (['a', 'b'], 20)
    >>> panel.forecasts.index.names
    FrozenList(['series', 'target'])
    """

    results: dict[Any, ForecastResults | MultiHorizonForecasts] = field(repr=False)
    by: str
    skipped: tuple[Any, ...] = ()

    @property
    def series(self) -> list[Any]:
        """The ids of the series forecast, in order."""
        return list(self.results)

    @property
    def horizons(self) -> list[int]:
        """The horizons forecast (the same for every series)."""
        return next(iter(self.results.values())).horizons

    def at_horizon(self, h: int) -> PanelForecasts:
        """The panel of horizon ``h``: every series' :class:`ForecastResults` of that horizon.

        Examples
        --------
        >>> import attnreg as ar
        >>> rng = np.random.default_rng(0)
        >>> dates = pd.period_range("2000Q1", periods=40, freq="Q")
        >>> long = pd.DataFrame({"g": np.repeat(["a", "b"], 40), "y": rng.normal(size=80)},
        ...                     index=dates.append(dates))
        >>> panel = ar.forecast("y ~ lag(y, h)", long, by="g", horizon=[1, 2])
        >>> panel.horizons, panel.at_horizon(2)["a"].plan.horizon
        ([1, 2], 2)
        >>> panel.pooled_by_horizon.index.tolist()
        [1, 2]
        """
        return PanelForecasts(results={k: r.at_horizon(h) for k, r in self.results.items()},
                              by=self.by, skipped=self.skipped)

    def _several(self) -> bool:
        return len(self.horizons) > 1

    def __getitem__(self, key: Any) -> ForecastResults | MultiHorizonForecasts:
        try:
            return self.results[key]
        except KeyError:
            why = " (left out: too short)" if key in self.skipped else ""
            raise KeyError(f"series {key!r} was not forecast{why}; series: {self.series}") \
                from None

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.results)

    @cached_property
    def forecasts(self) -> pd.DataFrame:
        """Every series' forecasts table, indexed by (series, target), or by (series,
        horizon, target) for several horizons."""
        names = ["series", "horizon", "target"] if self._several() else ["series", "target"]
        return pd.concat([r.forecasts for r in self.results.values()],
                         keys=pd.Index(self.series, dtype=object), names=names)

    @cached_property
    def evaluation(self) -> pd.DataFrame:
        """One row per series: the columns of :attr:`ForecastResults.evaluation`; one row
        per (horizon, series) for several horizons."""
        if self._several():
            return pd.concat([self.at_horizon(h).evaluation for h in self.horizons],
                             keys=self.horizons, names=["horizon", "series"])
        return pd.DataFrame([r.evaluation for r in self.results.values()],
                            index=pd.Index(self.series, dtype=object, name="series"))

    @cached_property
    def pooled_by_horizon(self) -> pd.DataFrame:
        """:attr:`pooled` of every horizon, one row per horizon (its own h − 1 DM lags)."""
        return pd.DataFrame([self.at_horizon(h).pooled for h in self.horizons],
                            index=pd.Index(self.horizons, name="horizon"))

    @cached_property
    def pooled(self) -> pd.Series:
        """Pooled accuracy and the panel DM test (see :mod:`attnreg.timeseries.panel`).

        Entries: ``n_forecasts``, ``n_dates``, ``msfe`` (Σ SSE / Σ n), ``benchmark_msfe``,
        ``oos_r2`` (1 − Σ SSE / Σ benchmark SSE), ``dm_statistic``, ``dm_p_value``. One
        horizon: with several, see :attr:`pooled_by_horizon` or ``at_horizon(h).pooled``.
        """
        if self._several():
            raise OptionError(f"these forecasts have horizons {self.horizons}: use "
                              "pooled_by_horizon (one row per horizon) or at_horizon(h).pooled")
        f = self.forecasts
        sse, bse = float(f["error"].pow(2).sum()), float(f["benchmark_error"].pow(2).sum())
        d = (f["error"] ** 2 - f["benchmark_error"] ** 2).groupby(level="target").mean()
        h = self.horizons[0]
        dm = ev.dm_differential(d.sort_index().to_numpy(), h=h)
        return pd.Series({"n_forecasts": float(len(f)), "n_dates": float(d.size),
                          "msfe": sse / len(f), "benchmark_msfe": bse / len(f),
                          "oos_r2": 1.0 - sse / bse, "dm_statistic": dm.statistic,
                          "dm_p_value": dm.p_value})

    def summary(self) -> Summary:
        """Per-series MSFE, OOS R², DM and CW p-values, and the pooled row (numbers; text on print).

        Several horizons: the rows of every horizon, labelled ``h = 1: <series>``.
        """
        if self._several():
            parts = [self.at_horizon(h).summary() for h in self.horizons]
            table = pd.concat([s.table.rename(index=lambda k, h=h: f"h = {h}: {k}")
                               for s, h in zip(parts, self.horizons, strict=True)])
            first = next(iter(self.results.values()))
            _, method, scheme, _ = self._setting()
            formula = getattr(first, "formula", None) or self._setting()[0]
            header = [f"Out-of-sample forecasts by {self.by!r}: {formula}",
                      f"method = {method!r}, scheme = {scheme!r}, horizons = "
                      f"{self.horizons}, {len(self)} series"]
            footer = ["Per horizon: OOS R-squared against the prevailing mean of each series; "
                      "pooled DM with h - 1 lags (see each horizon's summary)."]
            return Summary.from_lines("attnreg forecasts by series", header, table, footer,
                                      stars=False)
        e, p = self.evaluation, self.pooled
        cw = e.get("cw_p_value", np.nan)  # real-time forecasts: no CW test
        table = pd.DataFrame({"n": e["n_forecasts"], "MSFE": e["msfe"], "OOS R2": e["oos_r2"],
                              "DM p-value": e["dm_p_value"], "CW p-value": cw})
        table.index = pd.Index([str(k) for k in self.series])
        table.loc["Pooled"] = [p["n_forecasts"], p["msfe"], p["oos_r2"], p["dm_p_value"],
                               np.nan]
        formula, method, scheme, horizon = self._setting()
        header = [f"Out-of-sample forecasts by {self.by!r}: {formula}",
                  f"method = {method!r}, scheme = {scheme!r}, horizon = "
                  f"{horizon}, {len(self)} series"]
        footer = ["OOS R-squared against the prevailing mean of each series; pooled: "
                  "1 - sum of SSE / sum of benchmark SSE.",
                  "Pooled DM: HLN-corrected DM test of the mean over series of the loss "
                  f"differential at each date ({int(p['n_dates'])} dates, {horizon - 1} "
                  "lags)."]
        if self.skipped:
            footer.append(f"Left out (too short): {', '.join(map(str, self.skipped))}.")
        return Summary.from_lines("attnreg forecasts by series", header, table, footer,
                                  stars=False)

    def _setting(self) -> tuple[str, str, str, int]:
        """Formula, method, scheme and (first) horizon of the series' forecasts."""
        first = next(iter(self.results.values()))
        part: Any = first.at_horizon(first.horizons[0])
        plan = getattr(part, "plan", None)
        if plan is None:  # real-time forecasts (vintage=) carry them themselves
            return str(part.formula), str(part.method), str(part.scheme), int(part.horizon)
        return str(plan.design.formula), plan.method, plan.scheme, int(plan.horizon)

    def __repr__(self) -> str:
        r2 = self.pooled_by_horizon["oos_r2"]
        values = (f"{r2.iloc[0]:.4f}" if r2.size == 1 else
                  ", ".join(f"{h}: {v:.4f}" for h, v in r2.items()))
        return f"<attnreg forecasts by {self.by!r}: {len(self)} series, pooled OOS R²={values}>"


