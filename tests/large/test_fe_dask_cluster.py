"""A fixed-effects formula on a dask DataFrame fitted on a LocalCluster of worker processes
(the absorbed spec and pass A's tables travel to the workers and back pickled) equals the
in-memory fit to RTOL_EXACT."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from tests.conftest import RTOL_EXACT
from numpy.testing import assert_allclose

import attnreg as ar


def test_fixed_effects_on_worker_processes(client: object, tmp_path: object) -> None:
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(4)
    n = 6_000
    df = pd.DataFrame({"firm": rng.integers(0, 1_500, n), "year": rng.integers(0, 9, n),
                       "x": rng.normal(size=n), "w": rng.uniform(0.5, 2.0, n)})
    df["y"] = 2.0 * df.x + df.firm % 5 + rng.normal(size=n)
    df.loc[7, "year"] = np.nan
    for k in range(3):
        df.iloc[k * 2_000:(k + 1) * 2_000].to_parquet(f"{tmp_path}/p{k}.parquet")
    opts = {"weights": "w", "vcov": "cluster", "cluster": "firm + year"}
    mem = ar.attnreg("y ~ x | firm + year", df, **opts)
    for ddf in (dd.read_parquet(f"{tmp_path}/*.parquet"), dd.from_pandas(df, npartitions=4)):
        fit = ar.attnreg("y ~ x | firm + year", ddf, client=client, **opts)
        assert fit.nobs == mem.nobs == n - 1
        assert fit.df_resid == mem.df_resid
        assert_allclose(fit.coef, mem.coef, rtol=RTOL_EXACT)
        assert_allclose(fit.std_err, mem.std_err, rtol=RTOL_EXACT)
        assert_allclose(fit.within_r_squared, mem.within_r_squared, rtol=RTOL_EXACT)


def test_fixed_effects_leverage_and_intervals_on_worker_processes(client: object) -> None:
    """HC3 (each combination's leverage travels with the spec) and cluster-robust prediction
    intervals (the interval pass's partials travel back) on worker processes."""
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(5)
    n = 4_000
    df = pd.DataFrame({"firm": np.arange(n) % 500, "year": rng.integers(0, 9, n),
                       "x": rng.normal(size=n)})
    df["y"] = 2.0 * df.x + df.firm % 5 + rng.normal(size=n) * (1 + df.x ** 2)
    new = df.iloc[:20]
    ddf = dd.from_pandas(df, npartitions=4)
    mem = ar.attnreg("y ~ x | firm + year", df, vcov="HC3")
    fit = ar.attnreg("y ~ x | firm + year", ddf, client=client, vcov="HC3")
    assert_allclose(fit.std_err, mem.std_err, rtol=RTOL_EXACT)
    for got, want in ((fit, mem), (fit.with_vcov("cluster", cluster="firm"),
                                   mem.with_vcov("cluster", cluster="firm"))):
        a = got.predict(new, interval="prediction")
        b = want.predict(new, interval="prediction")
        assert_allclose(a["upr"] - a["fit"], b["upr"] - b["fit"], rtol=RTOL_EXACT)
