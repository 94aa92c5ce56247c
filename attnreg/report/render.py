"""Renderers: each summary section as R's text, HTML or LaTeX.

The text is ``print.summary.lm``'s layout digit for digit (:mod:`attnreg.report.rformat`,
:mod:`attnreg.report.rprint`); HTML and LaTeX re-render the same numbers as tables.
"""

from __future__ import annotations

import math
from functools import singledispatch
from typing import Any

from tabulate import tabulate

from attnreg.report import render_figures
from attnreg.report.rformat import _stars, fmt_g, fmt_pvalue, format_c, r_format, r_signif
from attnreg.report.rprint import SIGNIF_LEGEND, _coef_lines, residual_lines
from attnreg.report.sections import (
    AttentionSummary,
    Call,
    Coefficients,
    FitStatistics,
    Lines,
    Penalty,
    Residuals,
)

__all__ = ["figure_rows", "html", "latex", "markdown", "statistic_rows", "text"]


# ------------------------------------------------------------------------------ text (R's)

@singledispatch
def text(section: Any) -> list[str]:
    """The lines of one section in R's layout (:mod:`attnreg.report.render_figures` for the
    figures of tests, bootstraps, forecasts and networks)."""
    return render_figures.text(section)


@text.register
def _(section: Lines) -> list[str]:
    return ["", *section.lines] if section.lead_blank and section.lines else list(section.lines)


@text.register
def _(section: Call) -> list[str]:
    return ["Call:", section.call, ""]


@text.register
def _(section: Residuals) -> list[str]:
    return [*residual_lines(section.values, section.weighted, section.df_resid,
                            section.labels), ""]


@text.register
def _(section: Coefficients) -> list[str]:
    heading = []
    if section.heading:
        heading = [f"Coefficients: ({section.n_aliased} not defined because of singularities)"
                   if section.n_aliased else "Coefficients:"]
    table, starred = _coef_lines(section.table, section.stars)
    return [*heading, *table, *(["---", SIGNIF_LEGEND] if starred else [])]


def _df(value: float, effective: bool) -> str:
    return f"{value:.2f}" if effective else r_format([value], 7)[0]


@text.register
def _(section: FitStatistics) -> list[str]:
    s = section
    sigma = r_format([r_signif(s.sigma, 4)], 7)[0]
    df_txt = _df(s.df_resid, s.effective) + (" (effective)" if s.effective else "")
    lines = ["", f"Residual standard error: {sigma} on {df_txt} degrees of freedom"]
    if s.n_deleted:
        lines.append(f"  ({s.n_deleted} observation{'s' if s.n_deleted > 1 else ''} deleted "
                     "due to missingness)")
    if s.r_squared is not None and s.adj_r_squared is not None:
        lines.append(f"Multiple R-squared:  {format_c(s.r_squared)},\t"
                     f"Adjusted R-squared:  {format_c(s.adj_r_squared)} ")
    f, df1, df2, pv = s.f_statistic, s.f_df1, s.f_df2, s.f_p_value
    if f is not None and df1 is not None and df2 is not None and pv is not None:
        wald = "" if s.covariance == "classical" else f"  (Wald test, {s.covariance} covariance)"
        if math.isinf(df2):  # df=np.inf: the chi-squared form of the Wald test, W = df1 F
            lines.append(f"Wald chi-squared: {format_c(f * df1)} on {_df(df1, s.effective)} "
                         f"DF,  p-value: {fmt_pvalue(pv, 4)}  ({s.covariance} covariance)")
        else:
            lines.append(f"F-statistic: {format_c(f)} on {_df(df1, s.effective)} "
                         f"and {_df(df2, s.effective)} DF,  p-value: {fmt_pvalue(pv, 4)}{wald}")
    if s.covariance != "classical":
        lines.append(f"Standard errors: {s.covariance_label}")
    return lines


@text.register
def _(section: Penalty) -> list[str]:
    p = section
    how = "given" if p.criterion == "fixed" else (
        f"chosen by {p.criterion.upper()} over {p.n_candidates} candidates")
    what = f"lambda = {fmt_g(p.value, 5)}" if p.parameter == "lambda" else f"k = {int(p.value)}"
    scale = "standardized" if p.standardized else "unstandardized"
    return ["", f"{p.method.upper()}: {what} ({how}); {scale} predictors, intercept unpenalized;",
            f"  effective df tr(H) = {p.edf:.3f}. Inference is conditional on the chosen "
            f"{p.parameter} and uses the effective df."]


@text.register
def _(section: AttentionSummary) -> list[str]:
    a = section
    sampled = "" if a.n_sampled == a.n_rows else f" (these two from {a.n_sampled} evenly spaced rows)"
    among = "" if a.n_leverage == a.n_rows else f" of {a.n_leverage} sampled rows; mean tr(H)/n"
    return ["", "Attention view (training rows as queries; weights sum to 1 with an intercept):",
            f"  leverage (hat values): mean {fmt_g(a.leverage_mean)}, "
            f"max {fmt_g(a.leverage_max)} (row {a.leverage_max_row}{among})",
            f"  effective neighbours 1/sum(w^2): median {fmt_g(a.neighbours_median)}, "
            f"min {fmt_g(a.neighbours_min)}",
            f"  negative weight mass: median {fmt_g(a.negative_median)}, "
            f"min {fmt_g(a.negative_min)}{sampled}"]


# ------------------------------------------------------------------------------ HTML / LaTeX

def statistic_rows(section: FitStatistics) -> list[tuple[str, str]]:
    """The fit statistics as (name, value) rows, four significant digits."""
    s = section
    rows = [("Residual standard error", fmt_g(s.sigma)),
            ("Residual degrees of freedom" + (" (effective)" if s.effective else ""),
             fmt_g(s.df_resid, 6))]
    if s.r_squared is not None and s.adj_r_squared is not None:
        rows += [("Multiple R-squared", fmt_g(s.r_squared)),
                 ("Adjusted R-squared", fmt_g(s.adj_r_squared))]
    f, df1, df2, pv = s.f_statistic, s.f_df1, s.f_df2, s.f_p_value
    if f is not None and df1 is not None and df2 is not None and pv is not None:
        test = "F-statistic" if s.covariance == "classical" else f"Wald F ({s.covariance})"
        value = f"{fmt_g(f)} on {fmt_g(df1, 6)} and {fmt_g(df2, 6)} DF"
        if math.isinf(df2):
            test, value = f"Wald chi-squared ({s.covariance})", f"{fmt_g(f * df1)} on {fmt_g(df1, 6)} DF"
        rows += [(test, value), ("p-value", fmt_pvalue(pv, 4))]
    if s.n_deleted:
        rows.append(("Observations deleted (missing values)", str(s.n_deleted)))
    rows.append(("Standard errors", s.covariance_label))
    return rows


def _escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def display_table(section: Coefficients) -> Any:
    """The coefficient table with a column of significance stars (when it carries them)."""
    out = section.table.copy()
    pcol = next((c for c in ("Pr(>|t|)", "Pr(>|z|)") if c in out), None)
    if section.stars and pcol is not None:
        out[""] = [_stars(p) for p in out[pcol]]
    return out


def figure_rows(section: Any) -> list[tuple[str, str]]:
    """A section's statistics as (name, value) rows; empty for a section printed as lines."""
    return statistic_rows(section) if isinstance(section, FitStatistics) else render_figures.rows(section)


@singledispatch
def html(section: Any) -> str:
    """One section as HTML: tables for numbers, a ``div`` per line for notes."""
    if stats := figure_rows(section):
        return str(tabulate(stats, headers=["statistic", "value"], tablefmt="html"))
    return "".join(f"<div>{_escape(line)}</div>" for line in text(section) if line)


@html.register
def _(section: Coefficients) -> str:
    return str(tabulate(display_table(section), headers="keys", tablefmt="html"))


def latex(sections: tuple[Any, ...]) -> str:
    """The coefficient table and the fit statistics as LaTeX tabulars, other notes as comments."""
    parts: list[str] = []
    notes: list[str] = []
    for section in sections:
        if isinstance(section, Coefficients):
            parts.append(str(tabulate(display_table(section), headers="keys",
                                      tablefmt="latex_booktabs")))
        elif stats := figure_rows(section):
            parts.append(str(tabulate(stats, headers=["statistic", "value"],
                                      tablefmt="latex_booktabs")))
        elif not isinstance(section, (Call, Residuals)) and not (
                isinstance(section, Lines) and not section.lead_blank):
            notes += [f"% {line}" for line in text(section) if line]
    return "\n".join([*parts, *notes])


def markdown(title: str, sections: tuple[Any, ...]) -> str:
    """The summary as Markdown: the title as a heading, tables as pipe tables, notes as lines.

    Notes keep their line breaks (a line ending in two spaces); the numbers are those of
    :func:`latex` and :func:`html`.
    """
    blocks: list[str] = [f"**{title}**"]
    for section in sections:
        if isinstance(section, Coefficients):
            table = display_table(section)
            table.columns = [str(c).replace("|", "\\|") for c in table.columns]  # not a cell edge
            blocks.append(str(tabulate(table, headers="keys", tablefmt="pipe")))
        elif stats := figure_rows(section):
            stats = [(name, value.replace("|", "\\|")) for name, value in stats]
            blocks.append(str(tabulate(stats, headers=["statistic", "value"], tablefmt="pipe")))
        elif isinstance(section, Call):
            blocks.append(f"`{section.call}`")
        else:
            lines = [line for line in text(section) if line]
            if isinstance(section, Residuals):
                lines = ["```text", *lines, "```"]
                blocks.append("\n".join(lines))
            elif lines:
                blocks.append("  \n".join(lines))
    return "\n\n".join(blocks) + "\n"
