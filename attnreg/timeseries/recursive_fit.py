"""The coefficients at every forecast origin of a recursive or rolling fit
(:func:`~attnreg.timeseries.updating.recursive_ls`): :class:`RecursiveFit`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from attnreg._typing import BoolArray, FloatArray, IntArray

__all__ = ["Method", "RecursiveFit"]

#: the recursions of :func:`~attnreg.timeseries.updating.recursive_ls`
Method = Literal["ols", "ridge"]


@dataclass(frozen=True)
class RecursiveFit:
    """Coefficients at every forecast origin of a recursive or rolling fit.

    Attributes
    ----------
    origins : IntArray, shape (n_origins,)
        Row position of the last observation of each window (the forecast origin).
    coef : FloatArray, shape (n_origins, n_coef)
        Coefficients on the original scale, intercept first when ``intercept``.
    nobs : IntArray, shape (n_origins,)
        Rows in each window.
    lam : FloatArray or None, shape (n_origins,)
        Ridge penalty at each origin (standardised scale when standardising).
    std_err : FloatArray or None, shape (n_origins, n_coef)
        Classical OLS standard errors, when requested.
    rank_deficient : BoolArray, shape (n_origins,)
        True where the window's design is rank deficient; ``coef`` is NaN there.
    n_rank_deficient : int
        Number of rank-deficient windows.
    method : {"ols", "ridge"}
    window : int or None
        Rolling window length; None for an expanding window.
    intercept : bool
    sigma : FloatArray or None, shape (n_origins,)
        OLS with ``x_new``: residual standard error ``sqrt(RSS / (n - n_coef))``.
    leverage : FloatArray or None, shape (n_origins,)
        OLS with ``x_new``: ``x'(X'X)⁻¹x`` of each origin's row of ``x_new`` (intercept
        included), from the window's Cholesky factor: ``1/n + |L⁻¹(x - x̄)|²``.
    """

    origins: IntArray
    coef: FloatArray
    nobs: IntArray
    lam: FloatArray | None
    std_err: FloatArray | None
    rank_deficient: BoolArray
    n_rank_deficient: int
    method: Method
    window: int | None
    intercept: bool
    sigma: FloatArray | None = None
    leverage: FloatArray | None = None

    def predict(self, X_next: FloatArray) -> FloatArray:
        """Forecasts ``x_j' coef_j``, one row of regressors (no intercept column) per origin.

        Parameters
        ----------
        X_next : array_like, shape (n_origins, n_regressors)
            For horizon ``h`` usually ``X[origins + h]``.

        Returns
        -------
        FloatArray, shape (n_origins,)

        Examples
        --------
        >>> from attnreg.timeseries.updating import recursive_ls
        >>> rng = np.random.default_rng(0)
        >>> X = rng.standard_normal((40, 2))
        >>> y = 1.0 + X @ np.array([2.0, -1.0])  # an exact linear relation
        >>> fit = recursive_ls(X, y, window=10)
        >>> bool(np.allclose(fit.predict(X[fit.origins]), y[fit.origins]))
        True
        """
        rows = np.asarray(X_next, dtype=np.float64).reshape(self.coef.shape[0], -1)
        fitted = np.einsum("ij,ij->i", rows, self.coef[:, 1:] if self.intercept else self.coef)
        return fitted + self.coef[:, 0] if self.intercept else fitted
