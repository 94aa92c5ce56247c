"""Out-of-sample forecasting with re-estimation at every origin: nothing from the future leaks in.

A direct h-step forecast of the target at row j uses the regressors of row j (which must be
lagged at least h periods) and a model estimated at the origin t = date(j) − h from the rows
whose target is observed by t. Everything is re-estimated from those rows at each origin:
centring and scaling, the spectral decomposition (Ω), λ or k (GCV/LOO inside the window),
and for ``method="softmax"`` the heads (warm-started from the previous origin).

Schemes: ``"recursive"`` (expanding window), ``"rolling"`` (the last ``window`` rows) and
``"fixed"`` (estimated once, at the first origin). OLS and ridge on an expanding or rolling
window use rank-one updates of the Gram matrix (:mod:`attnreg.timeseries.updating`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import IntArray
from attnreg.formula.design import Design, build_design
from attnreg.exceptions import DataError, LeakageError, OptionError
from attnreg.timeseries import lookahead as lk
from attnreg.timeseries.arlags import ar_lags, forecast_level as _level
from attnreg.timeseries.plan import ForecastPlan, IteratedPlan
from attnreg.formula.lags import min_lag
from attnreg.formula.time_index import check_time_index

SCHEMES = ("recursive", "rolling", "fixed")
BENCHMARKS = ("mean",)
STRATEGIES = ("direct", "iterated")
INTERVALS = ("empirical", "gaussian", "aci", "quantile")
#: patsy transforms that learn from the whole sample (a look-ahead in a forecast loop)
STATEFUL = ("center", "standardize", "scale", "bs", "cr", "cc", "te", "poly")


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
        forecast, :mod:`attnreg.timeseries.quantile_forecasts`).
    scheme : {"recursive", "rolling", "fixed"}
    start : label, optional
        Date of the first forecast TARGET (its origin is ``horizon`` rows earlier), the same
        for every horizon. Default: the middle of the sample.
    window : int, optional
        Rolling window length in rows (required for ``scheme="rolling"``).
    horizon : int or sequence of int
        Forecast horizon h ≥ 1, or several (``[1, 2, 4, 8]``): then every horizon is
        forecast at every origin and the results are indexed by (horizon, target date)
        (:class:`~attnreg.timeseries.forecast_results.MultiHorizonForecasts`). For the
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
        as a :class:`~attnreg.timeseries.vintages.RealTimeForecasts` (one horizon; no
        intervals) (:mod:`attnreg.timeseries.vintages`).
    evaluate_on : {"first", "latest"} or int
        Real-time data: the release the forecasts are evaluated against (int k: the k-th).
    **options
        Method options (``lam``, ``k``, ``standardize``; softmax: ``heads``, ``seed``, ...).

    Returns
    -------
    ForecastResults or MultiHorizonForecasts or PanelForecasts or RealTimeForecasts
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

    if vintage is not None or isinstance(data, dict):  # real-time data
        from attnreg.timeseries.vintages import forecast_vintages

        if interval is not None or strategy != "direct" or refit_every != 1 or by is not None \
                or not isinstance(horizon, (int, np.integer)):
            raise OptionError("real-time forecasts (vintage=) take one horizon, the direct "
                              "strategy, a refit at every origin, no interval= and no by=")
        return forecast_vintages(formula, data, method, vintage=vintage, evaluate_on=evaluate_on,
                                 horizon=_positive_int("horizon", horizon), scheme=scheme,
                                 start=start, window=window, known=known,
                                 env=_capture_env(eval_env), namespace=formula_namespace(),
                                 options=options, plan_forecasts=plan_forecasts)
    if evaluate_on != "first":
        raise OptionError(f"evaluate_on applies to real-time data (vintage=), however: "
                          f"{evaluate_on=!r} without vintages")
    if by is not None:  # many series: attnreg.timeseries.panel
        from attnreg.timeseries.panel import forecast_by

        return forecast_by(forecast, formula, data, method, by=by, eval_env=_capture_env(eval_env),
                           scheme=scheme, start=start, window=window, horizon=horizon,
                           strategy=strategy, aci_gamma=aci_gamma, interval=interval,
                           level=level, min_errors=min_errors, refit_every=refit_every,
                           benchmark=benchmark, known=known, progress=progress, **options)
    horizons = _horizons(horizon)
    _check_choice("strategy", strategy, STRATEGIES)
    if strategy == "iterated" and isinstance(formula, str) and isinstance(data, pd.DataFrame) \
            and at_horizon(formula, 1, data) != formula:
        raise OptionError(f"strategy='iterated' iterates one one-step model to every horizon, so "
                          f"its formula cannot depend on the horizon, however {formula!r} uses "
                          "the name h: write the lags as numbers (lag(y, 1)) or use "
                          "strategy='direct'")
    if interval is not None:
        _check_choice("interval", interval, INTERVALS)
    level = _level(level)
    min_errors = _positive_int("min_errors", min_errors)
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
    from attnreg.timeseries.forecast_results import MultiHorizonForecasts

    return MultiHorizonForecasts(parts=tuple(parts), formula=formula)


def at_horizon(formula: str, h: int, data: pd.DataFrame) -> str:
    """The formula of horizon ``h``: the name ``h`` replaced by the number (not a column).

    Examples
    --------
    >>> at_horizon("y ~ lag(y, h) + lag(x, h + 1)", 4, pd.DataFrame({"y": [1.0]}))
    'y ~ lag(y, 4) + lag(x, 4 + 1)'
    """
    if "h" in data.columns:
        return formula
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(formula).readline))
    except (tokenize.TokenError, SyntaxError):
        return formula  # the formula parser reports it
    starts = np.cumsum([0] + [len(line) for line in formula.splitlines(keepends=True)])
    out, last = [], 0
    for k, tok in enumerate(tokens):
        before = tokens[k - 1].string if k else ""
        after = tokens[k + 1].string if k + 1 < len(tokens) else ""
        if tok.type == tokenize.NAME and tok.string == "h" and before != "." and after != "=":
            at = int(starts[tok.start[0] - 1]) + tok.start[1]
            out += [formula[last:at], str(h)]
            last = at + 1
    return "".join(out) + formula[last:]


def _horizons(horizon: Any) -> list[int]:
    if isinstance(horizon, (int, np.integer, bool)):
        return [_positive_int("horizon", horizon)]
    if isinstance(horizon, (str, bytes)) or not isinstance(horizon, Sequence | np.ndarray):
        raise OptionError(f"horizon must be a positive integer or a sequence of them, "
                          f"however: horizon={horizon!r}")
    values = [_positive_int("horizon", h) for h in horizon]
    if not values:
        raise OptionError("horizon=[] gives nothing to forecast: name at least one horizon")
    if len(set(values)) != len(values):
        raise OptionError(f"horizon lists a horizon twice, however: horizon={list(values)!r}")
    return sorted(values)


def plan_forecasts(formula: str, data: pd.DataFrame, method: str, *, scheme: str, start: Any,
                   window: int | None, horizon: int, refit_every: int, benchmark: str,
                   known: Sequence[str], env: Any, namespace: dict[str, Any],
                   options: dict[str, Any], strategy: str = "direct",
                   interval: str | None = None, level: float = 0.9,
                   min_errors: int = 20, aci_gamma: float = 0.005) -> ForecastPlan:
    """Validate every argument, build the design and decide the training rows of each forecast."""
    from attnreg.methods import get_method

    estimator = get_method(method)
    if interval == "gaussian" and not estimator.capabilities.linear:
        raise OptionError(f"interval='gaussian' needs the residual scale and coefficient "
                          f"covariance of a linear fit (ols, ridge, pcr), not method {method!r} "
                          "(it declares no linear capability): use interval='empirical'")
    from attnreg.timeseries.quantile_forecasts import check_quantile_plan

    check_quantile_plan(estimator, options, interval, level)
    _check_choice("scheme", scheme, SCHEMES)
    _check_choice("benchmark", benchmark, BENCHMARKS)
    horizon = _positive_int("horizon", horizon)
    refit_every = _positive_int("refit_every", refit_every)
    if scheme == "rolling":
        if window is None:
            raise OptionError("scheme='rolling' needs window= (the number of rows per fit)")
        window = _positive_int("window", window)
    elif window is not None:
        raise OptionError(f"window applies to scheme 'rolling' only, however: {scheme=}")
    inference = sorted({"vcov", "maxlags"} & set(options))
    if inference:
        raise OptionError(f"option(s) {', '.join(inference)} do not apply to forecast(): "
                          "forecasts use no covariance")
    estimator.check_options(options)  # every method option, before any work
    if not isinstance(data, pd.DataFrame):
        raise DataError("forecast() needs a pandas DataFrame with rows in time order")
    check_time_index(data.index)
    if horizon >= len(data):
        raise OptionError(f"horizon={horizon} leaves nothing to forecast: data has "
                          f"{len(data)} rows")
    # poly(x, d, raw=True) is plain powers; the orthogonal poly(x, d) learns its basis
    plain = re.sub(r"\bpoly\s*\(((?:[^()]|\([^()]*\))*?\braw\s*=\s*True\s*)\)", "", formula)
    stateful = re.search(r"\b(" + "|".join(STATEFUL) + r")\s*\(", plain)
    if stateful:
        fix = ("write poly(x, d, raw=True) (the same forecasts from OLS, no whole-sample basis)"
               if stateful.group(1) == "poly" else "remove it from the formula")
        raise LeakageError(
            f"the formula uses the stateful transform {stateful.group(1)}(), fitted on the whole "
            "sample; forecasts re-estimate centring and scaling inside each window already: "
            f"{fix}")
    design = build_design(formula, data, eval_env=env, extra_names=namespace)
    if window is not None and window > design.n_obs:  # as rolling()
        raise DataError(f"window ({window}) is longer than the data ({design.n_obs} rows)")
    known_codes = lk.check_known(design, known, lambda k: at_horizon(k, horizon, data))
    if strategy == "direct":
        _guard_leakage(design, horizon, known_codes)
    plan = _schedule(design, data.index, method, scheme, start, window, horizon, refit_every,
                     options)
    assert plan.origin_pos is not None
    lk.check_lookahead(design, data, plan.origin_pos, known_codes)
    return dataclasses.replace(plan, strategy=strategy, interval=interval, level=level,
                               min_errors=min_errors, aci_gamma=aci_gamma,
                               response=lk.observed_response(design, data))


def plan_iterated(formula: str, data: pd.DataFrame, method: str, *, horizons: list[int],
                  start: Any, **kw: Any) -> IteratedPlan:
    """The one-step plan whose fits are iterated to every horizon (pure autoregressions).

    Its forecasts start ``max(horizons) - 1`` rows before ``start``, so that every origin of
    every horizon has its one-step model.
    """
    from attnreg.methods import get_method

    if not get_method(method).capabilities.linear:
        raise OptionError(f"strategy='iterated' iterates a linear autoregression (ols, ridge, "
                          f"pcr), not method {method!r} (it declares no linear capability): use "
                          "strategy='direct'")
    probe = plan_forecasts(formula, data, method, horizon=1, start=start, **kw)
    lags = ar_lags(probe.design)
    pos = data.index.get_indexer(probe.design.row_labels)
    first = int(pos[probe.targets[0]])
    early = max(first - (max(horizons) - 1), int(pos[0]))
    plan = plan_forecasts(formula, data, method, horizon=1, start=data.index[early], **kw)
    return IteratedPlan(base=plan, lags=lags, first=first, positions=pos,
                        index=data.index)


def _schedule(design: Design, index: pd.Index, method: str, scheme: str, start: Any,
              window: int | None, horizon: int, refit_every: int,
              options: dict[str, Any]) -> ForecastPlan:
    pos = index.get_indexer(design.row_labels)  # data position of each design row
    first = _start_position(index, start, pos)
    targets = np.flatnonzero(pos >= first)
    if targets.size == 0:
        raise OptionError(f"start={start!r} leaves no rows to forecast")
    origin_pos = pos[targets] - horizon
    stop = np.searchsorted(pos, origin_pos, side="right")  # rows observed by the origin
    if scheme == "fixed":
        stop = np.full_like(stop, stop[0])
    begin = np.maximum(stop - window, 0) if window is not None else np.zeros_like(stop)
    need = design.n_coef + 1
    if (stop - begin)[0] < need or (window is not None and window < need):
        raise DataError(
            f"the first origin ({index[origin_pos[0]]!r}) has {(stop - begin)[0]} training rows; "
            f"at least {need} are needed for {design.n_coef} coefficients: start later"
            + (" or use a longer window" if window is not None else ""))
    refit = (np.arange(targets.size) % refit_every == 0) if scheme != "fixed" else (
        np.arange(targets.size) == 0)
    return ForecastPlan(design=design, targets=targets, train_start=begin, train_stop=stop,
                        refit=refit, origin_labels=index[origin_pos], method=method,
                        scheme=scheme, horizon=horizon, window=window, options=dict(options),
                        target_pos=pos[targets], origin_pos=origin_pos)


def _start_position(index: pd.Index, start: Any, pos: IntArray) -> int:
    if start is None:
        return int(pos[pos.size // 2])
    try:
        loc = index.get_loc(start)
    except KeyError:
        raise OptionError(f"start={start!r} is not a label of the data's index "
                          f"(from {index[0]!r} to {index[-1]!r})") from None
    if not isinstance(loc, (int, np.integer)):
        raise OptionError(f"start={start!r} matches several rows; give one label")
    return int(loc)


def _guard_leakage(design: Design, horizon: int, known: set[str]) -> None:
    """Every regressor must be lagged by at least the horizon, or be declared known.

    A lag given by an expression (``lag(x, h + 1)``, ``lag(x, k)``) is evaluated with the
    formula's scope and ``h`` bound to the horizon.
    """
    from collections import ChainMap

    scope = ChainMap({"h": horizon}, design.eval_env.namespace)
    for factor in design.design_info.factor_infos:
        code = factor.code
        names = _factor_names(code)
        lag = min_lag(code, scope)
        if lag is None or lag >= horizon or code in known or names <= known:
            continue
        raise LeakageError(
            f"term {code!r} is lagged {lag} period(s) but the horizon is {horizon}: at the "
            f"origin its value is not yet known. Use lag(..., {horizon}) or more, or declare it "
            f"with known=[{code!r}] if it is known in advance (a trend or calendar dummy)")


def _factor_names(code: str) -> set[str]:
    from attnreg.formula.frame import names_in

    return set(names_in(code)) - {"lag", "lags", "diff", "np", "C", "I", "Q"}


def _check_choice(name: str, value: Any, valid: Sequence[str]) -> None:
    if value not in valid:
        raise OptionError(f"{name} must be one of {', '.join(map(repr, valid))}, however: "
                          f"{name}={value!r}")


def _positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise OptionError(f"{name} must be a positive integer, however: {name}={value!r}")
    return int(value)
