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

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnreg._progress import Progress
from attnreg._typing import IntArray
from attnreg.formula.design import Design, build_design
from attnreg.exceptions import DataError, LeakageError, OptionError
from attnreg.timeseries.plan import ForecastPlan
from attnreg.formula.lags import check_time_index, min_lag

SCHEMES = ("recursive", "rolling", "fixed")
BENCHMARKS = ("mean",)
#: patsy transforms that learn from the whole sample (a look-ahead in a forecast loop)
STATEFUL = ("center", "standardize", "scale", "bs", "cr", "cc", "te")


def forecast(formula: str, data: pd.DataFrame, method: str = "ols", *,
             scheme: str = "recursive", start: Any = None, window: int | None = None,
             horizon: int = 1, refit_every: int = 1, benchmark: str = "mean",
             known: Sequence[str] = (), progress: bool = False, eval_env: Any = 0,
             **options: Any) -> Any:
    """Recursive, rolling or fixed-scheme out-of-sample forecasts with evaluation.

    Parameters
    ----------
    formula : str
        ``"infl ~ lag(infl, 1) + lag(unemp, 1)"``: the response at date s regressed on
        regressors known at s − horizon. ``lag``, ``lags`` and ``diff`` work inside formulas.
    data : DataFrame
        Rows in time order (a PeriodIndex or DatetimeIndex is checked for order and gaps).
    method : str
        Any method of :func:`attnreg.attnreg` (:func:`attnreg.methods.method_names`): "ols",
        "ridge", "pcr", "softmax", "block" or "ftt".
    scheme : {"recursive", "rolling", "fixed"}
    start : label, optional
        Date of the first forecast TARGET (its origin is ``horizon`` rows earlier). Default:
        the middle of the sample.
    window : int, optional
        Rolling window length in rows (required for ``scheme="rolling"``).
    horizon : int
        Forecast horizon h ≥ 1. Every regressor must be lagged at least h periods.
    refit_every : int
        Re-estimate every this many origins (the model in between stays the last one fitted).
    benchmark : {"mean"}
        The prevailing mean of the response over the same training rows.
    known : sequence of str
        Variables or terms known in advance (trends, calendar dummies), exempt from the
        leakage guard.
    progress : bool
        Show a progress line on stderr.
    **options
        Method options (``lam``, ``k``, ``standardize``; softmax: ``heads``, ``seed``, ...).

    Returns
    -------
    ForecastResults

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="2000Q1")
    >>> fc
    <attnreg forecasts: ols, recursive, h=1, 39 forecasts, OOS R²=-0.0358>
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
    """
    from attnreg.api import _capture_env, formula_namespace
    from attnreg.timeseries._running import run_forecasts

    plan = plan_forecasts(formula, data, method, scheme=scheme, start=start, window=window,
                          horizon=horizon, refit_every=refit_every, benchmark=benchmark,
                          known=known, env=_capture_env(eval_env), namespace=formula_namespace(),
                          options=options)
    from attnreg.methods import get_method
    from attnreg.threads import user_threads

    with user_threads(get_method(method).capabilities.torch), \
            Progress(plan.n_forecasts, f"forecast ({method}, {scheme})", progress) as bar:
        return run_forecasts(plan, bar)


def plan_forecasts(formula: str, data: pd.DataFrame, method: str, *, scheme: str, start: Any,
                   window: int | None, horizon: int, refit_every: int, benchmark: str,
                   known: Sequence[str], env: Any, namespace: dict[str, Any],
                   options: dict[str, Any]) -> ForecastPlan:
    """Validate every argument, build the design and decide the training rows of each forecast."""
    from attnreg.methods import get_method

    estimator = get_method(method)
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
    stateful = re.search(r"\b(" + "|".join(STATEFUL) + r")\s*\(", formula)
    if stateful:
        raise LeakageError(
            f"the formula uses the stateful transform {stateful.group(1)}(), fitted on the whole "
            "sample; forecasts re-estimate centring and scaling inside each window already: "
            "remove it from the formula")
    design = build_design(formula, data, eval_env=env, extra_names=namespace)
    _guard_leakage(design, horizon, set(known))
    return _schedule(design, data.index, method, scheme, start, window, horizon, refit_every,
                     options)


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
                        scheme=scheme, horizon=horizon, window=window, options=dict(options))


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
    """Every regressor must be lagged by at least the horizon, or be declared known."""
    for factor in design.design_info.factor_infos:
        code = factor.code
        names = _factor_names(code)
        lag = min_lag(code)
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
