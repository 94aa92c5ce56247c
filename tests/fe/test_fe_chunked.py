"""Fixed effects beyond memory: ``y ~ x | fe1 + fe2`` on parquet and CSV globs, arrow, polars
and dask equals the in-memory fixed-effects fit (itself tested against the dummy-variable
fit, pyfixest and R) to RTOL_EXACT: coefficients, every covariance, degrees of freedom,
R², within R², the summary's fixed-effects lines, tidy/glance/etable."""

from __future__ import annotations

import itertools
import pickle

import numpy as np
import pandas as pd
import pytest
from tests.conftest import RTOL_EXACT
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, FormulaError, OptionError
from attnreg.fe.report import fe_lines

FORMULA = "y ~ x1 + x2 | fe1 + fe2"
N_FE1 = 10_500  # at least 10,000 levels in one fixed effect
CHUNK = 7_000


def _panel(n: int = 40_000, seed: int = 0) -> pd.DataFrame:
    """Two fixed effects (10,500 uint64 ids, 12 string levels), weights, one singleton level
    and a missing value in each fixed-effect column."""
    rng = np.random.default_rng(seed)
    fe1 = rng.integers(0, N_FE1, n).astype(np.uint64) + np.uint64(2**63)  # ids past int64
    fe2 = rng.choice([f"g{k:02d}" for k in range(12)], n).astype(object)
    df = pd.DataFrame({"fe1": fe1, "fe2": fe2, "x1": rng.normal(size=n),
                       "x2": rng.normal(size=n) + (fe1 % np.uint64(5)).astype(float),
                       "w": rng.uniform(0.5, 2.0, n)})
    df["y"] = (df.x1 - 2.0 * df.x2 + (fe1 % np.uint64(7)).astype(float)
               + rng.normal(size=n))
    df.loc[3, "fe1"] = np.uint64(7)  # a level of its own: a singleton
    df.loc[11, "fe2"] = None  # missing fixed effects: left out and counted
    df["region"] = (df["fe1"] % np.uint64(40)).astype(np.int64)  # fe1 is nested in it
    df["fe1f"] = df["fe1"].astype(float)
    df.loc[17, "fe1f"] = np.nan
    return df


@pytest.fixture(scope="module")
def panel() -> pd.DataFrame:
    return _panel()


@pytest.fixture(scope="module")
def glob(tmp_path_factory: pytest.TempPathFactory, panel: pd.DataFrame) -> str:
    folder = tmp_path_factory.mktemp("fe_parquet")
    bounds = [0, 9_000, 21_000, 30_000, len(panel)]
    for k, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        panel.iloc[lo:hi].to_parquet(folder / f"part-{k}.parquet")
    return str(folder / "*.parquet")


def _assert_same(chunked: object, mem: object) -> None:
    assert type(chunked).__name__ == "ChunkedFixedEffectsResults"
    assert chunked.names == mem.names
    assert_allclose(chunked.coef, mem.coef, rtol=RTOL_EXACT)
    assert_allclose(chunked.std_err, mem.std_err, rtol=RTOL_EXACT)
    assert chunked.nobs == mem.nobs
    assert chunked.df_resid == mem.df_resid
    assert chunked.df_inference == mem.df_inference
    for name in ("r_squared", "adj_r_squared", "within_r_squared", "adj_within_r_squared",
                 "sigma"):
        assert_allclose(getattr(chunked, name), getattr(mem, name), rtol=RTOL_EXACT,
                        err_msg=name)
    assert_allclose(chunked.f_test.statistic, mem.f_test.statistic, rtol=RTOL_EXACT)


VCOVS = [
    pytest.param({}, id="classical"),
    pytest.param({"weights": "w"}, id="wls"),
    pytest.param({"vcov": "HC1"}, id="HC1"),
    pytest.param({"vcov": "HC0", "weights": "w"}, id="HC0-wls"),
    pytest.param({"vcov": "cluster", "cluster": "fe1"}, id="cluster-fe1"),
    pytest.param({"vcov": "cluster", "cluster": "fe2", "weights": "w"}, id="cluster-fe2-wls"),
    pytest.param({"vcov": "cluster", "cluster": "fe1 + fe2"}, id="cluster-2way"),
    pytest.param({"vcov": "cluster", "cluster": "fe1 + fe2", "ssc": "dummy"},
                 id="cluster-2way-dummy"),
    pytest.param({"vcov": "cluster", "cluster": "fe1", "fixef_rm": "singleton"},
                 id="singletons-removed"),
    pytest.param({"vcov": "cluster", "cluster": "fe2", "subset": "x1 > -1.0"}, id="subset"),
    pytest.param({"vcov": "cluster", "cluster": "region"}, id="fe1-nested-in-cluster"),
    pytest.param({"vcov": "cluster", "cluster": "region + fe2", "weights": "w"},
                 id="nested-2way"),
]


@pytest.mark.parametrize("options", VCOVS)
def test_parquet_glob_equals_memory(panel: pd.DataFrame, glob: str, options: dict) -> None:
    mem = ar.attnreg(FORMULA, panel, **options)
    chunked = ar.attnreg(FORMULA, glob, chunk_rows=CHUNK, **options)
    _assert_same(chunked, mem)


def test_fixed_effect_lines_and_reports(panel: pd.DataFrame, glob: str) -> None:
    opts = {"vcov": "cluster", "cluster": "fe1", "fixef_rm": "singleton"}
    mem = ar.attnreg(FORMULA, panel, **opts)
    chunked = ar.attnreg(FORMULA, glob, chunk_rows=CHUNK, **opts)
    assert fe_lines(chunked) == fe_lines(mem)  # type: ignore[arg-type]
    assert chunked.absorbed.n_singletons == mem.absorbed.n_singletons > 0
    assert f"Singletons removed: {mem.absorbed.n_singletons:,} row(s)" in str(chunked.summary())
    assert "Rows without a fixed effect, left out: fe2 1" in str(chunked.summary())
    assert chunked.absorbed.fe.n_levels == mem.absorbed.fe.n_levels
    a, b = chunked.tidy(), mem.tidy()
    assert list(a["term"]) == list(b["term"])
    num = ["estimate", "std.error", "statistic", "p.value"]
    assert_allclose(a[num].to_numpy(float), b[num].to_numpy(float), rtol=RTOL_EXACT)
    ga, gb = chunked.glance(), mem.glance()
    for col in ("r.squared", "adj.r.squared", "within.r.squared", "adj.within.r.squared",
                "sigma", "nobs", "df.residual"):
        assert_allclose(ga[col].to_numpy(float), gb[col].to_numpy(float), rtol=RTOL_EXACT,
                        err_msg=col)
    table = ar.etable([chunked, mem]).table
    assert list(table.loc[("fe1 FE", "fixed_effects")]) == ["Yes", "Yes"]
    assert table.loc[("Within R2", "statistic")].iloc[0] == \
        table.loc[("Within R2", "statistic")].iloc[1]


def test_with_vcov_and_pickle(panel: pd.DataFrame, glob: str) -> None:
    mem = ar.attnreg(FORMULA, panel, weights="w")
    chunked = ar.attnreg(FORMULA, glob, chunk_rows=CHUNK, weights="w")
    for kind, opts in (("cluster", {"cluster": "fe2 + fe1"}), ("HC1", {})):
        assert_allclose(chunked.with_vcov(kind, **opts).std_err,
                        mem.with_vcov(kind, **opts).std_err, rtol=RTOL_EXACT)
    assert chunked.absorbed.fe.n_levels == mem.absorbed.fe.n_levels
    assert chunked.absorbed.fe.n_levels[0] >= 10_000
    back = pickle.loads(pickle.dumps(chunked.with_vcov("cluster", cluster="fe1")))
    assert_allclose(back.std_err, mem.with_vcov("cluster", cluster="fe1").std_err,
                    rtol=RTOL_EXACT)
    assert back.fixed_effect_names == ("fe1", "fe2")


def test_nan_in_float_fixed_effect_and_interaction(panel: pd.DataFrame, glob: str) -> None:
    formula = "y ~ x1 + x2 | fe1f + fe2^fe1f"
    mem = ar.attnreg(formula, panel, vcov="cluster", cluster="fe2")
    chunked = ar.attnreg(formula, glob, chunk_rows=CHUNK, vcov="cluster", cluster="fe2")
    _assert_same(chunked, mem)
    assert chunked.absorbed.n_missing == mem.absorbed.n_missing == {"fe1f": 1, "fe2^fe1f": 2}


def test_regressor_explained_by_fixed_effects_is_aliased(panel: pd.DataFrame) -> None:
    df = panel.assign(z=(panel.fe2.fillna("g00").str[1:].astype(float)) ** 2)
    with pytest.warns(UserWarning, match="not defined because of singularities"):
        chunked = ar.attnreg("y ~ x1 + z + x2 | fe1 + fe2", df, chunk_rows=CHUNK)
    with pytest.warns(UserWarning, match="not defined because of singularities"):
        mem = ar.attnreg("y ~ x1 + z + x2 | fe1 + fe2", df)
    assert chunked.aliased == mem.aliased == ["z"]
    _assert_same(chunked, mem)


@pytest.mark.parametrize("kind", ["csv", "arrow", "polars", "pandas"])
def test_other_chunked_sources(panel: pd.DataFrame, tmp_path: object, kind: str) -> None:
    # int64 ids; no missing string (a CSV reader reads an empty field of a text column as "")
    df = panel.drop(columns=["fe1", "fe1f"]).assign(
        fe1=(panel.fe1 % np.uint64(2**62)).astype(np.int64),
        fe2=panel.fe2.fillna("g00")).iloc[:20_000]
    if kind == "csv":
        for k in range(3):
            df.iloc[k * 7_000:(k + 1) * 7_000].to_csv(f"{tmp_path}/p{k}.csv", index=False)
        data: object = f"{tmp_path}/*.csv"
    elif kind == "arrow":
        data = pytest.importorskip("pyarrow").Table.from_pandas(df, preserve_index=False)
    elif kind == "polars":
        data = pytest.importorskip("polars").from_pandas(df)
    else:
        data = df
    mem = ar.attnreg(FORMULA, df.reset_index(drop=True), weights="w", vcov="cluster",
                     cluster="fe1")
    chunked = ar.attnreg(FORMULA, data, chunk_rows=CHUNK, weights="w", vcov="cluster",
                         cluster="fe1")
    _assert_same(chunked, mem)


def test_dask_frame_equals_memory(panel: pd.DataFrame, glob: str) -> None:
    dd = pytest.importorskip("dask.dataframe")
    opts = {"vcov": "cluster", "cluster": "fe1 + fe2", "weights": "w"}
    mem = ar.attnreg(FORMULA, panel, **opts)
    for ddf in (dd.read_parquet(glob), dd.from_pandas(panel, npartitions=5)):
        chunked = ar.attnreg(FORMULA, ddf, scheduler="sync", **opts)
        _assert_same(chunked, mem)


def test_refusals(glob: str) -> None:
    with pytest.raises(OptionError, match="by least squares, method 'ols', however: "
                                          "method='ridge'"):
        ar.attnreg(FORMULA, glob, method="ridge")
    with pytest.raises(OptionError, match="method='poisson'; load the data as a pandas"):
        ar.attnreg("x1 ~ x2 | fe1", glob, method="poisson")
    with pytest.raises(FormulaError, match=r"varying slopes \('fe1\[x2\]'\)"):
        ar.attnreg("y ~ x1 | fe1[x2]", glob)
    with pytest.raises(OptionError, match="fixef_rm must be one of"):
        ar.attnreg(FORMULA, glob, fixef_rm="all")
    with pytest.raises(OptionError, match="split_every= is an option of dask DataFrames"):
        ar.attnreg(FORMULA, glob, split_every=4)
    with pytest.raises(DataError, match=r"fixed effect 'fe2' is missing in row 11 "
                                        r"\(na_action='raise'\)"):
        ar.attnreg(FORMULA, glob, chunk_rows=CHUNK, na_action="raise")


@pytest.mark.parametrize("options", [{"vcov": "HAC", "maxlags": 2},
                                     {"vcov": "DK", "time": "year", "maxlags": 2}])
def test_serial_covariances_equal_memory(options: dict) -> None:
    grun = pytest.importorskip("statsmodels.datasets.grunfeld").load_pandas().data
    formula = "invest ~ value + capital | firm + year"
    _assert_same(ar.attnreg(formula, grun, chunk_rows=50, **options),
                 ar.attnreg(formula, grun, **options))


def test_fixed_effects_of_any_dtype(tmp_path: object) -> None:
    """Categorical (categories unused and out of order), dates, pandas strings and booleans,
    each with a missing value, from a parquet file and from pandas chunks."""
    rng = np.random.default_rng(1)
    n = 3_000
    df = pd.DataFrame({
        "g": pd.Categorical(rng.choice(list("abcdefgh"), n), categories=list("hgfedcbaz")),
        "d": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 30, n), "D"),
        "s": pd.array(rng.choice(["u", "v", "w"], n), dtype="string"),
        "b": rng.random(n) < 0.5, "x": rng.normal(size=n)})
    df["y"] = df.x + rng.normal(size=n)
    df.loc[4, "g"], df.loc[9, "d"], df.loc[13, "s"] = np.nan, pd.NaT, pd.NA
    df.to_parquet(f"{tmp_path}/fe.parquet")
    for formula in ("y ~ x | g + d + s", "y ~ x | s + b", "y ~ x | g^s + d"):
        mem = ar.attnreg(formula, df, vcov="cluster", cluster="b")
        for data in (df, f"{tmp_path}/fe.parquet"):
            chunked = ar.attnreg(formula, data, chunk_rows=700, vcov="cluster", cluster="b")
            _assert_same(chunked, mem)
            assert chunked.absorbed.n_missing == mem.absorbed.n_missing
            assert chunked.absorbed.fe.n_levels == mem.absorbed.fe.n_levels


@pytest.mark.parametrize(("formula", "options"), [
    ("y ~ x1 + x2 | fe1", {"vcov": "HC1"}),
    ("y ~ x1 + x2 | fe1 + fe2 + fe3", {"vcov": "cluster", "cluster": "fe3"}),
    ("y ~ x1 + x2 | fe2", {"weights": "w0"}),  # rows of weight zero left out, as in memory
])
def test_one_and_three_fixed_effects(panel: pd.DataFrame, formula: str, options: dict) -> None:
    df = panel.iloc[:8_000].assign(fe3=np.arange(8_000) % 17,
                                   w0=panel.w.iloc[:8_000].where(np.arange(8_000) % 50 != 0, 0.0))
    _assert_same(ar.attnreg(formula, df, chunk_rows=3_000, **options),
                 ar.attnreg(formula, df, **options))


def test_fixef_equals_memory(panel: pd.DataFrame, glob: str) -> None:
    mem = ar.attnreg(FORMULA, panel, weights="w")
    chunked = ar.attnreg(FORMULA, glob, chunk_rows=CHUNK, weights="w")
    got, want = chunked.fixef(), mem.fixef()
    assert list(got) == list(want) == ["fe1", "fe2"]
    for name in want:
        assert got[name].index.equals(want[name].index)
        # relative to the largest effect: an effect near 0 keeps the absolute digits only
        scale = float(np.abs(want[name]).max())
        assert_allclose(got[name], want[name], rtol=0, atol=RTOL_EXACT * scale)


def test_anova_of_nested_chunked_fits(panel: pd.DataFrame, glob: str) -> None:
    small = "y ~ x1 | fe1 + fe2"
    mem = ar.anova(ar.attnreg(small, panel), ar.attnreg(FORMULA, panel))
    chunked = ar.anova(ar.attnreg(small, glob, chunk_rows=CHUNK),
                       ar.attnreg(FORMULA, glob, chunk_rows=CHUNK))
    assert str(chunked).splitlines()[2:4] == str(mem).splitlines()[2:4]  # the formulas
    assert_allclose(chunked.table.to_numpy(float), mem.table.to_numpy(float), rtol=RTOL_EXACT)


def test_progress_names_every_pass(glob: str, capsys: pytest.CaptureFixture[str]) -> None:
    ar.attnreg(FORMULA, glob, chunk_rows=CHUNK, progress=True, vcov="cluster",
               cluster="fe1 + x1")  # x1 is not a fixed effect: the nesting pass reads it
    err = capsys.readouterr().err
    for label in ("attnreg pass 1", "attnreg pass A (fixed-effect sums)",
                  "attnreg pass 2 (R factor)", "attnreg pass (nested fixed effects)",
                  "attnreg pass (cluster)"):
        assert label in err, label


def test_event_study_on_chunks() -> None:
    rng = np.random.default_rng(1)
    panel = pd.DataFrame({"unit": np.repeat(np.arange(40), 10), "time": np.tile(np.arange(10), 40)})
    adopt = rng.choice([4, 6, 8, 99], size=40)[panel.unit]
    panel["treated"] = (adopt < 99).astype(int)
    panel["rel_time"] = np.where(panel.treated == 1, panel.time - adopt, -1)
    panel["y"] = 0.1 * panel.time + panel.treated * (panel.rel_time >= 0) + rng.normal(size=400)
    formula = "y ~ i(rel_time, treated, ref=-1) | unit + time"
    mem = ar.attnreg(formula, panel, vcov="cluster", cluster="unit")
    chunked = ar.attnreg(formula, panel, chunk_rows=97, vcov="cluster", cluster="unit")
    _assert_same(chunked, mem)
    a, b = chunked.event_study(), mem.event_study()
    assert list(a.index) == list(b.index)
    assert_allclose(a[["estimate", "std_err"]].to_numpy(float),
                    b[["estimate", "std_err"]].to_numpy(float), rtol=RTOL_EXACT)


def test_predict_equals_memory(panel: pd.DataFrame, glob: str) -> None:
    mem = ar.attnreg(FORMULA, panel, weights="w")
    chunked = ar.attnreg(FORMULA, glob, chunk_rows=CHUNK, weights="w")
    new = panel.iloc[20:40].copy()
    new.loc[new.index[0], "fe1"] = np.uint64(12345)  # a level not in the fit
    new.loc[new.index[1], "x1"] = np.nan
    with pytest.warns(UserWarning, match="fixed effect 'fe1' has 1 level\\(s\\) not in the fit: "
                                         "12345"):
        want = mem.predict(new)
    with pytest.warns(UserWarning, match="fixed effect 'fe1' has 1 level\\(s\\) not in the fit"):
        got = chunked.predict(new)
    assert got.index.equals(want.index)
    assert got.isna().tolist() == want.isna().tolist() == [True, True] + [False] * 18
    # the effects are equal relative to the largest (see test_fixef_equals_memory)
    assert_allclose(got, want, rtol=0, atol=RTOL_EXACT * float(np.abs(want).max()))
    with pytest.raises(DataError, match="fixed effect 'fe1' has 1 level\\(s\\) not in the fit"):
        chunked.predict(new, unseen="error")
