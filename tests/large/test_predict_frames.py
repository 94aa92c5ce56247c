"""predict() of an in-memory fit on dask and polars frames equals predict() on pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import DataError, FormulaError
from tests.conftest import RTOL_EXACT

FORMULA = "y ~ x + np.log(z) + C(g)"


def _data(n: int = 2000, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.uniform(1, 3, n),
                       "g": rng.choice(["a", "b", "c"], n), "other": rng.normal(size=n)})
    df["y"] = 2 + df.x - np.log(df.z) + (df.g == "c") + rng.normal(size=n)
    return df


DATA = _data()
FIT = ar.attnreg(FORMULA, DATA)
NEW = _data(500, seed=12).drop(columns="y")
NEW.loc[[3, 77], "x"] = np.nan  # rows with a missing value predict NaN / null
NEW.loc[[5], "g"] = None


def _same(got: np.ndarray, want: np.ndarray) -> None:
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float),
                               rtol=RTOL_EXACT, atol=0)


@pytest.mark.parametrize("lazy", [False, True])
def test_polars_newdata_gives_a_polars_series(lazy) -> None:
    pl = pytest.importorskip("polars")
    frame = pl.from_pandas(NEW)
    frame = frame.lazy() if lazy else frame
    got = FIT.predict(frame)
    want = FIT.predict(NEW)
    assert isinstance(got, pl.Series) and got.name == "fit" and got.len() == 500
    assert got.null_count() == 3  # the rows pandas predicts as NaN
    _same(got.to_numpy(), want.to_numpy())


def test_polars_newdata_with_an_interval_gives_a_polars_frame() -> None:
    pl = pytest.importorskip("polars")
    got = FIT.predict(pl.from_pandas(NEW), interval="prediction", level=0.9)
    want = FIT.predict(NEW, interval="prediction", level=0.9)
    assert isinstance(got, pl.DataFrame) and got.columns == ["fit", "lwr", "upr"]
    for col in ("fit", "lwr", "upr"):
        _same(got[col].to_numpy(), want[col].to_numpy())


def test_polars_newdata_lacking_a_column_is_named() -> None:
    pl = pytest.importorskip("polars")
    with pytest.raises(FormulaError, match=r"'z'"):
        FIT.predict(pl.from_pandas(NEW.drop(columns="z")))


def test_dask_newdata_gives_a_lazy_dask_series(client) -> None:
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(NEW, npartitions=3)
    lazy = FIT.predict(ddf)
    assert isinstance(lazy, dd.Series)
    got = lazy.compute()
    want = FIT.predict(NEW)
    assert got.index.equals(want.index) and got.name == "fit"
    _same(got.to_numpy(), want.to_numpy())
    band = FIT.predict(ddf, interval="confidence").compute()
    want_band = FIT.predict(NEW, interval="confidence")
    assert list(band.columns) == ["fit", "lwr", "upr"]
    _same(band.to_numpy(), want_band.to_numpy())


def test_an_unsupported_newdata_names_its_full_type() -> None:
    pa = pytest.importorskip("pyarrow")
    with pytest.raises(DataError, match=r"newdata must be a pandas DataFrame or a dict of "
                                        r"columns, however: type\(newdata\) is pyarrow\.lib\.Table"):
        FIT.predict(pa.Table.from_pandas(NEW))
