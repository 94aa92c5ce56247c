"""A logical response chunk by chunk (a parquet file with a bool column) equals the fit in
memory, which is the 0/1 regression (tests/formula/test_logical_response.py)."""

from __future__ import annotations

import numpy as np
import pytest

import attnreg as ar
from tests.conftest import RTOL_EXACT
from tests.formula.test_logical_response import logical_data

DATA = logical_data()


@pytest.mark.parametrize("lhs", ["I(y > 0)", "b"])
def test_logical_response_chunked_equals_in_memory(lhs, tmp_path) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pandas(DATA, preserve_index=False), path, row_group_size=70)
    mem = ar.attnreg("y01 ~ x + z", DATA)
    fit = ar.attnreg(f"{lhs} ~ x + z", str(path), chunk_rows=70)
    for a, b in ((fit.coef, mem.coef), (fit.std_err, mem.std_err)):
        np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=RTOL_EXACT, atol=0)
    assert fit.nobs == mem.nobs
    assert fit.spec.response_name == lhs and lhs in str(fit.summary())


def test_logical_response_on_dask_equals_in_memory() -> None:
    dd = pytest.importorskip("dask.dataframe")
    mem = ar.attnreg("y01 ~ x + z", DATA, method="ols")
    fit = ar.attnreg("I(y > 0) ~ x + z", dd.from_pandas(DATA, npartitions=3))
    np.testing.assert_allclose(fit.coef.to_numpy(), mem.coef.to_numpy(), rtol=RTOL_EXACT, atol=0)
    assert fit.spec.response_name == "I(y > 0)"
