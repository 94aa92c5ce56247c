"""The summary of a quantile regression: R's ``print(summary(rq(...)))`` layout, per τ.

R prints ``format(round(coef, 5))`` as a character matrix, left-justified (``print.summary.rq``);
the numbers stay numbers in the table and are formatted only when rendered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from attnreg.report import Summary
from attnreg.report import render
from attnreg.report.rformat import r_format, r_round
from attnreg.report.figures import Figures
from attnreg.report.sections import Coefficients

__all__ = ["QuantileCrossing", "RqCoefficients", "RqHeading", "quantreg_summary",
           "rq_matrix_lines", "rq_vector_lines"]

_DIGITS = 5  # print.summary.rq: max(5, getOption("digits") - 2)


@dataclass(frozen=True)
class RqCoefficients(Coefficients):
    """One τ's table (Value, Std. Error, t value, Pr(>|t|); or coefficients, lower bd, upper bd
    for ``se="rank"``), printed as R's ``print.summary.rq``."""


def rq_matrix_lines(table: pd.DataFrame, digits: int = _DIGITS) -> list[str]:
    """``print(format(round(m, digits)), quote = FALSE)`` of a numeric matrix: one common
    format for every cell (7 significant digits), columns left-justified one space apart."""
    x = table.to_numpy(dtype=float)
    rounded = [r_round(v, digits) if np.isfinite(v) else v for v in x.ravel(order="F")]
    cells = np.asarray(r_format(rounded, 7), dtype=object).reshape(x.shape, order="F")
    rownames = [str(r) for r in table.index]
    rlabw = max(len(r) for r in rownames)
    widths = [max([len(str(h))] + [len(c) for c in cells[:, j]])
              for j, h in enumerate(table.columns)]
    lines = [" " * rlabw + "".join(" " + str(h).ljust(w)
                                   for h, w in zip(table.columns, widths, strict=True))]
    for i, name in enumerate(rownames):
        lines.append(name.ljust(rlabw) + "".join(" " + cells[i, j].ljust(w)
                                                  for j, w in enumerate(widths)))
    return lines


def rq_vector_lines(values: pd.Series, digits: int = _DIGITS) -> list[str]:
    """``print(format(round(v, digits)), quote = FALSE)`` of a named numeric vector (R's
    ``se = "rank"`` table of one coefficient): names over values, both right-justified."""
    cells = r_format([r_round(float(v), digits) for v in values], 7)
    names = [str(n) for n in values.index]
    widths = [max(len(n), len(c)) for n, c in zip(names, cells, strict=True)]
    return ["".join(n.rjust(w) + " " for n, w in zip(names, widths, strict=True)),
            "".join(c.rjust(w) + " " for c, w in zip(cells, widths, strict=True))]


@render.text.register
def _(section: RqCoefficients) -> list[str]:
    if list(section.table.columns) == ["coefficients"]:  # se = "rank" with one coefficient
        return ["Coefficients:", *rq_vector_lines(section.table["coefficients"])]
    return ["Coefficients:", *rq_matrix_lines(section.table)]


@dataclass(frozen=True)
class RqHeading:
    """The lines before one τ's table: the call and τ (after a blank line but for the first)."""

    call: str
    tau: float
    lead_blank: bool = False


@dataclass(frozen=True)
class QuantileCrossing(Figures):
    """The quantiles fitted, and the training rows where the fitted quantiles cross.

    Attributes
    ----------
    taus : tuple of float
    n_crossing : int
        Rows whose fitted quantiles are not ordered as the τ (no note when 0).
    """

    taus: tuple[float, ...]
    n_crossing: int


def _tau_line(tau: float) -> str:
    return "tau: [1] " + r_format([r_round(tau, _DIGITS)], 7)[0].strip()


@render.text.register
def _(section: RqHeading) -> list[str]:
    lines = [f"Call: {section.call}", "", _tau_line(section.tau), ""]
    return ["", *lines] if section.lead_blank else lines


@render.text.register
def _(section: QuantileCrossing) -> list[str]:
    if not section.n_crossing:
        return []
    return ["", f"Quantile crossing: the fitted quantiles cross at {section.n_crossing} "
                "training row(s) (a larger tau gives a smaller fitted value)."]


def quantreg_summary(call: str, taus: Sequence[float], tables: Sequence[pd.DataFrame],
                     crossing: int) -> Summary:
    """The summary: for each τ the call, τ and the coefficient table; a note on crossing.

    Parameters
    ----------
    call : str
    taus : sequence of float
    tables : sequence of DataFrame
        One coefficient table per τ.
    crossing : int
        Training rows where the fitted quantiles are not ordered as the τ.
    """
    sections: list[object] = []
    for k, (tau, table) in enumerate(zip(taus, tables, strict=True)):
        sections.append(RqHeading(call, float(tau), lead_blank=k > 0))
        sections.append(RqCoefficients(table, stars=False))
    sections.append(QuantileCrossing(tuple(float(t) for t in taus), int(crossing)))
    return Summary("attnreg quantile regression", tuple(sections))
