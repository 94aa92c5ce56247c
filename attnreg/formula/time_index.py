"""Checks that a time index's row order is time order: sorted, unique and, for dated indexes,
without gaps at the index's frequency (inferred when it is not set)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from pandas.tseries.frequencies import to_offset

from attnreg.exceptions import DataError

__all__ = ["FREQ_MAJORITY", "MAX_FREQ_CANDIDATES", "check_time_index", "infer_offset"]

#: Share of the steps of an irregular DatetimeIndex that one frequency must explain before
#: the others are reported as gaps; below it no frequency is inferable and nothing is checked.
FREQ_MAJORITY = 0.5
#: Number of distinct step patterns (the most common first) tried when inferring the
#: frequency of a DatetimeIndex.
MAX_FREQ_CANDIDATES = 50


def _first_bad_step(index: pd.Index, ordinal: np.ndarray) -> None:
    """Raise DataError at the first non-increasing step of ``ordinal`` (the index's codes)."""
    bad = np.flatnonzero(ordinal[1:] <= ordinal[:-1])
    if bad.size:
        i = int(bad[0]) + 1
        what = "duplicated" if ordinal[i] == ordinal[i - 1] else "not sorted"
        raise DataError(
            f"the time index is {what} at position {i} (label {index[i]} after "
            f"{index[i - 1]}). Sort the data and remove duplicate periods first."
        )


def _raise_gap(index: pd.Index, i: int, freq: str) -> None:
    """Raise DataError for the gap between positions ``i - 1`` and ``i``."""
    raise DataError(
        f"the time index has a gap at position {i}: {index[i - 1]} is followed by "
        f"{index[i]} at frequency {freq}. lag() shifts rows, so a gap silently changes "
        "the lag; fill the missing periods (with NaN) or reindex first."
    )


def infer_offset(index: pd.DatetimeIndex) -> Any:
    """The frequency explaining most steps of ``index``, or None when none explains most."""
    if index.freq is not None:
        return index.freq
    if len(index) < 3:
        return None
    step = np.diff(index.asi8)
    _, first, counts = np.unique(np.column_stack([step[:-1], step[1:]]), axis=0,
                                 return_index=True, return_counts=True)
    best, best_hits = None, 0
    for start in first[np.argsort(-counts, kind="stable")][:MAX_FREQ_CANDIDATES]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", (DeprecationWarning, FutureWarning))
            code = pd.infer_freq(index[start : start + 3])
        if code is None:
            continue
        offset = to_offset(code)
        hits = int(np.sum(index[:-1] + offset == index[1:]))
        if hits > best_hits:
            best, best_hits = offset, hits
    return best if best_hits >= FREQ_MAJORITY * (len(index) - 1) else None


def check_time_index(index: pd.Index) -> None:
    """Check that rows are in time order, once each, and (for dated indexes) without gaps.

    Parameters
    ----------
    index : pandas.Index, length T
        A DatetimeIndex or PeriodIndex is checked for order, duplicates and gaps at its
        frequency (the index's own, or for a DatetimeIndex without one the frequency that
        explains most steps; with no such frequency gaps are not checked). A trading-day
        calendar with holidays is reported as gapped at business-day frequency: give it a
        RangeIndex if consecutive rows are meant to be consecutive observations. A numeric
        index (RangeIndex included) must be strictly increasing; other indexes carry no
        time order and are accepted as they are.

    Raises
    ------
    DataError
        Naming the first offending position and label.

    Examples
    --------
    >>> check_time_index(pd.period_range("2000Q1", periods=4, freq="Q"))
    >>> check_time_index(pd.PeriodIndex(["2000Q1", "2000Q3"], freq="Q"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnreg.exceptions.DataError: the time index has a gap at position 1: ...
    """
    if isinstance(index, pd.PeriodIndex):
        _first_bad_step(index, index.asi8)
        gaps = np.flatnonzero(np.diff(index.asi8) != getattr(index.freq, "n", 1))
        if gaps.size:
            _raise_gap(index, int(gaps[0]) + 1, index.freqstr)
    elif isinstance(index, pd.DatetimeIndex):
        if index.hasnans:
            raise DataError(f"the time index has NaT at position {int(np.argmax(index.isna()))}.")
        _first_bad_step(index, index.asi8)
        offset = infer_offset(index)
        if offset is not None:
            gaps = np.flatnonzero(index[:-1] + offset != index[1:])
            if gaps.size:
                _raise_gap(index, int(gaps[0]) + 1, offset.freqstr)
    elif pd.api.types.is_numeric_dtype(index.dtype) and not pd.api.types.is_bool_dtype(index):
        _first_bad_step(index, np.asarray(index))
