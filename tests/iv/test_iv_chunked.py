"""IV formulas beyond memory (a parquet glob of several files, a dask DataFrame, ``chunk_rows=``)
against the in-memory fit of the same rows: coefficients, covariances (classical, HC0, HC1,
cluster), AER's diagnostics, the weak-instrument table, the AR set and the summary text."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, FormulaError, OptionError
from attnreg.iv.chunked_results import ChunkedIVResults
from tests.conftest import RTOL_EXACT
from tests.iv.conftest import make_iv_data

ONE = "y ~ x1 + x2 + C(f) | d1 ~ z1 + z2 + C(h)"  # factors among the regressors and instruments
TWO = "y ~ x1 + x2 + x3 | d1 + d2 ~ z1 + z2 + z3 + z4"
VCOVS = [{}, {"vcov": "HC0"}, {"vcov": "HC1"}, {"vcov": "cluster", "cluster": "g"}]


def frame() -> pd.DataFrame:
    d = make_iv_data(n=600)
    df = pd.DataFrame(np.column_stack([d.y, d.X[:, 1:], d.D, d.Z]),
                      columns=["y", "x1", "x2", "x3", "d1", "d2", "z1", "z2", "z3", "z4"])
    df = df.assign(w=d.w, g=d.g, f=np.arange(600) % 3, h=(np.arange(600) // 7) % 4)
    df.loc[[5, 77, 301], "z2"] = np.nan  # missing values: the rows are dropped as in memory
    df.loc[[9, 450], "d1"] = np.nan
    return df


@pytest.fixture(scope="module")
def df() -> pd.DataFrame:
    return frame()


@pytest.fixture(scope="module")
def glob(df: pd.DataFrame, tmp_path_factory: pytest.TempPathFactory) -> str:
    pytest.importorskip("pyarrow")
    folder = tmp_path_factory.mktemp("ivparts")
    for i, part in enumerate(np.array_split(np.arange(len(df)), 4)):
        df.iloc[part].to_parquet(folder / f"part{i}.parquet", index=False)
    return str(Path(folder) / "*.parquet")


def assert_same(a, b) -> None:
    """Every number the in-memory fit ``a`` reports, equal in the chunked fit ``b``."""
    assert isinstance(b, ChunkedIVResults)
    assert b.nobs == a.nobs and b.names == a.names
    assert_allclose(b.coef, a.coef, rtol=RTOL_EXACT)
    assert_allclose(b.vcov, a.vcov, rtol=RTOL_EXACT)
    assert_allclose(b.std_err, a.std_err, rtol=RTOL_EXACT)
    assert_allclose(b.diagnostics(), a.diagnostics(), rtol=RTOL_EXACT)
    assert_allclose(b.weak_iv.to_numpy(float), a.weak_iv.to_numpy(float), rtol=RTOL_EXACT)
    wa, wb = a.weak_instruments(), b.weak_instruments()
    for name in ("effective_f", "effective_f_cv", "k_eff", "kp_rk_lm", "anderson_lm"):
        assert_allclose(getattr(wb, name), getattr(wa, name), rtol=RTOL_EXACT)
    assert_allclose([b.sigma, b.r_squared, b.adj_r_squared, b.rss],
                    [a.sigma, a.r_squared, a.adj_r_squared, a.rss], rtol=RTOL_EXACT)
    assert_allclose(b.f_test, a.f_test, rtol=RTOL_EXACT)
    assert_allclose(b.tidy(conf_int=True).iloc[:, 1:], a.tidy(conf_int=True).iloc[:, 1:],
                    rtol=RTOL_EXACT)
    assert str(b.summary()) == str(a.summary())


@pytest.mark.parametrize("vcov", VCOVS, ids=["classical", "HC0", "HC1", "cluster"])
@pytest.mark.parametrize("method", ["tsls", "liml", "fuller"])
def test_parquet_glob_equals_memory(df: pd.DataFrame, glob: str, method: str, vcov: dict) -> None:
    a = ar.attnreg(ONE, df, method=method, **vcov)
    b = ar.attnreg(ONE, glob, method=method, **vcov)
    assert_same(a, b)
    ar_a, ar_b = a.anderson_rubin(0.9), b.anderson_rubin(0.9)
    assert ar_b.shape == ar_a.shape
    assert_allclose([ar_b.lower, ar_b.upper], [ar_a.lower, ar_a.upper], rtol=RTOL_EXACT)


@pytest.mark.parametrize("vcov", VCOVS, ids=["classical", "HC0", "HC1", "cluster"])
def test_weights_and_two_endogenous(df: pd.DataFrame, vcov: dict) -> None:
    for method in ("tsls", "liml"):
        a = ar.attnreg(TWO, df, method=method, weights="w", **vcov)
        b = ar.attnreg(TWO, df, method=method, weights="w", chunk_rows=97, **vcov)
        assert_same(a, b)


def test_fuller_alpha_weighted(df: pd.DataFrame, glob: str) -> None:
    a = ar.attnreg(ONE, df, method="fuller", alpha=4, weights="w", vcov="HC1")
    b = ar.attnreg(ONE, glob, method="fuller", alpha=4, weights="w", vcov="HC1")
    assert_same(a, b)
    assert b.fit.kappa == pytest.approx(a.fit.kappa, rel=RTOL_EXACT)


@pytest.mark.parametrize("vcov", [{"vcov": "HC1"}, {"vcov": "cluster", "cluster": "g"}],
                         ids=["HC1", "cluster"])
def test_dask_equals_memory(df: pd.DataFrame, vcov: dict) -> None:
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(df, npartitions=3)
    for method in ("tsls", "liml"):
        assert_same(ar.attnreg(ONE, df, method=method, weights="w", **vcov),
                    ar.attnreg(ONE, ddf, method=method, weights="w", scheduler="sync", **vcov))


def test_subset_and_wald_test(df: pd.DataFrame) -> None:
    a = ar.attnreg(TWO, df, subset="x3 > -1", vcov="HC1")
    b = ar.attnreg(TWO, df, subset="x3 > -1", vcov="HC1", chunk_rows=150)
    assert_same(a, b)
    ta, tb = a.wald_test("d1 = 0, d2 = x1"), b.wald_test("d1 = 0, d2 = x1")
    assert tb.statistic == pytest.approx(ta.statistic, rel=RTOL_EXACT)


def test_pickles_and_residuals_beyond_the_cap(df: pd.DataFrame, monkeypatch) -> None:
    b = ar.attnreg(ONE, df, chunk_rows=100)
    back = pickle.loads(pickle.dumps(b))
    assert_allclose(back.std_err, b.std_err, rtol=0)  # the same numbers: a copy
    assert str(back.summary()) == str(b.summary())
    monkeypatch.setattr("attnreg.iv.chunked.RESIDUALS_KEPT", 10)
    c = ar.attnreg(ONE, df, chunk_rows=100)
    assert c.residual_sample is None
    assert "Residuals: not kept" in str(c.summary())
    assert_allclose(c.coef, b.coef, rtol=RTOL_EXACT)


def test_what_is_refused(df: pd.DataFrame) -> None:
    with pytest.raises(OptionError, match=r"method 'gmm' cannot be fitted chunk by chunk.*in memory"):
        ar.attnreg(ONE, df, method="gmm", chunk_rows=100)
    with pytest.raises(OptionError, match="method 'cue' cannot be fitted chunk by chunk"):
        ar.attnreg(ONE, df, method="cue", chunk_rows=100)
    with pytest.raises(OptionError, match=r"fixed effects .* cannot be fitted chunk by chunk.*C\(fe\)"):
        ar.attnreg("y ~ x1 | f | d1 ~ z1 + z2", df, chunk_rows=100)
    with pytest.raises(OptionError, match="cluster of a chunked IV fit must name a column"):
        ar.attnreg(ONE, df, vcov="cluster", cluster=df.g.to_numpy(), chunk_rows=100)
    for given in ({"vcov": "HC3"}, {"vcov": "HAC", "maxlags": 2},
                  {"vcov": "cluster", "cluster": "g", "type": "HC0"}):
        with pytest.raises(OptionError, match=r"a chunked IV fit has the classical, HC0, HC1 and "
                                              r"one-way cluster \(CR1\) covariances.*in memory"):
            ar.attnreg(ONE, df, chunk_rows=100, **given)
    with pytest.raises(OptionError, match=r"a chunked IV fit clusters one way.*'g \+ f'"):
        ar.attnreg(ONE, df, vcov="cluster", cluster="g + f", chunk_rows=100)
    with pytest.raises(OptionError, match="weights of a chunked IV fit must be a column"):
        ar.attnreg(ONE, df, weights=df.w.to_numpy(), chunk_rows=100)
    b = ar.attnreg(ONE, df, chunk_rows=100)
    with pytest.raises(OptionError, match="refit with vcov='HC1'"):
        b.with_vcov("HC1")
    with pytest.raises(OptionError, match=r"option.*lam do not apply"):
        ar.attnreg(ONE, df, lam=1.0, chunk_rows=100)


@pytest.mark.parametrize("kind", ["polars", "arrow"])
def test_polars_and_arrow_tables(df: pd.DataFrame, kind: str) -> None:
    if kind == "polars":
        pl = pytest.importorskip("polars")
        data = pl.from_pandas(df)
    else:
        pa = pytest.importorskip("pyarrow")
        data = pa.Table.from_pandas(df, preserve_index=False)
    a = ar.attnreg(ONE, df, method="liml", vcov="HC0")
    assert_same(a, ar.attnreg(ONE, data, method="liml", vcov="HC0", chunk_rows=128))


@pytest.mark.parametrize(("formula", "exc", "pattern"), [
    ("y ~ x1 | d1 ~ z1 + x1", FormulaError, r"'x1' is both an excluded instrument and an exogenous"),
    ("y ~ x1 + d1 | d1 ~ z1", FormulaError, r"'d1' is listed both as endogenous and as exogenous"),
    ("y ~ x1 | d1 + d2 ~ z1", DataError, r"under-identified: 2 endogenous regressor\(s\) \(d1, d2\) "
                                         r"but only 1 excluded instrument\(s\) \(z1\)"),
    ("y ~ x1 | d1 ~ z1 + zc", DataError, r"instrument 'zc' is constant over the rows used"),
    ("y ~ x1 | d1 ~ z1 + zx", DataError, r"instrument 'zx' is a linear combination of the exogenous"),
])
def test_careless_input_is_refused_as_in_memory(df: pd.DataFrame, formula: str, exc: type,
                                                pattern: str) -> None:
    data = df.assign(zc=3.0, zx=df.z3.fillna(0) * 0 + 2 * df.x1 - 1)
    for options in ({}, {"chunk_rows": 100}):
        with pytest.raises(exc, match=pattern):
            ar.attnreg(formula, data, **options)


@pytest.mark.parametrize("formula", ["y ~ 0 + x1 | d1 ~ z1 + z2", "y ~ 1 | d1 ~ z1 + z2",
                                     "y ~ 0 | d1 ~ z1 + z2", "y ~ x1 | d1 ~ z1"],
                         ids=["no intercept", "intercept only", "no exogenous", "exactly identified"])
def test_other_shapes(df: pd.DataFrame, formula: str) -> None:
    for opts in ({}, {"vcov": "cluster", "cluster": "g", "weights": "w"}):
        assert_same(ar.attnreg(formula, df, method="liml", **opts),
                    ar.attnreg(formula, df, method="liml", chunk_rows=64, **opts))


def test_residuals_false_keeps_none(df: pd.DataFrame) -> None:
    b = ar.attnreg(ONE, df, chunk_rows=100, residuals=False)
    assert b.residual_sample is None
    assert "Residuals: not kept (residuals=False" in str(b.summary())


def test_predict_new_rows(df: pd.DataFrame, glob: str) -> None:
    new = df.iloc[[0, 9, 40, 41, 598]]  # row 9 misses d1: NaN, as in memory
    a, b = ar.attnreg(ONE, df, method="liml"), ar.attnreg(ONE, glob, method="liml")
    pa_, pb = a.predict(new), b.predict(new)
    assert pb.index.equals(pa_.index) and np.isnan(pb.loc[9]) and np.isnan(pa_.loc[9])
    assert_allclose(pb.dropna(), pa_.dropna(), rtol=RTOL_EXACT)
    with pytest.raises(OptionError, match="predict\\(\\) of a chunked IV fit needs newdata="):
        b.predict()


def test_etable_and_the_views_that_need_rows(df: pd.DataFrame) -> None:
    a = ar.attnreg(ONE, df, vcov="cluster", cluster="g")
    b = ar.attnreg(ONE, df, vcov="cluster", cluster="g", chunk_rows=100)
    assert str(ar.etable([b])) == str(ar.etable([a]))
    with pytest.raises(OptionError, match=r"no first-stage fits.*fit it in memory"):
        b.first_stage  # noqa: B018  (the property raises)
    with pytest.raises(OptionError, match=r"attention\(\) of a chunked IV fit is refused"):
        b.attention()
