"""Time-series layer: lag helpers, updating fits at every forecast origin, forecast evaluation.

The building blocks here are formula free: ``transforms`` (``lag``, ``diff``, ``lags`` for
formulas, :func:`check_time_index`, :func:`min_lag` for the look-ahead guard), ``updating``
(:func:`recursive_ls`: OLS/ridge re-estimated at every origin of an expanding or rolling
window, λ re-chosen by GCV at each origin) and ``evaluation`` (OOS R², MSFE ratio,
Diebold–Mariano, Clark–West).
"""

from __future__ import annotations

from attnreg.timeseries.evaluation import (
    ClarkWestResult,
    DieboldMarianoResult,
    clark_west,
    diebold_mariano,
    mae,
    msfe,
    msfe_ratio,
    oos_r2,
    rmse,
)
from attnreg.formula.lags import (
    check_time_index,
    diff,
    lag,
    lag_column_names,
    lags,
    min_lag,
)
from attnreg.timeseries.updating import RecursiveFit, recursive_ls

__all__ = [
    "ClarkWestResult",
    "DieboldMarianoResult",
    "RecursiveFit",
    "check_time_index",
    "clark_west",
    "diebold_mariano",
    "diff",
    "lag",
    "lag_column_names",
    "lags",
    "mae",
    "min_lag",
    "msfe",
    "msfe_ratio",
    "oos_r2",
    "recursive_ls",
    "rmse",
]
