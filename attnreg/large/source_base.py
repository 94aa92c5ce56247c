"""The chunked source every chunked and dask fit reads: :class:`ChunkSource` (rows a chunk at a
time, each chunk a pandas DataFrame of the columns asked for, under the input rules)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import FormulaError, OptionError
from attnreg.formula.frame import prepare_frame, string_labels

__all__ = ["DEFAULT_CHUNK_ROWS", "LARGE_CELLS", "ChunkSource", "check_chunk_rows"]

#: Rows per chunk when none is given (about 8 MiB per float64 column... at 20 columns 160 MiB
#: of design at most; arrow files keep their own batch size up to this).
DEFAULT_CHUNK_ROWS = 1 << 18
#: Arrow tables and polars frames with more cells (rows × columns) than this take the
#: chunked path; smaller ones are converted to pandas and fitted in memory.
LARGE_CELLS = 1 << 24



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


def check_chunk_rows(chunk_rows: Any) -> int:
    """Rows per chunk: ``chunk_rows`` checked, or the default."""
    if chunk_rows is None:
        return DEFAULT_CHUNK_ROWS
    if (not isinstance(chunk_rows, (int, np.integer)) or isinstance(chunk_rows, bool)
            or chunk_rows < 1):
        raise OptionError(f"chunk_rows must be a positive integer, however: {chunk_rows=}")
    return int(chunk_rows)
