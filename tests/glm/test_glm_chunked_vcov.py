"""A chunked GLM's covariances come from the shared registry, fed by its final pass: every
covariance a pass can accumulate equals the in-memory fit's (itself equal to sandwich's on glm:
tests/glm/test_glm_vcov_r.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError
from tests.conftest import RTOL_EXACT

ITER_LINE = re.compile(r"Number of Fisher Scoring iterations: \d+")


@pytest.fixture(scope="module")
def parquet(tmp_path_factory: pytest.TempPathFactory) -> tuple[pd.DataFrame, str]:
    rng = np.random.default_rng(2731)
    n = 500
    df = pd.DataFrame({"x": rng.uniform(0, 2, n).round(4), "z": rng.normal(size=n).round(4),
                       "firm": rng.integers(0, 15, n), "year": rng.integers(0, 9, n),
                       "w": rng.integers(1, 4, n).astype(float)})
    df["yb"] = rng.binomial(1, 1 / (1 + np.exp(0.5 - 0.8 * df.x + 0.3 * df.z)))
    df["yc"] = rng.poisson(np.exp(0.2 + 0.5 * df.x - 0.2 * df.z))
    path = tmp_path_factory.mktemp("glm_vcov") / "data.parquet"
    df.to_parquet(path)
    return df, str(path)


CASES: dict[str, tuple[str, dict[str, Any]]] = {
    "hc2_logit": ("yb ~ x + z", {"method": "logit", "vcov": "HC2"}),
    "hc3_poisson_weights": ("yc ~ x + z", {"method": "poisson", "vcov": "HC3", "weights": "w"}),
    "cluster_two_way": ("yc ~ x + z", {"method": "poisson", "vcov": "cluster",
                                       "cluster": "firm + year"}),
    "cluster_hc0_no_fix": ("yb ~ x", {"method": "logit", "vcov": "cluster",
                                      "cluster": ["firm", "year"], "type": "HC0",
                                      "fix": False}),
    "newey_west": ("yc ~ x + z", {"method": "poisson", "vcov": "HAC", "maxlags": 3}),
    "newey_west_adjusted": ("yb ~ x + z", {"method": "logit", "vcov": "HAC", "maxlags": 2,
                                           "adjust": True}),
    "driscoll_kraay": ("yc ~ x", {"method": "poisson", "vcov": "DK", "time": "year"}),
    "gaussian_hc3": ("yc ~ x + z", {"method": "glm", "family": "gaussian", "vcov": "HC3"}),
}


@pytest.mark.parametrize("case", CASES)
def test_chunked_equals_in_memory(case: str, parquet: tuple[pd.DataFrame, str]) -> None:
    df, path = parquet
    formula, options = CASES[case]
    memory = ar.attnreg(formula, df, **options)
    chunked = ar.attnreg(formula, path, chunk_rows=97, **options)  # lags cross the chunks
    assert type(chunked).__name__ == "ChunkedGlmResults"
    assert_allclose(chunked.vcov, memory.vcov, rtol=RTOL_EXACT,
                    atol=RTOL_EXACT * np.abs(memory.vcov.to_numpy()).max())
    assert_allclose(chunked.std_err, memory.std_err, rtol=RTOL_EXACT)
    assert chunked.robust == memory.robust and chunked.z_tests
    same = ITER_LINE.sub("", str(chunked.summary())), ITER_LINE.sub("", str(memory.summary()))
    assert same[0] == same[1]


@pytest.mark.parametrize(("options", "match"), [
    ({"vcov": "HAC", "kernel": "qs"}, r"a chunked fit's HAC is Bartlett with fixed maxlags"),
    ({"vcov": "cluster", "cluster": "firm", "type": "CR2"},
     r"type='CR2' needs each cluster's block of the hat matrix, which a chunked fit does "
     r"not form"),
    ({"vcov": "HC4"}, r"vcov 'HC4' is not computed for a chunked fit"),
])
def test_covariances_that_need_every_row_are_refused_before_any_pass(
        options: dict[str, Any], match: str, tmp_path: Path) -> None:
    with pytest.raises(OptionError, match=match):  # the path does not exist: no pass ran
        ar.attnreg("yb ~ x", str(tmp_path / "none*.parquet"), method="logit", **options)
