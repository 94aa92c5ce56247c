"""More parts of a summary, as data: the figures of tests, bootstraps, forecasts and networks.

Like :mod:`attnreg.report.sections`, each is a frozen record of numbers (and the few words
that name what they are); :mod:`attnreg.report.render_figures` prints them. Every field of
a :class:`Figures` section is one entry of :attr:`Summary.statistics
<attnreg.report.summary.Summary.statistics>`, under its field name.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["BootstrapSetup", "BootstrapTestResult", "Figures", "HypothesisSetup", "IntervalLevel",
           "WaldStatistic"]


@dataclass(frozen=True)
class Figures:
    """A section whose fields are statistics of the summary (a base class)."""


@dataclass(frozen=True)
class HypothesisSetup(Figures):
    """What a Wald or t test of linear restrictions is: its kind and covariance.

    Attributes
    ----------
    test : str
        ``"F"`` or ``"Chisq"`` (a joint Wald test), ``"t"`` (each restriction alone).
    n_restrictions : int
    df : float
        Degrees of freedom of the t tests: ``inf`` for z tests, NaN for Satterthwaite's
        (each restriction its own); the joint test's are in :class:`WaldStatistic`.
    covariance : str
        The covariance in use, in words.
    note : str
        What the test is conditional on (ridge, PCR), else empty.
    """

    test: str
    n_restrictions: int
    df: float
    covariance: str
    note: str = ""


@dataclass(frozen=True)
class WaldStatistic(Figures):
    """The joint Wald test: F = W / q on (q, df2) degrees of freedom, or W on q.

    Attributes
    ----------
    test : str
        ``"F"`` or ``"Chisq"``.
    statistic : float
    df1, df2 : float
        q, and the denominator degrees of freedom (``inf`` for the χ² form).
    p_value : float
    """

    test: str
    statistic: float
    df1: float
    df2: float
    p_value: float


@dataclass(frozen=True)
class IntervalLevel(Figures):
    """The heading of a table of intervals: their coverage and what they are.

    Attributes
    ----------
    level : float
        Coverage, e.g. 0.95.
    intervals : str
        What the table holds, in words (``"confidence intervals"``).
    """

    level: float
    intervals: str


@dataclass(frozen=True)
class BootstrapSetup(Figures):
    """How a bootstrap was drawn.

    Attributes
    ----------
    kind : str
        ``"wild"``, ``"pairs"`` or ``"residual"``.
    cluster : str or None
    n_clusters : int or None
    weights : str or None
        The wild weights.
    reps : int
        Replications made.
    enumerated : bool
        All 2^G sign vectors were used.
    seed : int or None
    se_type : str
        The analytic standard error the bootstrap t studentizes with, in words.
    n_failed : int
        Replications left out (singular resampled design).
    note : str
        What the bootstrap is conditional on (ridge, PCR), else empty.
    """

    kind: str
    cluster: str | None
    n_clusters: int | None
    weights: str | None
    reps: int
    enumerated: bool
    seed: int | None
    se_type: str
    n_failed: int
    note: str


@dataclass(frozen=True)
class BootstrapTestResult(Figures):
    """A wild (cluster) bootstrap test of linear restrictions.

    Attributes
    ----------
    test_name : str
        ``"WCR"``, ``"WCU"``, ``"WR"`` or ``"WU"``.
    hypothesis : str
        The restrictions, as text.
    impose_null : bool
    form : str
        ``"t"`` or ``"F"``.
    test_statistic : float
        The original t or Wald F.
    test_p_value : float
        The bootstrap p-value.
    n_draws : int
        Bootstrap statistics drawn.
    """

    test_name: str
    hypothesis: str
    impose_null: bool
    form: str
    test_statistic: float
    test_p_value: float
    n_draws: int
