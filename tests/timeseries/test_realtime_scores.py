"""Real-time forecasts have the scores, calibration tests, plots and summary of ordinary ones,
against the release each forecast is evaluated on (evaluate_on).

References: on unrevised vintages, the same computations on the ordinary forecasts of the
final data (the same forecasts and actuals); on revised vintages, ``scoringrules`` on the
forecasts, intervals and the release chosen, with the interval pools of a plain loop.
"""

from __future__ import annotations

import pickle

import matplotlib
import numpy as np
import pandas as pd
import pytest
import scoringrules as sr
from numpy.testing import assert_allclose
from scipy import stats

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.timeseries.calibration import pit_histogram
from attnreg.timeseries.fcplots import cumulative_gain
from attnreg.timeseries.scores import diebold_mariano_scores, forecast_scores
from tests.conftest import RTOL_EXACT, RTOL_OPTIM
from tests.timeseries.test_vintage_intervals import (
    N, START, _first_releases, _hand_pools, _vintages)

matplotlib.use("Agg")

F1 = "y ~ lag(y, 1) + lag(x, 1)"
FH = "y ~ lag(y, h) + lag(x, h)"
#: calibration columns from closed forms (Berkowitz's come from an optimiser: RTOL_OPTIM)
CLOSED = ["n", "coverage", "uc_lr", "uc_p", "ind_lr", "ind_p", "cc_lr", "cc_p"]
BERKOWITZ = ["berkowitz_lr", "berkowitz_p", "berkowitz_mu", "berkowitz_rho",
             "berkowitz_sigma2"]


@pytest.fixture(scope="module")
def long() -> pd.DataFrame:
    return _vintages()


def _unrevised() -> tuple[pd.DataFrame, pd.DataFrame]:
    """Vintages that only add dates (no revision), and the final data."""
    final = _vintages()
    final = final[final["vintage"] == N - 1].drop(columns="vintage")
    return pd.concat([final.iloc[: v + 1].assign(vintage=v) for v in range(30, N)]), final


@pytest.mark.parametrize("interval", ["gaussian", "empirical", "aci"])
def test_unrevised_vintages_score_as_the_ordinary_forecasts(interval: str) -> None:
    truncated, final = _unrevised()
    kw = dict(start=START, horizon=[1, 2], interval=interval, min_errors=10, level=0.8)
    rt = ar.forecast(FH, truncated, vintage="vintage", **kw)
    fc = ar.forecast(FH, final, **kw)
    assert_allclose(rt.evaluate(), fc.evaluate(), rtol=RTOL_EXACT)
    a, b = rt.calibration(), fc.calibration()
    assert a.interval == b.interval == interval
    assert_allclose(a.table[CLOSED], b.table[CLOSED], rtol=RTOL_EXACT)
    assert_allclose(a.table[BERKOWITZ], b.table[BERKOWITZ], rtol=RTOL_OPTIM)
    for h in (1, 2):
        assert_allclose(a.pit[h], b.pit[h], rtol=RTOL_EXACT)
    s_rt, s_fc = rt.summary(), fc.summary()
    for x, y in zip(s_rt.tables[-2:], s_fc.tables[-2:], strict=True):  # scores, tests
        assert list(x.columns) == list(y.columns)
        assert_allclose(x.to_numpy(float), y.to_numpy(float), rtol=RTOL_OPTIM)


def test_unrevised_quantile_forecasts_score_as_the_ordinary_ones() -> None:
    truncated, final = _unrevised()
    kw = dict(start=START, method="quantreg", tau=[0.1, 0.5, 0.9], interval="quantile",
              level=0.8)
    rt = ar.forecast(F1, truncated, vintage="vintage", **kw)
    fc = ar.forecast(F1, final, **kw)
    assert rt.taus == fc.taus == (0.1, 0.5, 0.9)
    assert_allclose(rt.quantile_path, fc.quantile_path, rtol=RTOL_EXACT)
    assert_allclose(rt.forecasts[["q0.1", "q0.9"]], fc.forecasts[["q0.1", "q0.9"]],
                    rtol=RTOL_EXACT)
    assert_allclose(rt.quantile_evaluation(), fc.quantile_evaluation(), rtol=RTOL_EXACT)
    assert_allclose(rt.evaluate(), fc.evaluate(), rtol=RTOL_EXACT)
    table = rt.summary().tables[-1]
    assert table.loc["Pinball loss, tau = 0.9", "Estimate"] == \
        rt.quantile_evaluation().loc[(1, 0.9), "pinball"]


@pytest.mark.parametrize("evaluate_on", ["first", "latest"])
def test_gaussian_scores_against_the_release_evaluated_on(long, evaluate_on) -> None:
    rt = ar.forecast(F1, long, vintage="vintage", start=START, interval="gaussian",
                     level=0.8, evaluate_on=evaluate_on)
    f = rt.forecasts
    release = (_first_releases(long) if evaluate_on == "first"
               else long[long["vintage"] == N - 1]["y"]).reindex(f.index)
    assert_allclose(f["actual"], release, rtol=RTOL_EXACT)
    df = f["n_train"].to_numpy() - 3.0  # OLS with three coefficients
    assert_allclose(rt.df_path, df, rtol=RTOL_EXACT)
    scale = (f["upper"] - f["lower"]).to_numpy() / (2 * stats.t.ppf(0.9, df))
    y, m = release.to_numpy(), f["forecast"].to_numpy()
    ev = rt.evaluate().loc[1]
    assert ev["crps"] == pytest.approx(sr.crps_t(y, df, m, scale).mean(), rel=RTOL_EXACT)
    assert ev["log"] == pytest.approx(sr.logs_t(y, df, m, scale).mean(), rel=RTOL_EXACT)
    assert ev["interval"] == pytest.approx(
        sr.interval_score(y, f["lower"].to_numpy(), f["upper"].to_numpy(), 0.2).mean(),
        rel=RTOL_EXACT)
    assert_allclose(forecast_scores(rt)["pit"], stats.t.cdf((y - m) / scale, df),
                    rtol=RTOL_EXACT)


def test_empirical_scores_use_the_pools_known_in_real_time(long) -> None:
    rt = ar.forecast(F1, long, vintage="vintage", start=START, interval="empirical",
                     level=0.8, min_errors=8, evaluate_on="latest")
    f = rt.forecasts
    pools = _hand_pools(f, _first_releases(long))
    has = f["lower"].notna().to_numpy()
    y = f["actual"].to_numpy()
    crps = [sr.crps_ensemble(y[i], f["forecast"].iloc[i] + pools[i])
            for i in np.flatnonzero(has)]
    assert rt.evaluate().loc[1, "crps"] == pytest.approx(np.mean(crps), rel=RTOL_EXACT)
    assert_allclose(rt.n_errors[has], [p.size for p in np.array(pools, dtype=object)[has]])


def test_forecasts_without_their_release_are_not_scored(long) -> None:
    rt = ar.forecast(F1, long, vintage="vintage", start=START, interval="gaussian",
                     evaluate_on=3)
    out = int(rt.forecasts["actual"].isna().sum())
    assert out > 0 and rt.evaluate().loc[1, "n_scored"] == len(rt.forecasts) - out
    assert rt.calibration().table.loc[1, "n"] == len(rt.forecasts) - out


def test_real_time_summary_holds_the_numbers(long) -> None:
    kw = dict(vintage="vintage", start=START, level=0.8, min_errors=8)
    rt = ar.forecast(F1, long, interval="gaussian", **kw)
    bench = ar.forecast(F1, long, interval="empirical", **kw)
    s = rt.summary(benchmark=bench)
    accuracy, intervals, density = s.tables
    e = rt.evaluation
    assert accuracy.loc["OOS R-squared", "Estimate"] == e.oos_r2
    assert accuracy.loc["Diebold-Mariano (HLN), vs mean", "p-value"] == e.dm_p_value
    assert accuracy.loc["OOS R-squared, revised data", "Estimate"] == \
        rt.leakage_audit().oos_r2_revised
    assert intervals.loc["gaussian intervals", "Coverage"] == e.coverage
    assert density.loc["CRPS", "Estimate"] == rt.evaluate().loc[1, "crps"]
    assert density.loc["Kupiec LR uc, chi2(1)", "p-value"] == rt.calibration().table.loc[1, "uc_p"]
    dm = diebold_mariano_scores(rt, bench, "crps")
    assert density.loc["Diebold-Mariano (HLN) on CRPS, vs benchmark", "p-value"] == dm.p_value
    back = pickle.loads(pickle.dumps(rt))
    assert str(back.summary(benchmark=bench)) == str(s)


def test_real_time_horizons_summary(long) -> None:
    rh = ar.forecast(FH, long, vintage="vintage", start=START, horizon=[1, 2],
                     interval="aci", level=0.8, min_errors=8)
    accuracy, scores, tests = rh.summary().tables
    ev, cal = rh.evaluate(), rh.calibration().table
    assert_allclose(accuracy["OOS R2"], rh.evaluation["oos_r2"], rtol=RTOL_EXACT)
    assert_allclose(scores["CRPS"], ev["crps"], rtol=RTOL_EXACT)
    assert_allclose(tests["Pr(cc)"], cal["cc_p"], rtol=RTOL_EXACT)
    assert "Real-time out-of-sample forecasts at horizons 1, 2: y ~ lag(y, h)" in str(rh.summary())


def test_real_time_plots(long) -> None:
    rh = ar.forecast(FH, long, vintage="vintage", start=START, horizon=[1, 2],
                     interval="gaussian", evaluate_on=2)
    one = rh.at_horizon(1)
    f = one.forecasts.dropna(subset=["actual"])
    ax = one.plot("cumulative")
    assert_allclose(ax.lines[0].get_ydata(), cumulative_gain(f["error"], f["benchmark_error"]))
    bars = [p.get_height() for p in one.plot("pit", bins=5).patches]
    assert_allclose(bars, pit_histogram(forecast_scores(one)["pit"], 5)["density"])
    assert len(rh.plot("coverage", window=10).lines) == 2 + 1  # a line per horizon, nominal
    assert [ln.get_label() for ln in rh.plot("forecast", horizon=2).lines] == [
        "actual", "forecast", "prevailing mean"]


def test_what_real_time_forecasts_cannot_score_is_refused(long) -> None:
    plain = ar.forecast(F1, long, vintage="vintage", start=START)
    with pytest.raises(OptionError, match=r"density scores and calibration need forecast "
                                          r"intervals: call forecast\(\.\.\., vintage=\.\.\., "
                                          r"interval="):
        plain.evaluate()
    with pytest.raises(OptionError, match=r"quantile scores need quantile forecasts .* not "
                                          r"method 'ols'"):
        plain.quantile_evaluation()
    with pytest.raises(OptionError, match=r"real-time forecasts keep no coefficient, tuning or "
                                          r"attention paths .* however: kind='coef'"):
        plain.plot("coef")
    with pytest.raises(OptionError, match=r"kind='coverage' needs forecast intervals"):
        plain.plot("coverage")
    rh = ar.forecast(FH, long, vintage="vintage", start=START, horizon=[1, 2])
    with pytest.raises(OptionError, match=r"horizons \[1, 2\]: choose one with horizon="):
        rh.plot("forecast")
    with pytest.raises(OptionError, match=r"kind 'oos_r2' takes the options \['window'\], "
                                          r"however: bins="):
        rh.plot("oos_r2", bins=3)


def test_real_time_summary_text(long, snapshot) -> None:
    rt = ar.forecast(F1, long, vintage="vintage", start=START, interval="aci", level=0.8,
                     min_errors=8, aci_gamma=0.05)
    snapshot("realtime_summary.txt", str(rt.summary()))
