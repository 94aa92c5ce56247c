"""The results of a bootstrap: :class:`BootstrapResults` and the wild bootstrap test.

Both are frozen records of numbers; their reports are :class:`~attnreg.report.summary.Summary`
objects (text, HTML, LaTeX, Markdown).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.report import render_figures
from attnreg.report.figures import BootstrapSetup, BootstrapTestResult, IntervalLevel
from attnreg.report.sections import Coefficients
from attnreg.report.summary import Summary

__all__ = ["BootstrapResults", "BootstrapTest", "tail_share"]

#: bootstrap statistics within this relative distance of the original one are ties
TIE_TOL = 1e-9


def tail_share(draws: FloatArray, observed: FloatArray) -> FloatArray:
    """Share of ``draws`` (reps × m) above ``observed`` (m), ties (relative 1e-9) excluded."""
    ok = np.isfinite(draws)
    with np.errstate(invalid="ignore"):
        above = draws > observed * (1.0 + TIE_TOL) + TIE_TOL * np.finfo(float).tiny
    counts = (above & ok).sum(axis=0)
    total = ok.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(total > 0, counts / np.maximum(total, 1), np.nan)
    return np.where(np.isfinite(observed), out, np.nan)


@dataclass(frozen=True, eq=False)
class BootstrapTest:
    """A wild (cluster) bootstrap test of linear restrictions R b = r.

    Attributes
    ----------
    restrictions : tuple of str
        The restrictions, as text.
    statistic : float
        The original t (one restriction) or Wald F = W/q (several) under the CR1 / HC1
        covariance.
    p_value : float
        Symmetric bootstrap p-value: share of |t*| > |t̂| (of F* > F̂).
    draws : ndarray, shape (reps,)
        The bootstrap statistics t* (or F*).
    form : str
        ``"t"`` or ``"F"``.
    q : int
        Number of restrictions.
    impose_null : bool
        WCR (True: residuals of the restricted fit) or WCU.
    covariance : str
        The covariance of the statistic, in words.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.normal(size=60), "g": np.repeat(np.arange(15), 4)})
    >>> df["y"] = 0.2 * df.x + rng.normal(size=60)
    >>> test = ar.attnreg("y ~ x", df).bootstrap(cluster="g", seed=0, hypothesis="x = 0").test
    >>> test.name, test.form, test.draws.shape
    ('WCR', 't', (999,))
    >>> test.to_frame().columns.tolist()
    ['statistic', 'p.value', 'form', 'q', 'bootstrap']
    """

    restrictions: tuple[str, ...]
    statistic: float
    p_value: float
    draws: FloatArray
    form: str
    q: int
    impose_null: bool
    covariance: str

    @property
    def name(self) -> str:
        """``"WCR"`` or ``"WCU"`` (with clusters), ``"WR"`` or ``"WU"`` (without)."""
        c = "C" if self.covariance.startswith("CR1") else ""
        return f"W{c}{'R' if self.impose_null else 'U'}"

    def to_frame(self) -> pd.DataFrame:
        """The test as one row: ``statistic``, ``p.value``, ``form``, ``q``, ``bootstrap``."""
        return pd.DataFrame({"statistic": [self.statistic], "p.value": [self.p_value],
                             "form": [self.form], "q": [self.q], "bootstrap": [self.name]},
                            index=pd.Index([", ".join(self.restrictions)], name="hypothesis"))

    def figures(self) -> BootstrapTestResult:
        """The test as a section of a summary (numbers)."""
        return BootstrapTestResult(self.name, ", ".join(self.restrictions), self.impose_null,
                                   self.form, float(self.statistic), float(self.p_value),
                                   int(self.draws.size))

    def lines(self) -> list[str]:
        """The test in words (the report's footer)."""
        return render_figures.text(self.figures())[1:]

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def __repr__(self) -> str:
        return str(self)


@dataclass(frozen=True, eq=False)
class BootstrapResults:
    """The bootstrap of a linear fit (see :meth:`Bootstrap.bootstrap`). Immutable; pickles.

    Attributes
    ----------
    kind : str
        ``"wild"``, ``"pairs"`` or ``"residual"``.
    weights : str or None
        The wild weights (None for the other kinds).
    cluster : str or None
        The clustering variable (wild: the weights are drawn per cluster; pairs: clusters
        are drawn).
    n_clusters : int or None
    reps : int
        Replications made (2^G under full enumeration).
    reps_requested : int
    enumerated : bool
        Whether all 2^G Rademacher sign vectors were used (full enumeration).
    seed : int or None
    level : float
        Coverage of the intervals.
    method : str
        The fit's method.
    coef : Series, shape (K,)
        The fit's coefficients b̂.
    std_err_analytic : Series, shape (K,)
        The analytic standard errors the bootstrap t studentizes with (:attr:`se_type`).
    std_err : Series, shape (K,)
        Bootstrap standard errors: the standard deviation of the replications (ddof 1).
    replications : ndarray, shape (reps, K)
        The bootstrap coefficients b* (NaN columns for aliased coefficients; NaN rows for
        failed pairs refits).
    t_replications : ndarray, shape (reps, K)
        The bootstrap t statistics (b* − b̂) / se*.
    percentile : DataFrame, shape (K, 2)
        Percentile intervals (quantiles of b*, numpy's linear interpolation).
    studentized : DataFrame, shape (K, 2)
        Bootstrap-t intervals b̂ − q_{1−α/2}(t*) se, b̂ − q_{α/2}(t*) se.
    p_value : Series, shape (K,)
        Symmetric bootstrap-t p-values of b_j = 0 (null not imposed): share of
        abs(t*_j) > abs(b̂_j / se_j).
    test : BootstrapTest or None
        The test of ``hypothesis``.
    se_type : str
        The analytic standard error, in words.
    n_failed : int
        Pairs refits left out (singular resampled design).
    note : str
        What the bootstrap is conditional on (ridge, PCR), else empty.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.normal(size=80)})
    >>> df["y"] = 1 + 0.5 * df.x + rng.normal(size=80) * (1 + df.x.abs())
    >>> bs = ar.attnreg("y ~ x", df).bootstrap("pairs", reps=499, seed=3)
    >>> bs.replications.shape, bs.se_type
    ((499, 2), 'HC1 (heteroskedasticity-robust)')
    >>> bs.conf_int("percentile").columns.tolist()
    ['2.5 %', '97.5 %']
    >>> print(str(bs).splitlines()[1])
    Pairs bootstrap: 499 replications, seed 3
    """

    kind: str
    weights: str | None
    cluster: str | None
    n_clusters: int | None
    reps: int
    reps_requested: int
    enumerated: bool
    seed: int | None
    level: float
    method: str
    coef: pd.Series
    std_err_analytic: pd.Series
    std_err: pd.Series
    replications: FloatArray
    t_replications: FloatArray
    percentile: pd.DataFrame
    studentized: pd.DataFrame
    p_value: pd.Series
    test: BootstrapTest | None
    se_type: str
    n_failed: int = 0
    note: str = ""

    @property
    def names(self) -> list[str]:
        """Coefficient names."""
        return list(self.coef.index)

    def conf_int(self, kind: str = "studentized") -> pd.DataFrame:
        """The intervals at :attr:`level`: ``"studentized"`` (bootstrap-t) or ``"percentile"``."""
        if kind not in ("studentized", "percentile"):
            raise OptionError(f"kind must be 'studentized' or 'percentile', however: {kind=}")
        return (self.studentized if kind == "studentized" else self.percentile).copy()

    def to_frame(self) -> pd.DataFrame:
        """One row per coefficient, broom-style columns.

        ``estimate``, ``std.error`` (analytic), ``boot.std.error``, ``boot.p.value``,
        ``percentile.low``, ``percentile.high``, ``studentized.low``, ``studentized.high``.
        """
        return pd.DataFrame({
            "estimate": self.coef, "std.error": self.std_err_analytic,
            "boot.std.error": self.std_err, "boot.p.value": self.p_value,
            "percentile.low": self.percentile.iloc[:, 0],
            "percentile.high": self.percentile.iloc[:, 1],
            "studentized.low": self.studentized.iloc[:, 0],
            "studentized.high": self.studentized.iloc[:, 1]}, index=self.coef.index)

    def summary(self) -> Summary:
        """The report: estimates, analytic and bootstrap SEs and p-values, both intervals, the
        test."""
        setup = BootstrapSetup(self.kind, self.cluster, self.n_clusters, self.weights,
                               int(self.reps), bool(self.enumerated), self.seed, self.se_type,
                               int(self.n_failed), self.note)
        table = pd.DataFrame({"Estimate": self.coef, "Std. Error": self.std_err_analytic,
                              "Boot. SE": self.std_err, "Boot. p": self.p_value},
                             index=self.coef.index)
        lo, hi = self.percentile.columns
        ci = pd.DataFrame({f"Pct. {lo}": self.percentile.iloc[:, 0],
                           f"Pct. {hi}": self.percentile.iloc[:, 1],
                           f"Stud. {lo}": self.studentized.iloc[:, 0],
                           f"Stud. {hi}": self.studentized.iloc[:, 1]}, index=self.coef.index)
        test = () if self.test is None else (self.test.figures(),)
        return Summary("Bootstrap", (
            setup, Coefficients(table, stars=False, heading=False),
            IntervalLevel(float(self.level),
                          "intervals: percentile (Pct.) and bootstrap-t (Stud.)"),
            Coefficients(ci, stars=False, heading=False), *test))

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


# ------------------------------------------------------------------------------ engines
