"""``df=np.inf`` (z and chi-squared tests, ``lmtest::coeftest(df = Inf)``) for chunked fits:
the same tests, intervals and labels as the in-memory fit under every streamed covariance."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from tests.conftest import RTOL_EXACT


def frame() -> pd.DataFrame:
    rng = np.random.default_rng(31)
    n = 300
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "g": rng.integers(0, 10, n), "t": np.repeat(np.arange(30), 10)})
    df["y"] = 1 + df.x1 - 0.5 * df.x2 + rng.normal(size=n) * (1 + df.x1.abs())
    return df


COVARIANCES: list[tuple[str, dict[str, Any]]] = [
    ("classical", {}), ("HC1", {}), ("HC3", {}), ("cluster", {"cluster": "g"}),
    ("HAC", {"maxlags": 2}), ("DK", {"time": "t"}),
]


def assert_same_tests(chunked: Any, memory: Any) -> None:
    assert chunked.df_inference == memory.df_inference == np.inf
    assert_allclose(chunked.p_value, memory.p_value, rtol=RTOL_EXACT, atol=1e-300)
    assert_allclose(chunked.conf_int().to_numpy(), memory.conf_int().to_numpy(),
                    rtol=RTOL_EXACT)
    assert chunked.f_test.df2 == np.inf
    assert_allclose([chunked.f_test.statistic, chunked.f_test.p_value],
                    [memory.f_test.statistic, memory.f_test.p_value], rtol=RTOL_EXACT)
    assert chunked.vcov_spec.label() == memory.vcov_spec.label()
    assert chunked.vcov_spec.label().endswith("z and chi-squared tests")


@pytest.mark.parametrize(("kind", "options"), COVARIANCES, ids=[k for k, _ in COVARIANCES])
def test_with_vcov_df_inf_equals_the_in_memory_fit(kind: str, options: dict[str, Any]) -> None:
    df = frame()
    chunked = ar.attnreg("y ~ x1 + x2", df, chunk_rows=70).with_vcov(kind, df=np.inf,
                                                                     **options)
    memory = ar.attnreg("y ~ x1 + x2", df).with_vcov(kind, df=np.inf, **options)
    assert_same_tests(chunked, memory)


@pytest.mark.parametrize("vcov", ["classical", "HC3"])
def test_df_inf_at_fit_time(vcov: str) -> None:
    df = frame()
    chunked = ar.attnreg("y ~ x1 + x2", df, chunk_rows=70, vcov=vcov, df=np.inf)
    memory = ar.attnreg("y ~ x1 + x2", df, vcov=vcov, df=np.inf)
    assert_same_tests(chunked, memory)
    assert "Wald chi-squared: " in str(chunked.summary())


def test_a_dask_frame_takes_df_inf() -> None:
    dd = pytest.importorskip("dask.dataframe")
    df = frame()
    dask_fit = ar.attnreg("y ~ x1 + x2", dd.from_pandas(df, npartitions=3), vcov="cluster",
                          cluster="g", df=np.inf)
    assert_same_tests(dask_fit, ar.attnreg("y ~ x1 + x2", df, vcov="cluster", cluster="g",
                                           df=np.inf))
