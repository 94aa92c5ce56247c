"""The Bonferroni outlier test of a fit's externally studentized residuals
(``car::outlierTest``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from attnreg.exceptions import DataError, OptionError
from attnreg.report.summary import Summary
from attnreg.report.tables import (
    OutlierSection,
    outlier_lines,
)

__all__ = ["OutlierTest", "outlier_table"]


@dataclass(frozen=True)
class OutlierTest:
    """Bonferroni outlier test on the externally studentized residuals (``car::outlierTest``).

    Attributes
    ----------
    table : DataFrame
        Indexed by row label: ``rstudent``, ``unadjusted p-value`` (two-sided t on
        df_resid − 1 df) and ``Bonferroni p`` (n times the unadjusted p, not capped at 1,
        as car stores it; printed as NA above 1). The rows with Bonferroni p at most
        ``cutoff`` (at most ``n_max``, smallest first), or the largest |rstudent| when none.
    signif : bool
        Whether any row has Bonferroni p at most ``cutoff``.
    cutoff : float

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> ot = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df).outlier_test()
    >>> ot.signif
    False
    >>> print(ot)
    No Studentized residuals with Bonferroni p < 0.05
    Largest |rstudent|:
      rstudent unadjusted p-value Bonferroni p
    9 2.220099           0.053555      0.85689
    """

    table: pd.DataFrame
    signif: bool
    cutoff: float

    def summary(self) -> Summary:
        """The test as a report: the text (a blank line first), HTML, LaTeX, Markdown."""
        return Summary("Outlier test", (OutlierSection(
            self.table, stars=False, heading=False, signif=self.signif, cutoff=self.cutoff),))

    def to_latex(self) -> str:
        """The rows as a LaTeX tabular (booktabs)."""
        return self.summary().to_latex()

    def to_markdown(self) -> str:
        """The rows as a Markdown (pipe) table."""
        return self.summary().to_markdown()

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return "\n".join(outlier_lines(self.table, self.signif, self.cutoff))

    def __repr__(self) -> str:
        return str(self)


def outlier_table(rstudent: pd.Series, df: float, cutoff: float, n_max: int) -> OutlierTest:
    """:class:`OutlierTest` of externally studentized residuals on ``df`` degrees of freedom.

    Examples
    --------
    >>> import pandas as pd
    >>> from attnreg.diagnostics.outliers import outlier_table
    >>> ot = outlier_table(pd.Series([0.5, -6.0, 1.0], index=["a", "b", "c"]), 20.0, 0.05, 10)
    >>> ot.signif, ot.table.index.tolist()
    (True, ['b'])
    """
    if isinstance(cutoff, bool) or not isinstance(cutoff, (int, float)) or not 0 < cutoff <= 1:
        raise OptionError(f"cutoff must be a probability in (0, 1], however: {cutoff=}")
    if isinstance(n_max, bool) or not isinstance(n_max, (int, np.integer)) or n_max < 1:
        raise OptionError(f"n_max must be a positive integer, however: {n_max=}")
    r = rstudent[rstudent.notna()]
    if not len(r):
        raise DataError("outlier_test() has no studentized residuals (every row has "
                        "leverage 1, or there are too few residual degrees of freedom)")
    values = r.to_numpy()
    p = 2.0 * stats.t.sf(np.abs(values), df)
    bonf = r.size * p
    order = np.argsort(bonf, kind="stable")
    hit = order[bonf[order] <= cutoff]
    signif = bool(hit.size)
    rows = hit[:n_max] if signif else np.array([int(np.argmax(np.abs(values)))])
    table = pd.DataFrame({"rstudent": values[rows], "unadjusted p-value": p[rows],
                          "Bonferroni p": bonf[rows]}, index=r.index[rows])
    return OutlierTest(table, signif, float(cutoff))
