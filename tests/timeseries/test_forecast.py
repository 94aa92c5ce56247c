"""Forecasting: no look-ahead, fast paths equal refits, evaluation, rolling fits, guards."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from statsmodels.regression.rolling import RollingOLS

import attnreg as ar
from attnreg._progress import Progress
from attnreg.exceptions import DataError, LeakageError, OptionError
from attnreg.api import fit_spectral_design
from attnreg.timeseries.plan import subdesign
from attnreg.timeseries._running import _run_refits
from tests.conftest import RTOL_SM

FORMULA = "y ~ lag(y, 1) + lag(x, 1) + lag(z, 2)"


CASES = [("ols", {}), ("ridge", {"lam": "gcv"}), ("ridge", {"lam": 2.0}), ("pcr", {"k": "gcv"}),
         ("pcr", {"k": 2})]
SCHEMES = [("recursive", None), ("rolling", 30), ("fixed", None)]


@pytest.mark.parametrize(("method", "options"), CASES)
@pytest.mark.parametrize(("scheme", "window"), SCHEMES)
def test_future_perturbation_leaves_past_forecasts_unchanged(series, method, options, scheme,
                                                             window) -> None:
    kw = dict(method=method, scheme=scheme, window=window, start="2010Q1", **options)
    base = ar.forecast(FORMULA, series, **kw).forecasts
    cut = pd.Period("2013Q3", freq="Q")  # perturb every value after this date
    noisy = series.copy()
    later = noisy.index > cut
    noisy.loc[later] = noisy.loc[later] * 3.0 + 7.0
    moved = ar.forecast(FORMULA, noisy, **kw).forecasts
    past = base["origin"] <= cut
    assert past.sum() > 5 and (~past).sum() > 5
    assert_allclose(moved.loc[past, "forecast"], base.loc[past, "forecast"], rtol=1e-12, atol=1e-12)
    assert_allclose(moved.loc[past, "benchmark"], base.loc[past, "benchmark"], rtol=1e-12)
    assert not np.allclose(moved.loc[~past, "forecast"], base.loc[~past, "forecast"])


@pytest.mark.parametrize(("method", "options"), [("ols", {}), ("ridge", {"lam": 0.7}),
                                                 ("ridge", {"lam": "gcv"})])
@pytest.mark.parametrize(("scheme", "window"), SCHEMES[:2])
def test_updating_path_equals_refits(series, method, options, scheme, window) -> None:
    res = ar.forecast(FORMULA, series, method=method, scheme=scheme, window=window,
                      start="2008Q1", **options)
    assert res.engine == "updating"
    plan = res.plan
    if options.get("lam") == "gcv":  # same λ per origin: refit with the λ the updater chose
        for i in range(0, plan.n_forecasts, 9):
            ref = fit_spectral_design(subdesign(plan.design, plan.rows(i)), "ridge",
                                      float(res.tuning_path[i]), standardize=True)
            assert_allclose(res.coef_path[i], ref.coef.to_numpy(), rtol=1e-8)
        return
    naive = _run_refits(plan, Progress(plan.n_forecasts, "", False))
    assert naive.engine == "refit"
    assert_allclose(res.predictions, naive.predictions, rtol=1e-8)
    assert_allclose(res.coef_path, naive.coef_path, rtol=1e-8, atol=1e-10)


def test_ridge_gcv_lambda_matches_attnreg_choice(series) -> None:
    res = ar.forecast(FORMULA, series, method="ridge", start="2015Q1")
    i = 4
    ref = fit_spectral_design(subdesign(res.plan.design, res.plan.rows(i)), "ridge", "gcv",
                              standardize=True)
    # two optimisers of the same closed-form GCV: λ within 1%, coefficients within 1e-3
    assert_allclose(res.tuning_path[i], ref.lam, rtol=1e-2)
    assert_allclose(res.coef_path[i], ref.coef.to_numpy(), rtol=1e-3)


def test_evaluation_against_hand_computation(series) -> None:
    res = ar.forecast("y ~ lag(y, 2) + lag(x, 2)", series, start="2008Q1", horizon=2)
    f = res.forecasts
    e, b = f["actual"] - f["forecast"], f["actual"] - f["benchmark"]
    ev = res.evaluation
    assert_allclose(ev["msfe"], np.mean(e**2))
    assert_allclose(ev["oos_r2"], 1 - np.sum(e**2) / np.sum(b**2))
    assert_allclose(ev["msfe_ratio"], np.sum(e**2) / np.sum(b**2))
    # prevailing mean: mean of every y observed at or before the origin
    plan = res.plan
    j = 7
    origin = series.index.get_loc(f["origin"].iloc[j])
    assert_allclose(f["benchmark"].iloc[j], series["y"].to_numpy()[: origin + 1].mean(),
                    rtol=1e-12)  # cumulative sums against a direct mean
    # the origin is horizon periods before the target and trains on rows observed by then
    assert (f.index - f["origin"]).map(lambda d: d.n).eq(2).all()
    last_train = plan.design.row_labels[plan.train_stop - 1]
    assert (pd.PeriodIndex(last_train) <= pd.PeriodIndex(f["origin"])).all()
    # DM with h=2: HLN-corrected statistic from the loss differential, by hand
    d = e.to_numpy() ** 2 - b.to_numpy() ** 2
    n = d.size
    dc = d - d.mean()
    lrv = (dc @ dc + 2 * (dc[1:] @ dc[:-1])) / n
    stat = d.mean() / np.sqrt(lrv / n) * np.sqrt((n + 1 - 4 + 2 / n) / n)
    assert_allclose(ev["dm_statistic"], stat, rtol=1e-10)


def test_attention_of_a_forecast(series) -> None:
    res = ar.forecast(FORMULA, series, method="ridge", start="2010Q1")
    att = res.attention("2012Q2")
    i = res.forecasts.index.get_loc(pd.Period("2012Q2", freq="Q"))
    w = att.weights
    assert_allclose(w.to_numpy() @ att.y_train, res.forecasts["forecast"].iloc[i], rtol=1e-9)
    assert_allclose(w.to_numpy().sum(), 1.0, atol=1e-10)
    assert w.columns.max() <= res.forecasts["origin"].iloc[i]  # only the past
    shares = res.attention_shares((4, 20))
    assert ((shares >= 0) & (shares <= 1)).all().all()
    assert (shares["last_20"] >= shares["last_4"]).all()


def test_leakage_audit(series) -> None:
    res = ar.forecast(FORMULA, series, method="ridge", start="2010Q1")
    audit = res.leakage_audit()
    table = audit.forecasts
    assert_allclose(table["honest"], res.forecasts["forecast"])
    assert_allclose(audit.oos_r2_honest, res.evaluation["oos_r2"])
    assert not np.allclose(table["leaky"], table["honest"])
    assert "apparent gain" in str(audit)
    # on the last origin the causal-mask forecast uses nearly the whole sample
    full = ar.attnreg(FORMULA, series, method="ridge")
    last = res.plan.design.X[res.plan.targets[-1]]
    assert_allclose(table["full_sample"].iloc[-1], last @ full.coef.to_numpy(), rtol=1e-6)


def test_rolling_ols_matches_statsmodels(series) -> None:
    roll = ar.rolling("y ~ x + z", series, window=25)
    ref = RollingOLS(series["y"], np.column_stack([np.ones(len(series)), series[["x", "z"]]]),
                     window=25).fit()
    params = ref.params.dropna().to_numpy()
    assert roll.engine == "updating"
    assert_allclose(roll.coef.to_numpy(), params, rtol=RTOL_SM)
    assert_allclose(roll.std_err.to_numpy(), ref.bse.dropna().to_numpy(), rtol=1e-7)
    assert list(roll.coef.index) == list(series.index[24:])


@pytest.mark.parametrize("method", ["ridge", "pcr"])
def test_rolling_other_methods_equal_window_fits(series, method: str) -> None:
    roll = ar.rolling("y ~ x + z", series, window=30, method=method, expanding=True)
    end = 50
    ref = ar.attnreg("y ~ x + z", series.iloc[:end], method=method)
    assert_allclose(roll.coef.iloc[end - 30].to_numpy(), ref.coef.to_numpy(), rtol=1e-10)
    assert_allclose(roll.std_err.iloc[end - 30].to_numpy(), ref.std_err.to_numpy(), rtol=1e-10)
    assert roll.tuning is not None and roll.nobs.iloc[end - 30] == end


def test_leakage_guard(series) -> None:
    pattern = r"term 'lag\(x, 1\)' is lagged 1 period\(s\) but the horizon is 2"
    with pytest.raises(LeakageError, match=pattern):
        ar.forecast("y ~ lag(y, 2) + lag(x, 1)", series, horizon=2)
    with pytest.raises(LeakageError, match=r"term 'x' is lagged 0"):
        ar.forecast("y ~ x", series)
    ok = ar.forecast("y ~ lag(y, 1) + x", series, known=["x"])  # declared known in advance
    assert ok.plan.n_forecasts > 0
    with pytest.raises(LeakageError, match=r"stateful transform"):
        ar.forecast("y ~ center(lag(x, 1))", series)


@pytest.mark.parametrize(("kwargs", "exc", "pattern"), [
    ({"scheme": "moving"}, OptionError, r"scheme must be one of 'recursive', 'rolling', 'fixed'"),
    ({"scheme": "rolling"}, OptionError, r"needs window="),
    ({"window": 10}, OptionError, r"window applies to scheme 'rolling' only"),
    ({"horizon": 0}, OptionError, r"horizon must be a positive integer"),
    ({"start": "1990Q1"}, OptionError, r"not a label of the data's index"),
    ({"start": "2000Q4"}, DataError, r"has 1 training rows; at least 5 are needed"),
    ({"benchmark": "ar"}, OptionError, r"benchmark must be one of 'mean'"),
    ({"method": "ols", "lam": 1.0}, OptionError, r"lam applies to method 'ridge' only"),
])
def test_forecast_errors(series, kwargs, exc, pattern) -> None:
    with pytest.raises(exc, match=pattern):
        ar.forecast(FORMULA, series, **kwargs)


def test_unsorted_index_is_an_error(series) -> None:
    with pytest.raises(DataError, match="position"):
        ar.forecast(FORMULA, series.iloc[::-1])


def test_summary_and_repr(series) -> None:
    res = ar.forecast(FORMULA, series, method="pcr", scheme="rolling", window=30, start="2010Q1")
    text = str(res.summary())
    assert "OOS R-squared" in text and "Diebold-Mariano" in text and "Clark-West" in text
    assert "k over origins" in text and "rolling" in repr(res)
