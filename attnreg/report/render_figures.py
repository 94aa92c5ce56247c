"""Renderers of :mod:`attnreg.report.figures`: R-style text lines, and (name, value) rows.

:mod:`attnreg.report.render` asks :func:`text` for the lines of a section it does not know,
and :func:`rows` for a table of the figures: a section with rows is a table in HTML, LaTeX
and Markdown, one without is printed as its lines there too.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import singledispatch
from typing import Any

from attnreg.report import render_forecast as rf
from attnreg.report import render_models as rm
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
from attnreg.report.figures import (
    BootstrapSetup,
    BootstrapTestResult,
    IntervalLevel,
    HypothesisSetup,
    WaldStatistic,
)
from attnreg.report.modelfigures import NetworkFigures, PermutationSetup, SoftmaxFigures
from attnreg.report.rformat import fmt_g, fmt_pvalue, format_c

__all__ = ["df_text", "rows", "text"]


def df_text(value: float) -> str:
    """Degrees of freedom: an integer plainly, else with two decimals."""
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


@singledispatch
def text(section: Any) -> list[str]:
    """The lines of one section."""
    raise TypeError(f"no text renderer for {type(section).__name__}")


@singledispatch
def rows(section: Any) -> list[tuple[str, str]]:
    """The section's figures as (name, value) rows; empty when it is printed as lines."""
    return []


# ------------------------------------------------------------------------------ tests

@text.register
def _(section: HypothesisSetup) -> list[str]:
    s = section
    if s.test == "t":
        z = math.isinf(s.df)
        dof = ("normal" if z else "Satterthwaite DF (column df)" if math.isnan(s.df)
               else f"{df_text(s.df)} DF")
        first = f"{'z' if z else 't'} tests of linear restrictions (each alone), {dof}"
    else:
        n = s.n_restrictions
        first = (f"Linear hypothesis test (Wald {'F' if s.test == 'F' else 'chi-squared'} "
                 f"test): {n} restriction{'s' if n > 1 else ''}")
    return [first, f"Covariance: {s.covariance}", *([s.note] if s.note else []), ""]


@text.register
def _(section: WaldStatistic) -> list[str]:
    s = section
    if s.test == "F":
        line = (f"F-statistic: {format_c(s.statistic).strip()} on {df_text(s.df1)} and "
                f"{df_text(s.df2)} DF,  p-value: {fmt_pvalue(s.p_value, 4)}")
    else:
        line = (f"Chi-squared: {format_c(s.statistic).strip()} on {df_text(s.df1)} DF,  "
                f"p-value: {fmt_pvalue(s.p_value, 4)}")
    return ["", line]


@rows.register
def _(section: WaldStatistic) -> list[tuple[str, str]]:
    s = section
    if s.test == "F":
        return [("F-statistic", fmt_g(s.statistic)), ("Numerator DF", fmt_g(s.df1, 6)),
                ("Denominator DF", fmt_g(s.df2, 6)), ("p-value", fmt_pvalue(s.p_value, 4))]
    return [("Chi-squared", fmt_g(s.statistic)), ("DF", fmt_g(s.df1, 6)),
            ("p-value", fmt_pvalue(s.p_value, 4))]


@text.register
def _(section: IntervalLevel) -> list[str]:
    return ["", f"{100 * section.level:.3g} % {section.intervals}:"]


# ------------------------------------------------------------------------------ bootstrap

_KINDS = {"wild": "Wild", "pairs": "Pairs", "residual": "Residual"}


@text.register
def _(section: BootstrapSetup) -> list[str]:
    s = section
    by = f" by {s.cluster} ({s.n_clusters} clusters)" if s.cluster else ""
    draws = f", {s.weights} weights" if s.weights else ""
    enum = " (full enumeration)" if s.enumerated else ""
    seed = f", seed {s.seed}" if s.seed is not None else ""
    head = [f"{_KINDS[s.kind]} bootstrap{by}{draws}: {s.reps} replications{enum}{seed}",
            f"Studentized with: {s.se_type}"]
    if s.n_failed:
        head.append(f"{s.n_failed} replication(s) left out: singular resampled design")
    return [*head, *([s.note] if s.note else []), ""]


@text.register
def _(section: BootstrapTestResult) -> list[str]:
    s = section
    what = "t" if s.form == "t" else "Wald F"
    return ["", f"{s.test_name} bootstrap test of {s.hypothesis} "
                f"({'null imposed' if s.impose_null else 'null not imposed'}):",
            f"  {what} = {format_c(s.test_statistic).strip()},  bootstrap p-value: "
            f"{fmt_pvalue(s.test_p_value, 4)} ({s.n_draws} replications)"]


@rows.register
def _(section: BootstrapTestResult) -> list[tuple[str, str]]:
    s = section
    return [(f"{s.test_name} bootstrap test", s.hypothesis),
            ("Null imposed", "yes" if s.impose_null else "no"),
            ("t" if s.form == "t" else "Wald F", fmt_g(s.test_statistic)),
            ("Bootstrap p-value", fmt_pvalue(s.test_p_value, 4)),
            ("Replications", str(s.n_draws))]


# ------------------------------------------------------------------------------ forecasts, models

#: the sections whose renderers live in render_forecast and render_models
_TEXT: dict[type, Callable[[Any], list[str]]] = {
    ForecastSetup: rf.forecast_setup_lines,
    IntervalMethod: rf.interval_lines, TuningRange: rf.tuning_lines,
    HorizonsSetup: rf.horizons_setup_lines, CalibrationSetup: rf.calibration_lines,
    SoftmaxFigures: rm.softmax_lines, PermutationSetup: rm.permutation_lines,
    NetworkFigures: rm.network_lines,
    ComparisonSetup: rf.comparison_setup_lines, ComparisonNotes: rf.comparison_notes_lines,
    ModelConfidence: rf.mcs_lines, LeakageFigures: rf.leakage_lines}
_ROWS: dict[type, Callable[[Any], list[tuple[str, str]]]] = {
    TuningRange: rf.tuning_rows, LeakageFigures: rf.leakage_rows,
    SoftmaxFigures: rm.softmax_rows,
    NetworkFigures: rm.network_rows}
for _section, _lines in _TEXT.items():
    text.register(_section)(_lines)
for _section, _rows in _ROWS.items():
    rows.register(_section)(_rows)
