"""The backends of the front door: which inputs go where, and what ``import attnreg`` loads."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd

from attnreg.large import chunked_backend


def test_pandas_fits_import_no_dask_arrow_or_polars() -> None:
    """(pandas itself may import pyarrow: only what attnreg adds counts.)"""
    code = ("import sys, numpy as np, pandas as pd\n"
            "before = set(sys.modules)\n"
            "import attnreg as ar\n"
            "df = pd.DataFrame({'x': np.arange(20.0), 'y': np.arange(20.0) ** 1.5})\n"
            "ar.attnreg('y ~ x', df).summary()\n"
            "ar.attnreg('y ~ x', df, chunk_rows=7).summary()\n"
            "print(','.join(m for m in ('dask', 'distributed', 'pyarrow', 'polars') "
            "if m in set(sys.modules) - before))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""


def test_backends_in_order() -> None:
    frame = pd.DataFrame({"x": [1.0, 2.0]})
    assert chunked_backend(frame, {}) is None
    assert chunked_backend(frame, {"chunk_rows": 1}).name == "local"
    assert chunked_backend("trips/*.parquet", {}).name == "local"


def test_a_dask_frame_goes_to_the_dask_backend() -> None:
    import pytest

    dd = pytest.importorskip("dask.dataframe")
    assert chunked_backend(dd.from_pandas(pd.DataFrame({"x": [1.0, 2.0]}), npartitions=1),
                           {}).name == "dask"
