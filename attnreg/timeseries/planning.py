"""The plan of a forecast run: arguments validated, design built, leakage guarded, and the
training rows of every forecast decided (:class:`~attnreg.timeseries.plan.ForecastPlan`).

:func:`plan_forecasts` plans the direct forecasts of one horizon, :func:`plan_iterated` the
one-step plan that iterated forecasts chain to every horizon.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import IntArray
from attnreg.exceptions import DataError, LeakageError, OptionError
from attnreg.formula.design import Design, build_design
from attnreg.formula.lags import min_lag
from attnreg.formula.time_index import check_time_index
from attnreg.timeseries import lookahead as lk
from attnreg.timeseries.arlags import ar_lags
from attnreg.timeseries.fcargs import at_horizon, check_choice, positive_int
from attnreg.timeseries.plan import ForecastPlan, IteratedPlan

__all__ = ["BENCHMARKS", "SCHEMES", "STATEFUL", "plan_forecasts", "plan_iterated"]

SCHEMES = ("recursive", "rolling", "fixed")
BENCHMARKS = ("mean",)
#: patsy transforms that learn from the whole sample (a look-ahead in a forecast loop)
STATEFUL = ("center", "standardize", "scale", "bs", "cr", "cc", "te", "poly")


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
    check_choice("scheme", scheme, SCHEMES)
    check_choice("benchmark", benchmark, BENCHMARKS)
    horizon = positive_int("horizon", horizon)
    refit_every = positive_int("refit_every", refit_every)
    if scheme == "rolling":
        if window is None:
            raise OptionError("scheme='rolling' needs window= (the number of rows per fit)")
        window = positive_int("window", window)
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
