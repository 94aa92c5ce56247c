"""What a fit keeps of its data when it is pickled or copied.

In a session a fit refers to the caller's DataFrame (never a copy), so that a column named
only later (``fit.with_vcov("cluster", cluster="firm")``) is found. A pickle (and a copy)
keeps only the columns the formula uses and those named when fitting (``weights=``,
``subset=``, ``cluster=``, ``time=``, ``offset=``), for every row of the data, so that the
rows' labels and the positions of the fitted rows stay known: it does not grow with the
columns the fit does not use. A column the fit did not keep is then refused with
:class:`~attnreg.exceptions.ColumnNotKeptError`, which says how to give it.

Examples
--------
>>> import pandas as pd
>>> df = pd.DataFrame({"y": [1.0, 2.0], "x": [0.0, 1.0], "unused": ["a", "b"]})
>>> kept_frame(df, {"y", "x"}).columns.tolist()
['y', 'x']
>>> sorted(option_columns({"vcov": "cluster", "cluster": "firm + year"}))
['firm', 'firm + year', 'year']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import ColumnNotKeptError

__all__ = ["COLUMN_OPTIONS", "kept_frame", "kept_names", "names_of", "not_kept_error", "option_columns"]

#: Options whose values name columns of the data (a name, ``"a + b"``, a list or an expression)
COLUMN_OPTIONS = ("cluster", "time", "offset", "subset")

_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_QUOTED = re.compile(r"`([^`]*)`|'([^']*)'|\"([^\"]*)\"")


def names_of(text: str) -> set[str]:
    """Every string that may name a column in ``text`` (a name, ``"a + b"`` or an expression).

    Generous on purpose: keeping a column too many costs little, one too few an error.

    Examples
    --------
    >>> sorted(names_of("np.log(pyears)"))
    ['log', 'np', 'np.log(pyears)', 'pyears']
    >>> "my col" in names_of("`my col` > 0")
    True
    """
    found = {text, text.strip(), *(p.strip() for p in text.split("+"))}
    found |= set(_IDENTIFIER.findall(text))
    found |= {next(g for g in groups if g) for groups in _QUOTED.findall(text) if any(groups)}
    return found


def option_columns(options: Mapping[str, Any]) -> set[str]:
    """Column names the fitting options name (``cluster``, ``time``, ``offset``, ``subset``)."""
    out: set[str] = set()
    for key in COLUMN_OPTIONS:
        value = options.get(key)
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if isinstance(v, str):
                out |= names_of(v)
    return out


def kept_frame(given: pd.DataFrame, names: Iterable[str]) -> pd.DataFrame:
    """The columns of ``given`` whose label, as a string, is in ``names``; every row kept.

    Parameters
    ----------
    given : DataFrame, shape (n_rows, n_columns)
        The caller's data (never modified).
    names : iterable of str
        The names to keep (the formula's names: ``str`` of the column labels).

    Returns
    -------
    DataFrame, shape (n_rows, n_kept)
        A copy (so that it pickles without the other columns); the index is ``given``'s.
    """
    labels = pd.Index([str(c) for c in given.columns])
    positions = np.flatnonzero(labels.isin(list(set(names))))
    return given.iloc[:, positions].copy()


def kept_names(given: pd.DataFrame, names: Iterable[str]) -> frozenset[str]:
    """The names in ``names`` that are column labels of ``given`` (as strings)."""
    wanted = set(names)
    return frozenset(label for label in map(str, given.columns) if label in wanted)


def not_kept_error(name: str, what: str) -> ColumnNotKeptError:
    """The error for a column the fit did not keep, saying the two ways to give it."""
    at_fit = f"vcov='DK', time={name!r}" if what == "time" else f"vcov='cluster', {what}={name!r}"
    return ColumnNotKeptError(
        f"{what}: column {name!r} was not kept by this fit: a pickled or copied fit keeps "
        "only the columns its formula uses and those named when fitting. "
        f"Pass the ids themselves, {what}=df[{name!r}], or name the column when fitting: "
        f"attnreg(..., {at_fit})")
