"""A dask DataFrame that is a plain read of local parquet files, read by attnreg on the workers.

``dd.read_parquet(path)`` reads each partition through fsspec's Python file objects: every
byte passes through freshly allocated Python buffers, and in a ``distributed`` worker (whose
nanny sets ``MALLOC_TRIM_THRESHOLD_``, so freed memory goes back to the system at once)
each 80 MB partition costs about 21,000 page faults. Reading the same row groups with
``pyarrow.parquet.ParquetFile`` on the file itself costs under 200 faults and half the
time (``benchmarks/large_ols.py``: dask's read of 2e7 rows × 20 columns 2.9 s, pyarrow's
1.3 s).

When the frame a pass reads is exactly such a read (:func:`parquet_partitions` decides, on
the client, from the collection's expression), each partition task reads its own file and
row groups with pyarrow (:func:`read_piece`) and hands the frame to the pass: the same rows,
in the same partitions and order, with the same index and the frame's column dtypes, so the
fit is the one dask's own read would give. Anything else (filters, hive partitions, an index
column, a remote filesystem, options passed to the reader, several files per partition, a
collection computed from the read, a dask without query planning) is read by dask.

Examples
--------
>>> import os, tempfile
>>> import numpy as np, pandas as pd
>>> dd = pytest_importorskip("dask.dataframe")
>>> folder = tempfile.mkdtemp()
>>> for i in range(2):
...     pd.DataFrame({"x": np.arange(3.0) + 3 * i}).to_parquet(os.path.join(folder, f"{i}.parquet"))
>>> pieces = parquet_partitions(dd.read_parquet(folder), ["x"])
>>> [os.path.basename(p.path) for p in pieces]
['0.parquet', '1.parquet']
>>> read_piece(pieces[1], ["x"], {"x": np.dtype("float64")})["x"].tolist()
[3.0, 4.0, 5.0]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from attnreg.exceptions import DataError
from attnreg.large.dask_predict import pytest_importorskip

__all__ = ["ParquetPiece", "parquet_partitions", "pytest_importorskip", "read_piece"]


@dataclasses.dataclass(frozen=True)
class ParquetPiece:
    """One partition of a parquet read: a file and the row groups it takes.

    Attributes
    ----------
    path : str
        The file (local to the workers, as dask would have opened it).
    row_groups : tuple of int or None
        The row groups, in order; None: the whole file.
    """

    path: str
    row_groups: tuple[int, ...] | None


#: dask's reader options that leave the rows, their order and their values as a plain read
_PLAIN_KWARGS = {"dtype_backend": None}


def parquet_partitions(frame: Any, columns: Sequence[str]) -> list[ParquetPiece] | None:
    """The partitions of ``frame`` as pieces of parquet files, or None when dask must read it.

    Parameters
    ----------
    frame : dask.dataframe.DataFrame
        The collection the fit was given.
    columns : sequence of str
        The columns a pass reads (of ``frame``).

    Returns
    -------
    list of ParquetPiece or None
        One piece per partition, in order, when ``frame`` is a plain ``dd.read_parquet`` of
        local files (fsspec's local filesystem, pyarrow engine, no filters, no hive
        partitions, no index column, no categories, no reader options, one file per
        partition, numeric, boolean or string columns); None otherwise.

    Notes
    -----
    This reads dask's query plan (``dask.dataframe.dask_expr``), which is not a public API:
    any surprise there answers None, and the partitions are read by dask.
    """
    try:
        return _pieces(frame, [str(c) for c in columns])
    except Exception:
        return None


def _pieces(frame: Any, columns: list[str]) -> list[ParquetPiece] | None:
    import pyarrow as pa
    import pyarrow.parquet as pq
    from fsspec.implementations.local import LocalFileSystem

    expr = frame.optimize(fuse=False).expr
    if type(expr).__name__ != "ReadParquetFSSpec":
        return None
    plain = {"filters": None, "categories": None, "index": None, "storage_options": None,
             "_partitions": None, "_series": False, "aggregate_files": None, "engine": "pyarrow",
             "filesystem": "fsspec"}
    if any(expr.operand(k) != v for k, v in plain.items()):
        return None
    if (expr.operand("kwargs") or {}) != _PLAIN_KWARGS:
        return None
    info = expr._dataset_info
    if not isinstance(info["fs"], LocalFileSystem):
        return None
    if [i for i in (info.get("index") or []) if i is not None]:
        return None
    plan = expr._plan
    if plan["empty"] or plan["common_kwargs"].get("partitions") or \
            plan["common_kwargs"].get("filters") is not None:
        return None
    pieces = []
    for part in plan["parts"]:
        piece = _one_piece(part)
        if piece is None:
            return None
        pieces.append(piece)
    if len(pieces) != frame.npartitions or not pieces:
        return None
    schema = pq.read_schema(pieces[0].path)
    index_columns = (schema.pandas_metadata or {}).get("index_columns", [])
    if any(not isinstance(c, dict) for c in index_columns):
        return None  # an index stored as a column: dask decides what becomes the index
    for name in columns:
        if name not in schema.names:
            return None
        kind = schema.field(name).type
        if not (pa.types.is_floating(kind) or pa.types.is_integer(kind)
                or pa.types.is_boolean(kind) or pa.types.is_string(kind)
                or pa.types.is_large_string(kind)):
            return None
    return pieces


def _one_piece(part: Any) -> ParquetPiece | None:
    """A partition of dask's plan (``{"piece": (path, row_groups, keys)}``, or a list of such
    for one file's consecutive row groups) as one piece; None for anything else."""
    parts = part if isinstance(part, list) else [part]
    path: str | None = None
    groups: list[int] = []
    for one in parts:
        if not isinstance(one, dict) or set(one) != {"piece"}:
            return None
        where, row_groups, keys = one["piece"]
        if keys or not isinstance(where, str) or (path is not None and where != path):
            return None
        if row_groups is None:
            if len(parts) > 1:
                return None
            return ParquetPiece(where, None)
        path = where
        groups += [int(g) for g in row_groups]
    if path is None or groups != sorted(set(groups)):
        return None
    return ParquetPiece(path, tuple(groups))


def read_piece(piece: ParquetPiece, columns: Sequence[str],
               dtypes: Mapping[str, Any]) -> pd.DataFrame:
    """One partition read from its file with pyarrow, as dask's read would give it.

    Parameters
    ----------
    piece : ParquetPiece
    columns : sequence of str
        The columns, in the frame's order.
    dtypes : mapping of str to dtype
        The frame's column dtypes (its metadata): text columns are cast to its string dtype,
        as dask's read does.

    Returns
    -------
    pandas.DataFrame
        One block per column (float columns without nulls are views of arrow's buffers); the
        index the file's pandas metadata gives (a RangeIndex), as dask's read.

    Raises
    ------
    DataError
        The file cannot be read (it changed since the frame was made, or is damaged).
    """
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(piece.path, buffer_size=1 << 20, pre_buffer=False)
        if piece.row_groups is None:
            table = pf.read(columns=list(columns), use_threads=False, use_pandas_metadata=True)
        else:
            table = pf.read_row_groups(list(piece.row_groups), columns=list(columns),
                                       use_threads=False, use_pandas_metadata=True)
        frame = table.to_pandas(split_blocks=True, use_threads=False, ignore_metadata=False)
    except Exception as exc:  # pyarrow's own exception types
        raise DataError(f"data: the parquet file {piece.path!r} could not be read on a worker: "
                        f"{exc}") from None
    del table
    frame = frame[list(columns)] if list(frame.columns) != list(columns) else frame
    for name in columns:
        want = dtypes[name]
        # dask maps text to its string dtype; every other column is pyarrow's conversion, as
        # in dask's read (an integer column with nulls is float64 there too, whatever the
        # frame's metadata says)
        if isinstance(want, pd.StringDtype) and frame[name].dtype != want:
            frame[name] = frame[name].astype(want)
    return frame

