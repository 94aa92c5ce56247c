"""The converters of the benchmark downloads: each public file (a delimited table, an Excel
sheet, StatLib's California housing file, inside a tar archive or gzipped) to the benchmark
CSV layout that :mod:`attnreg.datasets` checks against its SHA-256."""

from __future__ import annotations

import gzip
import io
import re
import tarfile
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from attnreg.exceptions import DataError

if TYPE_CHECKING:
    from attnreg.datasets import DatasetInfo

__all__ = ["CONVERTERS", "convert_cal_housing", "convert_excel", "emit_csv", "table_rows", "unpack"]


def table_rows(raw: bytes) -> list[list[str]]:
    """Token rows of a delimited text table; lines whose last token is not a number are headers."""
    out = []
    for line in raw.decode("utf-8-sig").splitlines():
        tokens = [t for t in re.split(r"[,\s]+", line.strip()) if t]
        if not tokens:
            continue
        try:
            float(tokens[-1])
        except ValueError:
            continue
        out.append(tokens)
    return out


def emit_csv(info: DatasetInfo, rows: list[list[str]]) -> bytes:
    """The benchmark CSV text: the header of ``info``'s columns, then ``rows``."""
    lines = [",".join(info.columns), *(",".join(r) for r in rows)]
    return ("\n".join(lines) + "\n").encode()


def convert_excel(raw: bytes, info: DatasetInfo) -> bytes:
    """The first ``len(info.columns)`` columns of an Excel download's first sheet, as CSV."""
    engine = "xlrd" if raw[:4] == b"\xd0\xcf\x11\xe0" else "openpyxl"  # OLE2 (.xls) or zip (.xlsx)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sheet = pd.read_excel(io.BytesIO(raw), engine=engine)  # type: ignore[call-overload]
    except ImportError as exc:
        raise DataError(f"converting the Excel download needs the {engine} package "
                        f"(pip install {engine})") from exc
    sheet = sheet.dropna(how="all").dropna(axis=1, how="all").iloc[:, : len(info.columns)]
    sheet.columns = list(info.columns)
    return sheet.to_csv(index=False, lineterminator="\n").encode()


def convert_cal_housing(raw: bytes, info: DatasetInfo) -> bytes:
    """StatLib's California housing file with scikit-learn's derived features, as CSV."""
    a = np.array(table_rows(raw), dtype=float)
    lon, lat, age, rooms, beds, pop, hh, inc, val = a.T
    cols = (inc, age, rooms / hh, beds / hh, pop, pop / hh, lat, lon, val / 100000)
    return emit_csv(info, [[repr(float(c[i])) for c in cols] for i in range(len(a))])


CONVERTERS: dict[str, Callable[[bytes, DatasetInfo], bytes]] = {
    "table": lambda raw, info: emit_csv(info, table_rows(raw)),
    "first_to_last": lambda raw, info: emit_csv(info, [r[1:] + r[:1] for r in table_rows(raw)]),
    "excel": convert_excel, "cal_housing": convert_cal_housing,
}


def unpack(raw: bytes, member: str | None) -> bytes:
    """A download's bytes: ``member`` of a tar archive, gunzipped, or as they are."""
    if member is not None:
        with tarfile.open(fileobj=io.BytesIO(raw), mode="r:*") as tar:
            f = tar.extractfile(member)  # KeyError when absent
            return b"" if f is None else f.read()
    return gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
