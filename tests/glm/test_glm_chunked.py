"""GLMs beyond memory: IRLS over a parquet glob, a CSV and a dask DataFrame, one pass per
iteration, equal to the in-memory fit (itself equal to R's glm: tests/glm/test_glm_r.py)."""

from __future__ import annotations

import pickle
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, OptionError, RankDeficiencyWarning
from tests.conftest import RTOL_EXACT

ITER_LINE = re.compile(r"Number of Fisher Scoring iterations: \d+")


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(2729)
    n = 600
    df = pd.DataFrame({"x": rng.uniform(0, 2, n).round(4), "z": rng.normal(size=n).round(4),
                       "g": rng.choice(["a", "b", "c", "d"], n),
                       "pyears": rng.uniform(50, 500, n).round(2),
                       "w": rng.integers(1, 4, n).astype(float)})
    df["yb"] = rng.binomial(1, 1 / (1 + np.exp(0.5 - 0.8 * df.x + 0.3 * (df.g == "b"))))
    df["deaths"] = rng.poisson(df.pyears * np.exp(-4 + 0.6 * df.x + 0.3 * (df.g == "b")))
    df["ygam"] = rng.gamma(3.0, np.exp(0.3 + 0.5 * df.x + 0.1 * df.z) / 3).round(6)
    return df


@pytest.fixture(scope="module")
def glob(frame: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("glm_parquet")
    for i, start in enumerate(range(0, len(frame), 150)):
        frame.iloc[start:start + 150].to_parquet(folder / f"part{i}.parquet")
    return str(folder / "*.parquet")


CASES = {
    "logit": ("yb ~ g + x + z", {"method": "logit"}),
    "probit_weights": ("yb ~ x + z", {"method": "probit", "weights": "w"}),
    "poisson_offset": ("deaths ~ g + x", {"method": "poisson", "offset": "np.log(pyears)"}),
    "poisson_offset_column": ("deaths ~ x", {"method": "poisson", "offset": "lp"}),
    "gamma_log": ("ygam ~ x + z", {"method": "glm", "family": "Gamma", "link": "log"}),
    "gamma_inverse": ("ygam ~ x", {"method": "glm", "family": "Gamma"}),
    "gaussian": ("ygam ~ x + z", {"method": "glm", "family": "gaussian"}),
    "inverse_gaussian": ("ygam ~ x", {"method": "glm", "family": "inverse_gaussian"}),
    "no_intercept": ("deaths ~ 0 + x", {"method": "poisson", "offset": "np.log(pyears)"}),
    "hc0": ("yb ~ g + x", {"method": "logit", "vcov": "HC0"}),
    "hc1_gamma": ("ygam ~ x + z", {"method": "glm", "family": "Gamma", "vcov": "HC1"}),
    "cluster": ("deaths ~ x + z", {"method": "poisson", "vcov": "cluster", "cluster": "g"}),
    "control_r": ("yb ~ x + z", {"method": "probit", "control": "R"}),
}


def _data(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(lp=np.log(frame.pyears))


def assert_same_fit(chunked: Any, memory: Any) -> None:
    """Equal numbers (the same triangular solves, sums in another order) and summaries."""
    assert_allclose(chunked.coef, memory.coef, rtol=RTOL_EXACT, atol=RTOL_EXACT)
    assert_allclose(chunked.std_err, memory.std_err, rtol=RTOL_EXACT)
    assert_allclose(chunked.vcov, memory.vcov, rtol=RTOL_EXACT,
                    atol=RTOL_EXACT * np.nanmax(np.abs(memory.vcov.to_numpy())))
    for name in ("deviance", "null_deviance", "aic", "dispersion"):
        assert_allclose(getattr(chunked, name), getattr(memory, name), rtol=RTOL_EXACT,
                        err_msg=name)
    assert (chunked.nobs, chunked.df_resid, chunked.df_null) == \
        (memory.nobs, memory.df_resid, memory.df_null)
    # R's rule stops at the same step; the continuation to the optimum stops at the rounding
    # floor, which the merged chunk factors reach along another rounding path (a step or two
    # more, the coefficients unchanged), so the printed count may differ
    assert chunked.iterations_r == memory.fit.iter_r
    assert chunked.iterations >= chunked.iterations_r
    same = ITER_LINE.sub("", str(chunked.summary())), ITER_LINE.sub("", str(memory.summary()))
    assert same[0] == same[1]


@pytest.mark.parametrize("case", CASES)
def test_parquet_glob_equals_the_in_memory_fit(case: str, frame: pd.DataFrame,
                                               tmp_path: Path) -> None:
    formula, options = CASES[case]
    data = _data(frame)
    path = tmp_path / "data.parquet"
    data.to_parquet(path)
    memory = ar.attnreg(formula, data, **options)
    chunked = ar.attnreg(formula, str(path), chunk_rows=97, **options)
    assert type(chunked).__name__ == "ChunkedGlmResults"
    assert_same_fit(chunked, memory)


def test_a_glob_of_files_and_a_csv(frame: pd.DataFrame, glob: str, tmp_path: Path) -> None:
    memory = ar.attnreg("yb ~ g + x + z", frame, method="logit")
    assert_same_fit(ar.attnreg("yb ~ g + x + z", glob, method="logit", chunk_rows=64), memory)
    frame.to_csv(tmp_path / "d.csv", index=False)
    assert_same_fit(ar.attnreg("yb ~ g + x + z", str(tmp_path / "d.csv"), method="logit",
                               chunk_rows=128), memory)


def test_dask_frame(frame: pd.DataFrame) -> None:
    dd = pytest.importorskip("dask.dataframe")
    options = {"method": "poisson", "offset": "np.log(pyears)", "vcov": "cluster",
               "cluster": "g"}
    memory = ar.attnreg("deaths ~ g + x", frame, **options)
    lazy = dd.from_pandas(frame, npartitions=5)
    assert_same_fit(ar.attnreg("deaths ~ g + x", lazy, scheduler="sync", **options), memory)


def test_missing_rows_are_dropped_and_counted(frame: pd.DataFrame, tmp_path: Path) -> None:
    holes = frame.copy()
    holes.loc[[3, 300, 599], "x"] = np.nan
    holes.to_parquet(tmp_path / "h.parquet")
    memory = ar.attnreg("yb ~ x + z", holes, method="logit")
    chunked = ar.attnreg("yb ~ x + z", str(tmp_path / "h.parquet"), method="logit",
                         chunk_rows=100)
    assert chunked.n_deleted == 3
    assert "(3 observations deleted due to missingness)" in str(chunked.summary())
    assert_same_fit(chunked, memory)


def test_aliased_columns_as_in_memory(frame: pd.DataFrame, tmp_path: Path) -> None:
    data = frame.assign(x2=2 * frame.x)
    data.to_parquet(tmp_path / "a.parquet")
    with pytest.warns(RankDeficiencyWarning, match="x2"):
        chunked = ar.attnreg("yb ~ x + x2 + z", str(tmp_path / "a.parquet"), method="logit",
                             chunk_rows=100)
    with pytest.warns(RankDeficiencyWarning):
        memory = ar.attnreg("yb ~ x + x2 + z", data, method="logit")
    assert np.isnan(chunked.coef["x2"])
    assert_same_fit(chunked, memory)


def test_predict_and_pickle(frame: pd.DataFrame, glob: str) -> None:
    options = {"method": "poisson", "offset": "np.log(pyears)"}
    memory = ar.attnreg("deaths ~ g + x", frame, **options)
    chunked = ar.attnreg("deaths ~ g + x", glob, chunk_rows=100, **options)
    new = frame.iloc[:7].drop(columns=["deaths"])
    for kind in ("link", "response"):
        assert_allclose(chunked.predict(new, type=kind), memory.predict(new, type=kind),
                        rtol=RTOL_EXACT)
    back = pickle.loads(pickle.dumps(chunked))
    assert str(back.summary()) == str(chunked.summary())
    assert_allclose(back.predict(new), chunked.predict(new), rtol=0)


@pytest.mark.parametrize(("options", "error", "match"), [
    ({"offset": np.zeros(600)}, OptionError, "offset of a chunked GLM must be a column"),
    ({"vcov": "cluster", "cluster": np.zeros(600)}, OptionError, "cluster= of a chunked GLM"),
    ({"family": "binomial", "lam": 1.0}, OptionError, "do not apply"),
    ({"weights": np.ones(600)}, OptionError, "weights of a chunked fit must name a column"),
])
def test_options_checked_before_any_work(glob: str, options: dict[str, Any],
                                          error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        ar.attnreg("yb ~ x", glob, method="glm", **{"family": "binomial", **options})


def test_a_missing_offset_is_named(frame: pd.DataFrame, tmp_path: Path) -> None:
    holes = frame.copy()
    holes.loc[10, "pyears"] = np.nan
    holes.to_parquet(tmp_path / "o.parquet")
    with pytest.raises(DataError, match=r"offset 'np.log\(pyears\)' is missing"):
        ar.attnreg("deaths ~ x", str(tmp_path / "o.parquet"), method="poisson",
                   offset="np.log(pyears)", chunk_rows=100)


def test_a_fit_at_the_boundary_warns_as_in_memory(frame: pd.DataFrame, tmp_path: Path) -> None:
    sep = frame.assign(yb=(frame.x > 1).astype(int))  # complete separation by x
    sep.to_parquet(tmp_path / "s.parquet")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ar.attnreg("yb ~ x", str(tmp_path / "s.parquet"), method="logit", chunk_rows=100,
                   separation="none")  # the check refuses complete separation
    messages = " ".join(str(w.message) for w in caught)
    assert "fitted probabilities numerically 0 or 1 occurred" in messages
