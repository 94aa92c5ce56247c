"""The exceptions and warnings attnreg raises, one class per kind of problem."""

from __future__ import annotations


class AttnregError(Exception):
    """Base class of every error raised by attnreg."""


class FormulaError(AttnregError, ValueError):
    """Raised when a formula cannot be parsed or names something the data lacks."""


class DataError(AttnregError, ValueError):
    """Raised when the data cannot be used as given (non-finite, non-numeric, too few rows)."""


class OptionError(AttnregError, ValueError):
    """Raised when an argument has an invalid value; the message lists the valid ones."""


class LeakageError(AttnregError, ValueError):
    """Raised when a forecast would use information not available at the forecast origin."""


class RankDeficiencyWarning(UserWarning):
    """Warned when the design is rank deficient and some coefficients are not estimable."""


class ConvergenceWarning(UserWarning):
    """Warned when an iterative fitter stops before its convergence criterion is met."""


class InferenceWarning(UserWarning):
    """Warned when a requested statistic rests on an approximation the user should know of."""
