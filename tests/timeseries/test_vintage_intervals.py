"""Real-time forecasts at several horizons, with intervals and by series (forecast(...,
vintage=, horizon=[...], interval=, by=)).

References: a hand-written as-of loop (at each origin the latest vintage published by it, its
rows up to the origin, statsmodels OLS with its prediction interval; empirical and adaptive
intervals from the first-release errors published by the origin, by plain loops), the
ordinary forecasts on unrevised vintages, and each series forecast alone.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose
from scipy import stats

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.timeseries.realtime import RealTimeHorizons
from tests.conftest import RTOL_EXACT, RTOL_SM

N, FIRST_VINTAGE, START = 90, 25, 50


def _vintages(seed: int = 0) -> pd.DataFrame:
    """Vintage v holds dates 0..v; y's first release is noisy, revised once a quarter later."""
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(N), np.zeros(N)
    for t in range(1, N):
        y[t] = 0.5 * y[t - 1] + 0.4 * x[t - 1] + rng.standard_normal()
    noise = rng.standard_normal(N)
    frames = []
    for v in range(FIRST_VINTAGE, N):
        d = np.arange(v + 1)
        frames.append(pd.DataFrame({"vintage": v, "y": y[d] + noise[d] * (d == v), "x": x[d]},
                                   index=d))
    return pd.concat(frames)


def _as_of_gaussian(long: pd.DataFrame, h: int, level: float) -> pd.DataFrame:
    """Forecasts and Gaussian intervals by a plain loop over origins with statsmodels."""
    rows = []
    for target in range(START, N):
        origin = target - h
        frame = long[long["vintage"] == origin].drop(columns="vintage")  # vintage t at t
        lagged = pd.DataFrame({"y": frame["y"], "ly": frame["y"].shift(h),
                               "lx": frame["x"].shift(h)}).dropna()
        fit = sm.OLS(lagged["y"], sm.add_constant(lagged[["ly", "lx"]])).fit()
        x_new = np.array([[1.0, frame["y"].loc[origin], frame["x"].loc[origin]]])
        pred = fit.get_prediction(x_new)
        if h == 1:  # the fit's prediction interval
            half = stats.t.ppf(0.5 + level / 2, fit.df_resid) * float(pred.se_obs[0])
        else:  # z times the residual standard error of the h-step regression
            half = stats.norm.ppf(0.5 + level / 2) * np.sqrt(fit.scale)
        m = float(pred.predicted_mean[0])
        rows.append((m, m - half, m + half))
    return pd.DataFrame(rows, columns=["forecast", "lower", "upper"],
                        index=pd.Index(range(START, N), name="target"))


def _first_releases(long: pd.DataFrame) -> pd.Series:
    return long.sort_values("vintage", kind="stable").groupby(level=0)["y"].first()


@pytest.fixture(scope="module")
def long() -> pd.DataFrame:
    return _vintages()


def test_several_horizons_with_gaussian_intervals_equal_the_as_of_loop(long: pd.DataFrame
                                                                       ) -> None:
    rt = ar.forecast("y ~ lag(y, h) + lag(x, h)", long, vintage="vintage", start=START,
                     horizon=[1, 3], interval="gaussian", level=0.8)
    assert isinstance(rt, RealTimeHorizons) and rt.horizons == [1, 3]
    assert rt.forecasts.index.names == ["horizon", "target"]
    for h in (1, 3):
        ref = _as_of_gaussian(long, h, 0.8)
        part = rt.at_horizon(h).forecasts
        assert_allclose(part[["forecast", "lower", "upper"]], ref, rtol=RTOL_SM)
        inside = (part["actual"] >= part["lower"]) & (part["actual"] <= part["upper"])
        assert rt.evaluation.loc[h, "coverage"] == pytest.approx(inside.mean(), rel=RTOL_EXACT)
    assert rt.evaluation.loc[1, "level"] == 0.8
    audit = rt.leakage_audit()
    assert audit.index.tolist() == [1, 3]
    assert_allclose(audit.loc[3].to_numpy(float), rt.at_horizon(3).leakage_audit().to_numpy(float),
                    rtol=RTOL_EXACT)
    assert "horizons [1, 3]" in repr(rt)
    pd.testing.assert_frame_equal(pickle.loads(pickle.dumps(rt)).forecasts, rt.forecasts)


def _hand_pools(f: pd.DataFrame, first: pd.Series) -> list[np.ndarray]:
    """At each origin, the first-release errors of the targets published by it."""
    err = first.reindex(f.index).to_numpy() - f["forecast"].to_numpy()
    target = f.index.to_numpy()
    return [err[target <= origin] for origin in f["origin"]]  # vintage s publishes date s


@pytest.mark.parametrize("h", [1, 2])
def test_empirical_intervals_use_the_first_release_errors_published_by_the_origin(
        long: pd.DataFrame, h: int) -> None:
    rt = ar.forecast(f"y ~ lag(y, {h}) + lag(x, {h})", long, vintage="vintage", start=START,
                     horizon=h, interval="empirical", level=0.8, min_errors=8,
                     evaluate_on="latest")
    f = rt.forecasts
    for i, pool in enumerate(_hand_pools(f, _first_releases(long))):
        if pool.size < 8:
            assert np.isnan(f["lower"].iloc[i]) and np.isnan(f["upper"].iloc[i])
            continue
        q = np.quantile(pool, [0.1, 0.9])
        assert_allclose(f[["lower", "upper"]].iloc[i], f["forecast"].iloc[i] + q,
                        rtol=RTOL_EXACT)
    assert rt.evaluation["n_intervals"] == f["lower"].notna().sum()


def test_adaptive_intervals_by_a_plain_loop(long: pd.DataFrame) -> None:
    level, gamma, n_min = 0.8, 0.05, 8
    rt = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", long, vintage="vintage", start=START,
                     interval="aci", level=level, min_errors=n_min, aci_gamma=gamma)
    f = rt.forecasts
    first = _first_releases(long).reindex(f.index).to_numpy()
    pred, err = f["forecast"].to_numpy(), first - f["forecast"].to_numpy()
    miss = np.zeros(len(f))  # α - err_j of each earlier forecast with an interval
    for i in range(len(f)):
        known = f.index.to_numpy() <= f["origin"].iloc[i]
        if known.sum() < n_min:
            assert np.isnan(f["lower"].iloc[i])
            continue
        alpha = np.clip((1 - level) + gamma * miss[known].sum(), 0.0, 1.0)
        lo, up = pred[i] + np.quantile(err[known], [alpha / 2, 1 - alpha / 2])
        assert_allclose([f["lower"].iloc[i], f["upper"].iloc[i]], [lo, up], rtol=RTOL_EXACT)
        miss[i] = (1 - level) - float(first[i] < lo or first[i] > up)


@pytest.mark.parametrize("interval", ["gaussian", "empirical", "aci"])
def test_unrevised_vintages_give_the_ordinary_intervals(interval: str) -> None:
    final = _vintages()
    final = final[final["vintage"] == N - 1].drop(columns="vintage")
    truncated = pd.concat([final.iloc[: v + 1].assign(vintage=v) for v in range(30, N)])
    kw = dict(start=START, horizon=[1, 2], interval=interval, min_errors=10, level=0.8)
    rt = ar.forecast("y ~ lag(y, h) + lag(x, h)", truncated, vintage="vintage", **kw)
    fc = ar.forecast("y ~ lag(y, h) + lag(x, h)", final, **kw)
    cols = ["forecast", "lower", "upper"]
    assert_allclose(rt.forecasts[cols], fc.forecasts[cols], rtol=RTOL_EXACT)


def test_later_vintages_do_not_move_earlier_intervals(long: pd.DataFrame) -> None:
    kw = dict(vintage="vintage", start=START, interval="aci", min_errors=5, aci_gamma=0.05)
    honest = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", long, **kw).forecasts
    cut = 70
    changed = long.copy()
    late = changed["vintage"] > cut
    changed.loc[late, "y"] = np.random.default_rng(3).normal(size=late.sum()) * 10
    moved = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", changed, **kw).forecasts
    early = honest["origin"] <= cut
    cols = ["forecast", "lower", "upper"]
    pd.testing.assert_frame_equal(moved.loc[early, cols], honest.loc[early, cols])
    assert not np.allclose(moved.loc[~early, "upper"], honest.loc[~early, "upper"])


def test_quantile_intervals_are_the_origins_rq_fit(long: pd.DataFrame) -> None:
    rt = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", long, vintage="vintage", start=START,
                     method="quantreg", tau=[0.1, 0.5, 0.9], interval="quantile", level=0.8)
    row = rt.forecasts.loc[70]
    frame = long[long["vintage"] == row["origin"]].drop(columns="vintage").loc[:row["origin"]]
    fit = ar.attnreg("y ~ lag(y, 1) + lag(x, 1)", frame, method="quantreg",
                     tau=[0.1, 0.5, 0.9])
    x_new = np.array([1.0, frame["y"].iloc[-1], frame["x"].iloc[-1]])
    q = x_new @ fit.coef.to_numpy()  # one column per τ
    assert_allclose([row["lower"], row["forecast"], row["upper"]], np.sort(q), rtol=RTOL_EXACT)


def test_by_series_equals_each_series_alone(long: pd.DataFrame) -> None:
    other = _vintages(1)
    both = pd.concat([long.assign(g="a"), other.assign(g="b")])
    kw = dict(vintage="vintage", start=START, horizon=[1, 2], interval="gaussian")
    panel = ar.forecast("y ~ lag(y, h) + lag(x, h)", both, by="g", **kw)
    assert panel.series == ["a", "b"]
    for key, alone in (("a", long), ("b", other)):
        ref = ar.forecast("y ~ lag(y, h) + lag(x, h)", alone, **kw)
        pd.testing.assert_frame_equal(panel[key].forecasts, ref.forecasts)
    assert panel.pooled_by_horizon.index.tolist() == [1, 2]
    assert panel.evaluation.index.names == ["horizon", "series"]


def test_real_time_interval_errors(long: pd.DataFrame) -> None:
    with pytest.raises(OptionError, match=r"interval must be one of .*, however: "
                                          r"interval='normal'"):
        ar.forecast("y ~ lag(y, 1)", long, vintage="vintage", start=START, interval="normal")
    with pytest.raises(OptionError, match=r"interval='gaussian' needs the residual scale"):
        ar.forecast("y ~ lag(y, 1)", long, vintage="vintage", start=START, interval="gaussian",
                    method="quantreg", tau=0.5)
    with pytest.raises(OptionError, match=r"horizon=\[\] gives nothing to forecast"):
        ar.forecast("y ~ lag(y, 1)", long, vintage="vintage", start=START, horizon=[])


def test_by_series_real_time_summary(long: pd.DataFrame) -> None:
    both = pd.concat([long.assign(g="a"), _vintages(1).assign(g="b")])
    panel = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", both, vintage="vintage", by="g",
                        start=START)
    s = panel.summary()
    assert s.table.loc["a", "OOS R2"] == panel["a"].evaluation["oos_r2"]
    assert s.table.loc["Pooled", "OOS R2"] == panel.pooled["oos_r2"]
    assert np.isnan(s.table.loc["a", "CW p-value"])  # no Clark-West test in real time
    assert "horizon = 1, 2 series" in str(s)
