"""Tables of tests as summary sections: analysis of variance, regression diagnostics and the
outlier test, each printed in its own layout (R's ``print.anova``, a table of tests,
``car::outlierTest``) and, being :class:`~attnreg.report.sections.Coefficients`, rendered as
tables in HTML, LaTeX and Markdown.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from attnreg.report import render
from attnreg.report.ranova import anova_lines
from attnreg.report.rformat import fmt_g, fmt_pvalue, r_format, r_signif
from attnreg.report.rprint import print_char_matrix
from attnreg.report.sections import Coefficients

__all__ = ["AnovaSection", "DiagnosticsSection", "OutlierSection", "diagnostic_lines",
           "outlier_lines"]


@dataclass(frozen=True)
class AnovaSection(Coefficients):
    """An analysis of variance table (R's row and column names; NaN where R prints nothing)
    with R's heading lines, printed as ``print.anova``."""

    heading_lines: tuple[str, ...] = ()


@dataclass(frozen=True)
class DiagnosticsSection(Coefficients):
    """A table of specification tests: columns ``test``, ``statistic``, ``df``, ``p_value``,
    ``note``, under ``title``."""

    title: str = "Regression diagnostics"


@dataclass(frozen=True)
class OutlierSection(Coefficients):
    """``car::outlierTest``: ``rstudent``, ``unadjusted p-value`` and ``Bonferroni p`` by row.

    Attributes
    ----------
    signif : bool
        Some row has a Bonferroni p-value at most ``cutoff``.
    cutoff : float
    """

    signif: bool = False
    cutoff: float = 0.05


def diagnostic_lines(table: pd.DataFrame, title: str) -> list[str]:
    """The tests aligned in columns (statistic to 5 digits, p-values to 4), notes below."""
    t = table
    cells = [[str(v) for v in t["test"]],
             [fmt_g(v, 5) if math.isfinite(v) else "" for v in t["statistic"]],
             [str(v) for v in t["df"]],
             [fmt_pvalue(v, 4) if math.isfinite(v) else "" for v in t["p_value"]]]
    heads = ["", "statistic", "df", "p-value"]
    widths = [max(len(h), *(len(c) for c in col)) for h, col in zip(heads, cells, strict=True)]
    lines = [title, ""]
    lines.append("  ".join(h.ljust(w) if j == 0 else h.rjust(w)
                           for j, (h, w) in enumerate(zip(heads, widths, strict=True))).rstrip())
    for i in range(len(t)):
        lines.append("  ".join(col[i].ljust(w) if j == 0 else col[i].rjust(w)
                               for j, (col, w) in enumerate(zip(cells, widths, strict=True))
                               ).rstrip())
    notes = [f"  {name}: {note}" for name, note in zip(t["test"], t["note"], strict=True)
             if note]
    if notes:
        lines += ["", "Notes:", *notes]
    return lines


def outlier_lines(table: pd.DataFrame, signif: bool, cutoff: float) -> list[str]:
    """``print.outlierTest``: the rows, Bonferroni p-values above 1 as NA."""
    t = table
    bonf = [v if v <= 1.0 else math.nan for v in t["Bonferroni p"]]
    cols = [r_format(t["rstudent"].to_numpy(), 7),
            r_format([r_signif(float(v), 5) for v in t["unadjusted p-value"]], 7),
            r_format([r_signif(float(v), 5) if math.isfinite(v) else v for v in bonf], 7)]
    lines = [] if signif else [
        f"No Studentized residuals with Bonferroni p < {fmt_g(cutoff, 7)}", "Largest |rstudent|:"]
    return lines + print_char_matrix([str(r) for r in t.index], list(t.columns), cols)


@render.text.register
def _(section: AnovaSection) -> list[str]:
    return anova_lines(section.table, section.heading_lines)


@render.text.register
def _(section: DiagnosticsSection) -> list[str]:
    return diagnostic_lines(section.table, section.title)


@render.text.register
def _(section: OutlierSection) -> list[str]:
    return outlier_lines(section.table, section.signif, section.cutoff)
