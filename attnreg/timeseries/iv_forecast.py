"""Out-of-sample forecasts of an instrumental-variable formula, ``"y ~ lag(x, 1) | lag(d, 1) ~ lag(z, 1)"``.

:func:`attnreg.forecast` hands a formula with an IV part here. The rows, origins and
training windows are planned as for a linear formula (:func:`~attnreg.timeseries.planning.
plan_forecasts` on the single design ``y ~ x + d + z``), so the same rules hold for every
part: each variable of the exogenous, endogenous and instrument parts must be lagged at least
``horizon`` periods (or be declared ``known=``), no term may look ahead, and the model of a
forecast is fitted on the rows observed by its origin only. At each origin the IV estimator
(:func:`attnreg.iv.formula.fit_iv_arrays`: 2SLS, LIML, Fuller, GMM, CUE) is fitted on those
rows, and the target is predicted from its regressors ``[x, d]`` (known at the origin).

What the IV path does not do is refused with :class:`~attnreg.exceptions.OptionError`:
intervals, the iterated strategy, ``by=``, vintages, fixed effects and covariance options.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from attnreg.exceptions import DataError, OptionError, RankDeficiencyWarning
from attnreg.formula.parts import FormulaParts
from attnreg.iv.formula import fit_iv_arrays
from attnreg.iv.frame import IVFrame, build_iv_frame
from attnreg.iv.options import IV_METHODS, check_iv_options
from attnreg.methods import DEFAULT_METHOD
from attnreg.timeseries.fcargs import at_horizon, horizons_of
from attnreg.timeseries.forecast_results import ForecastResults
from attnreg.timeseries.plan import ForecastPlan, subdesign
from attnreg.timeseries.planning import plan_forecasts

__all__ = ["forecast_iv"]

#: forecast() options the IV path refuses, and what to do instead
_REFUSED = {"interval": "IV forecasts have no intervals yet: leave interval=None",
            "strategy": "IV forecasts are direct (one model per origin): leave strategy='direct'",
            "by": "IV forecasts take one series: forecast each series alone",
            "vintage": "IV forecasts take one data set, not real-time vintages",
            "evaluate_on": "IV forecasts take one data set, not real-time vintages"}


def _refuse(given: dict[str, Any], options: dict[str, Any]) -> None:
    """OptionError naming the first option the IV path does not do."""
    defaults = {"interval": None, "strategy": "direct", "by": None, "vintage": None,
                "evaluate_on": "first"}
    for name, fix in _REFUSED.items():
        if given[name] != defaults[name]:
            raise OptionError(f"{name}={given[name]!r} does not apply to a formula with an IV "
                              f"part: {fix}")
    inference = sorted({"vcov", "cluster", "maxlags"} & set(options))
    if inference:
        raise OptionError(f"option(s) {', '.join(inference)} do not apply to forecast(): "
                          "forecasts use no covariance")


def forecast_iv(formula: str, parts: FormulaParts, data: Any, method: str, *,
                horizon: int | Sequence[int], options: dict[str, Any], env: Any,
                namespace: dict[str, Any], given: dict[str, Any], **kw: Any) -> Any:
    """Direct forecasts of an IV formula at every origin (:func:`attnreg.forecast`'s IV path).

    Parameters
    ----------
    formula : str
        ``"y ~ lag(x, 1) | lag(d, 1) ~ lag(z, 1)"`` (the name ``h`` stands for the horizon).
    parts : FormulaParts
        ``formula`` split (its IV part not None).
    data : DataFrame
        Rows in time order.
    method : str
        ``"ols"`` (:func:`attnreg.forecast`'s default) means ``"tsls"``; else a key of
        :data:`attnreg.iv.options.IV_METHODS`.
    horizon : int or sequence of int
    options : dict
        ``weights=`` and the IV options (``alpha=`` for Fuller).
    env, namespace
        The formula's scope and helper functions.
    given : dict
        The forecast() options the IV path refuses when set (interval, strategy, by, vintage).
    **kw
        scheme, start, window, refit_every, benchmark, known: as :func:`attnreg.forecast`.

    Returns
    -------
    ForecastResults or MultiHorizonForecasts

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.normal(size=(60, 4)), columns=["y", "x", "d", "z"])
    >>> df["d"] += df["z"]
    >>> fc = ar.forecast("y ~ lag(x, 1) | lag(d, 1) ~ lag(z, 1)", df, start=40, method="liml")
    >>> fc.plan.method, fc.plan.n_forecasts, list(fc.coef.columns)
    ('liml', 20, ['(Intercept)', 'lag(x, 1)', 'lag(d, 1)'])
    """
    _refuse(given, options)
    if parts.fixed_effects:
        raise OptionError(f"forecast() of an IV formula with fixed effects "
                          f"({' + '.join(parts.fixed_effects)}) is not available: write them as "
                          "regressors (C(firm)) or drop them")
    method = "tsls" if method == DEFAULT_METHOD else method  # the front door's default
    if method not in IV_METHODS:
        raise OptionError(f"method must be one of {', '.join(map(repr, IV_METHODS))} for a "
                          f"formula with an IV part, however: {method=}")
    options = dict(options)
    weights = options.pop("weights", None)
    iv_options = check_iv_options(method, options)
    out = [_one_horizon(at_horizon(formula, h, data), data, method, h, weights, iv_options,
                        options, env, namespace, kw) for h in horizons_of(horizon)]
    if isinstance(horizon, (int, np.integer)):
        return out[0]
    from attnreg.timeseries.multihorizon import MultiHorizonForecasts

    return MultiHorizonForecasts(parts=tuple(out), formula=formula)


def _one_horizon(formula: str, data: Any, method: str, h: int, weights: Any,
                 iv_options: dict[str, Any], options: dict[str, Any], env: Any,
                 namespace: dict[str, Any], kw: dict[str, Any]) -> ForecastResults:
    """The plan of horizon ``h`` (every part guarded) and its forecasts."""
    from attnreg.formula.parts import split_formula

    parts = split_formula(formula)
    assert parts.endogenous is not None and parts.instruments is not None
    lhs, rhs = (s.strip() for s in parts.model.split("~", 1))
    single = f"{lhs} ~ {rhs} + {parts.endogenous} + {parts.instruments}"
    plan = plan_forecasts(single, data, "ols", horizon=h, env=env, namespace=namespace,
                          options={}, **kw)
    frame = build_iv_frame(parts, data, weights=weights, eval_env=env, extra_names=namespace)
    if not frame.design.row_labels.equals(plan.design.row_labels):
        lost = plan.design.row_labels.difference(frame.design.row_labels)
        raise DataError(f"weights is missing or invalid at {lost.size} row(s) the formula uses "
                        f"(the first: {lost[0]!r}): drop those rows or fill the weights first")
    plan = dataclasses.replace(plan, design=frame.design, method=method, options=dict(options))
    return _run(plan, frame, iv_options)


def _run(plan: ForecastPlan, frame: IVFrame, iv_options: dict[str, Any]) -> ForecastResults:
    """Fit the IV model on the training rows of every (re)fit and predict its target."""
    d = frame.design
    pred = np.empty(plan.n_forecasts)
    coef = np.full((plan.n_forecasts, d.n_coef), np.nan)
    fit = None
    for i in range(plan.n_forecasts):
        if plan.refit[i] or fit is None:
            fit = _fit_rows(frame, plan.rows(i), plan.method, iv_options, plan.origin_labels[i])
        coef[i] = fit.coef
        pred[i] = float(d.X[plan.targets[i]] @ fit.coef)
    return ForecastResults(plan=plan, predictions=pred, coef_path=coef, tuning_path=None,
                           engine="refit")


def _fit_rows(frame: IVFrame, rows: np.ndarray, method: str, iv_options: dict[str, Any],
              origin: Any) -> Any:
    """The IV fit on ``rows`` of ``frame`` only (the rows observed by ``origin``)."""
    sub = dataclasses.replace(frame, design=subdesign(frame.design, rows), y=frame.y[rows],
                              X=frame.X[rows], D=frame.D[rows], Z=frame.Z[rows])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RankDeficiencyWarning)
            return fit_iv_arrays(sub, method, iv_options, None)
    except DataError as err:
        raise DataError(f"the IV fit at origin {origin!r} ({rows.size} rows): {err}") from None
