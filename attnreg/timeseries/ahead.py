"""Forecasts past the end of the data (ex ante), with intervals, from a forecast run's setting.

After the pseudo-out-of-sample evaluation, :func:`forecast_ahead` re-estimates each
horizon's model at the last origin T (the last row of the data whose response is observed
and used) by the run's own rules and forecasts T + h, labelled by the data's index when the
data has rows past T (e.g. with the future values of regressors declared ``known``, the
response left missing) and else by labels continuing its frequency:

* **direct**: the h-step regression fitted to the design rows whose target is observed by
  T (all of them; a rolling scheme keeps the last ``window``; the fixed scheme, too, is
  re-estimated on all rows), predicted at the regressors of T + h, which the formula's lags
  of at least h periods build from data up to T;
* **iterated**: the one-step model fitted on all rows, iterated h times from the last
  observed values.

Intervals: ``"gaussian"`` (ols, ridge, pcr) is the fit's prediction interval
``t · sqrt(σ² + x'Vx)`` for direct forecasts at every horizon (for OLS exactly
``predict(interval="prediction")`` of the h-step regression) and, iterated,
``t · sqrt(σ² + x'Vx)`` at h = 1 and ``z · σ · sqrt(Σψ²)`` beyond (as the run's own
intervals); ``"empirical"`` adds the quantiles of the run's out-of-sample errors at that
horizon, all observed by T (NaN with fewer than ``min_errors``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, OptionError, RankDeficiencyWarning
from attnreg.methods import get_method
from attnreg.timeseries import intervals as iv
from attnreg.timeseries.plan import ForecastPlan, checked_options, subdesign

__all__ = ["forecast_ahead", "future_labels"]

COLUMNS = ("origin", "forecast", "lower", "upper", "n_train")


def future_labels(index: pd.Index, n: int) -> pd.Index:
    """The labels of the ``n`` periods after the last one of ``index``.

    A PeriodIndex continues at its frequency, a DatetimeIndex at its own (or inferred)
    frequency, a numeric index by its constant step (1 if the steps differ); other indexes
    get ``"<last>+h"``.

    Examples
    --------
    >>> future_labels(pd.period_range("2000Q3", periods=2, freq="Q"), 3).astype(str).tolist()
    ['2001Q1', '2001Q2', '2001Q3']
    >>> future_labels(pd.date_range("2020-01-31", periods=3, freq="ME"), 2).strftime("%F").tolist()
    ['2020-04-30', '2020-05-31']
    >>> future_labels(pd.RangeIndex(0, 10, 2), 2).tolist()
    [10, 12]
    """
    from attnreg.formula.time_index import infer_offset

    last, steps = index[-1], np.arange(1, n + 1)
    if isinstance(index, pd.PeriodIndex):
        return pd.PeriodIndex([last + int(k) for k in steps], freq=index.freq)
    if isinstance(index, pd.DatetimeIndex):
        offset = infer_offset(index)
        if offset is None:
            raise DataError("ahead() cannot continue the data's dates: its DatetimeIndex has no "
                            "frequency and none can be inferred; give it one (e.g. "
                            "data.asfreq('MS')) or use a PeriodIndex")
        return pd.DatetimeIndex([last + int(k) * offset for k in steps], freq=offset)
    if pd.api.types.is_numeric_dtype(index.dtype) and not pd.api.types.is_bool_dtype(index):
        diffs = np.unique(np.diff(np.asarray(index)))
        step = diffs[0] if diffs.size == 1 else 1
        return pd.Index(last + step * steps)
    return pd.Index([f"{last}+{k}" for k in steps])


def forecast_ahead(parts: list[Any], interval: str | None, level: float | None) -> pd.DataFrame:
    """Ex ante forecasts of every horizon of ``parts`` (ForecastResults), one row each.

    Parameters
    ----------
    parts : list of ForecastResults
        One per horizon (of the same run).
    interval : {None, "gaussian", "empirical", "quantile"}
        ``"quantile"`` (quantile methods): the central interval of the predictive
        distribution of the τ forecasts (:mod:`attnreg.timeseries.quantile_density`). None:
        the run's own interval type ("empirical" after an ``interval="aci"`` run: the
        past errors' quantiles at the nominal level, the adaptive level not carried past
        the data), else "gaussian" for ols/ridge/pcr and "empirical" for the other methods.
    level : float or None
        Nominal coverage; None: the run's own ``level``.

    Returns
    -------
    DataFrame, shape (n_horizons, 5)
        Indexed by (horizon, target); columns origin, forecast, lower, upper, n_train.
    """
    plan = parts[0].plan
    spectral = get_method(plan.method).capabilities.linear
    run_kind = "empirical" if plan.interval == "aci" else plan.interval
    kind = interval or run_kind or ("gaussian" if spectral else "empirical")
    valid = ("gaussian", "empirical") + (
        ("quantile",) if get_method(plan.method).capabilities.quantiles else ())
    if kind not in valid:
        raise OptionError(f"interval must be {' or '.join(map(repr, valid))}, however: "
                          f"{interval=!r}")
    if kind == "gaussian" and not spectral:
        raise OptionError(f"interval='gaussian' needs a linear fit (ols, ridge, pcr), not "
                          f"method {plan.method!r} (it declares no linear capability): use "
                          "interval='empirical'")
    from attnreg.timeseries.arlags import forecast_level as _level

    level = plan.level if level is None else _level(level)
    data = plan.design.data
    if not isinstance(data, pd.DataFrame):
        raise DataError("ahead() needs the data the forecasts were made from; this run does "
                        "not keep it (a forecast restored from an old pickle?)")
    horizons = [p.plan.horizon for p in parts]
    T = max(int(data.index.get_indexer(p.plan.design.row_labels[-1:])[0]) for p in parts)
    extended = _extended(data, T + max(horizons))
    if plan.strategy == "iterated":
        rows = _iterated(parts, extended, T, kind, level)
    else:
        rows = [_direct(p, extended, T, kind, level) for p in parts]
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame.index = pd.MultiIndex.from_arrays(
        [horizons, extended.index[T + np.asarray(horizons)]], names=["horizon", "target"])
    return frame


def _extended(data: pd.DataFrame, last: int) -> pd.DataFrame:
    """The data's rows up to position ``last``, with empty rows at new labels past its end."""
    beyond = last - (len(data) - 1)
    if beyond <= 0:
        return data.iloc[: last + 1]
    return data.reindex(data.index.append(future_labels(data.index, beyond)))


def _final_fit(plan: ForecastPlan) -> tuple[Any, int]:
    """The model estimated at the last origin from the plan's rules, and its training rows."""
    design = plan.design
    start = 0 if plan.window is None else max(design.n_obs - plan.window, 0)
    if design.n_obs - start <= design.n_coef:
        raise DataError(f"ahead() has {design.n_obs - start} training rows for "
                        f"{design.n_coef} coefficients")
    options = checked_options(plan)  # a copy: the plan's options stay as they are
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        fit = get_method(plan.method).fit_design(
            subdesign(design, np.arange(start, design.n_obs)), options)
    return fit, design.n_obs - start


def _future_row(plan: ForecastPlan, data: pd.DataFrame, T: int) -> FloatArray:
    """The regressors of row T + h, from rows up to T (and known terms' own future values)."""
    target = data.index[T + plan.horizon]
    X, _ = plan.design.rebuild(data.iloc[: T + plan.horizon + 1])  # lags reach back any way
    row = X[-1]
    if not np.isfinite(row).all():
        from attnreg.formula.lags import min_lag

        late = [f.code for f in plan.design.design_info.factor_infos
                if (lag := min_lag(f.code)) is None or lag < plan.horizon]
        what = (f"the term(s) {', '.join(map(repr, late))}, lagged less than the horizon "
                f"{plan.horizon}, are not known at the last origin {data.index[T]!r}: a term "
                "declared known=[...] needs its future values, in rows after the last "
                "observed response (left missing)"
                if late else "the data's last rows have missing values")
        raise DataError(f"ahead() cannot build the regressors of target {target!r}: {what}")
    return row


def _bounds(res: Any, pred: float, half: float | None, kind: str, level: float,
            origin_pos: int) -> tuple[float, float]:
    """Interval bounds: ``pred ± half`` (gaussian) or past errors' quantiles (empirical)."""
    if kind == "gaussian":
        assert half is not None
        return pred - half, pred + half
    p = res.plan
    errors = p.design.y[p.targets] - res.predictions
    assert p.target_pos is not None and p.origin_pos is not None
    lower, upper, _ = iv.empirical_bounds(
        np.r_[res.predictions, pred], np.r_[errors, np.nan],
        np.r_[p.target_pos, origin_pos + p.horizon], np.r_[p.origin_pos, origin_pos],
        level, p.min_errors)
    return float(lower[-1]), float(upper[-1])


def _direct(res: Any, data: pd.DataFrame, T: int, kind: str,
            level: float) -> tuple[Any, ...]:
    """One horizon's ex ante row: the h-step model on all rows, at the regressors of T + h."""
    p = res.plan
    estimator = get_method(p.method)
    fit, n_train = _final_fit(p)
    x = _future_row(p, data, T)
    if estimator.capabilities.quantiles:  # every τ forecast: median and central interval
        from attnreg.timeseries.quantile_density import central_interval

        mid, lo, hi = central_interval((x @ fit.coef.to_numpy())[None, :], np.asarray(fit.taus),
                                       level)
        if kind == "quantile":
            return data.index[T], float(mid[0]), float(lo[0]), float(hi[0]), n_train
        pred = float(mid[0])
    else:
        pred = float(estimator.predict_design(fit, x[None, :])[0])
    half = None
    if kind == "gaussian":
        half = float(iv.gaussian_quantile(level, fit.df_resid)) * iv.linear_prediction_sd(fit, x)
    lower, upper = _bounds(res, pred, half, kind, level, T)
    return data.index[T], pred, lower, upper, n_train


def _iterated(parts: list[Any], data: pd.DataFrame, T: int, kind: str,
              level: float) -> list[tuple[Any, ...]]:
    """Every horizon's ex ante row: the one-step model on all rows, iterated h times."""
    from attnreg.timeseries.arlags import ar_lags

    p = parts[0].plan
    fit, n_train = _final_fit(p)
    lags = ar_lags(p.design)
    coef = np.nan_to_num(np.asarray(fit.filtered.coef, dtype=np.float64))
    response = data.index.get_indexer(p.design.row_labels)  # data position of each design row
    y_at = np.full(len(data), np.nan)
    for c in np.flatnonzero(lags):  # the response by data position, early values from lags
        y_at[response - lags[c]] = p.design.X[:, c]
    y_at[response] = p.design.y
    kmax, H = int(lags.max()), max(r.plan.horizon for r in parts)
    hist = np.r_[y_at[T + 1 - kmax : T + 1], np.zeros(H)]
    if not np.isfinite(hist[:kmax]).all():
        raise DataError(f"ahead() needs the last {kmax} values of the response, observed at "
                        f"{data.index[T + 1 - kmax]!r} to {data.index[T]!r}; some are missing")
    const, slopes = coef[lags == 0].sum(), coef[lags > 0]
    for step in range(1, H + 1):
        hist[kmax - 1 + step] = const + slopes @ hist[kmax - 1 + step - lags[lags > 0]]
    phi = np.zeros((1, kmax))
    for c in np.flatnonzero(lags):
        phi[0, lags[c] - 1] += coef[c]
    psi = iv.ar_psi_weights(phi, H)[0]
    x1 = np.where(lags == 0, 1.0, hist[np.maximum(kmax - lags, 0)])  # regressors of T + 1
    rows = []
    for res in parts:
        h = res.plan.horizon
        pred, half = float(hist[kmax - 1 + h]), None
        if kind == "gaussian" and h == 1:
            half = float(iv.gaussian_quantile(level, fit.df_resid)) * iv.linear_prediction_sd(
                fit, x1)
        elif kind == "gaussian":
            half = float(iv.gaussian_quantile(level)) * float(fit.sigma) * float(
                np.sqrt((psi[:h] ** 2).sum()))
        lower, upper = _bounds(res, pred, half, kind, level, T)
        rows.append((data.index[T], pred, lower, upper, n_train))
    return rows
