"""fc.ahead(): forecasts past the end of the data, each equal to a hand fit on all rows."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, OptionError
from attnreg.timeseries.ahead import future_labels
from tests.conftest import RTOL_EXACT, RTOL_SM

FORMULA = "y ~ lag(y, h) + lag(x, h)"


def hand_frame(series: pd.DataFrame, h: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The h-step direct regression's rows, and its regressors at the target T + h."""
    rows = pd.DataFrame({"y": series["y"], "ylag": series["y"].shift(h),
                         "xlag": series["x"].shift(h)}).dropna()
    new = pd.DataFrame({"ylag": [series["y"].iloc[-1]], "xlag": [series["x"].iloc[-1]]})
    return rows, new


def test_ols_ahead_equals_the_h_step_regression_on_all_rows(series) -> None:
    fc = ar.forecast(FORMULA, series, start="2015Q1", horizon=[1, 3], interval="gaussian",
                     level=0.8)
    out = fc.ahead()
    assert list(out.columns) == ["origin", "forecast", "lower", "upper", "n_train"]
    assert list(out.index.get_level_values("horizon")) == [1, 3]
    assert list(out.index.get_level_values("target").astype(str)) == ["2022Q3", "2023Q1"]
    for h in (1, 3):
        rows, new = hand_frame(series, h)
        ref = sm.OLS(rows["y"], sm.add_constant(rows[["ylag", "xlag"]])).fit()
        band = ref.get_prediction(np.r_[1.0, new.iloc[0]][None, :]).summary_frame(alpha=0.2)
        got = out.loc[h].iloc[0]
        assert_allclose(got["forecast"], band["mean"].iloc[0], rtol=RTOL_SM)
        assert_allclose([got["lower"], got["upper"]],
                        [band["obs_ci_lower"].iloc[0], band["obs_ci_upper"].iloc[0]], rtol=RTOL_SM)
        own = ar.attnreg("y ~ ylag + xlag", rows).predict(new, interval="prediction", level=0.8)
        assert_allclose([got["lower"], got["upper"]], own[["lwr", "upr"]].iloc[0], rtol=RTOL_EXACT)
        assert got["origin"] == series.index[-1] and got["n_train"] == len(rows)
    assert_allclose(fc.at_horizon(3).ahead().to_numpy()[:, 1:].astype(float),
                    out.loc[[3]].to_numpy()[:, 1:].astype(float), rtol=RTOL_EXACT)


def test_empirical_ahead_adds_the_runs_own_error_quantiles(series) -> None:
    fc = ar.forecast("y ~ lag(y, 2) + lag(x, 2)", series, start="2010Q1", horizon=2,
                     interval="empirical", level=0.8)
    got = fc.ahead().iloc[0]
    errors = fc.forecasts["error"].to_numpy()  # all observed by the last origin
    assert_allclose([got["lower"], got["upper"]],
                    got["forecast"] + np.quantile(errors, [0.1, 0.9]), rtol=RTOL_EXACT)
    wide = fc.ahead(interval="empirical", level=0.95).iloc[0]
    assert wide["upper"] - wide["lower"] > got["upper"] - got["lower"]


def test_ahead_after_an_aci_run_uses_the_empirical_interval(series) -> None:
    """The adaptive level is not carried past the data: the nominal level's error quantiles."""
    kw = dict(start="2010Q1", horizon=2, level=0.8)
    aci = ar.forecast("y ~ lag(y, 2) + lag(x, 2)", series, interval="aci", **kw).ahead()
    emp = ar.forecast("y ~ lag(y, 2) + lag(x, 2)", series, interval="empirical", **kw).ahead()
    assert_allclose(aci[["forecast", "lower", "upper"]].to_numpy(dtype=float),
                    emp[["forecast", "lower", "upper"]].to_numpy(dtype=float), rtol=RTOL_EXACT)


@pytest.mark.parametrize(("method", "options"), [("ridge", {"lam": "gcv"}), ("pcr", {"k": 1})])
def test_ridge_and_pcr_ahead_equal_their_fit_on_all_rows(series, method, options) -> None:
    fc = ar.forecast(FORMULA, series, method=method, start="2018Q1", horizon=[1, 2], **options)
    out = fc.ahead()  # no interval asked in the run: the fit's prediction interval
    for h in (1, 2):
        rows, new = hand_frame(series, h)
        ref = ar.attnreg("y ~ ylag + xlag", rows, method=method, **options)
        band = ref.predict(new, interval="prediction", level=0.9)
        assert_allclose(out.loc[h][["forecast", "lower", "upper"]].to_numpy(dtype=float)[0],
                        band[["fit", "lwr", "upr"]].to_numpy()[0], rtol=RTOL_EXACT)


def test_rolling_ahead_uses_the_last_window_rows(series) -> None:
    fc = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", series, scheme="rolling", window=30,
                     start="2015Q1")
    rows, new = hand_frame(series, 1)
    ref = ar.attnreg("y ~ ylag + xlag", rows.iloc[-30:])
    got = fc.ahead().iloc[0]
    assert got["n_train"] == 30
    assert_allclose(got["forecast"], ref.predict(new).iloc[0], rtol=RTOL_EXACT)


def test_iterated_ahead_recurses_the_one_step_fit(series) -> None:
    fc = ar.forecast("y ~ lag(y, 1) + lag(y, 2)", series, start="2015Q1", horizon=[1, 2, 3],
                     strategy="iterated", interval="gaussian")
    out = fc.ahead()
    y = series["y"]
    rows = pd.DataFrame({"y": y, "l1": y.shift(1), "l2": y.shift(2)}).dropna()
    ref = sm.OLS(rows["y"], sm.add_constant(rows[["l1", "l2"]])).fit()
    c, a1, a2 = ref.params.to_numpy()
    path = list(y.iloc[-2:])
    for _ in range(3):
        path.append(c + a1 * path[-1] + a2 * path[-2])
    assert_allclose(out["forecast"].to_numpy(dtype=float), path[2:], rtol=RTOL_SM)
    band = ref.get_prediction(np.array([[1.0, y.iloc[-1], y.iloc[-2]]])).summary_frame(alpha=0.1)
    assert_allclose(out.loc[1, "lower"].iloc[0], band["obs_ci_lower"].iloc[0], rtol=RTOL_SM)
    psi2 = 1.0 + a1**2  # h = 2: ψ_0 = 1, ψ_1 = a1
    half = 1.6448536269514722 * np.sqrt(ref.scale * psi2)  # z(0.95) for a 90 % interval
    assert_allclose(out.loc[2, "upper"].iloc[0] - out.loc[2, "forecast"].iloc[0], half,
                    rtol=RTOL_SM)


def test_softmax_ahead_equals_its_fit_on_all_rows(series) -> None:
    opts = dict(heads=2, max_iter=15, seed=1)
    fc = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", series, method="softmax", start="2021Q3",
                     refit_every=10, min_errors=3, interval="empirical", **opts)
    got = fc.ahead().iloc[0]
    rows, new = hand_frame(series, 1)
    ref = ar.attnreg("y ~ ylag + xlag", rows, method="softmax", **opts)
    assert_allclose(got["forecast"], ref.predict(new).iloc[0], rtol=RTOL_EXACT)
    errors = fc.forecasts["error"].to_numpy()
    assert_allclose(got["upper"] - got["forecast"], np.quantile(errors, 0.95), rtol=RTOL_EXACT)
    with pytest.raises(OptionError, match=r"interval='gaussian' needs a linear fit.*'softmax'"):
        fc.ahead(interval="gaussian")


@pytest.mark.parametrize(("index", "expected"), [
    (pd.period_range("2019Q3", periods=30, freq="Q"), ["2027Q1", "2027Q2"]),
    (pd.period_range("2019-07", periods=30, freq="M"), ["2022-01", "2022-02"]),
    (pd.date_range("2019-07-31", periods=30, freq="ME"), ["2022-01-31", "2022-02-28"]),
    (pd.date_range("2019-07-01", periods=30, freq="MS").as_unit("ns")._with_freq(None),
     ["2022-01-01", "2022-02-01"]),  # no freq set: inferred
    (pd.RangeIndex(1, 31), ["31", "32"]),
    (pd.Index(np.arange(1990, 2050, 2)), ["2050", "2052"]),
])
def test_target_dates_continue_the_datas_frequency(index, expected) -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"y": rng.normal(size=30), "x": rng.normal(size=30)}, index=index)
    out = ar.forecast(FORMULA, frame, start=index[20], horizon=[1, 2]).ahead()
    targets = out.index.get_level_values("target")
    shown = targets.strftime("%F") if isinstance(targets, pd.DatetimeIndex) else targets.astype(str)
    assert list(shown) == expected
    assert list(future_labels(index, 2).astype(str)) == list(targets.astype(str))


def test_ahead_refuses_what_it_cannot_know(series) -> None:
    trend = series.assign(t=np.arange(len(series), dtype=float))
    fc = ar.forecast("y ~ lag(y, 1) + t", trend, start="2015Q1", known=["t"])
    with pytest.raises(DataError, match=r"target Period\('2022Q3'.*the term\(s\) 't', lagged"):
        fc.ahead()
    with pytest.raises(DataError, match=r"cannot continue the data's dates"):
        future_labels(pd.DatetimeIndex(["2000-01-01", "2000-01-02", "2000-01-05"]), 1)


def test_known_terms_take_their_future_values_from_rows_past_the_last_response(series) -> None:
    trend = series.assign(t=np.arange(len(series), dtype=float))
    future = pd.DataFrame({"t": [90.0, 91.0]}, index=pd.period_range("2022Q3", periods=2, freq="Q"))
    given = pd.concat([trend, future])  # known values of the next periods, response missing
    fc = ar.forecast("y ~ lag(y, 2) + t", given, start="2015Q1", known=["t"], horizon=2)
    rows = trend.assign(ylag=trend["y"].shift(2)).dropna()
    ref = ar.attnreg("y ~ ylag + t", rows)
    got = fc.ahead()
    assert list(got.index.get_level_values("target").astype(str)) == ["2022Q4"]
    assert got["origin"].iloc[0] == trend.index[-1]
    assert_allclose(got["forecast"].iloc[0],
                    ref.predict(pd.DataFrame({"ylag": [trend["y"].iloc[-1]], "t": [91.0]})).iloc[0],
                    rtol=RTOL_EXACT)


def test_ahead_checks_its_options_and_pickles(series) -> None:
    fc = ar.forecast("y ~ lag(y, 1)", series, start="2015Q1")
    with pytest.raises(OptionError, match=r"interval must be 'gaussian' or 'empirical'.*'normal'"):
        fc.ahead(interval="normal")
    with pytest.raises(OptionError, match=r"level must be a number in \(0, 1\)"):
        fc.ahead(level=90)
    back = pickle.loads(pickle.dumps(fc))
    pd.testing.assert_frame_equal(back.ahead(), fc.ahead())


@pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")  # 3 epochs
def test_block_ahead_equals_its_network_on_all_rows(series) -> None:
    block = {"variant": "trimmed", "pca_components": 2, "max_epochs": 3, "seed": 3}
    fc = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", series, method="block", start="2022Q1",
                     min_errors=1, **block)
    got = fc.ahead(level=0.5).iloc[0]
    rows, new = hand_frame(series, 1)
    ref = ar.attnreg("y ~ ylag + xlag", rows, method="block", **block)
    # the same network; float32 products of one row or a batch may round differently
    assert got["forecast"] == pytest.approx(ref.predict(new).iloc[0], rel=1e-5)
    errors = fc.forecasts["error"].to_numpy()
    assert_allclose([got["lower"], got["upper"]] - got["forecast"],
                    np.quantile(errors, [0.25, 0.75]), rtol=RTOL_EXACT)
