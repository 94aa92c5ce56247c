"""tidy(), glance() and etable() of chunked and dask fits: the in-memory fit's frames.

The chunked fit of the same rows equals the in-memory fit to RTOL_EXACT (1e-10) under the
classical covariance (tests/large/test_chunked.py); robust covariances to the bounds used there.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.large.results import ChunkedResults
from tests.conftest import RTOL_EXACT

#: robust covariances: the meat is summed in another order (test_chunked.py's bound on p)
RTOL_ROBUST = 1e-8
FORMULA = "y ~ x + np.log(z) + C(g)"


def _data(n: int = 3000, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.uniform(1, 4, n),
                       "g": rng.choice(["a", "b", "c"], n), "firm": rng.integers(0, 30, n),
                       "w": rng.uniform(0.5, 2.0, n)})
    df["y"] = 1 + 0.3 * df.x - np.log(df.z) + (df.g == "b") + rng.normal(size=n)
    df.loc[[7, 1500], "x"] = np.nan
    return df


DATA = _data()


def _frames_equal(a: pd.DataFrame, b: pd.DataFrame, rtol: float) -> None:
    assert list(a.columns) == list(b.columns)
    for col in a.columns:
        if not pd.api.types.is_numeric_dtype(a[col]):
            assert a[col].tolist() == b[col].tolist()
        else:
            np.testing.assert_allclose(a[col].to_numpy(dtype=float), b[col].to_numpy(dtype=float),
                                       rtol=rtol, atol=0)


CASES = [("ols", {}, None, RTOL_EXACT),
         ("ols", {"weights": "w"}, None, RTOL_EXACT),
         ("ridge", {"lam": 0.5}, None, RTOL_EXACT),
         ("ols", {}, "HC1", RTOL_ROBUST),
         ("ols", {}, {"kind": "cluster", "cluster": "firm"}, RTOL_ROBUST)]


@pytest.mark.parametrize(("method", "opts", "vcov", "rtol"), CASES, ids=lambda v: str(v))
def test_chunked_tidy_and_glance_equal_the_in_memory_ones(method, opts, vcov, rtol) -> None:
    mem = ar.attnreg(FORMULA, DATA, method=method, **opts)
    fit = ar.attnreg(FORMULA, DATA, method=method, chunk_rows=700, **opts)
    if vcov is not None:
        args = {"kind": vcov} if isinstance(vcov, str) else vcov
        mem, fit = mem.with_vcov(**args), fit.with_vcov(**args)
    assert isinstance(fit, ChunkedResults)
    _frames_equal(fit.tidy(conf_int=True, conf_level=0.9),
                  mem.tidy(conf_int=True, conf_level=0.9), rtol)
    g, gm = fit.glance(), mem.glance()
    assert g["nobs"].tolist() == gm["nobs"].tolist() == [2998]
    _frames_equal(g, gm, rtol)


def test_parquet_fit_tidy_glance_and_etable_column(tmp_path) -> None:
    pytest.importorskip("pyarrow")
    for i in range(3):
        DATA.iloc[i * 1000:(i + 1) * 1000].to_parquet(tmp_path / f"p{i}.parquet")
    mem = ar.attnreg(FORMULA, DATA, weights="w")
    fit = ar.attnreg(FORMULA, str(tmp_path / "p*.parquet"), weights="w")
    _frames_equal(fit.tidy(), mem.tidy(), RTOL_EXACT)
    _frames_equal(fit.glance(), mem.glance(), RTOL_EXACT)
    table = ar.etable([mem, fit], stats=["nobs", "r2", "adj_r2", "sigma", "f", "aic", "bic"])
    cells = table.table
    assert cells["(1)"].tolist() == cells["(2)"].tolist()  # 3 decimals of equal numbers
    assert cells.loc[("Dependent var.", "header")].tolist() == ["y", "y"]
    assert cells.loc[("Method", "header")].tolist() == ["WLS", "WLS"]
    assert cells.loc[("Observations", "statistic")].tolist() == ["2998", "2998"]
    hc1 = ar.etable([mem, fit], se="HC1")  # with_vcov of the chunked fit re-reads the files
    assert hc1.table["(1)"].tolist() == hc1.table["(2)"].tolist()
    assert hc1.models["covariance"].tolist() == ["HC1", "HC1"]


def test_dask_fit_tidy_glance_and_etable(client) -> None:
    dd = pytest.importorskip("dask.dataframe")
    mem = ar.attnreg(FORMULA, DATA).with_vcov("cluster", cluster="firm")
    fit = ar.attnreg(FORMULA, dd.from_pandas(DATA, npartitions=4), client=client,
                     vcov="cluster", cluster="firm")
    assert isinstance(fit, ChunkedResults)
    _frames_equal(fit.tidy(conf_int=True), mem.tidy(conf_int=True), RTOL_ROBUST)
    _frames_equal(fit.glance(), mem.glance(), RTOL_ROBUST)
    table = ar.etable([mem, fit], stats=["nobs", "r2", "clusters"])
    assert table.table["(1)"].tolist() == table.table["(2)"].tolist()
    assert table.table.loc[("Clusters", "statistic")].tolist() == ["30", "30"]
    assert table.models["covariance"].tolist() == ["cluster (firm)", "cluster (firm)"]
