"""compare_forecasts and its tests (DM, CW, GW, encompassing, MCS) against independent references.

References: statsmodels' diebold_mariano_test and a transcription of R's forecast::dm.test
(DM); plain numpy regressions (Giacomini-White, encompassing weight); scipy's one-sample t
test (encompassing at h = 1); arch.bootstrap.MCS and its bootstraps (model confidence set).
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats
from statsmodels.tsa.stattools import diebold_mariano_test

import attnreg as ar
from attnreg.exceptions import DataError, OptionError
from attnreg.timeseries.comparison import ForecastComparison
from attnreg.timeseries.mcs import bootstrap_indices, model_confidence_set
from attnreg.timeseries.predictive_ability import encompassing_test, giacomini_white
from tests.conftest import RTOL_EXACT, RTOL_SM

BIG = "y ~ lag(y, 1) + lag(x, 1) + lag(z, 2)"
SMALL = "y ~ lag(y, 1)"
START = "2008Q1"


@pytest.fixture(scope="module")
def runs(series) -> dict[str, object]:
    return {"ols": ar.forecast(BIG, series, start=START),
            "ridge": ar.forecast(BIG, series, method="ridge", start=START),
            "pcr": ar.forecast(BIG, series, method="pcr", k=2, start=START),
            "ar1": ar.forecast(SMALL, series, start=START)}


def dm_test_r(e1: np.ndarray, e2: np.ndarray, h: int, power: int = 2) -> tuple[float, float]:
    """R's forecast::dm.test (alternative "two.sided", varestimator "acf"), line by line:
    d <- abs(e1)^power - abs(e2)^power; d.cov <- acf(d, lag.max = h - 1, type = "covariance")
    d.var <- sum(c(d.cov[1], 2 * d.cov[-1])) / n; STAT <- mean(d) / sqrt(d.var)
    k <- ((n + 1 - 2 * h + (h / n) * (h - 1)) / n)^(1/2); STAT <- STAT * k
    p <- 2 * pt(-abs(STAT), df = n - 1)."""
    d = [abs(a) ** power - abs(b) ** power for a, b in zip(e1, e2, strict=True)]
    n = len(d)
    mean = sum(d) / n
    acov = [sum((d[t] - mean) * (d[t - k] - mean) for t in range(k, n)) / n for k in range(h)]
    var = (acov[0] + 2 * sum(acov[1:])) / n
    stat = mean / math.sqrt(var) * ((n + 1 - 2 * h + (h / n) * (h - 1)) / n) ** 0.5
    return stat, 2 * stats.t.cdf(-abs(stat), df=n - 1)


# --------------------------------------------------------------------------- Diebold-Mariano

def test_dm_against_statsmodels_and_existing_evaluation(runs) -> None:
    fcs = [runs["ols"], runs["ridge"], runs["pcr"]]
    table = ar.compare_forecasts(fcs).table
    for name, fc in zip(["ols", "ridge", "pcr"], fcs, strict=True):
        f = fc.forecasts
        sm = diebold_mariano_test(f["actual"], f["forecast"], f["benchmark"], lags=0,
                                  harvey_adj=True)
        assert_allclose(table.loc[name, "dm_statistic"], sm.statistic, rtol=RTOL_SM)
        assert_allclose(table.loc[name, "dm_p_value"], sm.pvalue, rtol=RTOL_SM)
        e = fc.evaluation  # the single-run evaluation: same numbers
        for col in ("msfe", "msfe_ratio", "oos_r2", "dm_statistic", "dm_p_value",
                    "cw_statistic", "cw_p_value"):
            assert_allclose(table.loc[name, col], e[col], rtol=RTOL_EXACT)


@pytest.mark.parametrize("loss", ["squared", "absolute"])
def test_dm_at_horizon_4_against_forecast_dm_test(series, loss) -> None:
    f4 = "y ~ lag(y, 4) + lag(x, 4)"
    a = ar.forecast(f4, series, start=START, horizon=4)
    b = ar.forecast("y ~ lag(y, 4)", series, start=START, horizon=4, method="ridge")
    cmp = ar.compare_forecasts([a], benchmark=b, loss=loss, names=["big"])
    e1, e2 = a.forecasts["error"].to_numpy(), b.forecasts["error"].to_numpy()
    stat, p = dm_test_r(e1, e2, h=4, power=2 if loss == "squared" else 1)
    assert_allclose(cmp.table.loc["big", "dm_statistic"], stat, rtol=1e-10)
    assert_allclose(cmp.table.loc["big", "dm_p_value"], p, rtol=1e-10)
    assert cmp.horizon == 4 and cmp.loss == loss


# -------------------------------------------------------------------------- Giacomini-White

def gw_by_regression(d: np.ndarray) -> float:
    """GW 2006 (h = 1): n R² (uncentred) of the regression of 1 on Z_t = (1, d_{t-1}) d_t."""
    Z = np.column_stack([d[1:], d[:-1] * d[1:]])
    ones = np.ones(len(Z))
    beta, *_ = np.linalg.lstsq(Z, ones, rcond=None)
    resid = ones - Z @ beta
    return float(len(Z) * (1.0 - resid @ resid / (ones @ ones)))


def gw_newey_west(d: np.ndarray, h: int) -> float:
    """GW 2006 (h > 1): n Zbar' Omega^-1 Zbar, Omega Newey-West (Bartlett, h - 1 lags) of the
    demeaned Z_t = (1, d_{t-h}) d_t, written as sums over dates."""
    Z = [(d[t], d[t - h] * d[t]) for t in range(h, len(d))]
    n = len(Z)
    zbar = [sum(z[i] for z in Z) / n for i in range(2)]
    dev = [(z[0] - zbar[0], z[1] - zbar[1]) for z in Z]
    omega = np.zeros((2, 2))
    for j in range(h):
        w = 1.0 if j == 0 else 1.0 - j / h
        g = np.zeros((2, 2))
        for t in range(j, n):
            g += np.outer(dev[t], dev[t - j]) / n
        omega += w * (g if j == 0 else g + g.T)
    zb = np.array(zbar)
    return float(n * zb @ np.linalg.inv(omega) @ zb)


def test_gw_h1_equals_n_r_squared(runs) -> None:
    cmp = ar.compare_forecasts([runs["ols"], runs["ridge"]])
    for name in ("ols", "ridge"):
        f = runs[name].forecasts
        d = f["error"].to_numpy() ** 2 - f["benchmark_error"].to_numpy() ** 2
        ref = gw_by_regression(d)
        assert_allclose(cmp.table.loc[name, "gw_statistic"], ref, rtol=1e-10)
        assert_allclose(cmp.table.loc[name, "gw_p_value"], stats.chi2.sf(ref, 2), rtol=1e-10)


@pytest.mark.parametrize("h", [2, 3])
def test_gw_multi_step_newey_west(h) -> None:
    rng = np.random.default_rng(h)
    d = rng.standard_normal(60) + 0.5 * rng.standard_normal(60) ** 2
    res = giacomini_white(d, h=h)
    assert_allclose(res.statistic, gw_newey_west(d, h), rtol=1e-10)
    assert res.df == 2 and res.n_obs == 60 - h
    X = np.column_stack([np.ones(60 - h), d[:-h]])  # GW's decision rule: fitted E[d | h_t]
    delta, *_ = np.linalg.lstsq(X, d[h:], rcond=None)
    assert res.share_model_better == pytest.approx(np.mean(X @ delta < 0))


def test_gw_unconditional_is_squared_dm_t() -> None:
    d = np.random.default_rng(3).standard_normal(40) + 0.3
    res = giacomini_white(d, conditional=False)
    t = d.mean() / math.sqrt(np.mean(d**2) / d.size)  # uncentred second moment at h = 1
    assert_allclose(res.statistic, t**2, rtol=1e-12)
    assert res.df == 1


# ------------------------------------------------------------------------------ encompassing

def test_encompassing_h1_is_one_sample_t(runs) -> None:
    cmp = ar.compare_forecasts([runs["ols"]], benchmark=runs["ar1"], names=["big"])
    e1 = runs["ar1"].forecasts["error"].to_numpy()  # the benchmark's errors
    e2 = runs["ols"].forecasts["error"].to_numpy()
    ref = stats.ttest_1samp(e1 * (e1 - e2), 0.0, alternative="greater")
    row = cmp.table.loc["big"]
    assert_allclose(row["enc_statistic"], ref.statistic, rtol=1e-10)
    assert_allclose(row["enc_p_value"], ref.pvalue, rtol=1e-10)
    lam, *_ = np.linalg.lstsq((e1 - e2)[:, None], e1, rcond=None)
    assert_allclose(row["enc_weight"], lam[0], rtol=1e-10)
    rev = stats.ttest_1samp(e2 * (e2 - e1), 0.0, alternative="greater")
    assert_allclose(row["enc_rev_statistic"], rev.statistic, rtol=1e-10)
    assert_allclose(row["enc_rev_p_value"], rev.pvalue, rtol=1e-10)


def test_encompassing_multi_step_by_hand() -> None:
    rng = np.random.default_rng(5)
    e1, e2 = rng.standard_normal(30), rng.standard_normal(30)
    h = 3
    d = e1 * (e1 - e2)
    res = encompassing_test(e1, e2, h=h)
    n = 30
    acov = [np.sum((d[k:] - d.mean()) * (d[:n - k] - d.mean())) / n for k in range(h)]
    by_hand = d.mean() / math.sqrt((acov[0] + 2 * sum(acov[1:])) / n) * \
        math.sqrt((n + 1 - 2 * h + h * (h - 1) / n) / n)
    assert_allclose(res.statistic, by_hand, rtol=1e-12)
    assert_allclose(res.p_value, stats.t.sf(by_hand, n - 1), rtol=1e-12)


# -------------------------------------------------------------------- model confidence set

BOOTSTRAPS = [("stationary", "StationaryBootstrap"), ("circular", "CircularBlockBootstrap"),
              ("moving block", "MovingBlockBootstrap")]


@pytest.mark.parametrize(("kind", "cls"), BOOTSTRAPS)
@pytest.mark.parametrize(("n", "block"), [(37, 5), (99, 9), (12, 12)])
def test_bootstrap_indices_are_arch_draws(kind, cls, n, block) -> None:
    arch_bs = pytest.importorskip("arch.bootstrap")
    bs = getattr(arch_bs, cls)(block, np.arange(n), seed=7)
    ref = np.array([data[0][0] for data in bs.bootstrap(40)])
    assert np.array_equal(bootstrap_indices(n, 40, block, kind, seed=7), ref)


@pytest.mark.parametrize("method", ["R", "max"])
@pytest.mark.parametrize("kind", ["stationary", "circular", "moving block"])
def test_mcs_p_values_equal_arch(method, kind) -> None:
    arch_bs = pytest.importorskip("arch.bootstrap")
    rng = np.random.default_rng(len(kind) + len(method))
    e = rng.standard_normal((150, 6)) * [1.0, 1.01, 1.04, 1.1, 1.25, 1.4]
    losses = pd.DataFrame(e**2, columns=list("abcdef"))
    ref = arch_bs.MCS(losses, 0.1, reps=600, block_size=6, method=method, bootstrap=kind, seed=3)
    ref.compute()
    mine = model_confidence_set(losses, 0.1, reps=600, block_size=6, method=method,
                                bootstrap=kind, seed=3)
    expected = ref.pvalues["Pvalue"].reindex(losses.columns).to_numpy()
    assert_allclose(mine.p_values.to_numpy(), expected, rtol=0, atol=1e-10)
    assert list(mine.eliminated) == [str(m) for m in ref.pvalues.index]
    assert sorted(mine.included) == sorted(ref.included)
    assert 0 < len(mine.included) < 6  # the set is informative here: the test can fail


def test_comparison_mcs_equals_arch_on_the_forecast_losses(runs) -> None:
    arch_bs = pytest.importorskip("arch.bootstrap")
    fcs = [runs["ols"], runs["ridge"], runs["pcr"]]
    cmp = ar.compare_forecasts(fcs, block_size=4, mcs_reps=500, seed=11)
    losses = cmp.errors**2
    ref = arch_bs.MCS(losses, 0.1, reps=500, block_size=4, method="R", seed=11)
    ref.compute()
    expected = ref.pvalues["Pvalue"].reindex(losses.columns).to_numpy()
    assert_allclose(cmp.table["mcs_p_value"].to_numpy(), expected, atol=1e-10, rtol=0)
    assert list(cmp.table.index[cmp.table["in_mcs"]]) == [m for m in losses.columns
                                                          if m in ref.included]


def test_mcs_default_block_and_seed_reproducible() -> None:
    losses = np.random.default_rng(0).standard_normal((64, 3)) ** 2
    a = model_confidence_set(losses)
    assert a.block_size == 8 and a.seed == 0 and a.reps == 1000
    assert a.p_values.equals(model_confidence_set(losses).p_values)
    assert not a.p_values.equals(model_confidence_set(losses, seed=1).p_values)


# --------------------------------------------------------------------- compare_forecasts

def test_forecast_benchmark_and_nesting(runs, series) -> None:
    cmp = ar.compare_forecasts([runs["ols"], runs["ridge"]], benchmark=runs["ar1"])
    y = runs["ols"].forecasts["actual"].to_numpy()
    b = runs["ar1"].forecasts["forecast"].to_numpy()
    m = runs["ridge"].forecasts["forecast"].to_numpy()
    ratio = np.sum((y - m) ** 2) / np.sum((y - b) ** 2)
    assert_allclose(cmp.table.loc["ridge", "msfe_ratio"], ratio, rtol=RTOL_EXACT)
    assert_allclose(cmp.table.loc["ridge", "oos_r2"], 1 - ratio, rtol=RTOL_EXACT)
    cw = ar.timeseries.clark_west(y, m, b)
    assert_allclose(cmp.table.loc["ridge", "cw_statistic"], cw.statistic, rtol=RTOL_EXACT)
    assert cmp.benchmark_name == "ols (benchmark)"
    assert cmp.table.index.tolist() == ["ols", "ridge", "ols (benchmark)"]
    # the AR(1) is not nested in a model without lag(y, 1): no Clark-West
    other = ar.forecast("y ~ lag(x, 1) + lag(z, 2)", series, start=START)
    cmp2 = ar.compare_forecasts([other], benchmark=runs["ar1"], names=["x only"])
    assert np.isnan(cmp2.table.loc["x only", "cw_p_value"])
    assert any("not nested" in note for note in cmp2.notes)


def test_refuses_mismatched_dates_and_horizons(runs, series) -> None:
    late = ar.forecast(BIG, series, start="2010Q1")
    with pytest.raises(DataError, match=r"'late' lacks target dates 2008Q1, 2008Q2, 2008Q3 "
                                        r"\(and 5 more\) that 'ols' has"):
        ar.compare_forecasts([runs["ols"], late], names=["ols", "late"])
    with pytest.raises(DataError, match=r"'late' lacks target dates 2008Q1, 2008Q2, 2008Q3 "
                                        r"\(and 5 more\) that 'ols' has"):
        ar.compare_forecasts([late, runs["ols"]], names=["late", "ols"])
    with pytest.raises(DataError, match=r"'late' lacks target dates 2008Q1.* that "
                                        r"'ridge \(benchmark\)' has"):
        ar.compare_forecasts([late], benchmark=runs["ridge"], names=["late"])
    h2 = ar.forecast("y ~ lag(y, 2) + lag(x, 2)", series, start=START, horizon=2)
    with pytest.raises(OptionError, match="'ols' is at horizon 1 and 'h2' at horizon 2"):
        ar.compare_forecasts([runs["ols"], h2], names=["ols", "h2"])
    other = series.assign(y=series["y"] + 1.0)
    shifted = ar.forecast(BIG, other, start=START)
    with pytest.raises(DataError, match="actual values of 'shifted' differ"):
        ar.compare_forecasts([runs["ols"], shifted], names=["ols", "shifted"])


@pytest.mark.parametrize(("kwargs", "exc", "pattern"), [
    ({"names": ["a"]}, OptionError, "one entry per forecast"),
    ({"names": ["a", "a"]}, OptionError, "distinct"),
    ({"benchmark": "median"}, OptionError, "benchmark must be"),
    ({"loss": "huber"}, OptionError, "loss must be"),
    ({"mcs_method": "SQ"}, OptionError, "mcs_method must be one of"),
    ({"bootstrap": "iid"}, OptionError, "bootstrap one of .* bootstrap=.iid."),
    ({"horizon": 4}, OptionError, r"horizon 4 was not forecast; the horizons are \[1\]|"
                                  r"at horizon 1, however: horizon=4"),
])
def test_argument_errors(runs, kwargs, exc, pattern) -> None:
    with pytest.raises(exc, match=pattern):
        ar.compare_forecasts([runs["ols"], runs["ridge"]], **kwargs)


def test_not_forecasts_is_an_error(runs) -> None:
    with pytest.raises(OptionError, match=r"forecasts\[1\] is DataFrame"):
        ar.compare_forecasts([runs["ols"], runs["ols"].forecasts])
    with pytest.raises(OptionError, match="non-empty list"):
        ar.compare_forecasts([])


def test_identical_forecasts_give_nan_tests_with_a_note(runs) -> None:
    cmp = ar.compare_forecasts([runs["ols"]], benchmark=runs["ols"], names=["same"],
                               mcs_method="R")
    row = cmp.table.loc["same"]
    assert np.isnan(row["dm_statistic"]) and np.isnan(row["gw_statistic"])
    assert row["msfe_ratio"] == 1.0
    assert any(note.startswith("same:") for note in cmp.notes)
    assert cmp.mcs is None and cmp.table["mcs_p_value"].isna().all()
    assert "identical losses" in str(cmp)
    with pytest.raises(DataError, match="models 'a' and 'c' have identical losses"):
        model_confidence_set(pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [2.0, 1, 1, 3],
                                           "c": [1.0, 2, 3, 4]}))


def test_render_pickle_and_repr(runs) -> None:
    cmp = ar.compare_forecasts([runs["ols"], runs["ridge"], runs["pcr"]])
    assert isinstance(cmp, ForecastComparison)
    text = str(cmp)
    assert "3 models against the benchmark 'mean', horizon = 1" in text
    assert "Pr(GW)" in text and "90% set: " + ", ".join(cmp.mcs.included) in text
    md = cmp.to_markdown().splitlines()
    assert md[0].startswith("| model") and md[1].startswith("|:---")
    assert len(md[2].split("|")) == 11  # model + 8 columns + the two borders
    assert md[2].split("|")[2].strip() == f"{cmp.table.loc['ols', 'msfe']:.4g}"
    tex = cmp.to_latex()
    assert "\\toprule" in tex and "% DM: Diebold-Mariano" in tex and "nan" not in tex
    back = pickle.loads(pickle.dumps(cmp))
    assert back.table.equals(cmp.table) and back.mcs.p_values.equals(cmp.mcs.p_values)
    with pytest.raises(AttributeError):
        cmp.horizon = 2  # type: ignore[misc]
    assert repr(cmp).startswith("<attnreg forecast comparison: 3 models vs 'mean', h=1")
    assert cmp._repr_html_().startswith("<div>")
    assert cmp.errors.shape == (len(cmp.targets), 4)


def test_several_horizons_compare_one_at_a_time(series) -> None:
    formula = "y ~ lag(y, h) + lag(x, h)"
    fh = {m: ar.forecast(formula, series, method=m, start=START, horizon=[1, 3])
          for m in ("ols", "ridge")}
    both = ar.compare_forecasts(list(fh.values()), horizon=3, mcs_reps=200)
    alone = [ar.forecast("y ~ lag(y, 3) + lag(x, 3)", series, method=m, start=START, horizon=3)
             for m in ("ols", "ridge")]
    ref = ar.compare_forecasts(alone, mcs_reps=200)
    assert both.horizon == 3
    assert_allclose(both.table.drop(columns="in_mcs").to_numpy(dtype=float),
                    ref.table.drop(columns="in_mcs").to_numpy(dtype=float), rtol=1e-9, equal_nan=True)
    with pytest.raises(OptionError, match=r"horizons \[1, 3\]: choose one with horizon="):
        ar.compare_forecasts(list(fh.values()))
    with pytest.raises(OptionError, match="horizon 2 was not forecast"):
        ar.compare_forecasts(list(fh.values()), horizon=2)


@pytest.mark.parametrize("d", [[1.0, 2.0, 5.0], [-3.0, 0.5, 0.25], [0.1, 0.2, 0.3]])
def test_gw_refuses_no_more_differentials_than_instruments(d) -> None:
    # n = T - 1 = 2 differentials for q = 2 instruments: n R² = n whatever the data
    with pytest.raises(DataError, match=r"more loss differentials than its 2 instrument\(s\), "
                                        r"however: n_obs=2"):
        giacomini_white(d)
    with pytest.raises(DataError, match=r"n_obs=2"):
        giacomini_white([*d, 1.0], h=2)


def test_gw_small_sample_warns_below_the_documented_minimum() -> None:
    from attnreg.exceptions import InferenceWarning
    from attnreg.timeseries.predictive_ability import GW_MIN_OBS

    d = np.random.default_rng(3).normal(size=GW_MIN_OBS + 1)
    with pytest.warns(InferenceWarning, match=f"uses {GW_MIN_OBS - 1} loss differentials, "
                                              f"fewer than {GW_MIN_OBS}"):
        small = giacomini_white(d[1:])
    assert_allclose(small.statistic, gw_by_regression(d[1:]), rtol=RTOL_EXACT)
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", InferenceWarning)
        giacomini_white(d)  # n = GW_MIN_OBS: no warning


def test_compare_with_too_few_forecasts_gives_nan_gw_and_notes(series) -> None:
    few = [ar.forecast(f, series, start=series.index[-3]) for f in (BIG, SMALL)]
    cmp = ar.compare_forecasts(few, mcs_reps=50)
    assert cmp.table.loc[["ols (1)", "ols (2)"], ["gw_statistic", "gw_p_value"]].isna().all().all()
    assert any("ols (1): the Giacomini-White test needs more loss differentials" in n
               for n in cmp.notes)
    some = [ar.forecast(f, series, start=series.index[-12]) for f in (BIG, SMALL)]
    cmp = ar.compare_forecasts(some, mcs_reps=50)
    assert np.isfinite(cmp.table.loc["ols (1)", "gw_statistic"])
    assert "GW uses 11 loss differentials, fewer than 30" in str(cmp)
    assert not any("fewer than 30" in n for n in ar.compare_forecasts(
        [ar.forecast(f, series, start=START) for f in (BIG, SMALL)], mcs_reps=50).notes)
