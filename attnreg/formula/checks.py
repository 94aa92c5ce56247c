"""The checks of a model frame's inputs, and the errors they raise: data as a frame, the
``subset`` rows, the weights, the response columns, factor levels, the rows dropped for
missing values, and patsy's errors in attnreg's words."""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import patsy

from attnreg._typing import BoolArray, FloatArray
from attnreg.exceptions import DataError, FormulaError, OptionError
from attnreg.formula.builder import model_arrays_public as _model_arrays_public  # noqa: F401
from attnreg.formula.frame import (
    align_to_rows,
    names_in,
)


__all__ = ["as_frame", "check_factor_levels", "check_response_columns", "check_weights",
           "na_message", "subset_mask", "translate_patsy_error", "weights_vector"]


def as_frame(data: Any, what: str, scalars: bool = False) -> pd.DataFrame:
    """The data as a DataFrame (a mapping of columns is converted; ``what`` names it in errors)."""
    if isinstance(data, pd.DataFrame):
        return data
    if isinstance(data, Mapping):
        columns = dict(data)
        if scalars and columns and all(np.ndim(v) == 0 for v in columns.values()):
            columns = {k: [v] for k, v in columns.items()}  # a dict of scalars is one row
        try:
            return pd.DataFrame(columns)
        except ValueError as exc:
            raise DataError(f"{what} could not be made into a DataFrame: {exc}") from None
    kind = type(data)
    shown = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    raise DataError(f"{what} must be a pandas DataFrame or a dict of columns, "
                    f"however: type({what}) is {shown}")


def subset_mask(frame: pd.DataFrame, subset: Any) -> BoolArray | None:
    """The rows ``subset`` selects (None: all), validated before any work."""
    if subset is None:
        return None
    if isinstance(subset, str):
        try:
            value = frame.eval(subset)
        except Exception as exc:
            raise OptionError(f"subset expression {subset!r} could not be evaluated: {exc}") from None
        what = f"subset expression {subset!r}"
    else:
        value = align_to_rows(subset, frame, "subset")
        what = "subset"
    if np.ndim(value) == 0:
        raise OptionError(f"{what} must give one True/False per row, however it gives the "
                          f"single value {value!r}")
    if isinstance(value, (pd.Series, pd.Index)) and value.hasnans:
        label = frame.index[int(np.argmax(pd.isna(np.asarray(value, dtype=object))))]
        raise DataError(f"{what} is missing at row {label!r}; fill it first (e.g. "
                        "mask.fillna(False)) to say whether such rows are used")
    mask = np.asarray(value)
    if mask.dtype != bool:
        if mask.dtype == object and all(isinstance(v, (bool, np.bool_)) for v in mask.ravel()):
            mask = mask.astype(bool)
        else:
            raise OptionError(f"{what} must be True/False for each row (a boolean mask or a "
                              f"comparison such as 'x > 0'), however it gives {mask.dtype} values")
    if mask.shape != (frame.shape[0],):
        raise OptionError(f"subset must have one entry per row of data ({frame.shape[0]}), "
                          f"however it has shape {mask.shape}")
    if not mask.any():
        raise DataError("subset selects no rows")
    return mask


def weights_vector(weights: Any, frame: pd.DataFrame) -> FloatArray | None:
    """The prior weights, shape (n_rows,): a column of ``frame`` by name, or values per row."""
    if weights is None:
        return None
    if isinstance(weights, str):
        if weights not in frame.columns:
            close = difflib.get_close_matches(weights, [str(c) for c in frame.columns], n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise FormulaError(f"data has no weights column {weights!r}{hint}")
        values = frame[weights]
    else:
        values = align_to_rows(weights, frame, "weights")
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError("weights must be numeric") from None
    if arr.shape != (frame.shape[0],):
        raise DataError(f"weights must have one entry per row of data ({frame.shape[0]}), "
                        f"however they have shape {arr.shape}")
    return arr


def check_weights(w: FloatArray, labels: pd.Index) -> None:
    """Refuse a weight that is negative or not finite, naming its row."""
    bad = ~np.isfinite(w) | (w < 0)
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(f"weights must be finite and non-negative; row {labels[i]!r} has weight "
                        f"{float(w[i])!r} (use subset= to exclude rows)")


def check_response_columns(columns: list[str], desc: Any, frame: pd.DataFrame) -> None:
    """Refuse a response that makes several columns (a factor or a matrix), naming it."""
    if len(columns) == 1:
        return
    name = desc.lhs_termlist[0].factors[0].code if desc.lhs_termlist else "?"
    dtype = frame[name].dtype if name in frame.columns else "non-numeric"
    raise DataError(f"the response {name!r} must be numeric, however it is {dtype} "
                    f"(patsy made {len(columns)} indicator columns from it)")


def check_factor_levels(info: Any) -> None:
    """A factor needs two or more levels (R: contrasts apply only to such factors)."""
    for factor_info in info.factor_infos.values():
        if factor_info.type == "categorical" and len(factor_info.categories) < 2:
            levels = ", ".join(map(repr, factor_info.categories)) or "none"
            raise DataError(f"factor {factor_info.factor.code!r} has one level ({levels}) in the "
                            "rows used: a factor needs two or more levels; leave it out of the "
                            "formula")


def na_message(frame: pd.DataFrame, dropped: pd.Index, desc: Any,
                weights: FloatArray | None = None) -> str:
    """The message for rows with missing values under ``na_action='raise'``: how many, where."""
    used = {n for t in desc.lhs_termlist + desc.rhs_termlist for f in t.factors
            for n in names_in(f.code) if n in frame.columns}
    first = dropped[0]
    row = frame.loc[first]
    cols = [c for c in frame.columns if c in used and bool(pd.isna(row[c]))]
    position = frame.index.get_loc(first)
    if cols:
        where = f"column {cols[0]!r}"
    elif weights is not None and isinstance(position, int) and np.isnan(weights[position]):
        where = "weights"
    else:
        where = "a term (e.g. a lag) that evaluated to NaN"
    return (f"na_action='raise': {len(dropped)} rows have missing values; the first is row "
            f"{first!r} in {where}")


_LEVEL = re.compile(r"observation with value (.+?) does not match any of the expected levels "
                    r"\(expected: (.*)\)")


def translate_patsy_error(exc: patsy.PatsyError, what: str) -> Exception:
    """patsy's error as attnreg's (FormulaError or DataError), naming the term and ``what``."""
    msg = str(exc.message) if hasattr(exc, "message") else str(exc)
    origin = getattr(exc, "origin", None)
    term = origin.relevant_code() if origin is not None else "?"
    match = _LEVEL.search(msg)
    if match:
        return DataError(f"{what}: factor {term!r} has level {match.group(1)} not seen when "
                         f"fitting (levels: {match.group(2)})")
    if "NameError" in msg:
        return FormulaError(f"{what}: {msg.splitlines()[0]} (in term {term!r})")
    return FormulaError(f"{what}: {exc}")
