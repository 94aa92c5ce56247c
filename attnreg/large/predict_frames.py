"""Predictions of an in-memory fit for a dask or polars frame, returned in the same library.

``LinearResults.predict(newdata)`` hands ``newdata`` here when it is a dask DataFrame (a
lazy dask Series through :func:`~attnreg.large.dask_predict.predict_dask`, computed where
the partitions are) or a polars DataFrame or LazyFrame (converted to pandas, only the
columns the formula reads, and predicted in memory; the result is a polars Series, or a
polars DataFrame with an interval, missing predictions as null). :func:`frame_kind` tells
these apart without importing dask or polars.

Examples
--------
>>> import numpy as np, pandas as pd
>>> import attnreg as ar
>>> from attnreg.large.dask_predict import pytest_importorskip
>>> pl = pytest_importorskip("polars")
>>> df = pd.DataFrame({"x": np.arange(6.0), "y": 1 + 2 * np.arange(6.0)})
>>> fit = ar.attnreg("y ~ x", df)
>>> fit.predict(pl.DataFrame({"x": [0.5, None]})).to_list()
[2.0, None]
>>> frame_kind(df), frame_kind(pl.DataFrame({"x": [1.0]}))
('', 'polars')
"""

from __future__ import annotations

import sys
from typing import Any

import pandas as pd

from attnreg.formula.frame import variable_uses

__all__ = ["frame_kind", "predict_frame"]


def frame_kind(data: Any) -> str:
    """``"dask"`` for a dask DataFrame, ``"polars"`` for a polars DataFrame or LazyFrame, else
    ``""`` (nothing is imported to tell)."""
    dd = sys.modules.get("dask.dataframe")
    if dd is not None and isinstance(data, dd.DataFrame):
        return "dask"
    if type(data).__module__.split(".")[0] == "polars" and type(data).__name__ in (
            "DataFrame", "LazyFrame"):
        return "polars"
    return ""


def _columns_read(fit: Any, available: list[str]) -> list[str]:
    """The columns of ``available`` that the fit's right-hand side reads (a column the frame
    lacks is left for ``predict`` to name)."""
    info = fit.design.design_info
    used: dict[str, None] = {}
    for factor in info.factor_infos:
        used.update(dict.fromkeys(variable_uses(factor.code)))
    return [c for c in available if c in used]


def _polars_prediction(fit: Any, newdata: Any, options: dict[str, Any]) -> Any:
    import polars as pl

    from attnreg.large.sources import _polars_to_pandas

    lazy = type(newdata).__name__ == "LazyFrame"
    names = list(newdata.collect_schema().names() if lazy else newdata.columns)
    sub = newdata.select(_columns_read(fit, [str(c) for c in names]))
    frame = _polars_to_pandas(sub.collect() if lazy else sub, 0)
    out = fit.predict(frame, **options)
    if isinstance(out, pd.DataFrame):
        return pl.DataFrame({c: pl.Series(c, out[c].to_numpy(), nan_to_null=True)
                             for c in out.columns})
    return pl.Series("fit", out.to_numpy(), nan_to_null=True)


def predict_frame(fit: Any, newdata: Any, **options: Any) -> Any:
    """Predictions of ``fit`` for a dask or polars frame (see the module's docstring).

    Parameters
    ----------
    fit : LinearResults
    newdata : dask.dataframe.DataFrame, polars.DataFrame or polars.LazyFrame
        n rows, with the columns the formula's right-hand side reads.
    **options
        ``interval=`` and ``level=`` of ``fit.predict``.

    Returns
    -------
    dask Series (lazy), polars Series of length n; with an interval a dask or polars
    DataFrame with columns ``fit``, ``lwr``, ``upr``
        Rows with a missing value predict NaN (dask) or null (polars).
    """
    kind = frame_kind(newdata)
    if kind == "dask":
        from attnreg.large.dask_predict import predict_dask

        return predict_dask(fit, newdata, **options)
    return _polars_prediction(fit, newdata, options)
