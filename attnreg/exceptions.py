"""The exceptions and warnings attnreg raises, one class per kind of problem."""

from __future__ import annotations

import pickle


class AttnregError(Exception):
    """Base class of every error raised by attnreg."""


class FormulaError(AttnregError, ValueError):
    """Raised when a formula cannot be parsed or names something the data lacks."""


class DataError(AttnregError, ValueError):
    """Raised when the data cannot be used as given (non-finite, non-numeric, too few rows)."""


class OptionError(AttnregError, ValueError):
    """Raised when an argument has an invalid value; the message lists the valid ones."""


class ColumnNotKeptError(DataError):
    """Raised when a fit is asked for a data column it did not keep (e.g. after pickling)."""


class NotComputedError(AttnregError, AttributeError):
    """Raised when a result was computed without a statistic (``params_only=True``) that is asked for."""


class FormulaPicklingError(AttnregError, pickle.PicklingError):
    """Raised when a fit cannot be pickled: its formula uses a function pickle cannot store."""


class LeakageError(AttnregError, ValueError):
    """Raised when a forecast would use information not available at the forecast origin."""


class RankDeficiencyWarning(UserWarning):
    """Warned when the design is rank deficient and some coefficients are not estimable."""


class ConvergenceWarning(UserWarning):
    """Warned when an iterative fitter stops before its convergence criterion is met."""


class InferenceWarning(UserWarning):
    """Warned when a requested statistic rests on an approximation the user should know of."""


class DegenerateInferenceWarning(InferenceWarning):
    """Warned when standard errors, tests and intervals are NaN: less than one residual df."""


class EstimabilityWarning(RankDeficiencyWarning):
    """Warned when a rank-deficient fit predicts at rows outside its design's column space."""


class ScaleWarning(UserWarning):
    """Warned when a statistic leaves the float64 range at the data's scale (reported inf or 0)."""


class SkippedSeriesWarning(UserWarning):
    """Warned when ``forecast(..., by=)`` leaves out a series it cannot forecast (too short)."""


class SeparationWarning(ConvergenceWarning):
    """A binomial or Poisson GLM whose data are separated (some MLE coefficients infinite)."""
