"""One inference layer for in-memory, chunked and dask fits.

A covariance registered once works on both kinds of fit (its middle matrix computed from the
score statistics the in-memory rows or the chunk passes give), and ``wald_test``,
``t_test``, ``anova`` of nested fits and the analysis of variance tables of one fit
(sequential, type II and III, from the accumulated R factor) on chunked and dask fits equal
the in-memory fit's.

Tolerances: under the classical covariance a chunked fit equals the in-memory fit to
RTOL_EXACT (tests/large/test_chunked.py: both are float64 closed forms of one
well-conditioned problem); a robust covariance sums its meat in another order (chunks,
per-cluster sums), which costs a few more ulps, so Wald statistics are compared to
RTOL_ROBUST, the bound tests/large/test_reports.py uses for the robust frames.
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.large.results import ChunkedResults
from attnreg.inference.vcov import registry
from attnreg.inference.vcov.registry import CovarianceEstimator, VcovSpec
from attnreg.inference.vcov.scorestats import ScoreNeeds, ScoreStats
from tests.conftest import RTOL_EXACT

#: robust covariances: the meat is summed in another order (test_reports.py's bound)
RTOL_ROBUST = 1e-8
FORMULA = "y ~ x + z + C(g)"
SMALL = "y ~ x"
CHUNK = 170  # uneven chunks


def _data(n: int = 1000, seed: int = 11) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n),
                       "g": rng.choice(["a", "b", "c"], n), "firm": rng.integers(0, 40, n),
                       "w": rng.uniform(0.5, 2.0, n)})
    df["y"] = 1 + 0.4 * df.x + 0.1 * df.z + 0.2 * (df.g == "b") + rng.normal(size=n) * (
        1 + 0.5 * df.x.abs())
    df.loc[[5, 600], "z"] = np.nan  # rows every formula drops (y ~ x keeps them: see below)
    return df


DATA = _data()
ROWS = DATA.dropna()  # the rows of every formula, so nested fits share them


class _DoubledHC0(CovarianceEstimator):
    """A toy covariance registered from outside: twice HC0, from the scores' cross-products."""

    name = "toy_doubled_hc0"
    needs_hat = False

    def score_needs(self, spec: VcovSpec) -> ScoreNeeds:
        return ScoreNeeds(cross=True)

    def middle_from_scores(self, spec: VcovSpec, stats: ScoreStats) -> np.ndarray:
        assert stats.cross is not None
        return 2.0 * stats.cross

    def label(self, spec: VcovSpec) -> str:
        return "doubled HC0"


class _RowsOnly(CovarianceEstimator):
    """A toy covariance that needs every row (it implements only middle())."""

    name = "toy_rows_only"
    needs_hat = False

    def middle(self, sp: Any, spec: VcovSpec, inputs: Any) -> np.ndarray:
        return np.eye(1 + sp.rank) * inputs.sigma2


@pytest.fixture
def toy_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """The toy covariances registered for one test (the registry is restored after)."""
    for est in (_DoubledHC0(), _RowsOnly()):
        monkeypatch.setitem(registry.VCOV_REGISTRY, est.name, est)


def _fits(formula: str = FORMULA, **opts: Any) -> tuple[Any, ChunkedResults]:
    mem = ar.attnreg(formula, ROWS, **opts)
    fit = ar.attnreg(formula, ROWS, chunk_rows=CHUNK, **opts)
    assert isinstance(fit, ChunkedResults)
    return mem, fit


# ------------------------------------------------------------------ one registration

def test_a_covariance_registered_once_works_in_memory_and_chunked(toy_registry) -> None:
    mem, fit = _fits(weights="w")
    toy_mem = mem.with_vcov("toy_doubled_hc0")
    np.testing.assert_allclose(toy_mem.std_err, np.sqrt(2.0) * mem.with_vcov("HC0").std_err,
                               rtol=RTOL_EXACT)
    toy_fit = fit.with_vcov("toy_doubled_hc0")
    np.testing.assert_allclose(toy_fit.std_err, toy_mem.std_err, rtol=RTOL_EXACT)
    assert toy_fit.vcov_spec.label() == toy_mem.vcov_spec.label() == "doubled HC0"
    assert toy_fit.tidy()["std.error"].tolist() == toy_fit.std_err.tolist()
    back = pickle.loads(pickle.dumps(toy_fit))
    np.testing.assert_array_equal(back.std_err, toy_fit.std_err)


def test_a_registered_covariance_on_a_dask_fit(toy_registry) -> None:
    dd = pytest.importorskip("dask.dataframe")
    fit = ar.attnreg(FORMULA, dd.from_pandas(ROWS, npartitions=3), scheduler="sync",
                     vcov="toy_doubled_hc0")  # the pass's plan holds no estimator
    mem = ar.attnreg(FORMULA, ROWS).with_vcov("toy_doubled_hc0")
    np.testing.assert_allclose(fit.std_err, mem.std_err, rtol=RTOL_EXACT)
    assert fit.wald_test(term="C(g)").statistic == pytest.approx(
        mem.wald_test(term="C(g)").statistic, rel=RTOL_ROBUST)


def test_a_covariance_that_needs_every_row_is_refused_before_the_pass(toy_registry) -> None:
    mem, fit = _fits()
    assert np.isfinite(mem.with_vcov("toy_rows_only").std_err).all()
    with pytest.raises(OptionError, match=r"vcov 'toy_rows_only' is not computed for a "
                                          r"chunked fit \(it needs every row at once\); use "
                                          r"one of 'classical', .*'toy_doubled_hc0'"):
        fit.with_vcov("toy_rows_only")
    with pytest.raises(OptionError, match=r"vcov 'toy_rows_only' is not computed for a "
                                          r"chunked fit"):
        ar.attnreg(FORMULA, ROWS, chunk_rows=CHUNK, vcov="toy_rows_only")


# ------------------------------------------------------------------ Wald and t tests

VCOVS = [({"kind": "classical"}, RTOL_EXACT), ({"kind": "HC1"}, RTOL_ROBUST),
         ({"kind": "cluster", "cluster": "firm"}, RTOL_ROBUST)]


@pytest.mark.parametrize(("vcov", "rtol"), VCOVS, ids=lambda v: str(v))
@pytest.mark.parametrize("opts", [{}, {"weights": "w"}], ids=["ols", "wls"])
def test_wald_and_t_tests_equal_the_in_memory_ones(vcov, rtol, opts) -> None:
    mem, fit = _fits(**opts)
    mem, fit = mem.with_vcov(**vcov), fit.with_vcov(**vcov)
    for args in ({"hypothesis": "x = 2 * z, C(g)[T.b] = 0"}, {"term": "C(g)"}):
        w, wm = fit.wald_test(**args), mem.wald_test(**args)
        assert w.df == wm.df and w.test == wm.test and w.covariance == wm.covariance
        np.testing.assert_allclose([w.statistic, w.p_value], [wm.statistic, wm.p_value],
                                   rtol=rtol)
        np.testing.assert_allclose(w.table.to_numpy(), wm.table.to_numpy(), rtol=rtol)
    chi = fit.wald_test("x = 0", test="Chisq")
    assert chi.statistic == pytest.approx(mem.wald_test("x = 0", test="Chisq").statistic,
                                          rel=rtol)
    t, tm = fit.t_test("x - z = 0, z = 0.1", level=0.9), mem.t_test("x - z = 0, z = 0.1",
                                                                    level=0.9)
    assert list(t.table.columns) == list(tm.table.columns)
    np.testing.assert_allclose(t.table.to_numpy(), tm.table.to_numpy(), rtol=rtol)


def test_ridge_wald_test_is_conditional_on_lambda_as_in_memory() -> None:
    mem, fit = _fits(method="ridge", lam=2.0)
    w, wm = fit.wald_test("x = 0, z = 0"), mem.wald_test("x = 0, z = 0")
    assert w.statistic == pytest.approx(wm.statistic, rel=RTOL_EXACT)
    assert w.note == wm.note and "Conditional on lambda" in w.note


def test_wald_test_errors_name_the_coefficient_and_term() -> None:
    _, fit = _fits()
    with pytest.raises(OptionError, match=r"term 'C\(h\)' is not a term of the formula"):
        fit.wald_test(term="C(h)")
    with pytest.raises(OptionError, match=r"'q'"):
        fit.wald_test("q = 0")


# ------------------------------------------------------------------ anova of nested fits

@pytest.mark.parametrize("test", ["F", "Chisq"])
@pytest.mark.parametrize("opts", [{}, {"weights": "w"}], ids=["ols", "wls"])
def test_anova_of_nested_chunked_fits_equals_the_in_memory_table(test, opts) -> None:
    small_mem, small = _fits(SMALL, **opts)
    mid_mem, mid = _fits("y ~ x + z", **opts)
    big_mem, big = _fits(**opts)
    a = ar.anova(small, mid, big, test=test)
    am = ar.anova(small_mem, mid_mem, big_mem, test=test)
    assert a.kind == am.kind == "nested" and a.heading == am.heading
    assert list(a.table.columns) == list(am.table.columns)
    np.testing.assert_allclose(a.table.to_numpy(), am.table.to_numpy(), rtol=RTOL_EXACT)
    assert str(a) == str(am)
    mixed = ar.anova(small_mem, big)  # an in-memory fit and a chunked one
    np.testing.assert_allclose(mixed.table.to_numpy(), ar.anova(small_mem, big_mem).table
                               .to_numpy(), rtol=RTOL_EXACT)


def test_anova_of_dask_fits_equals_the_in_memory_table() -> None:
    dd = pytest.importorskip("dask.dataframe")
    ddf = dd.from_pandas(ROWS, npartitions=3)
    small = ar.attnreg(SMALL, ddf, scheduler="sync")
    big = ar.attnreg(FORMULA, ddf, scheduler="sync").with_vcov("cluster", cluster="firm")
    assert isinstance(big, ChunkedResults)
    a = ar.anova(small, big.with_vcov("classical"))
    am = ar.anova(ar.attnreg(SMALL, ROWS), ar.attnreg(FORMULA, ROWS))
    np.testing.assert_allclose(a.table.to_numpy(), am.table.to_numpy(), rtol=RTOL_EXACT)
    mem = ar.attnreg(FORMULA, ROWS).with_vcov("cluster", cluster="firm")
    w, wm = big.wald_test(term="C(g)"), mem.wald_test(term="C(g)")
    assert w.statistic == pytest.approx(wm.statistic, rel=RTOL_ROBUST)
    assert w.df == wm.df == (2.0, 39.0)  # G − 1 = 39 clusters' df, as in memory


@pytest.mark.parametrize("formula", [FORMULA + " + z:C(g)", "y ~ x + z - 1"])
@pytest.mark.parametrize("opts", [{}, {"weights": "w"}], ids=["ols", "wls"])
def test_anova_table_of_one_chunked_fit_equals_the_in_memory_one(formula, opts) -> None:
    rows = ROWS.assign(x=ROWS.x + 50.0)  # an offset: type III's uncentred sub-designs
    mem = ar.attnreg(formula, rows, **opts)
    fit = ar.attnreg(formula, rows, chunk_rows=CHUNK, **opts)
    for type in (1, 2, 3):  # sums of squares from the accumulated R factor alone
        a, am = fit.anova(type=type), mem.anova(type=type)
        assert a.kind == am.kind and a.heading == am.heading
        assert list(a.table.index) == list(am.table.index)
        np.testing.assert_allclose(a.table.to_numpy(), am.table.to_numpy(), rtol=RTOL_EXACT)
    robust = ar.anova(fit.with_vcov("HC1"), type=2)  # Wald F tests under the covariance
    np.testing.assert_allclose(robust.table.to_numpy(),
                               ar.anova(mem.with_vcov("HC1"), type=2).table.to_numpy(),
                               rtol=RTOL_ROBUST)


@pytest.mark.filterwarnings("ignore::attnreg.exceptions.RankDeficiencyWarning")
def test_sequential_table_of_a_rank_deficient_chunked_fit_drops_the_aliased_column() -> None:
    rows = ROWS.assign(x2=2.0 * ROWS.x)
    mem = ar.attnreg("y ~ x + x2 + z", rows)
    fit = ar.attnreg("y ~ x + x2 + z", rows, chunk_rows=CHUNK)
    a, am = fit.anova(), mem.anova()
    assert list(a.table.index) == list(am.table.index) == ["x", "z", "Residuals"]
    np.testing.assert_allclose(a.table.to_numpy(), am.table.to_numpy(), rtol=RTOL_EXACT)


def test_anova_refusals_say_why_and_what_to_do() -> None:
    _, small = _fits(SMALL)
    _, big = _fits()
    other = ar.attnreg("y ~ z", ROWS, chunk_rows=CHUNK)
    with pytest.raises(OptionError, match=r"not nested: coefficient\(s\) x of fit 1 \(y ~ x\) "
                                          r"are not coefficients of fit 2 \(y ~ z\)"):
        ar.anova(small, other)
    with pytest.raises(OptionError, match=r"not fitted on the same rows: fit 1 has 1000 rows, "
                                          r"fit 2 has 998"):
        ar.anova(ar.attnreg(SMALL, DATA, chunk_rows=CHUNK), big)
    with pytest.raises(OptionError, match=r"different responses"):
        ar.anova(ar.attnreg("x ~ z", ROWS, chunk_rows=CHUNK), big)
    with pytest.raises(OptionError, match=r"compares residual sums of squares under iid "
                                          r"errors.*heteroskedasticity-robust HC1"):
        ar.anova(small, big.with_vcov("HC1"))
    ridge = ar.attnreg(SMALL, ROWS, chunk_rows=CHUNK, method="ridge", lam=1.0)
    with pytest.raises(OptionError, match=r"anova is defined for OLS and WLS fits.*'ridge'"):
        ar.anova(ridge, big)


# ------------------------------------------------------------------ what needs the rows

def test_augment_is_refused_with_what_to_use_instead() -> None:
    _, fit = _fits()
    with pytest.raises(OptionError, match=r"augment\(\) is not available for a chunked fit: "
                                          r".*keeps only .* not its rows; use "
                                          r"fit\.predict\(rows\)"):
        fit.augment()


def test_tests_and_tables_of_an_unpickled_chunked_fit() -> None:
    """What the tests and tables read (the terms, the R factor, the covariance's middle
    matrix and its cluster counts) travels with the pickle: no rows are read again."""
    mem, fit = _fits()
    fit = fit.with_vcov("cluster", cluster="firm")
    back = pickle.loads(pickle.dumps(fit))
    assert back.source is None  # a fit of data in memory keeps no source when pickled
    w = back.wald_test(term="C(g)")
    assert w.statistic == fit.wald_test(term="C(g)").statistic
    assert w.covariance == mem.with_vcov("cluster", cluster="firm").vcov_spec.label()
    np.testing.assert_array_equal(back.anova(type=3).table.to_numpy(),
                                  fit.anova(type=3).table.to_numpy())
