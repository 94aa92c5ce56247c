"""Diagnostic tests of a linear fit: heteroskedasticity, autocorrelation, normality, functional
form and collinearity (the battery behind ``fit.diagnostics()`` and ``fit.vif()``).

Every test works on the weighted model ỹ = √w y, X̃ = √w X, the rows of the fit in data order
(rows of weight zero and rows dropped for missing values are not part of it). The auxiliary
regressions of the tests reuse the fit's decomposition: the column space of X̃ is spanned by
q₀ = √w / ‖√w‖ (with an intercept) and the left singular vectors U, so a regression of any
vector v on X̃ is [q₀ U][q₀ U]' v, and a regression on [X̃ L] for a few extra columns L is
that plus the regression on L with X̃ partialled out (Frisch–Waugh–Lovell). Nothing of size
n_obs × n_coef is formed beyond what the fit holds.

References: lmtest's ``bptest``, ``dwtest``, ``bgtest`` and ``resettest``; statsmodels'
``het_white`` and ``jarque_bera``; car's ``vif`` (Fox and Monette 1992); R's ``kappa``.
"""


from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from attnreg.diagnostics.autocorrelation import breusch_godfrey, durbin_watson
from attnreg.diagnostics.collinearity import condition_numbers
from attnreg.diagnostics.heteroskedasticity import breusch_pagan, white_test
from attnreg.diagnostics.projection import (
    table_row,
)
from attnreg.diagnostics.specification import check_power, jarque_bera, reset_test
from attnreg.exceptions import DataError, OptionError
from attnreg.inference.contract import LinearFitContract
from attnreg.report.summary import Summary
from attnreg.report.tables import (
    DiagnosticsSection,
    diagnostic_lines,
)

__all__ = ["DiagnosticTable", "diagnostic_table", "perfect_fit_note"]

_COLUMNS = ["test", "statistic", "df", "p_value", "note"]


@dataclass(frozen=True)
class DiagnosticTable:
    """The diagnostic tests of a fit: one row per test (immutable; pickles).

    Attributes
    ----------
    table : DataFrame
        Columns ``test``, ``statistic``, ``df`` (a string: ``"2"`` or ``"1, 37"`` for an F
        test; empty where there is none), ``p_value`` (NaN where not computed) and ``note``.
    title : str
        The first line of the printout.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> d = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df).diagnostics()
    >>> d.table["test"].tolist()[:3]
    ['Breusch-Pagan (studentized)', 'White', 'Durbin-Watson']
    >>> print(f"{d.statistic('Durbin-Watson'):.4f}")
    2.5897
    """

    table: pd.DataFrame
    title: str = "Regression diagnostics"

    def to_frame(self) -> pd.DataFrame:
        """A copy of :attr:`table`, indexed by test name.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> frame = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df).diagnostics().to_frame()
        >>> list(frame.columns)
        ['statistic', 'df', 'p_value', 'note']
        """
        return self.table.set_index("test").copy()

    def statistic(self, test: str) -> float:
        """The statistic of one test by its name (as in the ``test`` column).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> d = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df).diagnostics()
        >>> d.statistic("Jarque-Bera") >= 0
        True
        """
        return float(self._row(test)["statistic"])

    def p_value(self, test: str) -> float:
        """The p-value of one test by its name (NaN where none is computed).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> d = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df).diagnostics()
        >>> 0 <= d.p_value("RESET") <= 1
        True
        """
        return float(self._row(test)["p_value"])

    def _row(self, test: str) -> pd.Series:
        hit = self.table.index[self.table["test"] == test]
        if not len(hit):
            raise OptionError(f"test must be one of {', '.join(map(repr, self.table['test']))}, "
                              f"however: {test=}")
        return self.table.loc[hit[0]]

    def summary(self) -> Summary:
        """The tests as a report: the text (a blank line first), HTML, LaTeX, Markdown."""
        return Summary(self.title, (DiagnosticsSection(self.table, stars=False, heading=False,
                                                       title=self.title),))

    def to_latex(self) -> str:
        """The tests as a LaTeX tabular (booktabs)."""
        return self.summary().to_latex()

    def to_markdown(self) -> str:
        """The tests as a Markdown (pipe) table."""
        return self.summary().to_markdown()

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def __str__(self) -> str:
        return "\n".join(diagnostic_lines(self.table, self.title))

    def __repr__(self) -> str:
        return str(self)



def perfect_fit_note(fit: LinearFitContract) -> str:
    """Why the residual tests are not defined on an essentially perfect fit ("" otherwise).

    R's ``summary.lm`` criterion: the residual variance Σ w e² / df_resid below 1e-30 of
    mean(f)² + var(f), f = √w · fitted. The residuals are then rounding errors (or exactly
    zero), and every residual-based statistic divides by their sum of squares.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> from attnreg.diagnostics.battery import perfect_fit_note
    >>> df = pd.DataFrame({"x": np.arange(10.0)})
    >>> perfect_fit_note(ar.attnreg("y ~ x", df.assign(y=0.1 + 0.3 * df.x)))[:21]
    'essentially perfect f'
    """
    df = float(fit.df_resid)
    e = fit._resid_ws  # on the rescaled response: no under- or overflow
    if not df > 0 or e.size < 2:
        return ""
    f = fit.design.y - fit._resid_fit
    if fit.spectrum.weighted:
        f = np.asarray(fit.spectrum.sqrt_w) * f
    f = np.ldexp(f, -fit.spectrum.y_exponent)
    resvar = float(e @ e) / df
    if not resvar < (float(f.mean()) ** 2 + float(f.var(ddof=1))) * 1e-30:
        return ""
    return "essentially perfect fit: the residuals are rounding errors, the test is not defined"


def diagnostic_table(fit: LinearFitContract, *, bg_order: int = 1, reset_power: Any = (2, 3),
                     studentize: bool = True, dw_exact: bool | None = None) -> DiagnosticTable:
    """The battery of :meth:`~attnreg.linear.results.LinearResults.diagnostics`.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.battery import diagnostic_table
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
    >>> len(diagnostic_table(fit, bg_order=2).table)
    9
    """
    power = check_power(reset_power)
    if isinstance(bg_order, bool) or not isinstance(bg_order, (int, np.integer)) or bg_order < 1:
        raise OptionError(f"bg_order must be a positive integer, however: {bg_order=}")
    bp = "Breusch-Pagan (studentized)" if studentize else "Breusch-Pagan"
    bg = (f"Breusch-Godfrey LM (order {bg_order})", f"Breusch-Godfrey F (order {bg_order})")
    rows: list[dict[str, Any]] = []
    perfect = perfect_fit_note(fit)
    for names, run in (((bp,), lambda: [breusch_pagan(fit, studentize)]),
                       (("White",), lambda: [white_test(fit)]),
                       (("Durbin-Watson",), lambda: [durbin_watson(fit, dw_exact)]),
                       (bg, lambda: breusch_godfrey(fit, bg_order)),
                       (("Jarque-Bera",), lambda: [jarque_bera(fit)]),
                       (("RESET",), lambda: [reset_test(fit, power)])):
        if perfect:  # no residuals to test: NaN, and why
            rows += [table_row(name, math.nan, "", math.nan, perfect) for name in names]
            continue
        try:
            rows += run()
        except DataError as exc:  # a test the data cannot support: NaN, and why
            rows += [table_row(name, math.nan, "", math.nan, str(exc)) for name in names]
    scaled, raw = condition_numbers(fit)
    rows.append(table_row("Condition number (scaled)", scaled, "", math.nan,
                     "kappa of sqrt(w) X with unit-length columns, intercept included"))
    rows.append(table_row("Condition number", raw, "", math.nan, "kappa of sqrt(w) X as is"))
    rule = fit.rule
    title = "Regression diagnostics"
    if not rule.least_squares:
        title += f" ({fit.method}: residuals conditional on the chosen {rule.parameter})"
    return DiagnosticTable(pd.DataFrame(rows, columns=_COLUMNS), title)
