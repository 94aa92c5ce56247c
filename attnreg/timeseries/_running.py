"""Running a forecast plan: rank-one updating where it applies, else a full fit per origin.

:func:`run_all` runs the plans of every horizon (direct) or iterates the one-step plan
(iterated), then adds the forecast intervals.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import numpy as np

from attnreg._progress import Progress
from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, OptionError
from attnreg.methods import get_method
from attnreg.threads import small_lapack
from attnreg.timeseries import intervals as iv
from attnreg.timeseries.plan import ForecastPlan, IteratedPlan, fit_window, tuning_of
from attnreg.timeseries.forecast_results import ForecastResults


#: With ``progress=None`` (the default) the progress line is shown when the forecasts of a
#: horizon are expected to take longer than this many seconds (see :func:`estimated_seconds`).
AUTO_PROGRESS_SECONDS = 5.0


def estimated_seconds(plan: ForecastPlan, first_fit: float) -> float:
    """Expected time of a plan's refits: the first fit's seconds times the number of fits."""
    return first_fit * int(np.count_nonzero(plan.refit))


def run_all(plans: list[Any], horizons: list[int],
            progress: bool | None) -> list[ForecastResults]:
    """The results of every horizon, intervals included, in the order of ``horizons``.

    ``progress``: True shows the progress line, False never; None shows it for forecasts
    expected to take more than :data:`AUTO_PROGRESS_SECONDS` (judged after the first fit).
    """
    if progress is not None and not isinstance(progress, (bool, np.bool_)):
        raise OptionError(f"progress must be True, False or None (shown when the forecasts "
                          f"take more than {AUTO_PROGRESS_SECONDS:g} s), however: {progress=!r}")
    out: list[ForecastResults] = []
    for plan in plans:
        base = plan.base if isinstance(plan, IteratedPlan) else plan
        label = f"forecast ({base.method}, {base.scheme}" + (
            f", h={base.horizon})" if len(plans) > 1 else ")")
        with Progress(base.n_forecasts, label, progress is True) as bar:
            res = run_forecasts(base, bar, auto=progress is None)
        if isinstance(plan, IteratedPlan):
            out += [with_intervals(r) for r in iterate(plan, res, horizons)]
        else:
            out.append(with_intervals(res))
    return out


def with_intervals(res: ForecastResults) -> ForecastResults:
    """``res`` with its empirical or adaptive intervals (Gaussian ones come from the engine)."""
    p = res.plan
    if p.interval not in ("empirical", "aci"):
        return res
    assert p.target_pos is not None and p.origin_pos is not None
    actual = p.design.y[p.targets]
    if p.interval == "aci":
        from attnreg.timeseries.conformal import aci_bounds

        lower, upper, _ = aci_bounds(res.predictions, actual, p.target_pos, p.origin_pos,
                                     p.level, p.min_errors, p.aci_gamma)
        return dataclasses.replace(res, lower=lower, upper=upper)
    lower, upper, _ = iv.empirical_bounds(res.predictions, actual - res.predictions,
                                          p.target_pos, p.origin_pos, p.level, p.min_errors)
    return dataclasses.replace(res, lower=lower, upper=upper)


def iterate(plan: IteratedPlan, one: ForecastResults, horizons: list[int]
            ) -> list[ForecastResults]:
    """h-step forecasts of every horizon by iterating the one-step model of each origin."""
    base, d = plan.base, plan.base.design
    assert one.coef_path is not None and base.origin_pos is not None
    lags, kmax = plan.lags, int(plan.lags.max())
    y_at = np.full(len(plan.index), np.nan)  # the response by data position (observed values)
    for c in np.flatnonzero(lags):  # early values only appear as lags
        y_at[plan.positions - lags[c]] = d.X[:, c]
    y_at[plan.positions] = d.y
    targets = np.flatnonzero(plan.positions >= plan.first)
    out = []
    for h in horizons:
        origin = plan.positions[targets] - h
        at = np.searchsorted(base.origin_pos, origin)
        ok = (at < base.n_forecasts) & (base.origin_pos[np.minimum(at, base.n_forecasts - 1)]
                                        == origin)
        if not ok.all():
            missing = plan.index[origin[~ok][0]]
            raise DataError(f"strategy='iterated' needs a one-step model at every origin, but "
                            f"origin {missing!r} (horizon {h}) has none: its next row is missing")
        coef = np.nan_to_num(one.coef_path[at])
        hist = np.empty((targets.size, kmax + h))
        hist[:, :kmax] = y_at[origin[:, None] - np.arange(kmax - 1, -1, -1)[None, :]]
        const = coef[:, lags == 0].sum(axis=1)
        for step in range(1, h + 1):  # one vectorised step over all origins
            now = kmax - 1 + step
            hist[:, now] = const + np.einsum(
                "ic,ic->i", coef[:, lags > 0], hist[:, now - lags[lags > 0]])
        pred = hist[:, -1]
        sub = dataclasses.replace(
            base, targets=targets, train_start=base.train_start[at],
            train_stop=base.train_stop[at], refit=base.refit[at],
            origin_labels=plan.index[origin], horizon=h, target_pos=plan.positions[targets],
            origin_pos=origin)
        lower = upper = None
        sigma = None if one.sigma_path is None else one.sigma_path[at]
        df = None
        if base.interval == "gaussian" and sigma is not None:
            if h == 1:
                assert one.lower is not None and one.upper is not None
                lower, upper = one.lower[at], one.upper[at]
                df = None if one.df_path is None else one.df_path[at]
            else:
                phi = np.zeros((targets.size, kmax))
                for c in np.flatnonzero(lags):
                    phi[:, lags[c] - 1] += coef[:, c]
                psi = iv.ar_psi_weights(phi, h)
                half = iv.gaussian_quantile(base.level) * sigma * np.sqrt((psi**2).sum(axis=1))
                lower, upper = pred - half, pred + half
        out.append(ForecastResults(
            plan=sub, predictions=pred, coef_path=one.coef_path[at],
            tuning_path=None if one.tuning_path is None else one.tuning_path[at],
            engine=one.engine, lower=lower, upper=upper, sigma_path=sigma, df_path=df))
    return out


def _gaussian(plan: ForecastPlan, pred: FloatArray, sd: FloatArray, sigma: FloatArray,
              df: FloatArray) -> tuple[FloatArray, FloatArray]:
    """``pred ± q · scale``: at h = 1 t(df) times the prediction sd, else z times σ."""
    if plan.horizon == 1:
        half = iv.gaussian_quantile(plan.level, df) * sd
    else:
        half = iv.gaussian_quantile(plan.level) * sigma
    return pred - half, pred + half


def _can_update(plan: ForecastPlan, tuning: Any) -> bool:
    d = plan.design
    contiguous = bool(np.all(plan.train_start[1:] >= plan.train_start[:-1])) and bool(
        np.all(np.diff(plan.train_stop) == 1))
    return get_method(plan.method).capabilities.updating and tuning != "loo" and \
        d.weights is None and plan.scheme != "fixed" and bool(plan.refit.all()) and contiguous


def run_forecasts(plan: ForecastPlan, bar: Progress, auto: bool = False) -> ForecastResults:
    """Estimate at every origin and forecast; the fast updating path where it applies.

    ``auto``: turn ``bar`` on after the first fit when :func:`estimated_seconds` exceeds
    :data:`AUTO_PROGRESS_SECONDS`.
    """
    capabilities = get_method(plan.method).capabilities
    if capabilities.quantiles:  # every τ at every origin
        from attnreg.timeseries.quantile_forecasts import run_quantile_forecasts

        return run_quantile_forecasts(plan, bar, AUTO_PROGRESS_SECONDS if auto else None)
    if not capabilities.linear:  # torch fits: their own threads (the user's cap applies around them)
        return _run_refits(plan, bar, auto)
    with small_lapack():  # one small factorization or update per origin
        tuning = tuning_of(plan)[0] if capabilities.updating else None
        if capabilities.updating and _can_update(plan, tuning):
            out = _run_updating(plan, tuning)
            if out is not None:
                bar.update(plan.n_forecasts)
                return out
        return _run_refits(plan, bar, auto)


def _run_updating(plan: ForecastPlan, tuning: Any) -> ForecastResults | None:
    from attnreg.timeseries.updating import recursive_ls

    d = plan.design
    gaussian = plan.interval == "gaussian"
    rule = get_method(plan.method).require_rule("the updating path")
    if gaussian and not rule.least_squares:
        return None  # the ridge prediction variance comes from each window's fit
    X = d.X[:, 1:] if d.intercept else d.X
    first = int(plan.train_stop[0])
    std = tuning_of(plan)[1]
    engine = "ridge" if rule.penalized else "ols"  # the recursion, by the algorithm's name
    kw: dict[str, Any] = {"method": engine, "intercept": d.intercept, "window": plan.window,
                          "min_nobs": min(first, plan.window) if plan.window else first}
    if tuning is not None:  # ridge: λ fixed or chosen by GCV at each origin
        kw.update(lam=tuning, standardize=std)
    last = int(plan.train_stop[-1])
    if gaussian:  # each origin's target row, for its prediction leverage
        x_new = np.zeros((last - kw["min_nobs"] + 1, X.shape[1]))
        x_new[plan.train_stop - kw["min_nobs"]] = X[plan.targets]
        kw["x_new"] = x_new
    path = recursive_ls(X[:last], d.y[:last], **kw)
    if path.n_rank_deficient:
        return None  # aliased columns: refit with R's rules instead
    at = np.searchsorted(path.origins, plan.train_stop - 1)
    coef = path.coef[at]
    pred = np.einsum("ij,ij->i", d.X[plan.targets], coef)
    tune = None if path.lam is None else path.lam[at]
    lower = upper = sigma = df = None
    if gaussian:
        assert path.sigma is not None and path.leverage is not None
        sigma = path.sigma[at]
        df = (plan.train_stop - plan.train_start - d.n_coef).astype(float)
        lower, upper = _gaussian(plan, pred, sigma * np.sqrt(1.0 + path.leverage[at]), sigma, df)
    return ForecastResults(plan=plan, predictions=pred, coef_path=coef, tuning_path=tune,
                           engine="updating", lower=lower, upper=upper, sigma_path=sigma,
                           df_path=df if plan.horizon == 1 else None)


def _run_refits(plan: ForecastPlan, bar: Progress, auto: bool = False) -> ForecastResults:
    d, estimator = plan.design, get_method(plan.method)
    spectral = estimator.capabilities.linear  # a LinearResults: coefficients and intervals
    pred = np.empty(plan.n_forecasts)
    coef = np.full((plan.n_forecasts, d.n_coef), np.nan) if spectral else None
    tune = np.full(plan.n_forecasts, np.nan) if estimator.tuning is not None else None
    fit = None
    models: dict[int, Any] | None = {} if estimator.warm is not None else None
    gaussian = plan.interval == "gaussian" and spectral
    sd, sigma, df = (np.full(plan.n_forecasts, np.nan) for _ in range(3))
    for i in range(plan.n_forecasts):
        if plan.refit[i] or fit is None:
            if fit is not None:  # e.g. softmax heads start from the previous origin's
                plan.options.update(estimator.warm_start(fit))
            started = time.perf_counter()
            fit = fit_window(plan, i)
            if auto and i == 0:  # long forecasts say so, unless asked to be quiet
                bar.enabled = estimated_seconds(plan, time.perf_counter() - started) \
                    > AUTO_PROGRESS_SECONDS
            if models is not None:  # a warm-started fit cannot be refitted alone: keep it
                models[i] = fit
        pred[i] = float(estimator.predict_design(fit, d.X[plan.targets[i]][None, :])[0])
        if coef is not None:
            coef[i] = fit.filtered.coef
        if tune is not None:
            tune[i] = getattr(fit, estimator.tuning)  # type: ignore[arg-type]
        if gaussian:
            sigma[i], df[i] = fit.sigma, fit.df_resid
            if plan.horizon == 1:
                sd[i] = iv.linear_prediction_sd(fit, d.X[plan.targets[i]])
        bar.update(i + 1)
    for name in estimator.warm_start(fit) if fit is not None else ():
        plan.options.pop(name, None)
    lower = upper = None
    if gaussian:
        lower, upper = _gaussian(plan, pred, sd, sigma, df)
    return ForecastResults(plan=plan, predictions=pred, coef_path=coef, tuning_path=tune,
                           engine="refit", models=models, lower=lower, upper=upper,
                           sigma_path=sigma if gaussian else None,
                           df_path=df if gaussian and plan.horizon == 1 else None)
