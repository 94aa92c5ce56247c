"""The streamed attention view of chunked and dask fits equals the in-memory view."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.large.dask_attention import streamed_attention
from attnreg.large.fit import fit_chunked

RTOL = 1e-10
COLUMNS = ["prediction", "weight_sum", "negative_mass", "leverage", "effective_neighbours",
           "entropy"]


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 700
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "g": rng.choice(["a", "b", "c"], n), "w": rng.uniform(0.5, 2, n)},
                      index=[f"r{i}" for i in range(n)])
    df["y"] = 1 + df.x1 - 0.5 * df.x2 + (df.g == "c") + rng.normal(size=n)
    return df


CASES = [("ols", {}), ("ols", {"weights": "w"}), ("ridge", {"lam": 3.0}), ("pcr", {"k": 2})]


def _check(att, mem, k=10) -> None:
    got, want = att.top_k(k), mem.top_k(k)
    assert got["train_label"].tolist() == want["train_label"].tolist()
    for col in ("weight", "y", "contribution"):
        np.testing.assert_allclose(got[col], want[col], rtol=RTOL)
    d, e = att.diagnostics, mem.diagnostics
    np.testing.assert_allclose(d[COLUMNS].to_numpy(), e[COLUMNS].to_numpy(), rtol=1e-9)


@pytest.mark.parametrize(("method", "opts"), CASES)
def test_local_chunks_match_the_in_memory_view(frame, method, opts) -> None:
    queries = frame.iloc[[0, 10, 500]]
    fit = fit_chunked("y ~ x1 + x2 + C(g)", frame, method, chunk_rows=128, **opts)
    mem = ar.attnreg("y ~ x1 + x2 + C(g)", frame, method, **opts).attention(queries)
    _check(streamed_attention(fit, queries), mem)


def test_self_weight_is_the_hat_value_of_a_training_row(frame) -> None:
    fit = fit_chunked("y ~ x1 + x2 + C(g)", frame, chunk_rows=200)
    mem = ar.attnreg("y ~ x1 + x2 + C(g)", frame)
    att = streamed_attention(fit, frame.iloc[[3, 4]])
    np.testing.assert_allclose(att.diagnostics["self_weight"], mem.hat_values.iloc[[3, 4]],
                               rtol=RTOL)


def test_signed_ranking_and_errors(frame) -> None:
    fit = fit_chunked("y ~ x1 + C(g)", frame, chunk_rows=300)
    mem = ar.attnreg("y ~ x1 + C(g)", frame).attention(frame.iloc[[1]])
    att = streamed_attention(fit, frame.iloc[[1]])
    got, want = att.top_k(4, by="weight"), mem.top_k(4, by="weight")
    assert got["train_label"].tolist() == want["train_label"].tolist()
    assert (got["weight"] > 0).all()
    with pytest.raises(OptionError, match="by must be"):
        att.top_k(3, by="size")
    with pytest.raises(OptionError, match="k must be"):
        att.top_k(0)


def test_dask_partitions_match_the_in_memory_view(frame) -> None:
    dd = pytest.importorskip("dask.dataframe")
    from attnreg.large.dask import fit_dask

    queries = frame.iloc[[2, 600]]
    fit = fit_dask("y ~ x1 + x2 + C(g)", dd.from_pandas(frame, npartitions=5),
                   weights="w", scheduler="sync")
    mem = ar.attnreg("y ~ x1 + x2 + C(g)", frame, weights="w").attention(queries)
    _check(streamed_attention(fit, queries), mem)
