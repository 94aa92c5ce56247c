"""Running a forecast plan (fast updating or refits) and the forecast results with evaluation."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg._progress import Progress
from attnreg._typing import FloatArray
from attnreg.attention import AttentionWeights
from attnreg.exceptions import OptionError, RankDeficiencyWarning
from attnreg.report import Summary, fmt_g
from attnreg.timeseries import evaluation as ev
from attnreg.timeseries.forecast import ForecastPlan, benchmark_means, subdesign

SPECTRAL = ("ols", "ridge", "pcr")


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


@dataclass(frozen=True)
class ForecastResults:
    """Out-of-sample forecasts, their evaluation, and the audit of look-ahead.

    Attributes
    ----------
    plan : ForecastPlan
        Design, training rows of every forecast, method and scheme.
    predictions : ndarray, shape (n_forecasts,)
    coef_path : ndarray, shape (n_forecasts, n_coef) or None
        Coefficients used for each forecast (spectral methods).
    tuning_path : ndarray or None
        λ (ridge) or k (PCR) used for each forecast.
    engine : str
        ``"updating"`` (rank-one Gram updates) or ``"refit"`` (a full fit per origin).
    """

    plan: ForecastPlan
    predictions: FloatArray = field(repr=False)
    coef_path: FloatArray | None = field(repr=False)
    tuning_path: FloatArray | None = field(repr=False)
    engine: str

    @cached_property
    def forecasts(self) -> pd.DataFrame:
        """One row per target date: origin, forecast, actual, error, benchmark, n_train."""
        p, d = self.plan, self.plan.design
        actual = d.y[p.targets]
        bench = benchmark_means(d.y, p.train_start, p.train_stop)
        return pd.DataFrame({
            "origin": p.origin_labels, "forecast": self.predictions, "actual": actual,
            "error": actual - self.predictions, "benchmark": bench,
            "benchmark_error": actual - bench, "n_train": p.train_stop - p.train_start,
        }, index=pd.Index(d.row_labels[p.targets], name="target"))

    @cached_property
    def coef(self) -> pd.DataFrame | None:
        """Coefficient path: the coefficients used at every origin (index: origin label)."""
        if self.coef_path is None:
            return None
        return pd.DataFrame(self.coef_path, columns=self.plan.design.column_names,
                            index=pd.Index(self.plan.origin_labels, name="origin"))

    @property
    def coef_path_frame(self) -> pd.DataFrame | None:
        """Alias of :attr:`coef` with λ or k appended as a column."""
        frame = self.coef
        if frame is None or self.tuning_path is None:
            return frame
        name = "lambda" if self.plan.method == "ridge" else "k"
        return frame.assign(**{name: self.tuning_path})

    @cached_property
    def evaluation(self) -> pd.Series:
        """MSFE, RMSE, MAE, OOS R² and MSFE ratio against the benchmark, DM and Clark–West."""
        f = self.forecasts
        y, m, b = f["actual"].to_numpy(), f["forecast"].to_numpy(), f["benchmark"].to_numpy()
        h = self.plan.horizon
        dm = ev.diebold_mariano(y - m, y - b, h=h)
        cw = ev.clark_west(y, m, b, h=h)
        return pd.Series({
            "n_forecasts": float(y.size), "msfe": ev.msfe(y, m), "rmse": ev.rmse(y, m),
            "mae": ev.mae(y, m), "benchmark_msfe": ev.msfe(y, b),
            "oos_r2": ev.oos_r2(y, m, b), "msfe_ratio": ev.msfe_ratio(y, m, b),
            "dm_statistic": dm.statistic, "dm_p_value": dm.p_value,
            "cw_statistic": cw.statistic, "cw_p_value": cw.p_value})

    def summary(self) -> Summary:
        """Report: the setting, the accuracy of the forecasts and the tests against the benchmark."""
        p, e = self.plan, self.evaluation
        f = self.forecasts
        refits = np.flatnonzero(p.refit)
        every = f"every {int(np.diff(refits).min())} origin(s)" if refits.size > 1 else "once"
        header = [f"Out-of-sample forecasts: {p.design.formula}",
                  f"method = {p.method!r}, scheme = {p.scheme!r}"
                  + (f" (window {p.window})" if p.window else "")
                  + f", horizon = {p.horizon}, estimated {every}",
                  f"{len(f)} forecasts, targets {f.index[0]} to {f.index[-1]}; first origin "
                  f"{f['origin'].iloc[0]} with {f['n_train'].iloc[0]} training rows "
                  f"(engine: {self.engine})", "", "Forecast accuracy:"]
        table = pd.DataFrame({"Estimate": [e.msfe, e.rmse, e.mae, e.benchmark_msfe, e.oos_r2,
                                           e.msfe_ratio, e.dm_statistic, e.cw_statistic],
                              "p-value": [np.nan] * 6 + [e.dm_p_value, e.cw_p_value]},
                             index=["MSFE", "RMSE", "MAE", "MSFE (prevailing mean)",
                                    "OOS R-squared", "MSFE ratio",
                                    "Diebold-Mariano (HLN), vs mean", "Clark-West, vs mean"])
        footer = ["OOS R-squared = 1 - MSFE / MSFE(prevailing mean) (Campbell-Thompson).",
                  f"DM: two-sided, squared loss, Harvey-Leybourne-Newbold correction, "
                  f"{p.horizon - 1} lags; CW: one-sided (model better), Newey-West "
                  f"{p.horizon - 1} lags.",
                  "Every forecast re-estimates the model from rows observed at its origin "
                  "(centring, scaling, spectrum, lambda/k" + (", heads" if p.method == "softmax"
                                                             else "") + ")."]
        if self.tuning_path is not None:
            name = "lambda" if p.method == "ridge" else "k"
            footer.append(f"{name} over origins: min {fmt_g(float(np.nanmin(self.tuning_path)))}, "
                          f"median {fmt_g(float(np.nanmedian(self.tuning_path)))}, max "
                          f"{fmt_g(float(np.nanmax(self.tuning_path)))}")
        return Summary(title="attnreg forecast evaluation", header=header, table=table,
                       footer=footer, stars=False)

    # ------------------------------------------------------------ attention over the past
    def _index_of(self, target: Any) -> int:
        labels = self.forecasts.index
        try:
            return int(labels.get_loc(target))
        except KeyError:
            raise OptionError(f"{target!r} is not a forecast target date (from {labels[0]!r} "
                              f"to {labels[-1]!r})") from None

    def attention(self, target: Any, *, chunk_size: int | None = None) -> AttentionWeights:
        """Weights of the forecast for ``target`` over the rows it was estimated from."""
        i = self._index_of(target)
        last_refit = int(np.flatnonzero(self.plan.refit[: i + 1])[-1])
        fit = fit_window(self.plan, last_refit, self._tuning_at(last_refit))
        row = self.plan.design.X[self.plan.targets[i]][None, :]
        return _attention_of_row(fit, row, self.forecasts.index[i:i + 1], chunk_size)

    def attention_shares(self, recent: tuple[int, ...] = (4, 20)) -> pd.DataFrame:
        """Share of absolute attention on the most recent rows, for every forecast.

        Column ``last_k`` is Σ|ω| over the k most recent training rows divided by Σ|ω|.
        """
        out = np.empty((self.plan.n_forecasts, len(recent)))
        fit = None
        for i in range(self.plan.n_forecasts):
            if self.plan.refit[i] or fit is None:
                fit = fit_window(self.plan, i, self._tuning_at(i))
            row = self.plan.design.X[self.plan.targets[i]][None, :]
            w = np.abs(_attention_of_row(fit, row, pd.Index([0]), None).weights.to_numpy()[0])
            out[i] = [w[-k:].sum() / w.sum() for k in recent]
        return pd.DataFrame(out, columns=[f"last_{k}" for k in recent], index=self.forecasts.index)

    def _tuning_at(self, i: int) -> float | None:
        """The λ or k forecast ``i`` used, so that refits reproduce it exactly."""
        if self.tuning_path is None:
            return None
        value = float(self.tuning_path[i])
        return int(value) if self.plan.method == "pcr" else value

    def leakage_audit(self) -> Any:
        """The same forecasts with the full-sample metric: how much better they look."""
        from attnreg.timeseries.leakage import leakage_audit

        return leakage_audit(self)

    def plot(self, ax: Any = None) -> Any:
        """Forecast vs actual (top) and the cumulative squared-error difference vs the benchmark."""
        from attnreg.plots import plot_forecast

        return plot_forecast(self, ax=ax)

    def __repr__(self) -> str:
        e = self.evaluation
        return (f"<attnreg forecasts: {self.plan.method}, {self.plan.scheme}, h={self.plan.horizon}, "
                f"{int(e.n_forecasts)} forecasts, OOS R²={e.oos_r2:.4f}>")


def _attention_of_row(fit: Any, row: FloatArray, labels: pd.Index,
                      chunk_size: int | None) -> AttentionWeights:
    if fit.method in SPECTRAL:
        from attnreg.attention import linear_weight_fn

        emb = fit.embedding
        F_q = row @ emb.encoder.to_numpy()
        fn = linear_weight_fn(F_q, emb.train_factors.to_numpy(), fit.spectrum.sqrt_w**2)
        return AttentionWeights(weight_fn=fn, n_queries=1, query_labels=labels,
                                train_labels=fit.design.row_labels, y_train=fit.design.y,
                                chunk_size=chunk_size)
    X = row[:, 1:] if fit.design.intercept else row
    sm = fit.fit
    values = sm.y_scale * sm.values + (sm.y_mean if sm.ridge_coef is None else 0.0)
    return AttentionWeights(weight_fn=lambda a, b: sm.weights(X[a:b]), n_queries=1,
                            query_labels=labels, train_labels=fit.design.row_labels,
                            y_train=values, kind="softmax", chunk_size=chunk_size,
                            base=fit._base(X))
