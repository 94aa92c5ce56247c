"""attnreg: regression as attention, with R-style formulas and reports.

Ordinary least squares is linear attention over the training rows: every prediction is
both coefficients times predictors and a weighted vote of the training responses.
``attnreg()`` fits OLS, ridge and PCR (spectral filters of one decomposition) and softmax
attention regression, and returns results with an R-style ``summary()`` and both views.
"""

from __future__ import annotations

from attnreg.api import attnreg
from attnreg.datasets import load_dataset
from attnreg.report import compare
from attnreg.timeseries.forecast import forecast
from attnreg.timeseries.rolling import rolling
from attnreg.timeseries.transforms import diff, lag, lags

__version__ = "0.1.0"

__all__ = ["__version__", "attnreg", "compare", "diff", "forecast", "lag", "lags", "load_dataset",
           "rolling"]
