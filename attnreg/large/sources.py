"""Data read a chunk of rows at a time: files, arrow, polars and pandas as :class:`ChunkSource`.

:func:`as_source` wraps what the chunked fits accept:

- a parquet or CSV path, a directory or a glob (``"trips/*.parquet"``), read with
  ``pyarrow.dataset`` in record batches of only the columns the formula needs;
- a ``pyarrow.Table``, ``pyarrow.dataset.Dataset`` or ``pyarrow.RecordBatchReader`` (a reader
  can be read once only);
- a ``polars.DataFrame`` (sliced, zero copy) or ``polars.LazyFrame`` (collected in batches);
- a ``pandas.DataFrame``, split into chunks of rows (for tests and for forcing the chunked
  path on data already in memory).

Each chunk becomes a pandas DataFrame only when it is read, and only with the columns asked
for; :meth:`ChunkSource.frames` applies the package's input rules
(:func:`attnreg.formula.frame.prepare_frame`: numbers as float64, text and dates refused with
the column named) chunk by chunk. pyarrow and polars are imported only when such a source is
made: ``import attnreg`` imports neither.

:func:`is_large` says which inputs take the chunked path: paths, arrow datasets and readers,
polars LazyFrames, and arrow tables or polars frames of more than :data:`LARGE_CELLS` cells;
never a pandas DataFrame (unless ``chunk_rows`` is given). Small arrow and polars inputs are
converted to pandas (:func:`to_memory`) and fitted in memory exactly as before.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from attnreg.large.sources import as_source, is_large
>>> df = pd.DataFrame({"y": np.arange(10.0), "x": np.arange(10) % 3})
>>> src = as_source(df, chunk_rows=4)
>>> src.columns, src.n_rows
(('y', 'x'), 10)
>>> [len(f) for f in src.frames(["x"])]
[4, 4, 2]
>>> next(iter(src.frames(["x"], uses={"x": True})))["x"].dtype  # the input rules, per chunk
dtype('float64')
>>> is_large(df), is_large("trips/*.parquet"), is_large(df, chunk_rows=4)
(False, True, True)
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

import pandas as pd

from attnreg.exceptions import DataError, OptionError
from attnreg.formula.frame import string_labels
from attnreg.formula.polars_frames import polars_to_pandas
from attnreg.large.arrow_source import ArrowSource, arrow_to_pandas
from attnreg.large.files import expand_paths, hive_base, open_dataset, open_hive
from attnreg.large.source_base import LARGE_CELLS, ChunkSource, check_chunk_rows

__all__ = ["PandasSource", "PolarsSource", "as_source", "check_sep", "is_large", "to_memory"]



def _kind(data: Any) -> str:
    """'path', 'arrow', 'polars', 'pandas' or '' (what :func:`as_source` makes of ``data``)."""
    if isinstance(data, (str, os.PathLike)):
        return "path"
    if isinstance(data, (list, tuple)) and data and all(isinstance(d, (str, os.PathLike))
                                                        for d in data):
        return "path"
    if isinstance(data, pd.DataFrame):
        return "pandas"
    module = type(data).__module__.split(".")[0]
    if module == "pyarrow":
        return "arrow"
    if module == "polars":
        return "polars"
    return ""


def is_large(data: Any, *, chunk_rows: int | None = None) -> bool:
    """Whether :func:`attnreg.attnreg` fits ``data`` chunk by chunk.

    Parameters
    ----------
    data : object
        What was given as ``data=``.
    chunk_rows : int, optional
        Given: the chunked path for any input this module reads (pandas included).

    Returns
    -------
    bool
        True for paths and globs, arrow datasets and record batch readers, polars
        LazyFrames, arrow tables and polars DataFrames of more than :data:`LARGE_CELLS`
        cells; False for pandas DataFrames, dicts and small tables (unless ``chunk_rows``).

    Examples
    --------
    >>> import pandas as pd
    >>> is_large(pd.DataFrame({"x": [1.0]})), is_large("data/*.csv")
    (False, True)
    """
    kind = _kind(data)
    if not kind:
        return False
    if chunk_rows is not None or kind == "path":
        return True
    if kind == "arrow":
        name = type(data).__name__
        if name in ("Table", "RecordBatch"):
            return int(data.num_rows) * max(int(data.num_columns), 1) > LARGE_CELLS
        return True  # datasets and readers stream
    if kind == "polars":
        if type(data).__name__ == "LazyFrame":
            return True
        return int(data.height) * max(int(data.width), 1) > LARGE_CELLS
    return False


def to_memory(data: Any) -> Any:
    """A small arrow table or polars frame as a pandas DataFrame; anything else unchanged.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"x": [1.0]})
    >>> to_memory(df) is df
    True
    """
    kind = _kind(data)
    if kind == "arrow" and type(data).__name__ in ("Table", "RecordBatch"):
        return arrow_to_pandas(data, 0)
    if kind == "polars" and type(data).__name__ == "DataFrame":
        return polars_to_pandas(data, 0)
    return data


# ------------------------------------------------------------------------------ pandas

class PandasSource(ChunkSource):
    """A pandas DataFrame split into chunks of ``chunk_rows`` rows (views, no copies)."""

    def __init__(self, frame: pd.DataFrame, chunk_rows: int) -> None:
        self._frame = string_labels(frame, "data")
        self.columns = tuple(self._frame.columns)
        self.n_rows = int(frame.shape[0])
        self.chunk_rows = chunk_rows
        self.description = f"pandas DataFrame ({self.n_rows} rows)"

    def _raw(self, columns: Sequence[str]) -> Iterator[pd.DataFrame]:
        sub = self._frame[list(columns)]
        for lo in range(0, int(self.n_rows or 0), self.chunk_rows):
            yield sub.iloc[lo:lo + self.chunk_rows]



# ------------------------------------------------------------------------------ polars

class PolarsSource(ChunkSource):
    """A polars DataFrame (zero-copy slices) or LazyFrame (collected in batches)."""

    def __init__(self, data: Any, chunk_rows: int) -> None:
        self._data = data
        self.chunk_rows = chunk_rows
        self._lazy = type(data).__name__ == "LazyFrame"
        schema = data.collect_schema() if self._lazy else data.schema
        self.columns = tuple(str(c) for c in schema.names())
        self.null_columns = tuple(str(c) for c, t in schema.items() if str(t) == "Null")
        self.n_rows = None if self._lazy else int(data.height)
        self.description = f"polars {type(data).__name__}"

    def __getstate__(self) -> dict[str, Any]:
        raise DataError(f"{self.description} is data in memory: it is not saved with a fit")

    def _raw(self, columns: Sequence[str]) -> Iterator[pd.DataFrame]:
        if not self._lazy:
            sub = self._data.select(list(columns))
            for lo in range(0, sub.height, self.chunk_rows):
                yield polars_to_pandas(sub.slice(lo, self.chunk_rows), lo)
            return
        offset = 0
        lazy = self._data.select(list(columns))
        try:
            batches = lazy.collect_batches(chunk_size=self.chunk_rows)
        except (AttributeError, TypeError):  # pragma: no cover - older polars
            batches = None
        if batches is None:  # pragma: no cover - older polars: slices of the query
            while True:
                part = lazy.slice(offset, self.chunk_rows).collect()
                if part.height == 0:
                    return
                yield polars_to_pandas(part, offset)
                offset += part.height
        for part in batches:
            if part.height:
                yield polars_to_pandas(part, offset)
                offset += part.height


# ------------------------------------------------------------------------------ front

def check_sep(sep: Any) -> None:
    """``sep`` must be None or one character."""
    if sep is not None and not (isinstance(sep, str) and len(sep) == 1):
        raise OptionError(f"sep must be one character such as ';' or '\\t', however: {sep=}")


def as_source(data: Any, *, chunk_rows: int | None = None, sep: str | None = None) -> ChunkSource:
    """Wrap ``data`` as a :class:`ChunkSource`.

    Parameters
    ----------
    data : str, path, list of paths, pyarrow Table / Dataset / RecordBatchReader, polars
        DataFrame / LazyFrame, pandas DataFrame or ChunkSource
        A path may be a file, a directory or a glob of parquet or CSV files.
    chunk_rows : int, optional
        Rows per chunk (default :data:`DEFAULT_CHUNK_ROWS`; parquet files may yield smaller
        record batches).
    sep : str, optional
        The field separator of CSV files (default ``","``), one character such as ``";"`` or
        ``"\\t"``.

    Returns
    -------
    ChunkSource

    Raises
    ------
    DataError
        No such file, a glob matching nothing, mixed file formats.
    OptionError
        An unsupported type (named), or pyarrow / polars missing for such data.

    Examples
    --------
    >>> import pandas as pd
    >>> as_source(pd.DataFrame({"x": [1.0, 2.0, 3.0]}), chunk_rows=2)
    <PandasSource pandas DataFrame (3 rows): 3 rows, 1 columns>
    """
    if isinstance(data, ChunkSource):
        return data
    rows = check_chunk_rows(chunk_rows)
    kind = _kind(data)
    check_sep(sep)
    if sep is not None and kind != "path":
        raise OptionError(f"sep= is the field separator of CSV files, however data is not a "
                          f"path (type(data) is {type(data).__name__})")
    if kind == "pandas":
        return PandasSource(data, rows)
    if kind == "path":
        files, fmt = expand_paths(data, sep)
        if sep is not None and fmt != "csv":
            raise OptionError(f"sep= is the field separator of CSV files, however the files "
                              f"are {fmt}")
        shown = os.fspath(data) if isinstance(data, (str, os.PathLike)) else files
        base = hive_base(data, files)
        dataset = (open_dataset(files, fmt, sep) if base is None
                   else open_hive(files, fmt, base, sep))
        source = ArrowSource(dataset, rows, paths=shown, file_format=fmt, sep=sep)
        source._paths, source._hive_base = files, base
        source.description = f"{fmt} dataset {shown}"
        return source
    if kind == "arrow":
        import pyarrow as pa
        import pyarrow.dataset as ds

        if isinstance(data, (pa.Table, pa.RecordBatch, pa.RecordBatchReader, ds.Dataset)):
            return ArrowSource(data, rows)
    if kind == "polars" and type(data).__name__ in ("DataFrame", "LazyFrame"):
        return PolarsSource(data, rows)
    raise OptionError(f"data must be a pandas, polars or pyarrow table, a parquet/CSV path or "
                      f"glob, however: type(data) is {type(data).__module__}.{type(data).__name__}")
