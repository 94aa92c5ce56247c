"""Running a forecast plan: rank-one updating where it applies, else a full fit per origin."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from attnreg._progress import Progress
from attnreg.exceptions import OptionError, RankDeficiencyWarning
from attnreg.timeseries.forecast import SPECTRAL, ForecastPlan, subdesign
from attnreg.timeseries.forecast_results import ForecastResults


def tuning_of(plan: ForecastPlan) -> tuple[float | str | None, bool]:
    """The λ/k request and the standardize flag of a spectral plan, validated like attnreg()."""
    from attnreg.api import _check_tuning

    opts = dict(plan.options)
    std = opts.pop("standardize", None)
    lam, k = opts.pop("lam", None), opts.pop("k", None)
    if opts:
        raise OptionError(f"unknown option(s) for method {plan.method!r}: {', '.join(sorted(opts))}")
    tuning = _check_tuning(plan.method, lam, k)
    return tuning, (plan.method != "ols") if std is None else bool(std)


def fit_window(plan: ForecastPlan, i: int, tuning: float | None = None) -> Any:
    """The model of forecast ``i``, estimated from its training rows only.

    ``tuning`` fixes λ or k (to reproduce a forecast whose λ was chosen by the updater).
    """
    from attnreg.api import fit_spectral_design

    sub = subdesign(plan.design, plan.rows(i))
    if plan.method in SPECTRAL:
        chosen, std = tuning_of(plan)
        tuning = chosen if tuning is None else tuning  # type: ignore[assignment]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RankDeficiencyWarning)
            return fit_spectral_design(sub, plan.method, tuning, standardize=std)
    from attnreg.softmax_results import SoftmaxResults, _predictors
    from attnreg.softmax import fit_softmax

    return SoftmaxResults(design=sub, fit=fit_softmax(_predictors(sub), sub.y, **plan.options))


def _can_update(plan: ForecastPlan, tuning: Any) -> bool:
    d = plan.design
    contiguous = bool(np.all(plan.train_start[1:] >= plan.train_start[:-1])) and bool(
        np.all(np.diff(plan.train_stop) == 1))
    return (plan.method == "ols" or (plan.method == "ridge" and tuning != "loo")) and \
        d.weights is None and plan.scheme != "fixed" and bool(plan.refit.all()) and contiguous


def run_forecasts(plan: ForecastPlan, bar: Progress) -> ForecastResults:
    """Estimate at every origin and forecast; the fast updating path where it applies."""
    tuning = tuning_of(plan)[0] if plan.method in SPECTRAL else None
    if plan.method in SPECTRAL and _can_update(plan, tuning):
        out = _run_updating(plan, tuning)
        if out is not None:
            bar.update(plan.n_forecasts)
            return out
    return _run_refits(plan, bar)


def _run_updating(plan: ForecastPlan, tuning: Any) -> ForecastResults | None:
    from attnreg.timeseries.updating import recursive_ls

    d = plan.design
    X = d.X[:, 1:] if d.intercept else d.X
    first = int(plan.train_stop[0])
    std = tuning_of(plan)[1]
    kw: dict[str, Any] = {"method": plan.method, "intercept": d.intercept, "window": plan.window,
                          "min_nobs": min(first, plan.window) if plan.window else first}
    if plan.method == "ridge":
        kw.update(lam=tuning, standardize=std)
    path = recursive_ls(X[: int(plan.train_stop[-1])], d.y[: int(plan.train_stop[-1])], **kw)
    if path.n_rank_deficient:
        return None  # aliased columns: refit with R's rules instead
    at = np.searchsorted(path.origins, plan.train_stop - 1)
    coef = path.coef[at]
    pred = np.einsum("ij,ij->i", d.X[plan.targets], coef)
    tune = None if path.lam is None else path.lam[at]
    return ForecastResults(plan=plan, predictions=pred, coef_path=coef, tuning_path=tune,
                           engine="updating")


def _run_refits(plan: ForecastPlan, bar: Progress) -> ForecastResults:
    d = plan.design
    pred = np.empty(plan.n_forecasts)
    coef = np.full((plan.n_forecasts, d.n_coef), np.nan) if plan.method in SPECTRAL else None
    tune = np.full(plan.n_forecasts, np.nan) if plan.method in ("ridge", "pcr") else None
    fit = None
    for i in range(plan.n_forecasts):
        if plan.refit[i] or fit is None:
            if plan.method == "softmax" and fit is not None:
                plan.options["warm_start"] = fit.fit  # warm start from the previous origin
            fit = fit_window(plan, i)
        X_t = d.X[plan.targets[i]][None, :]
        if plan.method in SPECTRAL:
            pred[i] = float((X_t @ np.nan_to_num(fit.filtered.coef))[0])
            coef[i] = fit.filtered.coef  # type: ignore[index]
            if tune is not None:
                tune[i] = fit.lam if plan.method == "ridge" else fit.k
        else:
            pred[i] = float(fit.fit.predict(X_t[:, 1:] if d.intercept else X_t)[0])
        bar.update(i + 1)
    plan.options.pop("warm_start", None)
    return ForecastResults(plan=plan, predictions=pred, coef_path=coef, tuning_path=tune,
                           engine="refit")
