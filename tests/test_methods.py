"""The method registry: one table behind every front door; forecasts fit the method named."""

from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg import methods
from attnreg.exceptions import OptionError
from tests.timeseries.test_forecast import FORMULA

BLOCK = {"variant": "trimmed", "pca_components": 2, "max_epochs": 3, "seed": 3}


def test_every_front_door_lists_the_registry() -> None:
    from attnreg import api, cli

    names = methods.method_names()
    assert names == ("ols", "ridge", "pcr", "softmax", "block", "ftt",
                     "glm", "logit", "probit", "poisson", "quantreg",
                     "tsls", "2sls", "liml", "fuller", "gmm", "cue")
    assert names == api.METHODS
    assert names == cli.METHODS
    assert methods.method_names("spectral") == ("ols", "ridge", "pcr")
    assert methods.method_names("rolling") == ("ols", "ridge", "pcr")
    assert methods.method_names("torch") == ("softmax", "block", "ftt")


def test_each_method_is_declared_once() -> None:
    from attnreg import adapters
    from attnreg.linear import rules

    # the built-in methods are registered in adapters (the registry imports no family)
    registry, spectral = inspect.getsource(adapters), inspect.getsource(rules)
    for name in methods.method_names():
        declared = (registry.count(f'register(Estimator("{name}"'),
                    spectral.count(f'SpectralRule("{name}"'))
        assert sorted(declared) == [0, 1], name
        assert (declared[1] == 1) == (methods.METHODS[name].family == "spectral")
    with pytest.raises(OptionError, match="'ols' is already registered"):
        methods.register(methods.METHODS["ols"])


@pytest.mark.parametrize("front", ["attnreg", "forecast", "rolling"])
def test_an_unknown_method_is_refused_with_the_valid_ones(series, front) -> None:
    call = {"attnreg": lambda: ar.attnreg("y ~ x", series, method="lasso"),
            "forecast": lambda: ar.forecast(FORMULA, series, method="lasso"),
            "rolling": lambda: ar.rolling("y ~ x", series, window=20, method="lasso")}[front]
    with pytest.raises(OptionError, match=r"method must be one of 'ols', 'ridge', 'pcr'.*'lasso'"):
        call()


@pytest.mark.parametrize(("method", "options", "match"), [
    ("ols", {"heads": 2}, r"unknown option\(s\) for method 'ols': heads"),
    ("pcr", {"lam": 1.0}, r"lam applies to method 'ridge' only"),
    ("softmax", {"k": 2}, r"option\(s\) k do not apply to method 'softmax'"),
    ("block", {"lam": 1.0}, r"do not apply to method 'block'"),
    ("block", {"d_model": 30, "n_heads": 4, "mixer": "softmax"}, r"d_model must be a multiple"),
])
def test_forecast_checks_method_options_before_any_work(series, method, options, match) -> None:
    with pytest.raises(OptionError, match=match):
        ar.forecast(FORMULA, series, method=method, **options)


def test_forecast_refuses_covariance_options(series) -> None:
    with pytest.raises(OptionError, match=r"vcov do not apply to forecast\(\)"):
        ar.forecast(FORMULA, series, vcov="HC1")


def test_forecast_with_block_fits_the_regression_block(series) -> None:
    fc = ar.forecast(FORMULA, series, method="block", start="2021Q1", refit_every=4, **BLOCK)
    plan = fc.plan
    assert plan.method == "block" and plan.n_forecasts == 6
    design = plan.design
    for i in (0, 4, 5):
        rows = plan.rows(i - i % 4)  # the model in use at forecast i was fitted at its refit
        window = series.loc[design.row_labels[rows]]
        ref = ar.attnreg(FORMULA, series.loc[:window.index[-1]], method="block", **BLOCK)
        assert isinstance(ref, ar.nn.NetworkResults) and ref.nobs == rows.size
        target = series.loc[: design.row_labels[plan.targets[i]]]
        expected = ref.predict(target).iloc[-1]  # the same network; predicted in a batch of
        # many rows instead of one, so float32 matrix products may round differently
        assert fc.forecasts["forecast"].iloc[i] == pytest.approx(expected, rel=1e-5)
    with pytest.raises(OptionError, match="not for method 'block'"):
        fc.attention(fc.forecasts.index[0])
    with pytest.raises(OptionError, match="method 'block' has none"):
        fc.leakage_audit()


def test_forecast_with_block_options_does_not_fall_back_to_softmax(series) -> None:
    fc = ar.forecast(FORMULA, series, method="block", start="2022Q1", d_model=8, **BLOCK)
    assert np.isfinite(fc.forecasts["forecast"]).all()
    assert "method = 'block'" in str(fc.summary())


@pytest.fixture
def softmax_forecasts(series) -> tuple[pd.DataFrame, dict]:
    kw = dict(method="softmax", start="2018Q1", refit_every=3, heads=2, max_iter=15, seed=1)
    return ar.forecast(FORMULA, series, **kw), kw


def test_softmax_forecast_attention_and_leakage_audit(softmax_forecasts) -> None:
    fc, _ = softmax_forecasts
    target = fc.forecasts.index[4]
    w = fc.attention(target)
    i = 4
    n_train = int(fc.plan.train_stop[i - i % 3] - fc.plan.train_start[i - i % 3])
    assert w.weights.shape == (1, n_train)
    weights = w.weights.to_numpy()[0]
    assert (weights >= 0).all() and weights.sum() == pytest.approx(1.0, abs=1e-9)
    assert w.diagnostics["prediction"].iloc[0] == pytest.approx(fc.forecasts["forecast"].iloc[i],
                                                                rel=1e-8)
    audit = fc.leakage_audit()
    assert_allclose(audit.forecasts["honest"].to_numpy(), fc.forecasts["forecast"].to_numpy())
    assert np.isfinite(audit.forecasts["leaky"]).all()
    assert not np.allclose(audit.forecasts["leaky"], audit.forecasts["honest"])


def test_future_perturbation_softmax_changes_later_forecasts(series, softmax_forecasts) -> None:
    fc, kw = softmax_forecasts
    base = fc.forecasts
    noisy = series.copy()
    cut = pd.Period("2019Q2", freq="Q")
    noisy.loc[noisy.index > cut] += 5.0
    moved = ar.forecast(FORMULA, noisy, **kw).forecasts
    past = base["origin"] <= cut
    assert past.sum() >= 3 and (~past).sum() >= 3
    assert_allclose(moved.loc[past, "forecast"], base.loc[past, "forecast"], rtol=1e-12)
    assert not np.allclose(moved.loc[~past, "forecast"], base.loc[~past, "forecast"])
