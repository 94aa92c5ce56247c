"""Polars data as pandas, without pyarrow: the conversion every polars input goes through.

Examples
--------
>>> from attnreg.large.dask_predict import pytest_importorskip
>>> pl = pytest_importorskip("polars")
>>> out = polars_to_pandas(pl.DataFrame({"x": [1.0, None], "g": ["a", "b"]}), 10)
>>> out.index.tolist(), out["x"].isna().tolist(), out["g"].tolist()
([10, 11], [False, True], ['a', 'b'])
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["polars_to_pandas"]


def polars_to_pandas(frame: Any, offset: int) -> pd.DataFrame:
    """A polars frame as pandas, column by column through numpy (no pyarrow needed).

    Parameters
    ----------
    frame : polars.DataFrame
        n rows.
    offset : int
        The first row's label (the rows are labelled ``offset, ..., offset + n - 1``).

    Returns
    -------
    DataFrame, shape (n, frame.width)
        Numbers and dates as numpy arrays, null as NaN in a column of nulls only; text,
        categories and booleans with nulls as Python objects (None where missing).
    """
    cols: dict[str, Any] = {}
    for name in frame.columns:
        s = frame.get_column(name)
        if str(s.dtype) == "Null":  # missing in every row: float NaN, as in memory
            cols[name] = np.full(frame.height, np.nan)
        elif s.dtype.is_numeric() or s.dtype.is_temporal():
            cols[name] = s.to_numpy()
        else:  # text, categorical, boolean with nulls: Python objects (None for missing)
            cols[name] = np.asarray(s.to_list(), dtype=object)
    out = pd.DataFrame(cols, index=pd.RangeIndex(offset, offset + frame.height))
    return out
