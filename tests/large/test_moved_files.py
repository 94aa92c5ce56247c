"""A pickled fit of parquet files loads after its files are moved; only what reads the rows
again fails, naming the missing file and what needs it."""

from __future__ import annotations

import pickle
import shutil

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import DataError
from tests.conftest import RTOL_EXACT

pytest.importorskip("pyarrow")

#: a robust covariance of two fits of the same rows (tests/large/test_chunked.py's bound)
RTOL_ROBUST = 1e-9


def _write(folder, n: int = 2000) -> pd.DataFrame:
    rng = np.random.default_rng(8)
    df = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(list("abc"), n)})
    df["y"] = 1 + df.x + (df.g == "c") + rng.normal(size=n)
    folder.mkdir()
    for i in range(4):
        df.iloc[i * 500:(i + 1) * 500].to_parquet(folder / f"p{i}.parquet")
    return df


@pytest.mark.parametrize("residuals", [None, True])
def test_a_pickled_parquet_fit_loads_after_its_files_moved(tmp_path, residuals) -> None:
    df = _write(tmp_path / "old")
    fit = ar.attnreg("y ~ x + C(g)", str(tmp_path / "old" / "*.parquet"), residuals=residuals)
    blob = pickle.dumps(fit)
    shutil.move(tmp_path / "old", tmp_path / "new")

    back = pickle.loads(blob)  # loads: nothing is read
    np.testing.assert_allclose(back.std_err, fit.std_err, rtol=RTOL_EXACT)
    mem = ar.attnreg("y ~ x + C(g)", df)
    np.testing.assert_allclose(back.tidy()["std.error"], mem.tidy()["std.error"],
                               rtol=RTOL_EXACT)
    np.testing.assert_allclose(back.predict(df.head(5)), mem.predict(df.head(5)),
                               rtol=RTOL_EXACT)
    text = str(back.summary())
    if residuals:  # computed during the fit: kept in the pickle
        assert "Residuals:" in text
    else:
        assert "the rows are no longer available" in text
    with pytest.raises(DataError, match=r"file '.*old.p0\.parquet' is not there any more "
                                        r"\(4 of the 4 files.*with_vcov\(\).*pass data="):
        back.with_vcov("HC1")
    with pytest.raises(DataError, match=r"p0\.parquet' is not there any more"):
        back.attention(df.head(1)).top_k(1)  # the pass runs when asked for
    moved = back.with_vcov("HC1", data=str(tmp_path / "new" / "*.parquet"))
    np.testing.assert_allclose(moved.std_err, mem.with_vcov("HC1").std_err, rtol=RTOL_ROBUST)
