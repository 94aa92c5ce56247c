"""The summary object: sections of numbers, rendered on demand as R text, HTML or LaTeX."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from attnreg.report import render
from attnreg.report.figures import Figures
from attnreg.report.rprint import quantiles
from attnreg.report.sections import (
    AttentionSummary,
    Coefficients,
    FitStatistics,
    Lines,
    Penalty,
    Residuals,
)

__all__ = ["Summary"]


@dataclass(frozen=True)
class Summary:
    """A report: a title and its sections (:mod:`attnreg.report.sections`).

    ``str()`` is R's ``print.summary.lm`` layout, ``_repr_html_()`` and ``to_latex()``
    render the same numbers as tables; :attr:`table` and :attr:`statistics` give them as
    data. Nothing is formatted until it is rendered.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> s = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df).summary()
    >>> print(str(s).splitlines()[1])
    Call:
    >>> list(s.table.columns)
    ['Estimate', 'Std. Error', 't value', 'Pr(>|t|)']
    >>> round(s.statistics["r_squared"], 4), s.statistics["covariance"]
    (0.9807, 'classical')
    >>> "begin{tabular}" in s.to_latex()
    True
    >>> [line for line in s.to_markdown().splitlines() if line.startswith("| GNP")]
    ['| GNP         |     0.0378403 |   0.00171065 |  22.1204  |  1.06132e-11 | *** |']
    """

    title: str
    sections: tuple[Any, ...]

    @classmethod
    def from_lines(cls, title: str, header: Sequence[str], table: pd.DataFrame,
                   footer: Sequence[str] = (), stars: bool = True) -> Summary:
        """A summary whose notes are already in words: header lines, a table, footer lines."""
        return cls(title, (Lines(tuple(header)), Coefficients(table, stars=stars, heading=False),
                           Lines(tuple(footer), lead_blank=True)))

    @property
    def table(self) -> pd.DataFrame:
        """The coefficient table (numbers)."""
        for section in self.sections:
            if isinstance(section, Coefficients):
                return section.table
        raise AttributeError("this summary has no table")

    @property
    def tables(self) -> tuple[pd.DataFrame, ...]:
        """Every table of numbers, in print order (a t test's estimates, then its intervals)."""
        return tuple(s.table for s in self.sections if isinstance(s, Coefficients))

    @property
    def statistics(self) -> dict[str, Any]:
        """Every number of the summary besides the table, by name.

        The fit statistics (``sigma``, ``df_resid``, ``r_squared``, ``f_statistic``, ...),
        how λ or k was chosen, the attention view's figures, ``residual_quantiles``, and the
        fields of every :class:`~attnreg.report.figures.Figures` section (a test's
        ``statistic`` and ``p_value``, a bootstrap's ``reps``, ...).
        """
        out: dict[str, Any] = {}
        for section in self.sections:
            if isinstance(section, (FitStatistics, Penalty, AttentionSummary, Figures)):
                out.update(dataclasses.asdict(section))
            elif isinstance(section, Residuals) and section.values.size:
                out["residual_quantiles"] = pd.Series(
                    quantiles(section.values), index=["Min", "1Q", "Median", "3Q", "Max"])
        return out

    def __str__(self) -> str:
        return "\n".join(["", *(line for s in self.sections for line in render.text(s))]) + "\n"

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        body = "".join(render.html(s) for s in self.sections)
        return f"<div><strong>{render._escape(self.title)}</strong>{body}</div>"

    def to_latex(self) -> str:
        """The coefficient table and fit statistics as LaTeX tabulars; notes as comments."""
        return render.latex(self.sections)

    def to_markdown(self) -> str:
        """The summary as Markdown: pipe tables for the numbers, the notes as lines."""
        return render.markdown(self.title, self.sections)
