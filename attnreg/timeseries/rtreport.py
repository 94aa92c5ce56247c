"""The report and plots of real-time forecasts, against the release they are evaluated on.

:func:`real_time_summary` and :func:`real_time_horizons_summary` are the ``summary()`` of
:class:`~attnreg.timeseries.vintages.RealTimeForecasts` and
:class:`~attnreg.timeseries.realtime.RealTimeHorizons`: accuracy against the ``evaluate_on``
release (the forecasts whose release is out), the intervals' coverage, and the density scores
and calibration tests of :mod:`attnreg.timeseries.density_summary`.
:func:`plot_real_time` draws the plots of :func:`attnreg.timeseries.fcplots.plot_forecasts`
that real-time forecasts have data for, fan charts included (:mod:`attnreg.timeseries.fanchart`);
the others (coefficient, tuning and attention paths) are refused.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import OptionError
from attnreg.report import Summary
from attnreg.report.sections import Coefficients, Lines
from attnreg.timeseries.density_summary import density_sections, horizons_density_sections
from attnreg.timeseries.fanchart import FAN_LEVELS, draw_fan
from attnreg.timeseries.fcplots import KINDS, _axes, _x, cumulative_gain, rolling_oos_r2

__all__ = ["REAL_TIME_KINDS", "plot_real_time", "real_time_horizons_summary",
           "real_time_summary"]

#: the plot kinds real-time forecasts have data for
REAL_TIME_KINDS = ("forecast", "cumulative", "oos_r2", "pit", "coverage", "fan")


def _release(evaluate_on: Any) -> str:
    if evaluate_on == "first":
        return "the first release"
    if evaluate_on == "latest":
        return "the latest vintage"
    return f"release {evaluate_on}"


def _header(rt: Any, what: str, formula: str) -> tuple[str, ...]:
    f = rt.forecasts
    released = int(f["actual"].notna().sum())
    return (f"Real-time out-of-sample forecasts{what}: {formula}",
            f"method = {rt.method!r}, scheme = {rt.scheme!r}, evaluated on "
            f"{_release(rt.evaluate_on)}",
            f"{len(f)} forecasts, targets {f.index[0]} to {f.index[-1]}, {released} with that "
            f"release out; vintages {f['vintage'].iloc[0]} to {f['vintage'].iloc[-1]}")


_FOOTER = ("Each forecast is made from the latest vintage published by its origin; the "
           "prevailing mean is that vintage's.",
           "OOS R-squared, revised data: the same model on the latest vintage cut at each "
           "origin, against the same actuals (leakage_audit(): the look-ahead of revisions).")

def real_time_summary(rt: Any, benchmark: Any = None) -> Summary:
    """The report of one horizon's real-time forecasts (numbers in tables, text on print)."""
    e, audit = rt.evaluation, rt.leakage_audit()
    table = pd.DataFrame(
        {"Estimate": [e.msfe, e.rmse, e.mae, e.benchmark_msfe, e.oos_r2, e.dm_statistic,
                      audit.oos_r2_revised],
         "p-value": [np.nan] * 5 + [e.dm_p_value, np.nan]},
        index=["MSFE", "RMSE", "MAE", "MSFE (prevailing mean)", "OOS R-squared",
               "Diebold-Mariano (HLN), vs mean", "OOS R-squared, revised data"])
    sections: list[Any] = [Lines((*_header(rt, f" at horizon {rt.horizon}", rt.formula), "",
                                  "Forecast accuracy:")),
                           Coefficients(table, stars=False, heading=False)]
    if rt.interval is not None:
        rows = pd.DataFrame({"Nominal": [rt.level], "Coverage": [e.coverage],
                             "Mean width": [e.mean_width], "n": [e.n_intervals]},
                            index=[f"{rt.interval} intervals"])
        sections += [Lines(("", "Forecast intervals:")),
                     Coefficients(rows, stars=False, heading=False)]
    sections.append(Lines((*_FOOTER, f"DM: two-sided, squared loss, HLN correction, "
                                     f"{rt.horizon - 1} lags."), lead_blank=True))
    return Summary("attnreg real-time forecast evaluation",
                   (*sections, *density_sections(rt, benchmark)))


#: the several-horizon table: (evaluation key, heading)
_COLUMNS = (("n_forecasts", "n"), ("msfe", "MSFE"), ("oos_r2", "OOS R2"),
            ("dm_statistic", "DM"), ("dm_p_value", "Pr(DM)"), ("n_intervals", "n int."),
            ("coverage", "Coverage"), ("mean_width", "Mean width"))


def real_time_horizons_summary(res: Any, benchmark: Any = None) -> Summary:
    """The report of real-time forecasts at several horizons, one row per horizon."""
    e = res.evaluation
    table = pd.DataFrame({head: e[key].to_numpy(dtype=float) for key, head in _COLUMNS
                          if key in e.columns},
                         index=pd.Index([f"h = {h}" for h in res.horizons]))
    first = res.parts[0]
    horizons = ", ".join(map(str, res.horizons))
    sections: list[Any] = [Lines((*_header(first, f" at horizons {horizons}", res.formula)[:2], "",
                                  "Forecast accuracy by horizon:")),
                           Coefficients(table, stars=False, heading=False),
                           Lines((*_FOOTER, "DM: two-sided, squared loss, HLN correction, "
                                  "h - 1 lags."), lead_blank=True)]
    return Summary("attnreg real-time forecast evaluation by horizon",
                   (*sections, *horizons_density_sections(res, benchmark)))


def plot_real_time(fc: Any, kind: str = "forecast", *, horizon: int | None = None,
                   ax: Any = None, **kw: Any) -> Any:
    """Draw a plot of real-time forecasts, against their ``evaluate_on`` release.

    Parameters
    ----------
    fc : RealTimeForecasts or RealTimeHorizons
    kind : {"forecast", "cumulative", "oos_r2", "pit", "coverage", "fan"}
        As in :func:`attnreg.timeseries.fcplots.plot_forecasts` (several horizons without
        ``horizon=``: a line per horizon, except ``"forecast"`` and ``"fan"``, which draw
        one horizon).
    horizon : int, optional
    ax : matplotlib Axes, optional
    **kw
        Options of the kind: ``window=`` (oos_r2, coverage), ``bins=`` (pit), ``levels=``
        (fan: nested central intervals, default 50/70/90 %).

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import attnreg as ar
    >>> rng = np.random.default_rng(0)
    >>> final = pd.DataFrame({"y": rng.standard_normal(60)})
    >>> vintages = pd.concat([final.iloc[: v + 1].assign(vintage=v) for v in range(20, 60)])
    >>> rt = ar.forecast("y ~ lag(y, 1)", vintages, vintage="vintage", start=40,
    ...                  interval="empirical", min_errors=5)
    >>> [line.get_label() for line in plot_real_time(rt, "forecast").lines]
    ['actual', 'forecast', 'prevailing mean']
    >>> print(rt.summary().tables[-1].loc[["CRPS", "Kupiec LR uc, chi2(1)"]].round(3))
                           Estimate  p-value
    CRPS                      0.637      NaN
    Kupiec LR uc, chi2(1)     1.332    0.248
    """
    if kind not in KINDS:
        raise OptionError(f"kind must be one of {KINDS}, however: {kind=}")
    if kind not in REAL_TIME_KINDS:
        raise OptionError(f"real-time forecasts keep no coefficient, tuning or attention "
                          f"paths to draw: kind must be one of {REAL_TIME_KINDS}, however: {kind=}")
    parts = [fc.at_horizon(h) for h in ([horizon] if horizon is not None else fc.horizons)]
    if kind in ("forecast", "fan") and len(parts) > 1:
        raise OptionError(f"these forecasts hold horizons {fc.horizons}: choose one with "
                          "horizon=")
    draw = _DRAW[kind]
    allowed = [p for p in inspect.signature(draw).parameters if p not in ("parts", "ax")]
    unknown = sorted(set(kw) - set(allowed))
    if unknown:
        raise OptionError(f"kind {kind!r} takes the options {allowed}, however: {unknown[0]}=")
    return draw(parts, _axes(ax), **kw)


def _released(part: Any) -> pd.DataFrame:
    return part.forecasts.dropna(subset=["actual"])


def _draw_forecast(parts: list[Any], ax: Any) -> Any:
    rt = parts[0]
    f = rt.forecasts
    x = _x(f.index)
    if "lower" in f.columns:
        ax.fill_between(x, f["lower"].to_numpy(dtype=float), f["upper"].to_numpy(dtype=float),
                        color="tab:blue", alpha=0.2, lw=0, label=f"{100 * rt.level:g}% interval")
    ax.plot(x, f["actual"].to_numpy(), color="black", lw=1, label="actual")
    ax.plot(x, f["forecast"].to_numpy(), color="tab:blue", lw=1.2, label="forecast")
    ax.plot(x, f["benchmark"].to_numpy(), color="grey", ls="--", lw=1, label="prevailing mean")
    ax.legend(fontsize=8)
    ax.set_title(f"Real-time {rt.method} forecasts, horizon {rt.horizon}, against "
                 f"{_release(rt.evaluate_on)}")
    return ax


def _draw_cumulative(parts: list[Any], ax: Any) -> Any:
    for part in parts:
        f = _released(part)
        ax.plot(_x(f.index), cumulative_gain(f["error"], f["benchmark_error"]), lw=1.2,
                label=f"h = {part.horizon}")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_ylabel("cum. SSE(prevailing mean) − SSE(model)")
    ax.legend(fontsize=8)
    ax.set_title("Cumulative squared-error difference against the prevailing mean (real time)")
    return ax


def _draw_oos_r2(parts: list[Any], ax: Any, window: int = 20) -> Any:
    for part in parts:
        f = _released(part)
        r2 = rolling_oos_r2(f["error"], f["benchmark_error"], window)
        ax.plot(_x(f.index[window - 1:]), r2, lw=1.2, label=f"h = {part.horizon}")
    ax.axhline(0, color="black", lw=0.8)
    ax.set_ylabel(f"OOS R² over the last {window} forecasts")
    ax.legend(fontsize=8)
    ax.set_title("Rolling out-of-sample R² against the prevailing mean (real time)")
    return ax


def _draw_pit(parts: list[Any], ax: Any, bins: int = 10) -> Any:
    from attnreg.timeseries.calibration import pit_histogram
    from attnreg.timeseries.scores import forecast_scores

    for part in parts:
        hist = pit_histogram(forecast_scores(part)["pit"].to_numpy(), bins)
        if len(parts) == 1:
            ax.bar(hist["left"], hist["density"], width=hist["right"] - hist["left"],
                   align="edge", color="tab:blue", alpha=0.6, edgecolor="white", label="PIT")
        else:
            ax.stairs(hist["density"], np.append(hist["left"], 1.0), lw=1.5,
                      label=f"h = {part.horizon}")
    ax.axhline(1.0, color="black", ls="--", lw=1, label="uniform")
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel("PIT")
    ax.set_ylabel("density")
    ax.legend(fontsize=8)
    ax.set_title(f"PIT histogram (real time), {parts[0].interval or 'quantile'} forecasts")
    return ax


def _draw_coverage(parts: list[Any], ax: Any, window: int = 20) -> Any:
    from attnreg.timeseries.coverage_plot import rolling_coverage

    level = float(parts[0].level)
    for part in parts:
        if part.interval is None:
            raise OptionError("kind='coverage' needs forecast intervals: call forecast(..., "
                              "vintage=..., interval='gaussian', 'empirical', 'aci' or "
                              "'quantile')")
        f = _released(part)
        rate = rolling_coverage(f["actual"], f["lower"], f["upper"], window)
        ok = ~np.isnan(rate)
        ax.plot(_x(f.index[ok]), rate[ok], lw=1.2, label=f"h = {part.horizon}")
    band = 1.96 * np.sqrt(level * (1.0 - level) / window)
    ax.axhline(level, color="black", ls="--", lw=1, label=f"nominal {100 * level:g}%")
    ax.axhspan(level - band, level + band, color="grey", alpha=0.15, lw=0)
    ax.set_ylim(0.0, 1.02)
    ax.set_ylabel(f"coverage of the last {window} intervals")
    ax.legend(fontsize=8)
    ax.set_title(f"Coverage over time (real time), {parts[0].interval} intervals")
    return ax


def _draw_fan(parts: list[Any], ax: Any, levels: Any = FAN_LEVELS) -> Any:
    return draw_fan(parts[0], ax, levels)


_DRAW: dict[str, Any] = {"forecast": _draw_forecast, "cumulative": _draw_cumulative,
                         "oos_r2": _draw_oos_r2, "pit": _draw_pit, "coverage": _draw_coverage,
                         "fan": _draw_fan}
