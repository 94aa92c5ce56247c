"""Files as chunked sources: paths and globs expanded, CSV separators checked, arrow datasets
opened (hive partitions included) and plain parquet files found for the fast reader."""

from __future__ import annotations

import glob as _glob
import os
from collections.abc import Sequence
from typing import Any


from attnreg.exceptions import DataError, OptionError

__all__ = ["check_csv_separator", "csv_hint", "expand_paths", "format_object", "hive_base",
           "hive_keys", "open_dataset", "open_hive", "plain_parquet_files", "scan_options"]


def plain_parquet_files(data: Any, columns: Sequence[str]) -> list[str] | None:
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
        if data.format.read_options.dictionary_columns or getattr(data, "scan_options", None):
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


def csv_hint(exc: BaseException, columns: Sequence[str]) -> str:
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


def scan_options(dataset: Any) -> dict[str, Any]:
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


def check_csv_separator(path: str) -> None:
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


def expand_paths(path: Any, sep: str | None = None) -> tuple[list[str], str]:
    """The files a path, a glob or a list of them names, and their format."""
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
            check_csv_separator(files[0])
        return files, "csv"
    raise DataError(f"data: files must all be parquet (.parquet) or all CSV (.csv), however "
                    f"they end in {', '.join(sorted(exts))}")


def format_object(file_format: str, sep: str | None) -> Any:
    """pyarrow's format for the files: a CSV format with its separator when one is given."""
    if file_format != "csv" or sep is None:
        return file_format
    import pyarrow.csv as pcsv
    import pyarrow.dataset as ds

    return ds.CsvFileFormat(parse_options=pcsv.ParseOptions(delimiter=sep))


def open_dataset(files: list[str], file_format: str, sep: str | None = None) -> Any:
    """An arrow dataset of ``files`` (parquet or CSV with separator ``sep``)."""
    try:
        import pyarrow.dataset as ds
    except ImportError:
        raise OptionError("reading parquet or CSV files needs pyarrow: pip install "
                          "'attnreg[large]'") from None
    try:
        return ds.dataset(files, format=format_object(file_format, sep))
    except Exception as exc:
        raise DataError(f"data: the {file_format} files could not be opened: {exc}") from None


def hive_keys(path: str) -> dict[str, str]:
    """The ``key=value`` folders of a file's path, in order."""
    parts = os.path.normpath(path).split(os.sep)[:-1]
    return dict(p.split("=", 1) for p in parts if "=" in p and not p.startswith("="))


def hive_base(data: Any, files: list[str]) -> str | None:
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


def open_hive(files: list[str], file_format: str, base: str, sep: str | None = None) -> Any:
    """A dataset of hive-partitioned files, the partition keys as columns (their types
    inferred by pyarrow: integers, else text)."""
    import pyarrow.dataset as ds

    try:
        return ds.dataset(files, format=format_object(file_format, sep), partitioning="hive",
                          partition_base_dir=base)
    except Exception as exc:
        raise DataError(f"data: the {file_format} files under {base!r} could not be opened "
                        f"with their hive partitions: {exc}") from None
