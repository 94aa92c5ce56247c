"""Time series: ``forecast`` (the front door), ``plan``, the engine (``_running``, ``updating``),
``views`` and ``leakage`` of a run, ``forecast_results``, ``evaluation`` and ``rolling``.

Re-exported here: the time operators of :mod:`attnreg.formula.lags` (``lag``, ``diff``,
``lags``, :func:`check_time_index`, :func:`min_lag`), :func:`recursive_ls` (OLS/ridge
re-estimated at every origin of an expanding or rolling window, λ re-chosen by GCV at each
origin) and the evaluation measures (OOS R², MSFE ratio, Diebold–Mariano, Clark–West).
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
from attnreg.formula.time_index import check_time_index
from attnreg.formula.lags import (
    diff,
    lag,
    lag_column_names,
    lags,
    min_lag,
)
from attnreg.timeseries.recursive_fit import RecursiveFit
from attnreg.timeseries.updating import recursive_ls

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
