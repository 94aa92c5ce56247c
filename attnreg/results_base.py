"""What every fit of a nonlinear family shares: names, the training rows, fitted values,
residuals and the prediction contract (missing values in ``newdata`` predict NaN).

:class:`PredictorResults` is the base of the softmax and network results; the linear
family's :class:`~attnreg.linear.results.LinearResults` keeps the same contract with its
own fitted values (rows of weight zero, intervals).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.formula.design import Design

__all__ = ["PredictorResults"]


class PredictorResults:
    """A fit that predicts from the predictor columns (the design without its intercept).

    Subclasses are frozen dataclasses with ``design``, ``fit`` (an object with
    ``predict(X) -> ndarray`` on predictors of the original scale) and ``method``.
    """

    design: Design
    fit: Any
    method: str

    @property
    def names(self) -> list[str]:
        """Predictor names (the design columns without the intercept)."""
        return self.design.predictor_names

    @property
    def nobs(self) -> int:
        """Number of training rows."""
        return self.design.n_obs

    @cached_property
    def _X(self) -> FloatArray:
        return self.design.predictor_matrix(self.method)

    @cached_property
    def fitted(self) -> pd.Series:
        """Predictions for every training row."""
        return pd.Series(self.fit.predict(self._X), index=self.design.row_labels, name="fitted")

    @cached_property
    def resid(self) -> pd.Series:
        """y − fitted."""
        return pd.Series(self.design.y - self.fitted.to_numpy(), index=self.design.row_labels,
                         name="resid")

    def _query(self, newdata: Any) -> tuple[FloatArray, pd.Index]:
        """The predictors of ``newdata`` (the training rows when None) and their labels."""
        if newdata is None:
            return self._X, self.design.row_labels
        X, labels = self.design.rebuild(newdata)
        return (X[:, 1:] if self.design.intercept else X), labels

    def predict(self, newdata: Any = None, *, interval: str = "none",
                level: float = 0.95) -> Any:
        """Predictions for new rows (or the training rows), original scale.

        Rows of ``newdata`` with missing values give NaN, as for the linear methods.
        ``interval`` other than ``"none"`` is refused (and ``level`` unused): the networks
        have no cheap honest prediction interval (no leave-one-out predictions to calibrate on).
        """
        if interval != "none":
            raise OptionError(
                f"method {self.method!r} has no prediction intervals, however: {interval=}; "
                "use method='softmax' with interval='jackknife+', or a linear method with "
                "interval='prediction'")
        if newdata is None:
            return self.fitted.rename("fit")
        X, labels = self._query(newdata)
        ok = np.isfinite(X).all(axis=1)
        out = np.full(X.shape[0], np.nan)
        if ok.any():
            out[ok] = self.fit.predict(X if ok.all() else X[ok])
        return pd.Series(out, index=labels, name="fit")
