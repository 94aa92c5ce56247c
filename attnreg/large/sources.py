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

import glob as _glob
import os
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import DataError, FormulaError, OptionError
from attnreg.formula.frame import prepare_frame, string_labels

__all__ = ["DEFAULT_CHUNK_ROWS", "LARGE_CELLS", "ArrowSource", "ChunkSource", "PandasSource",
           "PolarsSource", "as_source", "is_large", "to_memory"]

#: Rows per chunk when none is given (about 8 MiB per float64 column... at 20 columns 160 MiB
#: of design at most; arrow files keep their own batch size up to this).
DEFAULT_CHUNK_ROWS = 1 << 18
#: Arrow tables and polars frames with more cells (rows × columns) than this take the
#: chunked path; smaller ones are converted to pandas and fitted in memory.
LARGE_CELLS = 1 << 24


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
        return _arrow_to_pandas(data, 0)
    if kind == "polars" and type(data).__name__ == "DataFrame":
        return _polars_to_pandas(data, 0)
    return data


class ChunkSource(ABC):
    """Rows read a chunk at a time, each chunk a pandas DataFrame of the columns asked for.

    Attributes
    ----------
    columns : tuple of str
        Every column of the source (string labels).
    n_rows : int or None
        Number of rows, when known without reading the data.
    description : str
        What the source is, for reports (``"parquet dataset trips/*.parquet"``).
    chunk_rows : int
        Rows per chunk (a file's own record batches may be smaller).
    """

    columns: tuple[str, ...]
    n_rows: int | None
    description: str
    chunk_rows: int
    #: whether the data stays readable after pickling (files: yes; objects in memory: no)
    portable: bool = False
    #: columns whose type in the source's schema is null: missing in every row
    null_columns: tuple[str, ...] = ()

    @abstractmethod
    def _raw(self, columns: Sequence[str]) -> Iterator[pd.DataFrame]:
        """Chunks as pandas DataFrames of ``columns``, row labels included."""

    def frames(self, columns: Sequence[str] | None = None, *,
               uses: Mapping[str, bool] | None = None) -> Iterator[pd.DataFrame]:
        """The chunks, one pandas DataFrame each, in row order.

        Parameters
        ----------
        columns : sequence of str, optional
            Columns to read (default: all). A column the source lacks is a FormulaError
            naming it.
        uses : mapping of str to bool, optional
            Variables a formula reads, each with whether it is read outside ``C()``
            (:func:`attnreg.formula.frame.variable_uses`): the package's input rules are
            then applied to each chunk (:func:`attnreg.formula.frame.prepare_frame`).

        Yields
        ------
        DataFrame
            Row labels: the pandas source's own, else the global row numbers 0, 1, ...
        """
        cols = list(self.columns) if columns is None else list(dict.fromkeys(columns))
        missing = [c for c in cols if c not in self.columns]
        if missing:
            self.explain_absent(missing[0])
            raise FormulaError(f"data ({self.description}) has no column {missing[0]!r}; it has "
                               f"{', '.join(map(repr, self.columns[:20]))}")
        for frame in self._raw(cols):
            frame = string_labels(frame, "data")
            yield prepare_frame(frame, uses, "data") if uses is not None else frame

    def explain_absent(self, column: str) -> None:
        """Raise a more precise error than "``column`` is not a column" when the source
        knows one (a file of a glob lacks it, it is a partition key); else return."""
        return None  # a source in memory has no more to say

    def __repr__(self) -> str:
        rows = "?" if self.n_rows is None else str(self.n_rows)
        return f"<{type(self).__name__} {self.description}: {rows} rows, {len(self.columns)} columns>"


def _check_chunk_rows(chunk_rows: Any) -> int:
    if chunk_rows is None:
        return DEFAULT_CHUNK_ROWS
    if (not isinstance(chunk_rows, (int, np.integer)) or isinstance(chunk_rows, bool)
            or chunk_rows < 1):
        raise OptionError(f"chunk_rows must be a positive integer, however: {chunk_rows=}")
    return int(chunk_rows)


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


# ------------------------------------------------------------------------------ arrow

def _arrow_plain(table: Any) -> Any:
    """Dictionary-encoded columns decoded (a chunk's dictionary is not the data's levels);
    columns of arrow's null type (a file where a column is missing in every row) as float64
    NaN, missing values as in memory."""
    import pyarrow as pa

    cols = []
    changed = False
    for col in table.columns:
        if pa.types.is_dictionary(col.type):
            col = col.cast(col.type.value_type)
            changed = True
        elif pa.types.is_null(col.type):
            col = col.cast(pa.float64())
            changed = True
        cols.append(col)
    if not changed:
        return table
    return type(table).from_arrays(cols, names=table.schema.names) if hasattr(
        type(table), "from_arrays") else table


def _arrow_to_pandas(batch: Any, offset: int) -> pd.DataFrame:
    try:
        # one block per column: float64 columns without nulls are then views of arrow's
        # buffers (no copy; a consolidated block would copy the whole batch)
        frame = _arrow_plain(batch).to_pandas(split_blocks=True)
    except Exception as exc:  # pyarrow raises its own types (ArrowInvalid, ...)
        raise DataError(f"data: a chunk could not be converted from arrow: {exc}") from None
    frame.index = pd.RangeIndex(offset, offset + frame.shape[0])
    return frame


class ArrowSource(ChunkSource):
    """A pyarrow Table, Dataset, RecordBatchReader, or files read with ``pyarrow.dataset``."""

    def __init__(self, data: Any, chunk_rows: int, *, paths: Any = None,
                 file_format: str | None = None, sep: str | None = None) -> None:
        import pyarrow as pa

        self._paths, self._format, self._sep = paths, file_format, sep
        self._data = data
        self.chunk_rows = chunk_rows
        self._read_once = isinstance(data, pa.RecordBatchReader)
        self._used = False
        schema = data.schema
        self.columns = tuple(str(n) for n in schema.names)
        self.null_columns = tuple(str(f.name) for f in schema if pa.types.is_null(f.type))
        self._hive_base: str | None = None
        if isinstance(data, (pa.Table, pa.RecordBatch)):
            self.n_rows = int(data.num_rows)
        elif self._read_once:
            self.n_rows = None
        else:
            self.n_rows = None  # counted on demand (a dataset's count may scan metadata)
        if paths is not None:
            shown = paths if isinstance(paths, str) else f"{len(paths)} files"
            self.description = f"{file_format} dataset {shown}"
            self.portable = True
        else:
            self.description = f"pyarrow {type(data).__name__}"

    def __getstate__(self) -> dict[str, Any]:
        if self._paths is None:
            raise DataError(f"{self.description} is data in memory: it is not saved with a fit "
                            "(a fit keeps only a description of its source)")
        return {**self.__dict__, "_data": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_hive_base", None)
        self.__dict__.setdefault("_sep", None)
        self._data = None  # opened when first read: a fit loads where its files are not

    @property
    def available(self) -> bool:
        """Whether the rows can be read (False: files of a pickled fit moved or deleted)."""
        return self._paths is None or not self._missing_files()

    def _missing_files(self) -> list[str]:
        return [p for p in (self._paths or ()) if not os.path.exists(p)]

    def _opened(self) -> Any:
        """The data; files are checked, and opened again after unpickling."""
        missing = self._missing_files()
        if missing:
            raise DataError(
                f"data: the {self._format} file {missing[0]!r} is not there any more "
                f"({len(missing)} of the {len(self._paths)} files of the fit's "
                f"{self.description} are missing). A fit keeps its files' paths, not their "
                "rows: what reads the rows again (with_vcov(), attention(), the residual "
                "quantiles of summary()) needs them; pass data= with the files' new location, "
                "e.g. fit.with_vcov('HC1', data='new/folder/*.parquet')")
        if self._data is None:
            fmt = self._format or "parquet"
            self._data = (_open_dataset(self._paths, fmt, self._sep) if self._hive_base is None
                          else _open_hive(self._paths, fmt, self._hive_base, self._sep))
        return self._data

    def explain_absent(self, column: str) -> None:
        """A file of the glob other than the first has the column (the dataset's columns are
        its first file's), or the column is a hive partition key of the files' folders."""
        if not self._paths or self._format != "parquet":
            return
        key = _hive_keys(self._paths[0]).get(column)
        if key is not None:
            raise FormulaError(
                f"data ({self.description}) has no column {column!r}; the files lie in hive "
                f"partition folders ({column}={key}): give the folder above them, whose "
                "partition keys are then read as columns, e.g. data='trips/' for "
                "'trips/year=2020/part-0.parquet'")
        import pyarrow.parquet as pq

        for path in self._paths[1:]:
            if column in pq.read_schema(path).names:
                raise DataError(
                    f"data ({self.description}): the parquet file {self._paths[0]!r} has no "
                    f"column {column!r}, which {path!r} has (the dataset's columns are its "
                    "first file's): every file must have the columns the fit reads; leave "
                    "out the files without it or add the column to them")

    def count_rows(self) -> int | None:
        """Rows of the source (a dataset counts them from its files' metadata)."""
        import pyarrow.dataset as ds

        if self.n_rows is None and isinstance(self._opened(), ds.Dataset):
            self.n_rows = int(self._opened().count_rows())
        return self.n_rows

    def _raw(self, columns: Sequence[str]) -> Iterator[pd.DataFrame]:
        import pyarrow as pa
        import pyarrow.dataset as ds

        data = self._opened()
        if isinstance(data, (pa.Table, pa.RecordBatch)):
            table = data.select(list(columns))
            batches: Any = (table.slice(lo, self.chunk_rows)
                            for lo in range(0, table.num_rows, self.chunk_rows))
        elif self._paths is not None and self._format == "parquet" and self._hive_base is None:
            from attnreg.large.readahead import parquet_batches

            batches = parquet_batches(list(self._paths), list(columns), self.chunk_rows)
        elif (files := _plain_parquet_files(data, columns)) is not None:
            from attnreg.large.readahead import parquet_batches

            # the dataset's own schema: a file whose columns differ (int32 where the dataset
            # says int64) is cast to it, as a scan would; not when the schema (its first
            # file's) has a column of null type, which the other files' values cannot take
            fields = [data.schema.field(c) for c in columns]
            schema = None if any(pa.types.is_null(f.type) for f in fields) else pa.schema(fields)
            batches = parquet_batches(files, list(columns), self.chunk_rows, schema=schema)
        elif isinstance(data, ds.Dataset):
            try:
                # one batch and one file read ahead: pyarrow's defaults (16 batches, 4 files)
                # held 0.8 GB more at 2e7 rows x 20 columns, for no gain in time
                batches = data.to_batches(columns=list(columns), batch_size=self.chunk_rows,
                                          batch_readahead=1, fragment_readahead=1,
                                          **_scan_options(data))
            except Exception as exc:
                raise DataError(f"data ({self.description}) could not be read: {exc}") from None
        else:
            if self._used:
                raise DataError("a pyarrow RecordBatchReader can be read only once, and the fit "
                                "needs more than one pass: give a dataset, a table or a path")
            self._used = True
            batches = (b.select(list(columns)) for b in data)
        offset = 0
        iterator = iter(batches)
        while True:
            try:
                batch = next(iterator)
            except StopIteration:
                break
            except DataError:
                raise
            except Exception as exc:
                raise DataError(f"data ({self.description}) could not be read: {exc}"
                                + _csv_hint(exc, self.columns)) from None
            if batch.num_rows == 0:
                continue
            yield _arrow_to_pandas(batch, offset)
            offset += int(batch.num_rows)


def _plain_parquet_files(data: Any, columns: Sequence[str]) -> list[str] | None:
    """The files of a pyarrow dataset that is parquet files on the local filesystem, read
    whole (no hive partitions, every column asked for stored in the files), in the dataset's
    order; None for anything else (read by a dataset scan).

    A scan decodes row groups ahead of a slow consumer without bound, and at 2e7 rows × 20
    columns took 7.7 s where :func:`~attnreg.large.readahead.parquet_batches` takes 3.1 s.
    """
    try:
        import pyarrow.dataset as ds
        import pyarrow.fs as pafs

        if not (isinstance(data, ds.FileSystemDataset)
                and isinstance(data.format, ds.ParquetFileFormat)
                and isinstance(data.filesystem, pafs.LocalFileSystem)):
            return None
        if data.format.read_options.dictionary_columns or getattr(data, "_scan_options", None):
            return None  # dictionary columns asked for, or a filtered or projected dataset
        true = ds.scalar(True)
        files = []
        for fragment in data.get_fragments():
            whole = fragment.row_groups is None or (
                len(fragment.row_groups) == fragment.metadata.num_row_groups)
            if not fragment.partition_expression.equals(true) or not whole:
                return None
            files.append(fragment.path)
        if not files or any(c not in data.schema.names for c in columns):
            return None
        return files
    except Exception:
        return None


def _csv_hint(exc: BaseException, columns: Sequence[str]) -> str:
    """The column's name, and what to do, when a CSV column's type (guessed from the first
    block of the first file) does not fit a later value: an integer column with a decimal
    further down."""
    import re

    if "CSV conversion error" not in str(exc):
        return ""
    found = re.search(r"CSV column #(\d+)", str(exc))
    j = int(found.group(1)) if found else -1
    name = repr(columns[j]) if 0 <= j < len(columns) else "name"
    return (f". Column {name}'s type was guessed from the file's first rows; give it "
            "explicitly with a pyarrow dataset: ds.dataset(files, format=ds.CsvFileFormat("
            "convert_options=pyarrow.csv.ConvertOptions(column_types={"
            f"{name}: pa.float64()}})))")


def _scan_options(dataset: Any) -> dict[str, Any]:
    """Parquet: column chunks read through a 1 MiB buffer, not whole into memory first.

    By default a scan reads each row group's column chunks whole before decoding them (a row
    group of 2^20 rows × 20 float64 columns is 168 MB, twice over with the one read ahead);
    a buffered stream decodes them as it reads, which kept the pool's peak at 0.21 GB instead
    of 0.28 GB on ``benchmarks/large_ols.py``'s files, and read them faster (0.75 s, 1.5 s).
    """
    import pyarrow.dataset as ds

    if not isinstance(getattr(dataset, "format", None), ds.ParquetFileFormat):
        return {}
    return {"fragment_scan_options": ds.ParquetFragmentScanOptions(
        use_buffered_stream=True, buffer_size=1 << 20, pre_buffer=False)}


#: separators other than the comma that a CSV file's header may show instead
_OTHER_SEPARATORS = {";": "';'", "\t": "'\\t' (tabs)", "|": "'|'"}


def _check_csv_separator(path: str) -> None:
    """DataError when a CSV file's header has no comma but another separator (a file
    separated by semicolons or tabs, which a comma-separated read makes one column),
    saying how to read it."""
    import gzip

    try:
        opener: Any = gzip.open if path.lower().endswith(".gz") else open
        with opener(path, "rt", errors="replace") as fh:
            header = fh.readline(1 << 16).rstrip("\r\n")
    except OSError:
        return  # the reader says what is wrong with the file
    if "," in header:
        return
    for sep, shown in _OTHER_SEPARATORS.items():
        if sep in header:
            raise DataError(
                f"data: {path!r} looks separated by {shown}, not commas: its header is "
                f"{header[:80]!r}. Pass sep={sep!r} (e.g. attnreg(formula, path, sep={sep!r}))")


def _expand_paths(path: Any, sep: str | None = None) -> tuple[list[str], str]:
    names = [os.fspath(p) for p in (path if isinstance(path, (list, tuple)) else [path])]
    files: list[str] = []
    for name in names:
        if any(ch in name for ch in "*?["):
            files += sorted(_glob.glob(name, recursive=True))
        elif os.path.isdir(name):
            files += sorted(p for p in _glob.glob(os.path.join(name, "**", "*"), recursive=True)
                            if os.path.isfile(p))
        elif os.path.exists(name):
            files.append(name)
        else:
            raise DataError(f"data: no such file or directory {name!r}")
    if not files:
        raise DataError(f"data: the pattern {names[0]!r} matches no files")
    exts = {os.path.splitext(f)[1].lower() for f in files}
    if exts <= {".parquet", ".pq"}:
        return files, "parquet"
    if exts <= {".csv", ".gz"} and all(f.lower().endswith((".csv", ".csv.gz")) for f in files):
        if sep is None:
            _check_csv_separator(files[0])
        return files, "csv"
    raise DataError(f"data: files must all be parquet (.parquet) or all CSV (.csv), however "
                    f"they end in {', '.join(sorted(exts))}")


def _file_format(file_format: str, sep: str | None) -> Any:
    """pyarrow's format for the files: a CSV format with its separator when one is given."""
    if file_format != "csv" or sep is None:
        return file_format
    import pyarrow.csv as pcsv
    import pyarrow.dataset as ds

    return ds.CsvFileFormat(parse_options=pcsv.ParseOptions(delimiter=sep))


def _open_dataset(files: list[str], file_format: str, sep: str | None = None) -> Any:
    try:
        import pyarrow.dataset as ds
    except ImportError:
        raise OptionError("reading parquet or CSV files needs pyarrow: pip install "
                          "'attnreg[large]'") from None
    try:
        return ds.dataset(files, format=_file_format(file_format, sep))
    except Exception as exc:
        raise DataError(f"data: the {file_format} files could not be opened: {exc}") from None


def _hive_keys(path: str) -> dict[str, str]:
    """The ``key=value`` folders of a file's path, in order."""
    parts = os.path.normpath(path).split(os.sep)[:-1]
    return dict(p.split("=", 1) for p in parts if "=" in p and not p.startswith("="))


def _hive_base(data: Any, files: list[str]) -> str | None:
    """The folder a directory given as ``data`` partitions into ``key=value`` folders
    (hive style), when every file lies in such folders under it; else None."""
    if not isinstance(data, (str, os.PathLike)) or not os.path.isdir(data):
        return None
    base = os.path.normpath(os.fspath(data))
    for f in files:
        rel = os.path.relpath(f, base).split(os.sep)[:-1]
        if not rel or not all("=" in p and not p.startswith("=") for p in rel):
            return None
    return base


def _open_hive(files: list[str], file_format: str, base: str, sep: str | None = None) -> Any:
    """A dataset of hive-partitioned files, the partition keys as columns (their types
    inferred by pyarrow: integers, else text)."""
    import pyarrow.dataset as ds

    try:
        return ds.dataset(files, format=_file_format(file_format, sep), partitioning="hive",
                          partition_base_dir=base)
    except Exception as exc:
        raise DataError(f"data: the {file_format} files under {base!r} could not be opened "
                        f"with their hive partitions: {exc}") from None


# ------------------------------------------------------------------------------ polars

def _polars_to_pandas(frame: Any, offset: int) -> pd.DataFrame:
    """A polars frame as pandas, column by column through numpy (no pyarrow needed)."""
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
                yield _polars_to_pandas(sub.slice(lo, self.chunk_rows), lo)
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
                yield _polars_to_pandas(part, offset)
                offset += part.height
        for part in batches:
            if part.height:
                yield _polars_to_pandas(part, offset)
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
    rows = _check_chunk_rows(chunk_rows)
    kind = _kind(data)
    check_sep(sep)
    if sep is not None and kind != "path":
        raise OptionError(f"sep= is the field separator of CSV files, however data is not a "
                          f"path (type(data) is {type(data).__name__})")
    if kind == "pandas":
        return PandasSource(data, rows)
    if kind == "path":
        files, fmt = _expand_paths(data, sep)
        if sep is not None and fmt != "csv":
            raise OptionError(f"sep= is the field separator of CSV files, however the files "
                              f"are {fmt}")
        shown = os.fspath(data) if isinstance(data, (str, os.PathLike)) else files
        base = _hive_base(data, files)
        dataset = (_open_dataset(files, fmt, sep) if base is None
                   else _open_hive(files, fmt, base, sep))
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
