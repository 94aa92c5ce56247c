"""attnreg: regression as attention, with R-style formulas and reports.

Ordinary least squares is linear attention over the training rows: every prediction is
both coefficients times predictors and a weighted vote of the training responses.
``attnreg()`` fits OLS, ridge and PCR (spectral filters of one decomposition) and softmax
attention regression, and returns results with an R-style ``summary()`` and both views.
"""

from __future__ import annotations

from attnreg import adapters  # noqa: F401  (first: registers the built-in methods)
from attnreg.api import attnreg
from attnreg.datasets import load_dataset
from attnreg.inference.anova import anova
from attnreg.report import compare
from attnreg.report.etable import etable
from attnreg.timeseries.compare import compare_forecasts
from attnreg.timeseries.forecast import forecast
from attnreg.timeseries.rolling import rolling
from attnreg.formula.lags import diff, lag, lags
from attnreg.threads import get_threads, set_threads

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """Lazy exports: ``attnreg.AttnRegressor`` imports scikit-learn on first use only, and
    ``attnreg.plots`` is the plotting module (matplotlib is imported when a plot is drawn)."""
    if name == "plots":
        import importlib

        return importlib.import_module("attnreg.plots")
    if name == "AttnRegressor":
        from attnreg.sklearn import AttnRegressor

        return AttnRegressor
    raise AttributeError(f"module 'attnreg' has no attribute {name!r}")


__all__ = ["__version__", "anova", "attnreg", "compare", "compare_forecasts", "diff", "etable",
           "forecast", "get_threads", "lag", "lags", "load_dataset", "rolling", "set_threads"]
