"""Average partial effects and partial dependence of method="softmax"."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import ConvergenceWarning, OptionError
from tests.conftest import RTOL_EXACT


def _fit(df: pd.DataFrame):
    with warnings.catch_warnings():  # few L-BFGS iterations keep the tests fast
        warnings.simplefilter("ignore", ConvergenceWarning)
        return ar.attnreg("y ~ x1 + x2", df, method="softmax", heads=2, max_iter=20, seed=0,
                          threads=1)


@pytest.fixture(scope="module")
def linear():
    rng = np.random.default_rng(11)
    df = pd.DataFrame(rng.uniform(-2, 2, size=(200, 2)), columns=["x1", "x2"])
    df["y"] = 2 * df.x1 - df.x2 + 0.5 * rng.normal(size=200)
    return df, _fit(df)


@pytest.fixture(scope="module")
def sine():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.uniform(-3, 3, size=(200, 2)), columns=["x1", "x2"])
    df["y"] = np.sin(df.x1) + 0.2 * rng.normal(size=200)
    return df, _fit(df)


def test_linear_design_recovers_the_slopes(linear) -> None:
    _, fit = linear
    eff = fit.effects()
    assert list(eff.columns) == ["estimate", "std_err", "sd_across_rows"]
    assert list(eff.index) == ["x1", "x2"]
    # OLS slope SE here is σ/(√n sd(x)) = 0.5/(√200 · 1.15) ≈ 0.03; 0.15 allows 5 SE
    # (the ridge base's shrinkage and the attention's smoothing of the residuals add less)
    assert_allclose(eff["estimate"], [2.0, -1.0], atol=0.15)


def test_effects_equal_finite_differences_of_predict(sine) -> None:
    _, fit = sine
    X = fit._X
    h = 1e-5
    fd = []
    for k in range(X.shape[1]):
        up, down = X.copy(), X.copy()
        up[:, k] += h
        down[:, k] -= h
        fd.append(np.mean((fit.fit.predict(up) - fit.fit.predict(down)) / (2 * h)))
    # central differences: error O(h²) ≈ 1e-10 times the third derivative, plus rounding
    # of about 1e-16/h = 1e-11
    assert_allclose(fit.effects()["estimate"], fd, rtol=1e-6, atol=1e-8)


def test_std_err_is_the_row_bootstrap_holding_the_fit_fixed(sine) -> None:
    from attnreg.softmax.model import marginal_effects

    _, fit = sine
    d = marginal_effects(fit.fit, fit._X, average=False)
    rng = np.random.default_rng(0)
    b = 4000
    boot = d[rng.integers(0, d.shape[0], size=(b, d.shape[0]))].mean(axis=1)  # (B, P)
    # the Monte Carlo error of a bootstrap SD from B draws is about 1/√(2B) ≈ 1.1 %: 5 %
    assert_allclose(fit.effects()["std_err"], boot.std(axis=0), rtol=0.05)
    assert_allclose(fit.effects()["sd_across_rows"], d.std(axis=0), rtol=RTOL_EXACT)


def test_partial_dependence_tracks_the_sine(sine) -> None:
    _, fit = sine
    grid = np.linspace(-2, 2, 9)
    pdp = fit.partial_dependence("x1", grid=grid)
    assert list(pdp.columns) == ["x1", "partial_dependence"]
    assert_allclose(pdp["x1"], grid)
    # kernel smoothing flattens the extrema by about ½|f''|h²; with a bandwidth h ≲ 0.6 that
    # is ≤ 0.2 (observed 0.09–0.11 over four seeds)
    assert np.abs(pdp["partial_dependence"] - np.sin(grid)).max() < 0.2
    flat = fit.partial_dependence("x2", grid=grid)["partial_dependence"]
    assert np.ptp(flat) < 0.2  # x2 is irrelevant: the curve is flat up to the same smoothing


def test_partial_dependence_is_the_mean_prediction_and_keeps_the_design(sine) -> None:
    df, fit = sine
    before = fit._X.copy()
    pdp = fit.partial_dependence("x2")
    assert len(pdp) == 20
    assert_allclose(pdp["x2"].iloc[[0, -1]], np.quantile(df.x2, [0.05, 0.95]), rtol=RTOL_EXACT)
    g = float(pdp["x2"].iloc[3])
    ref = fit.predict(df.assign(x2=g)).mean()
    assert_allclose(pdp["partial_dependence"].iloc[3], ref, rtol=RTOL_EXACT)
    assert_allclose(fit._X, before, rtol=0)


def test_errors(sine) -> None:
    _, fit = sine
    with pytest.raises(OptionError, match=r"column must name a predictor.*'x1', 'x2'"):
        fit.partial_dependence("x3")
    with pytest.raises(OptionError, match="grid must be a non-empty sequence of finite numbers"):
        fit.partial_dependence("x1", grid=[0.0, np.nan])
    with pytest.raises(OptionError, match="grid must be a non-empty sequence"):
        fit.partial_dependence("x1", grid=[])


def test_subsample_std_err_accounts_for_the_estimation(linear) -> None:
    df, fit = linear
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        eff = fit.effects(se="subsample", reps=12, seed=1)
    assert_allclose(eff["estimate"], fit.effects()["estimate"], rtol=RTOL_EXACT)
    # the APE here is the ridge slope: its sampling SE is OLS's, σ/(√n sd(x)) ≈ 0.03.
    # a standard deviation from 12 replications has a relative SE of √(1/(2·11)) ≈ 0.21,
    # so ±50 % is about 2.4 of them; the row SE (fit fixed) is ~0
    ols = ar.attnreg("y ~ x1 + x2", df).std_err[["x1", "x2"]].to_numpy()
    assert_allclose(eff["std_err"], ols, rtol=0.5)
    assert (fit.effects()["std_err"] < 1e-6).all()  # the attention is flat: no row spread
    again = fit.effects(se="subsample", reps=12, seed=1)
    assert_allclose(again["std_err"], eff["std_err"], rtol=0)  # seeded


def test_se_errors(sine) -> None:
    df, fit = sine
    with pytest.raises(OptionError, match=r"se must be one of \('rows', 'subsample'\)"):
        fit.effects(se="bootstrap")
    with pytest.raises(OptionError, match="reps must be an integer of at least 2"):
        fit.effects(se="subsample", reps=1)
    with pytest.raises(OptionError, match="without newdata"):
        fit.effects(df.iloc[:5], se="subsample")
