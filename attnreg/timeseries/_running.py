"""Running a forecast plan: rank-one updating where it applies, else a full fit per origin."""

from __future__ import annotations

from typing import Any

import numpy as np

from attnreg._progress import Progress
from attnreg.methods import get_method
from attnreg.threads import small_lapack
from attnreg.timeseries.plan import ForecastPlan, fit_window, tuning_of
from attnreg.timeseries.forecast_results import ForecastResults


def _can_update(plan: ForecastPlan, tuning: Any) -> bool:
    d = plan.design
    contiguous = bool(np.all(plan.train_start[1:] >= plan.train_start[:-1])) and bool(
        np.all(np.diff(plan.train_stop) == 1))
    return get_method(plan.method).capabilities.updating and tuning != "loo" and \
        d.weights is None and plan.scheme != "fixed" and bool(plan.refit.all()) and contiguous


def run_forecasts(plan: ForecastPlan, bar: Progress) -> ForecastResults:
    """Estimate at every origin and forecast; the fast updating path where it applies."""
    spectral = get_method(plan.method).family == "spectral"
    if not spectral:  # torch fits: their own threads (the user's cap applies around them)
        return _run_refits(plan, bar)
    with small_lapack():  # one small factorization or update per origin
        tuning = tuning_of(plan)[0]
        if _can_update(plan, tuning):
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
    if tuning is not None:  # ridge: λ fixed or chosen by GCV at each origin
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
    d, estimator = plan.design, get_method(plan.method)
    spectral = estimator.family == "spectral"
    pred = np.empty(plan.n_forecasts)
    coef = np.full((plan.n_forecasts, d.n_coef), np.nan) if spectral else None
    tune = np.full(plan.n_forecasts, np.nan) if estimator.tuning is not None else None
    fit = None
    models: dict[int, Any] | None = {} if estimator.warm is not None else None
    for i in range(plan.n_forecasts):
        if plan.refit[i] or fit is None:
            if fit is not None:  # e.g. softmax heads start from the previous origin's
                plan.options.update(estimator.warm_start(fit))
            fit = fit_window(plan, i)
            if models is not None:  # a warm-started fit cannot be refitted alone: keep it
                models[i] = fit
        pred[i] = float(estimator.predict_design(fit, d.X[plan.targets[i]][None, :])[0])
        if coef is not None:
            coef[i] = fit.filtered.coef
        if tune is not None:
            tune[i] = getattr(fit, estimator.tuning)  # type: ignore[arg-type]
        bar.update(i + 1)
    for name in estimator.warm_start(fit) if fit is not None else ():
        plan.options.pop(name, None)
    return ForecastResults(plan=plan, predictions=pred, coef_path=coef, tuning_path=tune,
                           engine="refit", models=models)
