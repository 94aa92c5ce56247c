"""The parts of a summary, as data: numbers (and, for free-form notes, lines of text).

A :class:`~attnreg.report.summary.Summary` is a sequence of these; the renderers in
:mod:`attnreg.report.render` turn each into R's text, HTML or LaTeX. What R's
``summary.lm`` computes lives here, what ``print.summary.lm`` formats lives there.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from attnreg._typing import FloatArray

__all__ = ["AttentionSummary", "Call", "Coefficients", "FitStatistics", "Lines", "Penalty",
           "Residuals", "residuals_section"]


@dataclass(frozen=True)
class Lines:
    """Free-form notes, already in words (forecast evaluations, network training notes).

    Attributes
    ----------
    lines : tuple of str
    lead_blank : bool
        Preceded by an empty line when not empty (notes after a table).
    """

    lines: tuple[str, ...]
    lead_blank: bool = False


@dataclass(frozen=True)
class Call:
    """The call that made the fit, R style."""

    call: str


@dataclass(frozen=True)
class Residuals:
    """The residuals the summary describes (weighted when the fit has prior weights).

    Attributes
    ----------
    values : ndarray, shape (n,)
    labels : tuple of str
        Row labels, given (and printed) only when there are five or fewer residual degrees
        of freedom, else empty.
    weighted : bool
        The weights are not all equal (R then says "Weighted Residuals").
    df_resid : float
    """

    values: FloatArray
    labels: tuple[str, ...]
    weighted: bool
    df_resid: float


def residuals_section(values: FloatArray) -> Residuals:
    """The unweighted residuals of a fit without degrees of freedom (softmax, networks),
    printed as R prints a vector of them: named 1, 2, ... when there are five or fewer."""
    labels = tuple(str(i + 1) for i in range(values.size)) if values.size <= 5 else ()
    return Residuals(values, labels, False, float(values.size))


@dataclass(frozen=True)
class Coefficients:
    """The coefficient table.

    Attributes
    ----------
    table : DataFrame
        Numbers: estimate, standard error, statistic and p-value (or another table).
    stars : bool
        Whether significance stars (and their legend) may be shown.
    n_aliased : int
        Coefficients not defined because of singularities.
    heading : bool
        Whether the text starts with R's "Coefficients:" line.
    """

    table: pd.DataFrame
    stars: bool = True
    n_aliased: int = 0
    heading: bool = True


@dataclass(frozen=True)
class FitStatistics:
    """What R prints below the coefficient table.

    Attributes
    ----------
    sigma : float
        Residual standard error.
    df_resid : float
        Residual degrees of freedom (effective, n − tr(H), when ``effective``).
    effective : bool
        Degrees of freedom are effective ones (ridge, PCR): shown with two decimals.
    n_deleted : int
        Rows removed because of missing values.
    r_squared, adj_r_squared : float or None
        None for a model without predictors.
    f_statistic, f_df1, f_df2, f_p_value : float or None
        The overall F test (the Wald test under a non-classical covariance).
    covariance : str
        The covariance kind (``"classical"``, ``"HC1"``, ...).
    covariance_label : str
        Its description, e.g. ``"HC1 (heteroskedasticity-consistent)"``.
    """

    sigma: float
    df_resid: float
    effective: bool
    n_deleted: int
    r_squared: float | None
    adj_r_squared: float | None
    f_statistic: float | None
    f_df1: float | None
    f_df2: float | None
    f_p_value: float | None
    covariance: str
    covariance_label: str


@dataclass(frozen=True)
class Penalty:
    """How a ridge or PCR fit chose its penalty.

    Attributes
    ----------
    method : str
        ``"ridge"`` or ``"pcr"``.
    parameter : str
        ``"lambda"`` or ``"k"``.
    value : float
    criterion : str
        ``"fixed"``, ``"gcv"`` or ``"loo"``.
    n_candidates : int
        Candidates searched (0 when given).
    standardized : bool
    edf : float
        Effective degrees of freedom tr(H).
    """

    method: str
    parameter: str
    value: float
    criterion: str
    n_candidates: int
    standardized: bool
    edf: float


@dataclass(frozen=True)
class AttentionSummary:
    """The attention view of a linear fit's training rows.

    Attributes
    ----------
    leverage_mean, leverage_max : float
        Hat values: their mean (tr(H)/n), and their largest over ``n_leverage`` rows (every
        row unless the hat values of all rows would cost more than the fit: then the
        ``n_sampled`` rows, no other row's hat value computed).
    leverage_max_row : str
        Label of the row with the largest leverage, as the reader wrote it.
    neighbours_median, neighbours_min : float
        Effective neighbours 1/Σω².
    negative_median, negative_min : float
        Negative weight mass.
    n_sampled, n_rows : int
        Rows the neighbour and negative-mass figures come from, of all training rows.
    n_leverage : int
        Rows the largest leverage is taken over.
    """

    leverage_mean: float
    leverage_max: float
    leverage_max_row: str
    neighbours_median: float
    neighbours_min: float
    negative_median: float
    negative_min: float
    n_sampled: int
    n_rows: int
    n_leverage: int
