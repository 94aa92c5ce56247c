"""Fixed effects beyond memory, the parts that need the dummy-variable regression's leverages:
HC2/HC3 and confidence/prediction intervals of predictions with the fixed effects, on a
parquet glob and a dask DataFrame, equal to the in-memory fit (itself tested against the
dummy-variable fit) to RTOL_EXACT."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from tests.conftest import RTOL_EXACT

import attnreg as ar
from attnreg.exceptions import OptionError

FORMULA = "y ~ x1 + x2 | fe1 + fe2"
N = 24_000
CHUNK = 5_000


def _panel(seed: int = 2) -> pd.DataFrame:
    """3,000 firms of 8 rows each (no singleton: HC2/HC3 are finite), 12 string levels,
    weights, a region each firm is nested in, a third fixed effect, heteroskedastic errors."""
    rng = np.random.default_rng(seed)
    fe1 = rng.permutation(np.arange(N) % 3_000)
    df = pd.DataFrame({"fe1": fe1, "fe2": rng.choice([f"g{k:02d}" for k in range(12)], N),
                       "fe3": np.arange(N) % 17, "x1": rng.normal(size=N),
                       "x2": rng.normal(size=N) + fe1 % 5, "w": rng.uniform(0.5, 2.0, N)})
    df["region"] = df.fe1 % 40
    df["pos"] = df.x1 > 0  # a cluster column that is no fixed effect
    df["y"] = df.x1 - 2.0 * df.x2 + fe1 % 7 + rng.standard_t(4, size=N) * (1 + df.x1 ** 2)
    return df


@pytest.fixture(scope="module")
def panel() -> pd.DataFrame:
    return _panel()


@pytest.fixture(scope="module")
def glob(tmp_path_factory: pytest.TempPathFactory, panel: pd.DataFrame) -> str:
    folder = tmp_path_factory.mktemp("fe_intervals")
    for k, (lo, hi) in enumerate(itertools.pairwise([0, 7_000, 15_000, N])):
        panel.iloc[lo:hi].to_parquet(folder / f"part-{k}.parquet")
    return str(folder / "*.parquet")


@pytest.fixture(scope="module")
def new(panel: pd.DataFrame) -> pd.DataFrame:
    """Rows of the panel, one with a level not in the fit, one with a missing regressor."""
    out = panel.iloc[100:130].copy()
    out.loc[out.index[0], "fe1"] = 99_999
    out.loc[out.index[1], "x1"] = np.nan
    return out


def _assert_intervals(got: pd.DataFrame, want: pd.DataFrame) -> None:
    assert list(got.columns) == list(want.columns) == ["fit", "lwr", "upr"]
    assert got.index.equals(want.index)
    assert got.isna().equals(want.isna())
    assert int(want["fit"].isna().sum()) == 2  # the unseen level and the missing regressor
    # the fit carries the fixed effects' absolute digits (see test_fe_chunked's fixef test)
    assert_allclose(got["fit"], want["fit"], rtol=0,
                    atol=RTOL_EXACT * float(np.abs(want["fit"]).max()))
    assert_allclose(got["upr"] - got["fit"], want["upr"] - want["fit"], rtol=RTOL_EXACT)
    assert_allclose(got["fit"] - got["lwr"], want["fit"] - want["lwr"], rtol=RTOL_EXACT)


LEVERAGE = [
    pytest.param(FORMULA, {"vcov": "HC2"}, id="HC2"),
    pytest.param(FORMULA, {"vcov": "HC3", "weights": "w"}, id="HC3-wls"),
    pytest.param("y ~ x1 + x2 | fe1 + fe2 + fe3", {"vcov": "HC3"}, id="HC3-three-fe"),
    pytest.param("y ~ x1 + x2 | fe1 + region + fe2", {"vcov": "HC2", "weights": "w"},
                 id="HC2-nested-fe"),
    pytest.param("y ~ x1 + x2 | fe1^fe2", {"vcov": "HC3"}, id="HC3-one-interacted-fe"),
]


@pytest.mark.parametrize(("formula", "options"), LEVERAGE)
def test_hc2_hc3_equal_memory(panel: pd.DataFrame, glob: str, formula: str,
                              options: dict) -> None:
    mem = ar.attnreg(formula, panel, **options)
    chunked = ar.attnreg(formula, glob, chunk_rows=CHUNK, **options)
    assert type(chunked).__name__ == "ChunkedFixedEffectsResults"
    assert chunked.vcov_spec.kind == options["vcov"]
    assert_allclose(chunked.coef, mem.coef, rtol=RTOL_EXACT)
    assert_allclose(chunked.std_err, mem.std_err, rtol=RTOL_EXACT)
    plain = ar.attnreg(formula, glob, chunk_rows=CHUNK, weights=options.get("weights"))
    assert_allclose(plain.with_vcov(options["vcov"]).std_err, mem.std_err, rtol=RTOL_EXACT)


def test_hc3_with_singletons_removed(tmp_path: object) -> None:
    """Singletons removed on pass A's table: the remaining levels have several rows."""
    df = _panel(seed=5).iloc[:9_000]  # 9,000 rows of 3,000 firms: some firms have one row
    df.to_parquet(f"{tmp_path}/one.parquet")
    opts = {"vcov": "HC3", "fixef_rm": "singleton"}
    mem = ar.attnreg(FORMULA, df, **opts)
    chunked = ar.attnreg(FORMULA, f"{tmp_path}/one.parquet", chunk_rows=2_000, **opts)
    assert chunked.absorbed.n_singletons == mem.absorbed.n_singletons > 0
    assert_allclose(chunked.std_err, mem.std_err, rtol=RTOL_EXACT)


INTERVALS = [
    pytest.param(FORMULA, {}, id="classical"),
    pytest.param(FORMULA, {"weights": "w"}, id="wls"),
    pytest.param(FORMULA, {"vcov": "HC1"}, id="HC1"),
    pytest.param(FORMULA, {"vcov": "HC0", "weights": "w"}, id="HC0-wls"),
    pytest.param(FORMULA, {"vcov": "HC2"}, id="HC2"),
    pytest.param(FORMULA, {"vcov": "HC3", "weights": "w"}, id="HC3-wls"),
    pytest.param(FORMULA, {"vcov": "cluster", "cluster": "fe1"}, id="cluster"),
    pytest.param(FORMULA, {"vcov": "cluster", "cluster": "fe1 + fe2", "weights": "w"},
                 id="cluster-2way-wls"),
    pytest.param(FORMULA, {"vcov": "cluster", "cluster": "fe1 + fe2", "ssc": "dummy"},
                 id="cluster-2way-dummy"),
    pytest.param(FORMULA, {"vcov": "cluster", "cluster": "region"}, id="fe1-nested-in-cluster"),
    pytest.param(FORMULA, {"vcov": "cluster", "cluster": "region + fe2", "type": "HC0"},
                 id="cluster-2way-HC0"),
    pytest.param(FORMULA, {"vcov": "cluster", "cluster": "pos + fe2"}, id="cluster-not-a-fe"),
    pytest.param("y ~ x1 + x2 | fe1 + fe2 + fe3", {"vcov": "cluster", "cluster": "fe3"},
                 id="three-fe"),
    pytest.param("y ~ x1 + x2 | fe1 + region + fe2", {"vcov": "HC1"}, id="nested-fe"),
    pytest.param("y ~ x1 + x2 | fe1", {"weights": "w"}, id="one-fe"),
]


@pytest.mark.parametrize(("formula", "options"), INTERVALS)
def test_intervals_equal_memory(panel: pd.DataFrame, glob: str, new: pd.DataFrame,
                                formula: str, options: dict) -> None:
    mem = ar.attnreg(formula, panel, **options)
    chunked = ar.attnreg(formula, glob, chunk_rows=CHUNK, **options)
    for interval in ("confidence", "prediction"):
        with pytest.warns(UserWarning, match="fixed effect 'fe1' has 1 level\\(s\\) not in"):
            want = mem.predict(new, interval=interval, level=0.9)
        with pytest.warns(UserWarning, match="fixed effect 'fe1' has 1 level\\(s\\) not in"):
            got = chunked.predict(new, interval=interval, level=0.9)
        _assert_intervals(got, want)


def test_intervals_on_dask(panel: pd.DataFrame, glob: str, new: pd.DataFrame) -> None:
    dd = pytest.importorskip("dask.dataframe")
    opts = {"vcov": "cluster", "cluster": "fe1 + fe2", "weights": "w"}
    kept = new.iloc[2:]  # every level seen
    want = ar.attnreg(FORMULA, panel, **opts).predict(kept, interval="confidence")
    for ddf in (dd.read_parquet(glob), dd.from_pandas(panel, npartitions=4)):
        fit = ar.attnreg(FORMULA, ddf, scheduler="sync", **opts)
        got = fit.predict(kept, interval="confidence")
        assert_allclose(got["upr"] - got["fit"], want["upr"] - want["fit"], rtol=RTOL_EXACT)
        hc3 = fit.with_vcov("HC3")
        assert_allclose(hc3.std_err, ar.attnreg(FORMULA, panel, weights="w",
                                                vcov="HC3").std_err, rtol=RTOL_EXACT)


def test_robust_intervals_of_an_unpickled_fit_read_the_data_again(
        panel: pd.DataFrame, new: pd.DataFrame) -> None:
    kept = new.iloc[2:]
    opts = {"vcov": "cluster", "cluster": "fe1"}
    want = ar.attnreg(FORMULA, panel, **opts).predict(kept, interval="prediction")
    back = pickle.loads(pickle.dumps(ar.attnreg(FORMULA, panel, chunk_rows=CHUNK, **opts)))
    with pytest.raises(OptionError, match=r"under the cluster covariance reads the rows again, "
                                          r"but this fit does not keep its source .*: pass "
                                          r"data="):
        back.predict(kept, interval="prediction")
    got = back.predict(kept, interval="prediction", data=panel)
    assert_allclose(got["upr"] - got["fit"], want["upr"] - want["fit"], rtol=RTOL_EXACT)
    classical = pickle.loads(pickle.dumps(ar.attnreg(FORMULA, panel, chunk_rows=CHUNK)))
    assert_allclose(classical.predict(kept, interval="confidence")["upr"],
                    ar.attnreg(FORMULA, panel).predict(kept, interval="confidence")["upr"],
                    rtol=RTOL_EXACT)  # classical: from the fit's tables, no data needed


def test_interval_refusals(glob: str, new: pd.DataFrame) -> None:
    fit = ar.attnreg(FORMULA, glob, chunk_rows=CHUNK)
    kept = new.iloc[2:]
    with pytest.raises(OptionError, match="intervals of predictions with fixed effects are "
                                          "computed under the classical, HC0-HC3 and cluster "
                                          "\\(HC0, HC1\\) covariances, however the fit uses "
                                          "'HAC': call with_vcov\\(\\)"):
        fit.with_vcov("HAC", maxlags=2).predict(kept, interval="confidence")
    with pytest.raises(OptionError, match="interval must be 'none', 'confidence' or "
                                          "'prediction', however: interval='both'"):
        fit.predict(kept, interval="both")
    with pytest.raises(OptionError, match="unseen must be 'nan' or 'error'"):
        fit.predict(kept, interval="confidence", unseen="drop")
