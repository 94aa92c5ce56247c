"""The text of the forecast reports' sections (:mod:`attnreg.report.fcfigures`).

Pure functions of one section each; :mod:`attnreg.report.render_figures` dispatches to them.
"""

from __future__ import annotations

from attnreg.report.fcfigures import (
    CalibrationSetup,
    ComparisonNotes,
    ComparisonSetup,
    ForecastSetup,
    HorizonsSetup,
    IntervalMethod,
    LeakageFigures,
    ModelConfidence,
    TuningRange,
)
from attnreg.report.rformat import fmt_g

__all__ = ["calibration_lines", "comparison_notes_lines", "comparison_setup_lines",
           "forecast_setup_lines", "horizons_setup_lines", "interval_lines", "leakage_lines",
           "leakage_rows", "mcs_lines",
           "tuning_lines", "tuning_rows"]


def _window(window: int | None) -> str:
    return f" (window {window})" if window else ""


def forecast_setup_lines(s: ForecastSetup) -> list[str]:
    """The header of a one-horizon forecast report, down to the accuracy table's heading."""
    every = "once" if s.refit_every is None else f"every {s.refit_every} origin(s)"
    return [f"Out-of-sample forecasts: {s.formula}",
            f"method = {s.method!r}, scheme = {s.scheme!r}{_window(s.window)}, "
            f"horizon = {s.horizon}, estimated {every}",
            f"{s.n_forecasts} forecasts, targets {s.first_target} to {s.last_target}; first "
            f"origin {s.first_origin} with {s.first_n_train} training rows (engine: {s.engine})",
            "", "Forecast accuracy:"]


def interval_lines(s: IntervalMethod) -> list[str]:
    """How the intervals were made."""
    return list(s.description)


def tuning_lines(s: TuningRange) -> list[str]:
    """The tuning parameter's range, in one line."""
    return [f"{s.parameter} over {s.over}: min {fmt_g(s.tuning_min)}, "
            f"median {fmt_g(s.tuning_median)}, max {fmt_g(s.tuning_max)}"]


def tuning_rows(s: TuningRange) -> list[tuple[str, str]]:
    """The tuning parameter's range as a table."""
    return [(f"{s.parameter} over {s.over}: {what}", fmt_g(value)) for what, value in
            (("min", s.tuning_min), ("median", s.tuning_median), ("max", s.tuning_max))]


def horizons_setup_lines(s: HorizonsSetup) -> list[str]:
    """The header of a several-horizon forecast report."""
    return [f"Out-of-sample forecasts at horizons {', '.join(map(str, s.horizons))}: "
            f"{s.formula}",
            f"method = {s.method!r}, scheme = {s.scheme!r}{_window(s.window)}, "
            f"strategy = {s.strategy!r}",
            f"targets {s.first_target} to {s.last_target}; engine: " + ", ".join(s.engines),
            "", "Forecast accuracy by horizon:"]


def calibration_lines(s: CalibrationSetup) -> list[str]:
    """The heading of a calibration report."""
    return [f"Calibration of {100 * s.level:g}% {s.interval} forecast intervals and densities"]


def comparison_setup_lines(s: ComparisonSetup) -> list[str]:
    """The header of a comparison of forecasts."""
    return [f"{s.n_models} models against the benchmark {s.benchmark!r}, "
            f"horizon = {s.horizon}, loss = {s.loss!r}",
            f"{s.n_forecasts} common forecasts, targets {s.first_target} to {s.last_target}", ""]


def comparison_notes_lines(s: ComparisonNotes) -> list[str]:
    """What each test of a comparison is (a blank line first)."""
    return ["", "OOS R2 = 1 - MSFE / MSFE(benchmark); .table holds every statistic and p-value.",
            f"DM: Diebold-Mariano, two-sided, HLN correction, {s.horizon - 1} lags "
            "(forecast::dm.test). CW: Clark-West, one-sided (model better), for models nesting "
            "the benchmark.",
            "GW: Giacomini-White conditional predictive ability, instruments (1, lagged loss "
            "difference), chi-squared(2).",
            "ENC: H0 the benchmark encompasses the model; ENC rev: H0 the model encompasses the "
            "benchmark (Harvey-Leybourne-Newbold 1998, one-sided t(n-1))."]


def mcs_lines(s: ModelConfidence) -> list[str]:
    """The model confidence set in one line."""
    return [f"MCS: Hansen-Lunde-Nason model confidence set ({s.mcs_method} statistic, "
            f"{s.bootstrap} bootstrap, block {s.block_size}, {s.reps} replications, seed "
            f"{s.seed}); {100 * (1 - s.size):g}% set: {', '.join(s.included)}."]


def leakage_lines(s: LeakageFigures) -> list[str]:
    """The audit in five lines."""
    return [f"Leakage audit ({s.n_forecasts} forecasts):",
            f"  OOS R-squared honest (re-estimated at each origin): {s.oos_r2_honest:.4f}",
            f"  OOS R-squared with full-sample metric (causal mask only): {s.oos_r2_leaky:.4f}",
            f"  OOS R-squared of full-sample fits (look-ahead in everything): "
            f"{s.oos_r2_full_sample:.4f}",
            f"  apparent gain from look-ahead: {s.oos_r2_gain:+.4f}; "
            f"RMS change per forecast: {s.rms_change:.4g}"]


def leakage_rows(s: LeakageFigures) -> list[tuple[str, str]]:
    """The audit as a table."""
    return [("Forecasts", str(s.n_forecasts)),
            ("OOS R-squared, honest", fmt_g(s.oos_r2_honest)),
            ("OOS R-squared, full-sample metric", fmt_g(s.oos_r2_leaky)),
            ("OOS R-squared, full-sample fits", fmt_g(s.oos_r2_full_sample)),
            ("Apparent gain from look-ahead", fmt_g(s.oos_r2_gain)),
            ("RMS change per forecast", fmt_g(s.rms_change))]
