"""The results of hypothesis tests on a fit's coefficients: :class:`WaldTest` (a joint F or χ²
test, as ``car::linearHypothesis``) and :class:`TTest` (each restriction alone, with its
confidence interval). Frozen records of numbers; their reports are
:class:`~attnreg.report.summary.Summary` objects.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from attnreg._typing import FloatArray
from attnreg.report.figures import HypothesisSetup, IntervalLevel, WaldStatistic
from attnreg.report.sections import Coefficients
from attnreg.report.summary import Summary

__all__ = ["TTest", "WaldTest", "df_text"]


def df_text(value: float) -> str:
    """Degrees of freedom as reports show them: an integer, or two decimals."""
    return str(int(value)) if float(value).is_integer() else f"{value:.2f}"


@dataclass(frozen=True, eq=False)
class WaldTest:
    """A joint Wald test of linear restrictions R b = r (``car::linearHypothesis``).

    Attributes
    ----------
    statistic : float
        F = W / q (``test="F"``) or W (``test="Chisq"``), with W = (Rb − r)' (R V R')⁻¹
        (Rb − r) under the covariance V in use.
    df : tuple of float
        (q, df2): the number of restrictions and the denominator degrees of freedom of F
        (the fit's ``df_inference``); df2 is ``inf`` for the χ² form.
    p_value : float
    test : str
        ``"F"`` or ``"Chisq"``.
    table : DataFrame, shape (q, 4)
        One row per restriction, indexed by its text: ``Estimate`` (Rb − r),
        ``Std. Error``, and its own test alone (``t value``, ``Pr(>|t|)``, or ``z value``,
        ``Pr(>|z|)`` for the χ² form).
    hypothesis_matrix : DataFrame, shape (q, n_coef)
        R, with the coefficient names as columns.
    rhs : ndarray, shape (q,)
        r.
    covariance : str
        The covariance in use, in words.
    method : str
        The fit's method (``"ols"``, ``"ridge"``, ``"pcr"``).
    note : str
        What the test is conditional on (ridge and PCR), else empty.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
    >>> w = fit.wald_test("UNEMP = ARMED, POP = 0")
    >>> print(f"F = {w.statistic:.4f} on {w.df[0]:g} and {w.df[1]:g} DF, p = {w.p_value:.4g}")
    F = 14.1778 on 2 and 10 DF, p = 0.001205
    """

    statistic: float
    df: tuple[float, float]
    p_value: float
    test: str
    table: pd.DataFrame
    hypothesis_matrix: pd.DataFrame
    rhs: FloatArray
    covariance: str
    method: str = "ols"
    note: str = ""

    def summary(self) -> Summary:
        """The report: the restrictions with their estimates, then the joint test."""
        setup = HypothesisSetup(self.test, len(self.table), float(self.df[1]), self.covariance,
                          self.note)
        joint = WaldStatistic(self.test, float(self.statistic), float(self.df[0]),
                              float(self.df[1]), float(self.p_value))
        return Summary("Linear hypothesis test",
                       (setup, Coefficients(self.table, heading=False), joint))

    def to_frame(self) -> pd.DataFrame:
        """The joint test as one row: ``statistic``, ``df1``, ``df2``, ``p.value``, ``test``."""
        return pd.DataFrame({"statistic": [self.statistic], "df1": [self.df[0]],
                             "df2": [self.df[1]], "p.value": [self.p_value],
                             "test": [self.test]})

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def to_latex(self) -> str:
        """The report's tables as LaTeX tabulars (:meth:`Summary.to_latex`)."""
        return self.summary().to_latex()

    def to_markdown(self) -> str:
        """The report as Markdown (:meth:`Summary.to_markdown`)."""
        return self.summary().to_markdown()


@dataclass(frozen=True, eq=False)
class TTest:
    """Each linear restriction tested alone: estimate Rb − r, standard error, t, p, interval.

    Attributes
    ----------
    table : DataFrame, shape (q, 6)
        Indexed by the restriction's text: ``Estimate``, ``Std. Error``, ``t value``,
        ``Pr(>|t|)`` and the interval's bounds (``"2.5 %"``, ``"97.5 %"`` for level 0.95).
    level : float
    df : float
        Degrees of freedom of the t distribution (the fit's ``df_inference``); NaN under
        ``df="satterthwaite"``, where the table ends with each restriction's own ``df``.
    covariance : str
    note : str

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
    >>> t = fit.with_vcov("HC1").t_test("UNEMP - ARMED = 0")
    >>> row = t.table.loc["UNEMP - ARMED = 0"]
    >>> print(f"{row['Estimate']:.4f} (se {row['Std. Error']:.4f}), t = {row['t value']:.3f}")
    -0.9522 (se 0.3109), t = -3.063
    """

    table: pd.DataFrame
    level: float
    df: float
    covariance: str
    note: str = ""

    def summary(self) -> Summary:
        """The report: the t table, then the confidence intervals."""
        setup = HypothesisSetup("t", len(self.table), float(self.df), self.covariance, self.note)
        sections = (setup, Coefficients(self.table.iloc[:, :4], heading=False),
                    IntervalLevel(float(self.level), "confidence intervals"),
                    Coefficients(self.table.iloc[:, 4:], stars=False, heading=False))
        return Summary("t tests of linear restrictions", sections)

    def to_frame(self) -> pd.DataFrame:
        """The table (a copy)."""
        return self.table.copy()

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def to_latex(self) -> str:
        """The report's tables as LaTeX tabulars (:meth:`Summary.to_latex`)."""
        return self.summary().to_latex()

    def to_markdown(self) -> str:
        """The report as Markdown (:meth:`Summary.to_markdown`)."""
        return self.summary().to_markdown()
