"""The views of a forecast run: which past rows each forecast attended to, and how much.

:func:`attention_over_time` summarises that over origins: the attention each forecast puts
on past periods grouped by age (the last 4, 5–20, 21–40 periods and older) or by calendar
decade, as tables (origins × buckets) that ``plot_forecasts(fc, "attention")`` draws.

Computed by the forecasting engine from the plan: the model of a forecast is the one the run
kept (softmax: warm-started, so it cannot be refitted alone) or the window's deterministic
refit (:func:`attnreg.timeseries.plan.fit_window`, with the λ or k the run used).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray, IntArray
from attnreg.views.attention import AttentionWeights
from attnreg.exceptions import OptionError
from attnreg.methods import get_method
from attnreg.timeseries.plan import fit_window

if TYPE_CHECKING:
    from attnreg.timeseries.forecast_results import ForecastResults

__all__ = ["AttentionOverTime", "attention_over_time", "attention_shares", "forecast_attention",
           "last_refit", "model_at", "single_horizon"]


def _tuning_at(res: ForecastResults, i: int) -> float | None:
    """The λ or k forecast ``i`` used, so that a refit reproduces it exactly."""
    if res.tuning_path is None:
        return None
    value = float(res.tuning_path[i])
    return int(value) if get_method(res.plan.method).tuning == "k" else value


def model_at(res: ForecastResults, i: int) -> Any:
    """The model that forecast ``i`` (a refit position) was made with."""
    if res.models is not None:
        return res.models[i]
    return fit_window(res.plan, i, _tuning_at(res, i))


def last_refit(res: ForecastResults, i: int) -> int:
    """The position of the refit whose model made forecast ``i``."""
    return int(np.flatnonzero(res.plan.refit[: i + 1])[-1])


def _attention_of_row(fit: Any, row: FloatArray, labels: pd.Index,
                      chunk_size: int | None) -> AttentionWeights:
    capabilities = get_method(fit.method).capabilities
    if not capabilities.attention:
        raise OptionError(f"attention weights are defined for the spectral and softmax methods, "
                          f"not for method {fit.method!r} (it declares no attention capability)")
    if capabilities.intercept_free:
        row = row[:, 1:] if fit.design.intercept else row
    return fit.attention_of(row, labels, chunk_size)  # type: ignore[no-any-return]


def forecast_attention(res: ForecastResults, i: int,
                       chunk_size: int | None = None) -> AttentionWeights:
    """Weights of forecast ``i`` over the rows its model was estimated from."""
    fit = model_at(res, last_refit(res, i))
    row = res.plan.design.X[res.plan.targets[i]][None, :]
    return _attention_of_row(fit, row, res.forecasts.index[i:i + 1], chunk_size)


def attention_shares(res: ForecastResults, recent: tuple[int, ...]) -> pd.DataFrame:
    """Σ|ω| on the ``k`` most recent training rows over Σ|ω|, for every forecast and k."""
    out = np.empty((res.plan.n_forecasts, len(recent)))
    fit = None
    for i in range(res.plan.n_forecasts):
        if res.plan.refit[i] or fit is None:
            fit = model_at(res, i)
        row = res.plan.design.X[res.plan.targets[i]][None, :]
        w = np.abs(_attention_of_row(fit, row, pd.Index([0]), None).weights.to_numpy()[0])
        out[i] = [w[-k:].sum() / w.sum() for k in recent]
    return pd.DataFrame(out, columns=[f"last_{k}" for k in recent], index=res.forecasts.index)


def single_horizon(res: Any, horizon: int | None = None) -> Any:
    """The results of one horizon: ``res`` itself, or ``res.at_horizon(horizon)`` when it holds
    several (``horizon`` may be omitted when it holds one).

    Raises
    ------
    OptionError
        If the horizon is missing (several held) or not among those forecast.
    """
    if hasattr(res, "at_horizon"):
        held = [int(h) for h in res.horizons]
        if horizon is None and len(held) == 1:
            horizon = held[0]
        if horizon is None:
            raise OptionError(f"these forecasts hold horizons {held}: choose one with horizon=")
        if horizon not in held:
            raise OptionError(f"horizon {horizon!r} was not forecast; the horizons are {held}")
        return res.at_horizon(horizon)
    if horizon is not None and horizon != res.plan.horizon:
        raise OptionError(f"these forecasts are at horizon {res.plan.horizon}, however: "
                          f"horizon={horizon!r}")
    return res


@dataclass(frozen=True)
class AttentionOverTime:
    """Attention of each forecast over past periods, summed by bucket (origins × buckets).

    Attributes
    ----------
    weight : DataFrame, shape (n_origins, n_buckets)
        Σ ω over the training periods of each bucket: signed for the linear methods (with an
        intercept each row sums to 1; a negative entry means the forecast leans away from
        those periods' responses), non-negative for softmax (each row sums to 1).
    share : DataFrame, shape (n_origins, n_buckets)
        Σ |ω| over the bucket divided by Σ |ω| over all training periods: how much of the
        forecast's attention, whatever its sign, falls on the bucket (rows sum to 1; equal
        to ``weight`` for softmax).
    buckets : str
        ``"age"`` (periods before the origin: 1 is the origin's own period) or ``"decade"``.
    kind : str
        ``"linear"`` or ``"softmax"``.

    Both tables are indexed by origin; column ``"1-4"`` holds the last four periods observed
    at the origin, ``"41+"`` everything older than 40 (or decades ``"1960s"``, ...).
    :func:`attnreg.timeseries.fcplots.plot_attention_time` draws them as a heat-map.
    """

    weight: pd.DataFrame
    share: pd.DataFrame
    buckets: str
    kind: str


def _select_origins(res: Any, origins: Any) -> IntArray:
    """Forecast positions whose origin is ``origins``: None (all), a label, a list of labels,
    or a ``slice(first, last)`` of labels (both included)."""
    labels = pd.Index(res.plan.origin_labels)
    n = labels.size
    if origins is None:
        return np.arange(n)
    if isinstance(origins, slice):
        if origins.step is not None:
            raise OptionError("origins=slice(first, last) takes no step")
        lo = 0 if origins.start is None else _origin_position(labels, origins.start)
        hi = n - 1 if origins.stop is None else _origin_position(labels, origins.stop)
        if hi < lo:
            raise OptionError(f"origins={origins!r} is empty: {origins.stop!r} precedes "
                              f"{origins.start!r}")
        return np.arange(lo, hi + 1)
    if isinstance(origins, (list, tuple, np.ndarray, pd.Index)):
        return np.array([_origin_position(labels, o) for o in origins], dtype=np.int64)
    return np.array([_origin_position(labels, origins)], dtype=np.int64)


def _origin_position(labels: pd.Index, label: Any) -> int:
    try:
        position = labels.get_loc(label)
    except (KeyError, TypeError, ValueError):
        raise OptionError(f"{label!r} is not a forecast origin (origins run from {labels[0]!r} "
                          f"to {labels[-1]!r})") from None
    if not isinstance(position, (int, np.integer)):
        raise OptionError(f"{label!r} matches more than one forecast origin")
    return int(position)


def _age_edges(buckets: Sequence[int]) -> tuple[IntArray, list[str]]:
    edges = np.asarray(buckets)
    if edges.ndim != 1 or edges.size == 0 or not np.issubdtype(edges.dtype, np.integer) or \
            edges[0] < 1 or np.any(np.diff(edges) <= 0):
        raise OptionError(f"buckets must be increasing positive integers (ages in periods, e.g. "
                          f"(4, 20, 40)) or 'decade', however: buckets={buckets!r}")
    lows = np.r_[1, edges + 1]
    names = [f"{lo}-{hi}" if lo != hi else f"{lo}" for lo, hi in zip(lows[:-1], edges, strict=True)]
    return edges.astype(np.int64), [*names, f"{lows[-1]}+"]


def _years(labels: pd.Index) -> IntArray | None:
    if isinstance(labels, (pd.PeriodIndex, pd.DatetimeIndex)):
        return np.asarray(labels.year, dtype=np.int64)
    return None


def attention_over_time(res: Any, origins: Any = None,
                        buckets: Sequence[int] | str = (4, 20, 40), *,
                        horizon: int | None = None) -> AttentionOverTime:
    """How each forecast's attention is spread over the past: sums of weights by period bucket.

    For every selected forecast, the weights ω of its prediction over the training periods
    of the model that made it (the very model of the run: for softmax the one kept, for the
    spectral methods the window's refit with the λ or k the run used — so only data
    observed by the origin enter) are summed within buckets of periods.

    Parameters
    ----------
    res : ForecastResults (or several-horizon results with ``horizon=``)
    origins : label, list of labels or slice, optional
        Forecast origins to summarise: one origin, several, or ``slice(first, last)`` (both
        included). Default: every origin.
    buckets : sequence of int or "decade", default (4, 20, 40)
        Ages in periods bounding the buckets: ``(4, 20, 40)`` gives the last 4 periods
        (age 1 is the origin's own period), 5–20, 21–40 and older. ``"decade"`` groups the
        training periods by calendar decade (the data need a PeriodIndex or DatetimeIndex).
        Ages count periods of the data's index (rows, for an index without frequency).
    horizon : int, optional
        The horizon, for results that hold several.

    Returns
    -------
    AttentionOverTime
        ``weight`` (signed sums; each row sums to 1 with an intercept) and ``share``
        (absolute shares Σ|ω| / Σ|ω|), both DataFrames of shape (n_origins, n_buckets).

    Raises
    ------
    OptionError
        For an origin not forecast from, invalid buckets, ``"decade"`` on an undated index,
        or a method without attention weights.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> from attnreg.timeseries.views import attention_over_time
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="2000Q1")
    >>> att = attention_over_time(fc, origins=slice("1999Q4", "2000Q2"))
    >>> att.share.round(3)  # doctest: +NORMALIZE_WHITESPACE
              1-4   5-20  21-40    41+
    origin
    1999Q4  0.046  0.134  0.057  0.762
    2000Q1  0.046  0.128  0.054  0.772
    2000Q2  0.046  0.125  0.052  0.777
    >>> att.weight.sum(axis=1).round(12).tolist()   # signed weights sum to 1 (intercept)
    [1.0, 1.0, 1.0]
    >>> attention_over_time(fc, origins="2008Q3", buckets="decade").weight.round(3)
    ... # doctest: +NORMALIZE_WHITESPACE
            1950s  1960s  1970s  1980s  1990s  2000s
    origin
    2008Q3  0.041  0.411 -0.232  0.117  0.378  0.286
    """
    res = single_horizon(res, horizon)
    plan, design = res.plan, res.plan.design
    if getattr(plan, "strategy", "direct") == "iterated":
        raise OptionError("attention over time describes the fit that made each forecast; an "
                          "iterated forecast chains several one-step predictions: use "
                          "strategy='direct'")
    chosen = _select_origins(res, origins)
    by_decade = isinstance(buckets, str)
    if by_decade and buckets != "decade":
        raise OptionError(f"buckets must be a sequence of ages or 'decade', however: {buckets=}")
    years = _years(design.row_labels) if by_decade else None
    if by_decade and years is None:
        raise OptionError("buckets='decade' needs dated rows (a PeriodIndex or DatetimeIndex), "
                          f"however the index is a {type(design.row_labels).__name__}")
    if by_decade:
        assert years is not None
        decades = years // 10 * 10
        used = np.unique(np.concatenate([decades[:plan.train_stop[chosen].max()]]))
        names = [f"{d}s" for d in used]
    else:
        edges, names = _age_edges(buckets)  # type: ignore[arg-type]
    rows = (design.data_rows if design.data_rows is not None
            else np.arange(design.y.size)).astype(np.int64)
    weight = np.zeros((chosen.size, len(names)))
    absolute = np.zeros_like(weight)
    refit_of = np.maximum.accumulate(np.where(plan.refit, np.arange(plan.n_forecasts), 0))
    kind = "linear"
    for p in np.unique(refit_of[chosen]):  # one model per refit, all its forecasts at once
        mine = np.flatnonzero(refit_of[chosen] == p)
        fit = model_at(res, int(p))
        at = chosen[mine]
        aw = _attention_of_row(fit, design.X[plan.targets[at]], pd.Index(at), None)
        kind = aw.kind
        W = aw.weights.to_numpy()
        train = plan.rows(int(p))
        if by_decade:
            group = np.searchsorted(used, decades[train])[None, :].repeat(at.size, axis=0)
        else:
            origin_pos = rows[plan.targets[at]] - plan.horizon
            age = origin_pos[:, None] - rows[train][None, :] + 1
            group = np.searchsorted(edges, age, side="left")
        flat = (group + len(names) * np.arange(at.size)[:, None]).ravel()
        size = at.size * len(names)
        weight[mine] = np.bincount(flat, W.ravel(), minlength=size).reshape(at.size, -1)
        absolute[mine] = np.bincount(flat, np.abs(W).ravel(), minlength=size).reshape(at.size, -1)
    share = absolute / absolute.sum(axis=1, keepdims=True)
    index = pd.Index(pd.Index(plan.origin_labels)[chosen], name="origin")
    columns = pd.Index(names)
    return AttentionOverTime(pd.DataFrame(weight, index=index, columns=columns),
                             pd.DataFrame(share, index=index, columns=columns),
                             "decade" if by_decade else "age", kind)
