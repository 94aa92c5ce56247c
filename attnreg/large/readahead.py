"""Parquet files read a row group at a time, the next one read ahead on a background thread.

``pyarrow.dataset`` scans decode row groups ahead of a slow consumer without bound (with a
consumer that spends 20 ms a batch, a scan of ``benchmarks/large_ols.py``'s files held up
to 0.7 GB in arrow's pool, whatever ``batch_readahead`` and ``fragment_readahead`` said).
:func:`parquet_batches` reads the files in order with ``pyarrow.parquet.ParquetFile``: a
row group whole when it is at most :data:`ROW_GROUP_BYTES` of the columns asked for (else
in record batches of ``chunk_rows``), through a 1 MiB buffered stream, on one background
thread that starts the next read only when the consumer has taken the previous one. At
most two row groups are held (the consumer's and the one read ahead), and reading overlaps
the consumer's work; the reads release the GIL and decode the columns on arrow's threads.

Examples
--------
>>> import tempfile, os
>>> import numpy as np, pyarrow as pa, pyarrow.parquet as pq
>>> from attnreg.large.readahead import parquet_batches
>>> folder = tempfile.mkdtemp()
>>> path = os.path.join(folder, "a.parquet")
>>> pq.write_table(pa.table({"x": np.arange(10.0), "y": np.ones(10)}), path, row_group_size=4)
>>> [b.num_rows for b in parquet_batches([path], ["x"], chunk_rows=3)]
[3, 1, 3, 1, 2]
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator, Sequence
from typing import Any

from attnreg.exceptions import DataError

__all__ = ["ROW_GROUP_BYTES", "parquet_batches"]

#: Row groups up to this size (of the columns read, decoded) are read whole; larger ones in
#: record batches of ``chunk_rows`` rows.
ROW_GROUP_BYTES = 256 << 20

_DONE = object()


class _Failed:
    """An exception raised on the reading thread, to be raised again on the consumer's."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc


def _tables(files: Sequence[str], columns: list[str], chunk_rows: int,
            schema: Any = None) -> Iterator[Any]:
    """The files' row groups (or, for big ones, their record batches), in order; cast to
    ``schema`` where a file's types differ from it."""
    for table in _file_tables(files, columns, chunk_rows):
        if schema is not None and not table.schema.equals(schema):
            table = table.cast(schema)
        yield table


def _file_tables(files: Sequence[str], columns: list[str], chunk_rows: int) -> Iterator[Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    for path in files:
        pf = pq.ParquetFile(path, buffer_size=1 << 20, pre_buffer=False)
        meta = pf.metadata
        names = pf.schema_arrow.names
        absent = [c for c in columns if c not in names]
        if absent:
            raise DataError(f"data: the parquet file {path!r} has no column {absent[0]!r}, "
                            "which the fit reads and the dataset's first file has: every "
                            "file must have the columns the fit reads; leave out the files "
                            "without it or add the column to them")
        idx = [names.index(c) for c in columns]
        for i in range(meta.num_row_groups):
            group = meta.row_group(i)
            size = sum(group.column(j).total_uncompressed_size for j in idx) if idx else 0
            if size <= ROW_GROUP_BYTES:
                yield pf.read_row_group(i, columns=columns, use_threads=True)
            else:
                for batch in pf.iter_batches(batch_size=chunk_rows, row_groups=[i],
                                             columns=columns, use_threads=True):
                    yield pa.Table.from_batches([batch])


def parquet_batches(files: Sequence[str], columns: list[str], chunk_rows: int, *,
                    schema: Any = None) -> Iterator[Any]:
    """Record batches of at most ``chunk_rows`` rows of ``columns``, the files in order.

    Parameters
    ----------
    files : sequence of str
        Parquet files.
    columns : list of str
    chunk_rows : int
        Rows per batch (row groups are cut into batches of this many rows, without copies).
    schema : pyarrow.Schema, optional
        Of ``columns``: a file whose types differ is cast to it (a dataset's unified schema).

    Yields
    ------
    pyarrow.RecordBatch
        Slices of the row group read (zero copy); the next row group is read meanwhile.

    Notes
    -----
    An error while reading (a damaged file, a missing column) is raised by the generator,
    at the row group where it happened. Closing the generator early stops the reader after
    its current read.
    """
    out: queue.Queue[Any] = queue.Queue(maxsize=1)
    token = threading.Semaphore(1)  # a read starts only once the previous one was taken
    stop = threading.Event()

    def read() -> None:
        tables = _tables(files, columns, chunk_rows, schema)
        try:
            while True:
                while not token.acquire(timeout=0.1):
                    if stop.is_set():
                        return
                if stop.is_set():
                    return
                table = next(tables, _DONE)  # the read itself
                out.put(table)
                if table is _DONE:
                    return
                del table
        except BaseException as exc:  # handed to the consumer
            out.put(_Failed(exc))

    reader = threading.Thread(target=read, name="attnreg-parquet", daemon=True)
    reader.start()
    try:
        while True:
            item = out.get()
            if item is _DONE:
                return
            if isinstance(item, _Failed):
                raise item.exc
            token.release()  # the reader may now read the next row group
            for batch in item.to_batches(max_chunksize=chunk_rows):
                if batch.num_rows:
                    yield batch
            del item
    finally:
        stop.set()
        token.release()
        while reader.is_alive():  # let a blocked put() go through so the thread can end
            with contextlib.suppress(queue.Empty):
                out.get(timeout=0.05)
