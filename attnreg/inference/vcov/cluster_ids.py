"""Cluster and period ids of a fit's rows: resolved once from column names or values.

:func:`cluster_ids` turns ``cluster=`` (a column of the data the fit was given, ``"firm +
year"`` or a list for several dimensions, ids per data row, or a list of such vectors) into
the integer codes of the fitted rows, one column per dimension (:class:`ClusterIds`); rows the
fit dropped (missing values, ``subset=``, weight zero) are dropped from the ids too. The
cluster-robust estimators of :mod:`attnreg.inference.vcov.cluster` bind their ids with it.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import IntArray
from attnreg.exceptions import DataError, OptionError
from attnreg.formula.frame import align_to_rows
from attnreg.formula.kept import not_kept_error

__all__ = ["ClusterIds", "check_cluster_argument", "cluster_codes", "cluster_ids",
           "factorize_ids"]


@dataclass(frozen=True, eq=False)
class ClusterIds:
    """Cluster ids of a fit's rows, one column per clustering dimension.

    Attributes
    ----------
    codes : ndarray of int64, shape (n_obs, n_dims)
        Code of each fitted row in each dimension, 0 … G_d − 1 (levels in sorted order when
        they can be sorted).
    levels : tuple of pandas.Index
        The cluster names of each dimension (``levels[d][codes[i, d]]`` is row i's id).
    names : tuple of str
        Name of each dimension (the column name, or ``"cluster"`` for ids given as values).

    Examples
    --------
    >>> import numpy as np
    >>> import pandas as pd
    >>> from attnreg.inference.vcov.cluster_ids import ClusterIds
    >>> ids = ClusterIds(np.array([[0], [0], [1]]), (pd.Index(["a", "b"]),), ("firm",))
    >>> ids.n_clusters, ids.n_dims
    ((2,), 1)
    """

    codes: IntArray
    levels: tuple[pd.Index, ...]
    names: tuple[str, ...]

    @property
    def n_dims(self) -> int:
        """Number of clustering dimensions."""
        return int(self.codes.shape[1])

    @property
    def n_clusters(self) -> tuple[int, ...]:
        """Number of clusters of each dimension."""
        return tuple(len(lv) for lv in self.levels)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ClusterIds):
            return NotImplemented
        return (self.names == other.names and self.codes.shape == other.codes.shape
                and bool(np.array_equal(self.codes, other.codes))
                and all(a.equals(b) for a, b in zip(self.levels, other.levels, strict=True)))

    def __hash__(self) -> int:
        return hash((self.names, self.codes.shape, self.codes.tobytes()))

    def __repr__(self) -> str:
        dims = ", ".join(f"{n}: {g}" for n, g in zip(self.names, self.n_clusters, strict=True))
        return f"ClusterIds({dims} clusters; {self.codes.shape[0]} rows)"


# ------------------------------------------------------------------------------ cluster ids

def _design_of(fit: Any) -> Any:
    return getattr(fit, "design", fit)


def _data_and_rows(design: Any) -> tuple[pd.DataFrame | None, IntArray | None, bool]:
    """The data the design was built from, the positions of its fitted rows in it, and
    whether that is the caller's whole frame (else only the columns the fit kept)."""
    data, rows = getattr(design, "data", None), getattr(design, "data_rows", None)
    whole = bool(getattr(design, "data_complete", True))
    if data is None or rows is None or len(rows) != design.n_obs:
        return None, None, True  # e.g. a forecast window: only ids of its own rows can be used
    return data, rows, whole


def _has_column(data: pd.DataFrame, name: str) -> bool:
    return name in data.columns or any(str(c) == name for c in data.columns)


def _column(data: pd.DataFrame | None, name: str, whole: bool = True,
            what: str = "cluster") -> Any:
    if data is None:
        raise DataError(f"cluster {name!r} is a column name, but this fit does not keep the data "
                        "it was fitted on; pass the cluster ids as an array of its rows")
    if name in data.columns:
        return data[name]
    matches = [c for c in data.columns if str(c) == name]
    if len(matches) == 1:
        return data[matches[0]]
    if not whole:
        raise not_kept_error(name, what)
    close = difflib.get_close_matches(name, [str(c) for c in data.columns], n=3)
    hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
    raise OptionError(f"cluster: data has no column {name!r}{hint}")


def _dimensions(cluster: Any, data: pd.DataFrame | None, whole: bool = True,
                what: str = "cluster") -> list[tuple[str, Any]]:
    """(name, values) of each clustering dimension; values in data-row order. ``whole``:
    ``data`` is the caller's frame, not only the columns the fit kept."""
    def column(name: str) -> Any:
        return _column(data, name, whole, what)

    if isinstance(cluster, str):
        if data is not None and _has_column(data, cluster):
            return [(cluster, column(cluster))]
        parts = [p.strip() for p in cluster.split("+")]
        if len(parts) > 1 and all(parts):
            return [(p, column(p)) for p in parts]
        return [(cluster.strip(), column(cluster.strip()))]
    if isinstance(cluster, pd.DataFrame):
        return [(str(c), cluster[c]) for c in cluster.columns]
    if isinstance(cluster, (list, tuple)) and cluster:
        is_column = [isinstance(c, str) and data is not None and _has_column(data, c)
                     for c in cluster]
        names = all(isinstance(c, str) for c in cluster)
        if names and (any(is_column) or (not whole and data is not None
                                         and len(cluster) != len(data))):
            return [(c, column(c)) for c in cluster]  # names (an unknown one: error)
        if any(isinstance(c, (pd.Series, np.ndarray, list, tuple)) for c in cluster):
            return [(c, column(c)) if isinstance(c, str) else
                    (str(getattr(c, "name", None) or f"cluster{j + 1}"), c)
                    for j, c in enumerate(cluster)]
    if isinstance(cluster, np.ndarray) and cluster.ndim == 2:
        return [(f"cluster{j + 1}", cluster[:, j]) for j in range(cluster.shape[1])]
    name = getattr(cluster, "name", None)
    return [(str(name) if isinstance(name, str) else "cluster", cluster)]


def check_cluster_argument(cluster: Any, what: str = "cluster") -> None:
    """Reject what can never be cluster ids (before any work); OptionError names it."""
    if cluster is None:
        raise OptionError(f"vcov 'cluster' needs {what}=: a column name, 'firm + year', a "
                          "list of column names, or an array of ids")
    if isinstance(cluster, str):
        if not cluster.strip():
            raise OptionError(f"{what} must name a column, however: {what}={cluster!r}")
        return
    if isinstance(cluster, (pd.Series, pd.DataFrame, pd.Index, np.ndarray, list, tuple)):
        if np.ndim(cluster) == 0 or len(cluster) == 0:
            raise OptionError(f"{what} is empty")
        return
    raise OptionError(f"{what} must be a column name, a formula-like 'a + b', a list, or an "
                      f"array of ids, however: type({what}) is {type(cluster).__name__}")


def _values_at_rows(name: str, values: Any, data: pd.DataFrame | None, rows: IntArray | None,
                    labels: pd.Index, what: str) -> np.ndarray:
    """The ids of the fitted rows: by data row (Series aligned on the index) when the data is
    known, else one per fitted row."""
    n_fit = len(labels)
    if data is not None and rows is not None:
        if isinstance(values, pd.Series):
            values = align_to_rows(values, data, what)
        arr = values.to_numpy() if isinstance(values, (pd.Series, pd.Index)) else np.asarray(
            values, dtype=object if not isinstance(values, np.ndarray) else None)
        if arr.ndim != 1 or arr.shape[0] != len(data):
            raise DataError(f"{what} {name!r} must have one id per row of data: data has "
                            f"{len(data)} rows, however {what} has "
                            f"{arr.shape[0] if arr.ndim else 1} entries")
        return arr[rows]
    if isinstance(values, pd.Series) and not values.index.equals(labels):
        values = align_to_rows(values, pd.DataFrame(index=labels), what)
    arr = values.to_numpy() if isinstance(values, (pd.Series, pd.Index)) else np.asarray(values)
    if arr.ndim != 1 or arr.shape[0] != n_fit:
        raise DataError(f"{what} {name!r} must have one id per row of the fit: the fit has "
                        f"{n_fit} rows, however {what} has {arr.shape[0] if arr.ndim else 1} "
                        "entries")
    return arr


def _factorize(name: str, arr: np.ndarray, labels: pd.Index, what: str) -> tuple[IntArray,
                                                                                  pd.Index]:
    missing = pd.isna(arr) if arr.dtype == object or arr.dtype.kind in "fmM" else None
    if missing is not None and np.any(missing):
        i = int(np.argmax(missing))
        raise DataError(f"{what} {name!r} is missing at row {labels[i]!r}, a row of the fit; "
                        "drop that row (subset=) or give it a cluster id")
    try:
        codes, uniques = pd.factorize(arr, sort=True)
    except TypeError:  # ids of mixed types: first-seen order
        codes, uniques = pd.factorize(arr, sort=False)
    return codes.astype(np.int64), pd.Index(uniques, name=name)


def cluster_ids(fit: Any, cluster: Any, *, what: str = "cluster") -> ClusterIds:
    """Resolve ``cluster`` to the ids of a fit's rows (one dimension or several).

    Parameters
    ----------
    fit : LinearResults or Design
        The fit (or its design); the rows it dropped (missing values, ``subset=``, weight
        zero) are dropped from the ids too.
    cluster : str, list, array-like, Series or DataFrame
        A column of the data the fit was given (``"firm"``), several (``"firm + year"`` or
        ``["firm", "year"]``: multi-way), ids per data row (an array; a Series is aligned on
        the data's index, like ``weights=``), or a list of such vectors.
    what : str
        The argument's name, for messages.

    Returns
    -------
    ClusterIds

    Raises
    ------
    OptionError
        An unknown column (named).
    DataError
        A missing id on a fitted row (column and row named), a length mismatch (both
        lengths), or a dimension with a single cluster.

    Examples
    --------
    >>> import pandas as pd
    >>> import attnreg as ar
    >>> from attnreg.inference.vcov.cluster_ids import cluster_ids
    >>> df = pd.DataFrame({"y": [1.0, 2.0, 2.5, 4.0, 5.5, 5.0], "x": [0, 1, 2, 3, 4, 5],
    ...                    "firm": ["a", "a", "b", "b", "c", "c"], "year": [1, 2, 1, 2, 1, 2]})
    >>> ids = cluster_ids(ar.attnreg("y ~ x", df), "firm + year")
    >>> ids.names, ids.n_clusters
    (('firm', 'year'), (3, 2))
    """
    check_cluster_argument(cluster, what)
    design = _design_of(fit)
    data, rows, whole = _data_and_rows(design)
    labels = design.row_labels
    codes, levels, names = [], [], []
    for name, values in _dimensions(cluster, data, whole, what):
        arr = _values_at_rows(name, values, data, rows, labels, what)
        code, level = _factorize(name, arr, labels, what)
        if len(level) < 2:
            raise DataError(f"{what} {name!r} has a single cluster ({level[0]!r}) in the "
                            f"{len(labels)} rows of the fit: cluster-robust covariances need "
                            "at least two clusters")
        codes.append(code)
        levels.append(level)
        names.append(name)
    return ClusterIds(np.column_stack(codes), tuple(levels), tuple(names))


def cluster_codes(fit: Any, cluster: Any) -> tuple[IntArray, pd.Index]:
    """Integer cluster codes of a fit's rows, and the cluster names (one dimension).

    Parameters
    ----------
    fit : LinearResults or Design
    cluster : str, array-like or Series
        As for :func:`cluster_ids`, one dimension.

    Returns
    -------
    codes : ndarray of int64, shape (n_obs,)
        Aligned with the fit's rows (``fit.design.row_labels``), values 0 … G − 1.
    names : pandas.Index, shape (G,)
        ``names[codes[i]]`` is row i's cluster.

    Examples
    --------
    >>> import pandas as pd
    >>> import attnreg as ar
    >>> from attnreg.inference.vcov.cluster_ids import cluster_codes
    >>> df = pd.DataFrame({"y": [1.0, 2.0, None, 4.0, 5.5, 5.0], "x": [0, 1, 2, 3, 4, 5],
    ...                    "firm": ["b", "b", "a", "a", "c", "c"]})
    >>> codes, names = cluster_codes(ar.attnreg("y ~ x", df), "firm")  # row 2 has no y
    >>> codes.tolist(), names.tolist()
    ([1, 1, 0, 2, 2], ['a', 'b', 'c'])
    """
    ids = cluster_ids(fit, cluster)
    if ids.n_dims != 1:
        raise OptionError(f"cluster_codes takes one clustering dimension, however cluster "
                          f"gives {ids.n_dims} ({', '.join(ids.names)}); use cluster_ids")
    return ids.codes[:, 0].copy(), ids.levels[0]


def factorize_ids(cluster: Any, labels: pd.Index, what: str = "cluster") -> tuple[IntArray,
                                                                                  pd.Index]:
    """Codes and names of ids given one per row of ``labels`` (a Series aligned on them)."""
    check_cluster_argument(cluster, what)
    arr = _values_at_rows(str(getattr(cluster, "name", None) or what), cluster, None, None,
                          labels, what)
    return _factorize(str(getattr(cluster, "name", None) or what), arr, labels, what)
