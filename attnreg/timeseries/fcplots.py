"""The plots forecasters use, as one family: ``plot_forecasts(fc, kind, **kw)``.

Kinds: ``"forecast"`` (forecasts, with their intervals when the run made them, against the
actuals and the prevailing mean), ``"cumulative"`` (Goyal–Welch: the cumulative squared-error
difference against the benchmark over time), ``"oos_r2"`` (rolling out-of-sample R²),
``"coef"`` (coefficient paths), ``"lambda"`` / ``"k"`` (the ridge penalty or the PCR
components chosen at each origin) and ``"attention"`` (a heat-map of the share of attention
on past period buckets over origins, :func:`attnreg.timeseries.views.attention_over_time`),
``"pit"`` (PIT histogram), ``"fan"`` (nested central intervals, :mod:`.fanchart`) and
``"coverage"`` (rolling hit rate of the intervals, :mod:`.coverage_plot`).
``"cumulative"`` and ``"oos_r2"`` also take a :class:`~attnreg.timeseries.comparison.ForecastComparison`
(one line per model against its benchmark).

Every function draws on ``ax`` (or a new figure) and returns the Axes. matplotlib is imported
by the first plot, not by this module.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.timeseries.views import AttentionOverTime, attention_over_time, single_horizon

__all__ = ["KINDS", "cumulative_gain", "plot_attention_time", "plot_forecasts", "rolling_oos_r2"]

KINDS = ("forecast", "cumulative", "oos_r2", "coef", "lambda", "k", "attention", "pit", "fan",
         "coverage")


def _axes(ax: Any = None, figsize: tuple[float, float] = (7.5, 4.0)) -> Any:
    if ax is not None:
        return ax
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("plots need matplotlib: pip install 'attnreg[plot]'") from None
    _, axes = plt.subplots(figsize=figsize, constrained_layout=True)
    return axes


def _x(index: pd.Index) -> Any:
    """Dates matplotlib can place: periods as their start timestamps."""
    return index.to_timestamp() if isinstance(index, pd.PeriodIndex) else index


def cumulative_gain(error: object, benchmark_error: object) -> FloatArray:
    """Goyal–Welch curve ``Σ_{s<=t} (e_bench,s² − e_model,s²)``, shape (n_forecasts,).

    Rising where the model beats the benchmark, falling where it loses.

    Examples
    --------
    >>> cumulative_gain([1.0, 0.5, 2.0], [1.5, 0.5, 1.0])
    array([ 1.25,  1.25, -1.75])
    """
    e, b = np.asarray(error, dtype=float), np.asarray(benchmark_error, dtype=float)
    return np.cumsum(b**2 - e**2)


def rolling_oos_r2(error: object, benchmark_error: object, window: int) -> FloatArray:
    """Out-of-sample R² over the last ``window`` forecasts, ``1 − Σ e² / Σ e_bench²``.

    Returns
    -------
    ndarray, shape (n_forecasts − window + 1,)
        Entry t covers forecasts t .. t + window − 1.

    Examples
    --------
    >>> rolling_oos_r2([1.0, 0.0, 1.0], [2.0, 1.0, 1.0], window=2)
    array([0.8, 0.5])
    """
    e, b = np.asarray(error, dtype=float), np.asarray(benchmark_error, dtype=float)
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or \
            not 2 <= window <= e.size:
        raise OptionError(f"window must be an integer in 2..{e.size} (the forecasts), "
                          f"however: {window=}")
    ce, cb = np.r_[0.0, np.cumsum(e**2)], np.r_[0.0, np.cumsum(b**2)]
    return 1.0 - (ce[window:] - ce[:-window]) / (cb[window:] - cb[:-window])


def _is_comparison(obj: Any) -> bool:
    return hasattr(obj, "mcs") and hasattr(obj, "benchmark_name")


def _several(fc: Any) -> bool:
    return hasattr(fc, "at_horizon") and len(fc.horizons) > 1


def _one(fc: Any, horizon: int | None, kind: str) -> Any:
    if _several(fc) and horizon is None and kind in ("cumulative", "oos_r2", "pit", "coverage"):
        return fc  # one line per horizon
    if hasattr(fc, "at_horizon") or horizon is not None:
        return single_horizon(fc, horizon)
    return fc


def _lines(fc: Any) -> tuple[list[tuple[str, pd.Index, FloatArray, FloatArray]], str]:
    """(name, target dates, model errors, benchmark errors) per line, and the benchmark's name."""
    if _is_comparison(fc):
        eb = fc.actual - fc.benchmark
        return [(name, fc.targets, fc.actual - fc.forecasts[:, j], eb)
                for j, name in enumerate(fc.names)], fc.benchmark_name
    if _several(fc):  # each horizon against its own prevailing mean
        parts = [(f"h = {h}", fc.at_horizon(h).forecasts) for h in fc.horizons]
    else:
        parts = [(str(fc.plan.method), fc.forecasts)]
    return [(name, f.index, f["error"].to_numpy(), f["benchmark_error"].to_numpy())
            for name, f in parts], "prevailing mean"


def plot_forecasts(fc: Any, kind: str = "forecast", *, horizon: int | None = None, ax: Any = None,
                   **kw: Any) -> Any:
    """Draw one of the forecasting plots of a run (or of a comparison of runs).

    Parameters
    ----------
    fc : ForecastResults, several-horizon results, or ForecastComparison
        Results of :func:`attnreg.forecast` (``horizon=`` picks one horizon of several), or
        of :func:`attnreg.compare_forecasts` for ``"cumulative"`` and ``"oos_r2"``.
    kind : {"forecast", "cumulative", "oos_r2", "coef", "lambda", "k", "attention", "pit", "fan", "coverage"}
        - ``"forecast"``: actual, forecast and prevailing mean by target date (3 lines), and
          the forecast interval as a band when the run has intervals (NaN where none yet).
        - ``"cumulative"``: ``Σ (e_bench² − e_model²)`` over target dates, one line per model;
          rising means the model beats the benchmark (Goyal & Welch 2008).
        - ``"oos_r2"``: OOS R² over a rolling ``window=`` of forecasts (default 20), dated
          by the window's last target.
        - ``"coef"``: coefficients by origin (``terms=`` to choose; default all but the
          intercept).
        - ``"lambda"`` / ``"k"``: the ridge penalty / PCR components chosen at each origin.
        - ``"attention"``: heat-map (buckets × origins) of
          :func:`~attnreg.timeseries.views.attention_over_time` (``origins=``,
          ``buckets=``, ``value="share"`` or ``"weight"``).
        - ``"pit"``: histogram of the probability integral transforms of the outcomes under
          the predictive distributions (runs with ``interval=``; ``bins=``, default 10),
          with the uniform density as a line (:mod:`attnreg.timeseries.calibration`); an
          outline per horizon for several horizons without ``horizon=``.
        - ``"fan"``: nested central intervals (``levels=``, default 50/70/90 %) of quantile,
          Gaussian, empirical or adaptive conformal forecasts, with the forecast and the
          actuals (:mod:`attnreg.timeseries.fanchart`).
        - ``"coverage"``: the share of the last ``window=`` (default 20) intervals that
          cover their outcome, by target date, against the nominal level and its binomial
          band (:mod:`attnreg.timeseries.coverage_plot`); a line per horizon for several
          horizons without ``horizon=``.
    horizon : int, optional
        The horizon, for results that hold several.
    ax : matplotlib Axes, optional
    **kw
        Options of the kind (above).

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, method="ridge",
    ...                  start="1990Q1")
    >>> ax = plot_forecasts(fc, "cumulative")
    >>> y = ax.lines[0].get_ydata()
    >>> bool(np.allclose(y, cumulative_gain(fc.forecasts["error"], fc.forecasts["benchmark_error"])))
    True
    >>> [line.get_label() for line in plot_forecasts(fc, "forecast").lines]
    ['actual', 'forecast', 'prevailing mean']
    >>> plot_forecasts(fc, "lambda").lines[0].get_ydata().size
    79
    """
    if kind not in KINDS:
        raise OptionError(f"kind must be one of {KINDS}, however: {kind=}")
    if _is_comparison(fc):
        if kind not in ("cumulative", "oos_r2"):
            raise OptionError(f"a forecast comparison plots kind 'cumulative' or 'oos_r2', "
                              f"however: {kind=}")
        if horizon is not None and horizon != fc.horizon:
            raise OptionError(f"this comparison is at horizon {fc.horizon}, however: {horizon=}")
    else:
        fc = _one(fc, horizon, kind)
    draw = _DRAW[kind]
    allowed = [p for p in inspect.signature(draw).parameters if p not in ("fc", "ax")]
    unknown = sorted(set(kw) - set(allowed))
    if unknown:
        raise OptionError(f"kind {kind!r} takes the options {allowed}, however: {unknown[0]}=")
    return draw(fc, _axes(ax), **kw)


def _draw_forecast(fc: Any, ax: Any) -> Any:
    f = fc.forecasts
    x = _x(f.index)
    lower, upper = getattr(fc, "lower", None), getattr(fc, "upper", None)
    if lower is not None and upper is not None:
        level = getattr(fc.plan, "level", None)
        ax.fill_between(x, np.asarray(lower, dtype=float), np.asarray(upper, dtype=float),
                        color="tab:blue", alpha=0.2, lw=0,
                        label="interval" if level is None else f"{100 * level:g}% interval")
    ax.plot(x, f["actual"].to_numpy(), color="black", lw=1, label="actual")
    ax.plot(x, f["forecast"].to_numpy(), color="tab:blue", lw=1.2, label="forecast")
    ax.plot(x, f["benchmark"].to_numpy(), color="grey", ls="--", lw=1, label="prevailing mean")
    ax.legend(fontsize=8)
    ax.set_title(f"{fc.plan.method} forecasts, horizon {fc.plan.horizon}")
    return ax


def _draw_cumulative(fc: Any, ax: Any) -> Any:
    lines, bench = _lines(fc)
    for name, targets, e, eb in lines:
        ax.plot(_x(targets), cumulative_gain(e, eb), lw=1.2, label=name)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_ylabel(f"cum. SSE({bench}) − SSE(model)")
    if len(lines) > 1:
        ax.legend(fontsize=8)
    ax.set_title(f"Cumulative squared-error difference against the {bench}")
    return ax


def _draw_oos_r2(fc: Any, ax: Any, window: int = 20) -> Any:
    lines, bench = _lines(fc)
    for name, targets, e, eb in lines:
        r2 = rolling_oos_r2(e, eb, window)
        ax.plot(_x(targets[window - 1:]), r2, lw=1.2, label=name)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_ylabel(f"OOS R² over the last {window} forecasts")
    if len(lines) > 1:
        ax.legend(fontsize=8)
    ax.set_title(f"Rolling out-of-sample R² against the {bench}")
    return ax


def _draw_coef(fc: Any, ax: Any, terms: list[str] | None = None) -> Any:
    frame = fc.coef  # ForecastResults and RollingResults both carry .coef
    if frame is None:
        raise OptionError("coefficient paths exist for the spectral methods only")
    terms = terms or [c for c in frame.columns if c != "(Intercept)"]
    unknown = [t for t in terms if t not in frame.columns]
    if unknown:
        raise OptionError(f"terms {unknown} are not coefficients; the coefficients are "
                          f"{list(frame.columns)}")
    x = _x(frame.index)
    for t in terms:
        ax.plot(x, frame[t].to_numpy(), label=t)
    ax.axhline(0, color="black", lw=0.8)
    ax.legend(fontsize=8)
    ax.set_title("Coefficients over origins")
    return ax


def _draw_tuning(name: str) -> Any:
    def draw(fc: Any, ax: Any) -> Any:
        from attnreg.methods import get_method

        path = fc.tuning_path
        tuning = get_method(fc.plan.method).tuning
        if path is None or tuning is None:
            raise OptionError(f"method {fc.plan.method!r} has no tuning parameter to plot "
                              f"(lambda: ridge, k: pcr)")
        has = "lambda" if tuning == "lam" else "k"
        if has != name:
            raise OptionError(f"method {fc.plan.method!r} is tuned by {has}, not {name}: use "
                              f"kind={has!r}")
        ax.plot(_x(pd.Index(fc.plan.origin_labels)), np.asarray(path, dtype=float),
                drawstyle="steps-post" if name == "k" else "default", color="tab:purple")
        if name == "lambda":
            ax.set_yscale("log")
        ax.set_ylabel("λ" if name == "lambda" else "k (components)")
        ax.set_title(f"{'λ' if name == 'lambda' else 'k'} chosen at each origin")
        return ax

    return draw


def _draw_attention(fc: Any, ax: Any, origins: Any = None, buckets: Any = (4, 20, 40),
                    value: str = "share") -> Any:
    return plot_attention_time(attention_over_time(fc, origins, buckets), value=value, ax=ax)


def plot_attention_time(att: AttentionOverTime, value: str = "share", ax: Any = None) -> Any:
    """Heat-map of attention by period bucket (rows, oldest at the bottom) over origins (columns).

    Parameters
    ----------
    att : AttentionOverTime
    value : {"share", "weight"}
        Absolute shares (0 to 1) or signed weight sums (diverging colours around 0).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
        Its image's array is ``att.share.T`` (or ``att.weight.T``), buckets × origins.
    """
    if value not in ("share", "weight"):
        raise OptionError(f"value must be 'share' or 'weight', however: {value=}")
    table = att.share if value == "share" else att.weight
    ax = _axes(ax)
    data = table.to_numpy().T
    if value == "share":
        image = ax.imshow(data, aspect="auto", cmap="viridis", vmin=0.0, vmax=1.0,
                          interpolation="nearest", origin="lower")
    else:
        lim = float(np.abs(data).max()) or 1.0
        image = ax.imshow(data, aspect="auto", cmap="RdBu_r", vmin=-lim, vmax=lim,
                          interpolation="nearest", origin="lower")
    ax.figure.colorbar(image, ax=ax, label="share of |weight|" if value == "share" else "Σ weight")
    ax.set_yticks(range(table.shape[1]), [str(c) for c in table.columns])
    ax.set_ylabel("periods before the origin" if att.buckets == "age" else "decade")
    step = max(1, table.shape[0] // 8)
    ax.set_xticks(range(0, table.shape[0], step), [str(o) for o in table.index[::step]],
                  rotation=45, ha="right", fontsize=8)
    ax.set_xlabel("origin")
    ax.set_title("Attention over the past, by origin")
    return ax


def _draw_pit(fc: Any, ax: Any, bins: int = 10) -> Any:
    from attnreg.timeseries.calibration import pit_histogram
    from attnreg.timeseries.scores import forecast_scores

    if _several(fc):  # one outline per horizon
        for h in fc.horizons:
            hist = pit_histogram(forecast_scores(fc.at_horizon(h))["pit"].to_numpy(), bins)
            ax.stairs(hist["density"], np.append(hist["left"], 1.0), lw=1.5, label=f"h = {h}")
        part, where = fc.at_horizon(fc.horizons[0]), "horizons " + ", ".join(map(str, fc.horizons))
    else:
        hist = pit_histogram(forecast_scores(fc)["pit"].to_numpy(), bins)
        ax.bar(hist["left"], hist["density"], width=hist["right"] - hist["left"], align="edge",
               color="tab:blue", alpha=0.6, edgecolor="white", label="PIT")
        part, where = fc, f"horizon {fc.plan.horizon}"
    ax.axhline(1.0, color="black", ls="--", lw=1, label="uniform")
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel("PIT")
    ax.set_ylabel("density")
    ax.legend(fontsize=8)
    ax.set_title(f"PIT histogram, {part.plan.interval} intervals, {where}")
    return ax


def _draw_fan(fc: Any, ax: Any, levels: Any = (0.5, 0.7, 0.9)) -> Any:
    from attnreg.timeseries.fanchart import draw_fan

    return draw_fan(fc, ax, levels)


def _draw_coverage(fc: Any, ax: Any, window: int = 20) -> Any:
    from attnreg.timeseries.coverage_plot import draw_coverage

    return draw_coverage(fc, ax, window)


_DRAW: dict[str, Any] = {
    "forecast": _draw_forecast, "cumulative": _draw_cumulative, "oos_r2": _draw_oos_r2,
    "coef": _draw_coef, "lambda": _draw_tuning("lambda"), "k": _draw_tuning("k"),
    "attention": _draw_attention, "pit": _draw_pit, "fan": _draw_fan, "coverage": _draw_coverage,
}
