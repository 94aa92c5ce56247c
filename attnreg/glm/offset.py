"""Offsets: a column name or an expression (``"np.log(pyears)"``) evaluated on the data."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import patsy

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, OptionError

__all__ = ["check_offset", "evaluate_offset"]


def check_offset(offset: Any) -> Any:
    """``offset=`` as given: None, a column name / expression, or a vector of numbers."""
    if offset is None or isinstance(offset, str):
        return offset
    arr = np.asarray(offset)
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.number):
        raise OptionError("offset must be a column name, an expression such as "
                          f"'np.log(pyears)' or a vector of numbers, however: offset={offset!r}")
    return offset


def evaluate_offset(offset: Any, frame: pd.DataFrame, env: Any, what: str) -> FloatArray:
    """The offset of every row of ``frame``.

    Parameters
    ----------
    offset : str or array-like
        A column of ``frame``, an expression of its columns (numpy as ``np``), or a vector.
    frame : DataFrame
    env : patsy.EvalEnvironment or None
        The formula's scope, for names that are not columns.
    what : str
        ``"data"`` or ``"newdata"``, for messages.

    Returns
    -------
    ndarray, shape (len(frame),)
    """
    if not isinstance(offset, str):
        values = np.asarray(offset, dtype=np.float64).reshape(-1)
    elif offset in frame.columns:
        values = frame[offset].to_numpy(dtype=np.float64)
    else:
        scope = env if env is not None else patsy.EvalEnvironment([])
        try:
            raw = scope.with_outer_namespace({"np": np}).eval(offset, inner_namespace=frame)
        except Exception as exc:  # the user's expression: report what failed, and where
            raise DataError(f"offset {offset!r} could not be evaluated on {what}: "
                            f"{type(exc).__name__}: {exc}") from None
        values = np.broadcast_to(np.asarray(raw, dtype=np.float64), (len(frame),)).copy()
    if values.shape != (len(frame),):
        raise DataError(f"offset has {values.size} values but {what} has {len(frame)} rows")
    return values
