"""The report of forecasts at several horizons: per-horizon evaluation and interval coverage.

A :class:`~attnreg.report.Summary` like every other (the setting and the notes' figures as
:mod:`attnreg.report.fcfigures` sections, one table of numbers), so it prints as text and
renders with ``to_latex()``, ``to_markdown()`` and as HTML.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg.report import Summary
from attnreg.methods import get_method
from attnreg.report.fcfigures import ForecastSetup, HorizonsSetup, IntervalMethod, TuningRange
from attnreg.report.sections import Coefficients, Lines
from attnreg.timeseries.density_summary import density_sections, horizons_density_sections
from attnreg.timeseries.fcargs import is_iv_formula
from attnreg.timeseries.forecast_common import tuning_label

if TYPE_CHECKING:
    from attnreg.timeseries.forecast_results import ForecastResults
    from attnreg.timeseries.multihorizon import MultiHorizonForecasts

__all__ = ["density_figures", "forecast_summary", "horizons_summary", "interval_method",
           "interval_note"]

#: table columns: (evaluation key, heading)
_COLUMNS = (("n_forecasts", "n"), ("msfe", "MSFE"), ("oos_r2", "OOS R2"),
            ("msfe_ratio", "MSFE ratio"), ("dm_statistic", "DM"), ("dm_p_value", "Pr(DM)"),
            ("cw_statistic", "CW"), ("cw_p_value", "Pr(CW)"))
_INTERVAL_COLUMNS = (("n_intervals", "n int."), ("coverage", "Coverage"),
                     ("mean_width", "Mean width"))
#: density-score and calibration columns of the interval tables (heading, source)
_DENSITY_COLUMNS = ("CRPS", "Pr(uc)", "Pr(cc)")


def refitted(method: str) -> str:
    """What a forecast re-estimates at each origin, from the method's declarations.

    Examples
    --------
    >>> refitted("ridge"), refitted("poisson")
    ('centring, scaling, spectrum, lambda', "all parameters of method 'poisson'")
    """
    est = get_method(method)
    if est.rule is not None:  # a spectral method: its pieces, and its tuning parameter
        return ", ".join(["centring", "scaling", "spectrum"]
                         + ([est.rule.parameter] if est.tuning is not None else []))
    return (f"all parameters of method {est.name!r}"
            + (", warm-started at the previous origin's" if est.warm is not None else ""))


def density_figures(res: ForecastResults) -> dict[str, float]:
    """Mean CRPS and the Kupiec (uc) and Christoffersen (cc) p-values of one horizon's
    intervals (three of the numbers of the summaries' density table,
    :func:`attnreg.timeseries.density_summary.density_numbers`); NaN where they cannot be
    computed (fewer than 4 intervals).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> fc = ar.forecast("infl ~ lag(infl, 1)", macro, start="1990Q1", interval="gaussian")
    >>> {k: round(v, 3) for k, v in density_figures(fc).items()}
    {'CRPS': 1.301, 'Pr(uc)': 0.731, 'Pr(cc)': 0.002}
    """
    from attnreg.exceptions import DataError, OptionError
    from attnreg.timeseries.calibration import calibration
    from attnreg.timeseries.scores import evaluate_scores

    try:
        crps = float(evaluate_scores(res, ("crps",))["crps"].iloc[0])
        table = calibration(res).table.iloc[0]
    except (DataError, OptionError):
        return dict.fromkeys(_DENSITY_COLUMNS, np.nan)
    return {"CRPS": crps, "Pr(uc)": float(table["uc_p"]), "Pr(cc)": float(table["cc_p"])}


def interval_note(res: ForecastResults) -> list[str]:
    """Footer lines saying how the intervals were made (none without intervals).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> fc = ar.forecast("infl ~ lag(infl, 1)", macro, start="1990Q1", interval="empirical")
    >>> interval_note(fc)[0][:45]
    "90% intervals: quantiles of the model's own p"
    """
    p = res.plan
    if p.interval is None:
        return []
    pct = f"{100 * p.level:g}%"
    if p.interval == "empirical":
        return [f"{pct} intervals: quantiles of the model's own past out-of-sample errors at "
                f"the same horizon observed by the origin (at least {p.min_errors}; none before)."]
    if p.interval == "quantile":
        return [f"{pct} intervals: the forecasts of tau = {(1 - p.level) / 2:g} and "
                f"{(1 + p.level) / 2:g} of the quantile regression fitted at each origin."]
    if p.interval == "aci":
        return [f"{pct} adaptive conformal intervals (Gibbs-Candes, step {p.aci_gamma:g}): "
                "quantiles of the past errors at a miss rate updated by the coverage observed "
                "by the origin."]
    how = ("t * sigma * sqrt(1 + x'(X'X)^-1 x) at h = 1 (the fit's prediction interval); "
           + ("z * sigma * sqrt(sum psi_j^2) (the fitted AR's MA weights) for h > 1"
              if p.strategy == "iterated" else
              "z * sigma of the h-step regression for h > 1 (parameter uncertainty ignored)"))
    return [f"{pct} Gaussian intervals, sigma from the fit at each origin: {how}."]


def forecast_summary(res: ForecastResults, benchmark: Any = None) -> Summary:
    """The report of :meth:`ForecastResults.summary`: the setting, the accuracy of the
    forecasts, the tests against the benchmark, the intervals' coverage, and the density
    scores and calibration tests (:mod:`attnreg.timeseries.density_summary`; the
    Diebold-Mariano test of the CRPS against ``benchmark``, forecasts of the same target with
    a predictive distribution, when given)."""
    p, e = res.plan, res.evaluation
    f = res.forecasts
    refits = np.flatnonzero(p.refit)
    setup = ForecastSetup(
        str(p.design.formula), p.method, p.scheme, p.window, int(p.horizon), p.strategy,
        p.interval, None if p.interval is None else float(p.level),
        int(np.diff(refits).min()) if refits.size > 1 else None, len(f), str(f.index[0]),
        str(f.index[-1]), str(f["origin"].iloc[0]), int(f["n_train"].iloc[0]), res.engine)
    tuning: list[TuningRange] = []
    table = pd.DataFrame({"Estimate": [e.msfe, e.rmse, e.mae, e.benchmark_msfe, e.oos_r2,
                                       e.msfe_ratio, e.dm_statistic, e.cw_statistic],
                          "p-value": [np.nan] * 6 + [e.dm_p_value, e.cw_p_value]},
                         index=["MSFE", "RMSE", "MAE", "MSFE (prevailing mean)",
                                "OOS R-squared", "MSFE ratio",
                                "Diebold-Mariano (HLN), vs mean", "Clark-West, vs mean"])
    intervals: tuple[Any, ...] = ()
    if p.interval is not None:
        rows = pd.DataFrame({"Nominal": [p.level], "Coverage": [e.coverage],
                             "Mean width": [e.mean_width], "n": [e.n_intervals]},
                            index=[f"{p.interval} intervals"])
        intervals = (Lines(("", "Forecast intervals:")),
                     Coefficients(rows, stars=False, heading=False))
    footer = ["OOS R-squared = 1 - MSFE / MSFE(prevailing mean) (Campbell-Thompson).",
              f"DM: two-sided, squared loss, Harvey-Leybourne-Newbold correction, "
              f"{p.horizon - 1} lags; CW: one-sided (model better), Newey-West "
              f"{p.horizon - 1} lags.",
              "Every forecast re-estimates the model from rows observed at its origin "
              + ("(both stages of the IV estimator)." if is_iv_formula(p.design.formula) else
                 f"({refitted(p.method)}).")]
    if p.strategy == "iterated":
        footer.append(f"Iterated strategy: the one-step model fitted at the origin, iterated "
                      f"{p.horizon} time(s).")
    footer += interval_note(res)
    if res.quantile_path is not None:
        from attnreg.timeseries.quantile_scores import crossing_note

        footer += crossing_note(res)
    if res.tuning_path is not None:
        name = tuning_label(p.method)
        tuning.append(TuningRange(name, "origins", float(np.nanmin(res.tuning_path)),
                                  float(np.nanmedian(res.tuning_path)),
                                  float(np.nanmax(res.tuning_path))))
    return Summary("attnreg forecast evaluation",
                   (setup, Coefficients(table, stars=False, heading=False), *intervals,
                    Lines(tuple(footer), lead_blank=True),
                    *density_sections(res, benchmark), *tuning))


def interval_method(res: ForecastResults) -> tuple[IntervalMethod, ...]:
    """How the intervals were made, as a report section (none without intervals)."""
    p = res.plan
    if p.interval is None:
        return ()
    return (IntervalMethod(p.interval, float(p.level), int(p.min_errors), float(p.aci_gamma),
                           tuple(interval_note(res))),)


def horizons_summary(res: MultiHorizonForecasts, benchmark: Any = None) -> Summary:
    """The per-horizon report of :meth:`MultiHorizonForecasts.summary` (with the density
    scores and calibration tests of every horizon, and the Diebold-Mariano test of the CRPS
    against ``benchmark`` when given).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> fh = ar.forecast("infl ~ lag(infl, h)", macro, start="1990Q1", horizon=[1, 4],
    ...                  interval="empirical", level=0.8)
    >>> table = horizons_summary(fh).table
    >>> table[["n", "OOS R2", "Coverage"]].round(3)  # doctest: +NORMALIZE_WHITESPACE
              n  OOS R2  Coverage
    h = 1  79.0   0.148     0.525
    h = 4  79.0  -0.019     0.482
    """
    first = res.parts[0]
    p, e = first.plan, res.evaluation
    f = res.forecasts
    targets = f.index.get_level_values("target")
    columns = _COLUMNS + (_INTERVAL_COLUMNS if p.interval is not None else ())
    table = pd.DataFrame({head: e[key].to_numpy(dtype=float) for key, head in columns},
                         index=pd.Index([f"h = {h}" for h in res.horizons]))
    setup = HorizonsSetup(str(res.formula), p.method, p.scheme, p.window, tuple(res.horizons),
                          p.strategy, str(targets.min()), str(targets.max()),
                          tuple(sorted({part.engine for part in res.parts})))
    footer = ["OOS R2 = 1 - MSFE / MSFE(prevailing mean); DM: Diebold-Mariano with the "
              "Harvey-Leybourne-Newbold correction, two-sided, h - 1 lags; CW: Clark-West, "
              "one-sided (model better), Newey-West h - 1 lags; both against the prevailing mean.",
              ("Direct strategy: one model per horizon and origin, estimated from the rows "
               "observed at the origin." if p.strategy == "direct" else
               "Iterated strategy: the one-step model fitted at the origin, iterated h times.")]
    sections: list[Any] = [setup, Coefficients(table, stars=False, heading=False),
                           Lines(tuple(footer), lead_blank=True), *interval_method(first)]
    if p.interval is not None:
        sections.append(Lines(("Coverage: share of the forecasts with an interval whose actual "
                               "lies inside; n int.: forecasts with an interval.",)))
    sections += horizons_density_sections(res, benchmark)
    if first.tuning_path is not None:
        from attnreg.methods import get_method

        tune = np.concatenate([part.tuning_path for part in res.parts
                               if part.tuning_path is not None])
        name = "lambda" if get_method(p.method).tuning == "lam" else "k"
        sections.append(TuningRange(name, "origins and horizons", float(np.nanmin(tune)),
                                    float(np.nanmedian(tune)), float(np.nanmax(tune))))
    return Summary("attnreg forecast evaluation by horizon", tuple(sections))
