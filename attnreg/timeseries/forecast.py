"""Out-of-sample forecasting with re-estimation at every origin: nothing from the future leaks in.

A direct h-step forecast of the target at row j uses the regressors of row j (which must be
lagged at least h periods) and a model estimated at the origin t = date(j) − h from the rows
whose target is observed by t. Everything is re-estimated from those rows at each origin:
centring and scaling, the spectral decomposition (Ω), λ or k (GCV/LOO inside the window),
and for ``method="softmax"`` the heads (warm-started from the previous origin).

Schemes: ``"recursive"`` (expanding window), ``"rolling"`` (the last ``window`` rows) and
``"fixed"`` (estimated once, at the first origin). OLS and ridge on an expanding or rolling
window use rank-one updates of the Gram matrix (:mod:`attnreg.timeseries.updating`).

The arguments are checked in :mod:`attnreg.timeseries.fcargs`, each horizon planned in
:mod:`attnreg.timeseries.planning` and the plans run in :mod:`attnreg.timeseries._running`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import OptionError
from attnreg.timeseries.arlags import forecast_level as _level
from attnreg.timeseries.fcargs import (at_horizon, check_choice, horizons_of, is_iv_formula,
                                      positive_int)
from attnreg.timeseries.iv_forecast import forecast_iv
from attnreg.timeseries.planning import plan_forecasts, plan_iterated

__all__ = ["INTERVALS", "STRATEGIES", "at_horizon", "forecast", "plan_forecasts", "plan_iterated"]

STRATEGIES = ("direct", "iterated")
INTERVALS = ("empirical", "gaussian", "aci", "quantile")


def forecast(formula: str, data: pd.DataFrame, method: str = "ols", *,
             scheme: str = "recursive", start: Any = None, window: int | None = None,
             horizon: int | Sequence[int] = 1, strategy: str = "direct",
             aci_gamma: float = 0.005,
             interval: str | None = None, level: float = 0.9, min_errors: int = 20,
             refit_every: int = 1, benchmark: str = "mean", known: Sequence[str] = (),
             progress: bool | None = None, eval_env: Any = 0, by: str | None = None,
             vintage: str | None = None, evaluate_on: str | int = "first",
             **options: Any) -> Any:
    """Recursive, rolling or fixed-scheme out-of-sample forecasts with evaluation.

    Parameters
    ----------
    formula : str
        ``"infl ~ lag(infl, 1) + lag(unemp, 1)"``: the response at date s regressed on
        regressors known at s − horizon. ``lag``, ``lags`` and ``diff`` work inside formulas.
        The name ``h`` stands for the horizon (unless the data has a column ``h``):
        ``"infl ~ lag(infl, h) + lag(unemp, h)"`` is the direct regression of each horizon.
    data : DataFrame
        Rows in time order (a PeriodIndex or DatetimeIndex is checked for order and gaps).
    method : str
        Any method of :func:`attnreg.attnreg` (:func:`attnreg.methods.method_names`): "ols",
        "ridge", "pcr", "softmax", "block", "ftt", or "quantreg" (with ``tau=``: every τ
        forecast, :mod:`attnreg.timeseries.quantile_forecasts`). A formula with an IV part,
        ``"y ~ lag(x, 1) | lag(d, 1) ~ lag(z, 1)"``, takes "tsls" (its default), "liml",
        "fuller", "gmm" or "cue", every part lagged at least h periods, without intervals,
        views, ``by=`` or vintages (:mod:`attnreg.timeseries.iv_forecast`).
    scheme : {"recursive", "rolling", "fixed"}
    start : label, optional
        Date of the first forecast TARGET (its origin is ``horizon`` rows earlier), the same
        for every horizon. Default: the middle of the sample.
    window : int, optional
        Rolling window length in rows (required for ``scheme="rolling"``).
    horizon : int or sequence of int
        Forecast horizon h ≥ 1, or several (``[1, 2, 4, 8]``): then every horizon is
        forecast at every origin and the results are indexed by (horizon, target date)
        (:class:`~attnreg.timeseries.multihorizon.MultiHorizonForecasts`). For the
        direct strategy every regressor must be lagged at least h periods at horizon h.
    strategy : {"direct", "iterated"}
        ``"direct"``: one model per horizon and origin, fitted to the h-step-ahead targets.
        ``"iterated"`` (pure autoregressions: every regressor a lag of the response, linear
        methods): the one-step model fitted at the origin, iterated h times on its own
        forecasts.
    interval : {None, "empirical", "gaussian", "aci", "quantile"}
        Forecast intervals without look-ahead. ``"empirical"``: quantiles (numpy's default,
        linear interpolation) of the model's own past out-of-sample errors at that horizon
        that are observed by the origin (an h-step error for target s is known at s), NaN
        until ``min_errors`` of them exist. ``"gaussian"`` (ols, ridge, pcr): σ from the fit at
        the origin; at h = 1 the prediction interval of the fit,
        ``t · σ · sqrt(1 + x'(X'X)⁻¹x)`` for OLS (ridge and PCR: their conditional
        covariance, effective df); for h > 1 direct ``z · σ`` (σ of the h-step regression,
        parameter uncertainty ignored); iterated: ``z · σ · sqrt(Σ_{j<h} ψ_j²)`` with ψ the
        MA weights of the fitted AR. ``"aci"``: adaptive conformal intervals (Gibbs & Candès
        2021), the empirical intervals with their miss rate ``α_t`` steered by the coverage
        of the earlier intervals whose outcomes are observed by the origin
        (:mod:`attnreg.timeseries.conformal`): coverage stays near ``level`` when the error
        distribution shifts. ``"quantile"`` (quantile methods, ``method="quantreg"``): the
        forecasts of τ = (1 − level) / 2 and (1 + level) / 2, which ``tau=`` must include
        (:mod:`attnreg.timeseries.quantile_forecasts`).
    level : float
        Nominal coverage of the intervals, in (0, 1).
    min_errors : int
        Empirical and adaptive intervals: past errors needed before the first interval.
    aci_gamma : float
        ``interval="aci"``: step size γ of the update ``α_{t+1} = α_t + γ (α − miss_t)``;
        larger adapts faster but makes the intervals noisier (Gibbs & Candès use 0.005).
    refit_every : int
        Re-estimate every this many origins (the model in between stays the last one fitted).
    benchmark : {"mean"}
        The prevailing mean: at each origin, the mean of every response observed at or before
        it (Campbell-Thompson, Goyal-Welch), the same for every model, lag order and scheme.
    known : sequence of str
        Variables or terms of the formula known in advance (trends, calendar dummies),
        exempt from the leakage guards; an entry the formula does not use is an error.
        Every other term must be computable from past rows: one whose values up to an
        origin change when later rows are added (``x - x.mean()``) is refused
        (:mod:`attnreg.timeseries.lookahead`).
    progress : bool or None
        Show a progress line on stderr: True always, False never; None (default) when the
        forecasts are expected to take more than a few seconds (judged from the first fit).
    by : str, optional
        Many series in one long frame (dates in its index): the column of the series ids.
        Each series is forecast as this function forecasts its rows alone, and the results
        come as a :class:`~attnreg.timeseries.panel.PanelForecasts` (several horizons:
        ``at_horizon(h)``, ``pooled_by_horizon``).
    vintage : str, optional
        Real-time data: ``data`` holds every vintage in long form (dates in the index) and
        this column each row's release date; a dict ``{vintage: DataFrame}`` needs no
        ``vintage``. Each origin uses the latest vintage published by it, and the results come
        as a :class:`~attnreg.timeseries.vintages.RealTimeForecasts` (several horizons:
        :class:`~attnreg.timeseries.realtime.RealTimeHorizons`), with any ``interval=``
        (empirical and adaptive ones from the first-release errors published by the origin)
        and ``by=`` (:mod:`attnreg.timeseries.vintages`).
    evaluate_on : {"first", "latest"} or int
        Real-time data: the release the forecasts are evaluated against (int k: the k-th).
    **options
        Method options (``lam``, ``k``, ``standardize``; softmax: ``heads``, ``seed``, ...).

    Returns
    -------
    ForecastResults or MultiHorizonForecasts or PanelForecasts or RealTimeForecasts or RealTimeHorizons
        A scalar ``horizon`` gives :class:`ForecastResults` (indexed by target date); a
        sequence gives :class:`MultiHorizonForecasts` (indexed by horizon and target date;
        ``fc.at_horizon(h)`` is the ForecastResults of one horizon, ``fc.horizons`` the list).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="2000Q1")
    >>> fc
    <attnreg forecasts: ols, recursive, h=1, 39 forecasts, OOS R²=-0.0430>
    >>> fc.forecasts[["forecast", "actual"]].head(2).round(3)  # doctest: +NORMALIZE_WHITESPACE
            forecast  actual
    target
    2000Q1     3.311    3.76
    2000Q2     3.976    4.19

    Four quarters ahead, ridge with λ by GCV at each origin, on a rolling 60-quarter window
    (every regressor must be lagged at least ``horizon`` periods):

    >>> ar.forecast("infl ~ lag(infl, 4) + lag(unemp, 4)", macro, method="ridge",
    ...             scheme="rolling", window=60, start="2000Q1", horizon=4).plan.horizon
    4

    Several horizons in one call (direct regressions on ``lag(., h)``), with 80 % intervals
    from each horizon's own past errors:

    >>> fh = ar.forecast("infl ~ lag(infl, h) + lag(unemp, h)", macro, start="1985Q1",
    ...                  horizon=[1, 4], interval="empirical", level=0.8)
    >>> fh.horizons
    [1, 4]
    >>> fh.forecasts.index.names
    FrozenList(['horizon', 'target'])
    >>> fh.evaluation[["n_intervals", "coverage"]].round(3)  # doctest: +NORMALIZE_WHITESPACE
             n_intervals  coverage
    horizon
    1               79.0     0.734
    4               76.0     0.605
    """
    from attnreg.api import capture_env as _capture_env, formula_namespace
    from attnreg.timeseries._running import run_all

    if (iv_parts := is_iv_formula(formula)) is not None:  # y ~ lag(x, 1) | lag(d, 1) ~ lag(z, 1)
        return forecast_iv(formula, iv_parts, data, method, horizon=horizon, options=options,
                           env=_capture_env(eval_env), namespace=formula_namespace(),
                           given=dict(interval=interval, strategy=strategy, by=by,
                                      vintage=vintage, evaluate_on=evaluate_on),
                           scheme=scheme, start=start, window=window, refit_every=refit_every,
                           benchmark=benchmark, known=known)
    if by is not None:  # many series: attnreg.timeseries.panel
        from attnreg.timeseries.panel import forecast_by

        return forecast_by(forecast, formula, data, method, by=by, eval_env=_capture_env(eval_env),
                           scheme=scheme, start=start, window=window, horizon=horizon,
                           strategy=strategy, aci_gamma=aci_gamma, interval=interval,
                           level=level, min_errors=min_errors, refit_every=refit_every,
                           benchmark=benchmark, known=known, progress=progress,
                           vintage=vintage, evaluate_on=evaluate_on, **options)
    if vintage is not None or isinstance(data, dict):  # real-time data
        return _real_time(formula, data, method, vintage=vintage, evaluate_on=evaluate_on,
                          horizon=horizon, scheme=scheme, start=start, window=window,
                          known=known, eval_env=_capture_env(eval_env), options=options,
                          strategy=strategy,
                          refit_every=refit_every, interval=interval, level=level,
                          min_errors=min_errors, aci_gamma=aci_gamma)
    if evaluate_on != "first":
        raise OptionError(f"evaluate_on applies to real-time data (vintage=), however: "
                          f"{evaluate_on=!r} without vintages")
    horizons = horizons_of(horizon)
    check_choice("strategy", strategy, STRATEGIES)
    if strategy == "iterated" and isinstance(formula, str) and isinstance(data, pd.DataFrame) \
            and at_horizon(formula, 1, data) != formula:
        raise OptionError(f"strategy='iterated' iterates one one-step model to every horizon, so "
                          f"its formula cannot depend on the horizon, however {formula!r} uses "
                          "the name h: write the lags as numbers (lag(y, 1)) or use "
                          "strategy='direct'")
    if interval is not None:
        check_choice("interval", interval, INTERVALS)
    level = _level(level)
    min_errors = positive_int("min_errors", min_errors)
    from attnreg.timeseries.conformal import check_aci_gamma

    aci_gamma = check_aci_gamma(aci_gamma)
    env, namespace = _capture_env(eval_env), formula_namespace()
    common = dict(scheme=scheme, start=start, window=window, refit_every=refit_every,
                  benchmark=benchmark, known=known, env=env, namespace=namespace,
                  options=options, strategy=strategy, interval=interval, level=level,
                  min_errors=min_errors, aci_gamma=aci_gamma)
    plans: list[Any]
    if strategy == "iterated":
        plans = [plan_iterated(formula, data, method, horizons=horizons, **common)]
    else:  # every horizon planned (and guarded) before the first fit
        plans = [plan_forecasts(at_horizon(formula, h, data), data, method, horizon=h,
                                **common) for h in horizons]
    from attnreg.methods import get_method
    from attnreg.threads import user_threads

    with user_threads(get_method(method).capabilities.torch):
        parts = run_all(plans, horizons, progress)
    if isinstance(horizon, (int, np.integer)):
        return parts[0]
    from attnreg.timeseries.multihorizon import MultiHorizonForecasts

    return MultiHorizonForecasts(parts=tuple(parts), formula=formula)


def _real_time(formula: str, data: Any, method: str, *, horizon: Any, strategy: str,
               refit_every: int, interval: str | None, level: float, min_errors: int,
               aci_gamma: float, eval_env: Any, **kw: Any) -> Any:
    """Real-time forecasts (:mod:`attnreg.timeseries.realtime`), arguments checked."""
    from attnreg.api import capture_env as _capture_env, formula_namespace
    from attnreg.timeseries.conformal import check_aci_gamma
    from attnreg.timeseries.realtime import forecast_real_time

    if strategy != "direct" or refit_every != 1:
        raise OptionError("real-time forecasts (vintage=) use the direct strategy and a refit "
                          "at every origin (each origin has its own vintage): leave strategy "
                          "and refit_every at their defaults")
    if interval is not None:
        check_choice("interval", interval, INTERVALS)
    return forecast_real_time(formula, data, method, horizons=horizons_of(horizon),
                              several=not isinstance(horizon, (int, np.integer)),
                              at_horizon=at_horizon, interval=interval, level=_level(level),
                              min_errors=positive_int("min_errors", min_errors),
                              aci_gamma=check_aci_gamma(aci_gamma), env=_capture_env(eval_env),
                              namespace=formula_namespace(), plan_forecasts=plan_forecasts,
                              **kw)


