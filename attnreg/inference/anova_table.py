"""The analysis of variance table: :class:`AnovaTable` (immutable; prints as R's
``print.anova``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from attnreg.report.ranova import anova_lines
from attnreg.report.summary import Summary
from attnreg.report.tables import AnovaSection

if TYPE_CHECKING:
    pass

__all__ = ["AnovaTable"]


@dataclass(frozen=True, eq=False)
class AnovaTable:
    """An analysis of variance table, printed as R prints it.

    Attributes
    ----------
    table : DataFrame
        The numbers, with R's row and column names: ``Df``, ``Sum Sq``, ``Mean Sq``,
        ``F value``, ``Pr(>F)`` (sequential); ``Res.Df``, ``RSS``, ``Df``, ``Sum of Sq``,
        ``F``, ``Pr(>F)`` or ``Pr(>Chi)`` (nested fits); ``Sum Sq``, ``Df``, ``F value``,
        ``Pr(>F)`` (type II and III). Entries R leaves empty are NaN.
    heading : tuple of str
        R's heading (each entry printed as R's ``cat(heading, sep = "\\n")``).
    kind : str
        ``"sequential"``, ``"nested"``, ``"type II"`` or ``"type III"``.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
    >>> a = fit.anova()
    >>> a.kind, list(a.table.index)
    ('sequential', ['GNP', 'UNEMP', 'ARMED', 'POP', 'YEAR', 'Residuals'])
    >>> print(f"{a.table.loc['UNEMP', 'F value']:.2f}")
    29.27
    """

    table: pd.DataFrame
    heading: tuple[str, ...]
    kind: str

    def to_frame(self) -> pd.DataFrame:
        """The table (a copy), R's row and column names."""
        return self.table.copy()

    def summary(self) -> Summary:
        """The table as a report: R's text (with a blank line first), HTML, LaTeX, Markdown."""
        return Summary(f"Analysis of variance ({self.kind})", (AnovaSection(
            self.table, stars=False, heading=False, heading_lines=self.heading),))

    def to_latex(self) -> str:
        """The table as a LaTeX tabular (booktabs)."""
        return self.summary().to_latex()

    def to_markdown(self) -> str:
        """The table as a Markdown (pipe) table."""
        return self.summary().to_markdown()

    def __str__(self) -> str:
        return "\n".join(anova_lines(self.table, self.heading)) + "\n"

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        from tabulate import tabulate

        head = "".join(f"<div>{line}</div>" for entry in self.heading
                       for line in entry.split("\n") if line)
        body = tabulate(self.table, headers="keys", tablefmt="html", missingval="")
        return f"<div>{head}{body}</div>"
