"""Arrow tables, datasets and files (parquet, CSV) as a chunked source: :class:`ArrowSource`."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import Any

import pandas as pd

from attnreg.exceptions import DataError, FormulaError
from attnreg.large.files import (
    csv_hint,
    hive_keys,
    open_dataset,
    open_hive,
    plain_parquet_files,
    scan_options,
)
from attnreg.large.source_base import ChunkSource

__all__ = ["ArrowSource", "arrow_to_pandas"]


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


def arrow_to_pandas(batch: Any, offset: int) -> pd.DataFrame:
    """An arrow record batch as a pandas chunk whose rows are labelled from ``offset`` on."""
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
        self.__dict__.setdefault("hive_base", None)
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
            self._data = (open_dataset(self._paths, fmt, self._sep) if self._hive_base is None
                          else open_hive(self._paths, fmt, self._hive_base, self._sep))
        return self._data

    def explain_absent(self, column: str) -> None:
        """A file of the glob other than the first has the column (the dataset's columns are
        its first file's), or the column is a hive partition key of the files' folders."""
        if not self._paths or self._format != "parquet":
            return
        key = hive_keys(self._paths[0]).get(column)
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
        elif (files := plain_parquet_files(data, columns)) is not None:
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
                                          **scan_options(data))
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
                                + csv_hint(exc, self.columns)) from None
            if batch.num_rows == 0:
                continue
            yield arrow_to_pandas(batch, offset)
            offset += int(batch.num_rows)
