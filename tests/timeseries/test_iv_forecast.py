"""forecast() of an IV formula: each origin's IV fit on the rows observed by then, every part
guarded for leakage, the evaluation against the prevailing mean, pickling."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, LeakageError, OptionError
from tests.conftest import RTOL_EXACT

FORMULA = "y ~ lag(x, 1) | lag(d, 1) ~ lag(z1, 1) + lag(z2, 1)"
START = "2010Q1"


@pytest.fixture(scope="module")
def ivdata() -> pd.DataFrame:
    """A quarterly series whose lagged d is endogenous (it shares u with y) and driven by z."""
    rng = np.random.default_rng(26)
    n = 120
    z1, z2, x, u = (rng.normal(size=n) for _ in range(4))
    d = 1.0 * z1 + 0.7 * z2 + 0.6 * np.r_[u[1:], 0.0] + rng.normal(size=n) * 0.5
    y = 1.0 + np.r_[0.0, 0.5 * d[:-1] + 0.3 * x[:-1]] + u
    return pd.DataFrame({"y": y, "x": x, "d": d, "z1": z1, "z2": z2,
                         "w": rng.uniform(0.5, 2.0, n)},
                        index=pd.period_range("1990Q1", periods=n, freq="Q"))


def _by_hand(data: pd.DataFrame, window: int | None, **kw: object) -> np.ndarray:
    """The IV fit on the rows observed at each origin, predicting the next row (h = 1)."""
    first = data.index.get_loc(pd.Period(START, freq="Q"))
    out = []
    for p in range(first, len(data)):
        begin = 0 if window is None else p - window - 1  # one more row: the lags' first row
        fit = ar.attnreg(FORMULA, data.iloc[begin:p], **kw)
        out.append(fit.predict(data.iloc[p - 1:p + 1]).iloc[-1])  # the target's lags
    return np.asarray(out)


@pytest.mark.parametrize("method", ["tsls", "liml", "gmm"])
@pytest.mark.parametrize("window", [None, 30])
@pytest.mark.parametrize("weighted", [False, True])
def test_iv_forecasts_equal_a_refit_on_the_rows_observed_at_each_origin(
        ivdata, method, window, weighted) -> None:
    kw = {"weights": "w"} if weighted else {}
    scheme = "recursive" if window is None else "rolling"
    fc = ar.forecast(FORMULA, ivdata, method=method, scheme=scheme, window=window, start=START,
                     **kw)
    expected = _by_hand(ivdata, window, method=method, **kw)
    assert fc.plan.n_forecasts == expected.size == 40
    assert_allclose(fc.forecasts["forecast"], expected, rtol=RTOL_EXACT)
    assert (fc.forecasts["n_train"] == (fc.forecasts["n_train"].iloc[0] if window else
                                        np.arange(79, 119))).all()


def test_iv_forecasts_fixed_scheme_and_refit_every(ivdata) -> None:
    fixed = ar.forecast(FORMULA, ivdata, method="fuller", alpha=1.0, scheme="fixed", start=START)
    first = ivdata.index.get_loc(pd.Period(START, freq="Q"))
    fit = ar.attnreg(FORMULA, ivdata.iloc[:first], method="fuller", alpha=1.0)
    assert_allclose(fixed.forecasts["forecast"], fit.predict(ivdata).iloc[first:], rtol=RTOL_EXACT)
    every = ar.forecast(FORMULA, ivdata, start=START, refit_every=4)
    assert_allclose(every.coef.iloc[4:8], np.repeat(every.coef.iloc[[4]].to_numpy(), 4, axis=0),
                    rtol=RTOL_EXACT)
    assert list(every.coef.columns) == ["(Intercept)", "lag(x, 1)", "lag(d, 1)"]


def test_later_rows_do_not_move_earlier_iv_forecasts(ivdata) -> None:
    base = ar.forecast(FORMULA, ivdata, start=START).forecasts
    cut = pd.Period("2014Q3", freq="Q")
    noisy = ivdata.copy()
    noisy.loc[noisy.index > cut] = noisy.loc[noisy.index > cut] * 3.0 + 7.0
    moved = ar.forecast(FORMULA, noisy, start=START).forecasts
    past = base["origin"] <= cut
    assert past.sum() > 5 and (~past).sum() > 5
    assert_allclose(moved.loc[past, "forecast"], base.loc[past, "forecast"], rtol=RTOL_EXACT)
    assert not np.allclose(moved.loc[~past, "forecast"], base.loc[~past, "forecast"])


def test_iv_evaluation_against_the_prevailing_mean_by_hand(ivdata) -> None:
    fc = ar.forecast(FORMULA, ivdata, start=START)
    first = ivdata.index.get_loc(pd.Period(START, freq="Q"))
    y = ivdata["y"].to_numpy()
    actual = y[first:]
    bench = np.cumsum(y)[first - 1:-1] / np.arange(first, len(y))  # mean of y up to the origin
    msfe = np.mean((actual - _by_hand(ivdata, None)) ** 2)
    bench_msfe = np.mean((actual - bench) ** 2)
    e = fc.evaluation
    assert_allclose([e.msfe, e.benchmark_msfe, e.oos_r2],
                    [msfe, bench_msfe, 1.0 - msfe / bench_msfe], rtol=RTOL_EXACT)
    assert 0.0 <= e.dm_p_value <= 1.0 and 0.0 <= e.cw_p_value <= 1.0
    text = str(fc.summary())
    assert "method = 'tsls'" in text and "Clark-West, vs mean" in text
    assert "(both stages of the IV estimator)" in text and "spectrum" not in text


def test_iv_forecasts_pickle_and_plot(ivdata) -> None:
    import matplotlib

    matplotlib.use("Agg")
    fc = ar.forecast(FORMULA, ivdata, start=START, method="liml")
    back = pickle.loads(pickle.dumps(fc))
    pd.testing.assert_frame_equal(back.forecasts, fc.forecasts)
    pd.testing.assert_series_equal(back.evaluation, fc.evaluation)
    assert len(fc.plot().lines) == 3  # forecast, actual, prevailing mean


def test_several_horizons_of_an_iv_formula(ivdata) -> None:
    fh = ar.forecast("y ~ lag(x, h) | lag(d, h) ~ lag(z1, h) + lag(z2, h)", ivdata, start=START,
                     horizon=[1, 2])
    assert fh.horizons == [1, 2]
    one = ar.forecast(FORMULA, ivdata, start=START)
    assert_allclose(fh.at_horizon(1).predictions, one.predictions, rtol=RTOL_EXACT)


@pytest.mark.parametrize(("formula", "term"), [
    ("y ~ lag(x, 1) | lag(d, 1) ~ z1 + lag(z2, 1)", "z1"),
    ("y ~ lag(x, 1) | d ~ lag(z1, 1) + lag(z2, 1)", "d"),
    ("y ~ lag(x, 2) | lag(d, 2) ~ lag(z1, 1) + lag(z2, 2)", "lag(z1, 1)"),
])
def test_an_iv_part_not_lagged_enough_is_refused_by_name(ivdata, formula, term) -> None:
    horizon = 2 if "lag(x, 2)" in formula else 1
    with pytest.raises(LeakageError, match=rf"term '{re.escape(term)}' is lagged .* horizon is {horizon}"):
        ar.forecast(formula, ivdata, start=START, horizon=horizon)
    fc = ar.forecast(formula, ivdata, start=START, horizon=horizon, known=[term])
    assert fc.plan.n_forecasts == 40


@pytest.mark.parametrize(("kw", "match"), [
    ({"interval": "empirical"}, "interval='empirical' does not apply to a formula with an IV"),
    ({"strategy": "iterated"}, "strategy='iterated' does not apply"),
    ({"by": "g"}, "by='g' does not apply"),
    ({"cluster": "x"}, "option.s. cluster do not apply to forecast"),
    ({"method": "ridge"}, "method must be one of .* for a formula with an IV part"),
])
def test_what_iv_forecasts_do_not_do_is_refused(ivdata, kw, match) -> None:
    with pytest.raises(OptionError, match=match):
        ar.forecast(FORMULA, ivdata, start=START, **kw)


@pytest.mark.parametrize("view", ["attention", "attention_shares", "leakage_audit", "ahead"])
def test_iv_forecasts_refuse_the_views_by_name(ivdata, view) -> None:
    fc = ar.forecast(FORMULA, ivdata, start=START)
    args = ("2012Q1",) if view == "attention" else ()
    with pytest.raises(OptionError, match=rf"{view}\(\) is not available .* IV formula"):
        getattr(fc, view)(*args)


def test_an_instrument_that_looks_ahead_is_refused_by_name(ivdata) -> None:
    with pytest.raises(LeakageError, match=r"term 'lag\(z1 - z1.mean\(\), 1\)' looks ahead"):
        ar.forecast("y ~ lag(x, 1) | lag(d, 1) ~ lag(z1 - z1.mean(), 1)", ivdata, start=START)


def test_iv_forecasts_refuse_fixed_effects_and_missing_weights(ivdata) -> None:
    with pytest.raises(OptionError, match=r"IV formula with fixed effects \(g\)"):
        ar.forecast("y ~ lag(x, 1) | g | lag(d, 1) ~ lag(z1, 1)", ivdata.assign(g=1), start=START)
    holed = ivdata.copy()
    holed.loc[pd.Period("2012Q2", freq="Q"), "w"] = np.nan
    with pytest.raises(DataError, match=r"weights is missing .* 1 row.*2012Q2"):
        ar.forecast(FORMULA, holed, start=START, weights="w")
