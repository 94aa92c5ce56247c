"""Jackknife+ prediction intervals of method="softmax" (metric held fixed)."""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.special import softmax

import attnreg as ar
from attnreg.exceptions import ConvergenceWarning, OptionError
from attnreg.softmax import fit_softmax
from attnreg.softmax.jackknife import (
    jackknife_plus,
    leave_out_predictions,
    ridge_loo_shifts,
    training_residuals,
)
from tests.conftest import RTOL_EXACT


def _fit(X: np.ndarray, y: np.ndarray, **kw: object):
    with warnings.catch_warnings():  # a few L-BFGS iterations keep the tests fast
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fit_softmax(X, y, heads=2, max_iter=10, threads=1, **kw)


@pytest.fixture(scope="module", params=[("ridge", "distance"), ("y", "distance"), ("ridge", "dot")])
def small(request: pytest.FixtureRequest):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.sin(X[:, 0]) + X[:, 1] + 0.3 * rng.normal(size=40)
    value, kernel = request.param
    return X, y, _fit(X, y, value=value, kernel=kernel, seed=1)


def _scores(fit, zq: np.ndarray) -> np.ndarray:
    """Scores (M, J, N) from the definitions: −½‖L_m'(x_j − x_i)‖² or x_j'L_m L_m'x_i."""
    if fit.kernel == "dot":
        return np.einsum("jp,mpr,mqr,nq->mjn", zq, fit.factors, fit.factors, fit.X_train)
    u = np.einsum("jnp,mpr->mjnr", zq[:, None, :] - fit.X_train[None, :, :], fit.factors)
    return -0.5 * (u**2).sum(axis=3)


def _brute_loo(fit, zq: np.ndarray, s: np.ndarray) -> np.ndarray:
    """ŷ₋ᵢ(x_j) by refitting the ridge base without row i (a solve) and each head's softmax
    over the other keys' scores ``s`` (a loop over i: the independent reference)."""
    z = fit.X_train
    n, k = z.shape[0], z.shape[1] + 1
    ys = fit.values + fit._base(z)
    xt, xq = np.column_stack([np.ones(n), z]), np.column_stack([np.ones(len(zq)), zq])
    out = np.empty((len(zq), n))
    for i in range(n):
        keep = np.arange(n) != i
        if fit.ridge_coef is None:
            b = np.zeros(k)
        else:
            b = np.linalg.solve(xt[keep].T @ xt[keep] + fit.ridge_penalty * np.eye(k),
                                xt[keep].T @ ys[keep])
        v = ys - xt @ b
        w = softmax(s[:, :, keep], axis=2)
        out[:, i] = xq @ b + fit.alpha @ (w @ v[keep])
    return out


def test_leave_out_predictions_equal_refits_without_each_key(small) -> None:
    _, _, fit = small
    Xq = np.random.default_rng(1).normal(size=(7, 2))
    zq = fit._standardise(Xq)
    got = np.vstack([b for _, _, b in leave_out_predictions(fit, zq, ridge_loo_shifts(fit), 3)])
    ref = _brute_loo(fit, zq, _scores(fit, zq))
    assert_allclose(got, ref, rtol=RTOL_EXACT, atol=1e-12)  # atol: predictions near zero


def test_leave_out_without_a_dominant_key_is_computed_directly(small) -> None:
    """A sharp metric puts weight 1 − 1e-16 on the nearest key: its leave-out average must
    not come from (Σ e v − e_top v_top)/(Σ e − e_top), which cancels to 0/0."""
    _, _, fit = small
    sharp = dataclasses.replace(fit, factors=fit.factors * 80)
    Xq = fit.X_train[:5] * fit.x_scale + fit.x_mean + 1e-3
    p = sharp.head_weights(Xq)
    assert (1.0 - p.max(axis=2) < 1e-12).any()  # the case in question
    zq = sharp._standardise(Xq)
    got = np.vstack([b for _, _, b in leave_out_predictions(sharp, zq, ridge_loo_shifts(sharp))])
    assert_allclose(got, _brute_loo(sharp, zq, _scores(sharp, zq)), rtol=RTOL_EXACT, atol=1e-12)


def test_training_residuals_equal_refits(small) -> None:
    X, y, fit = small
    z = fit.X_train
    ref = np.array([_brute_loo(fit, z[[i]], _scores(fit, z[[i]]))[0, i]
                    for i in range(X.shape[0])])
    assert_allclose(training_residuals(fit, 7), np.abs(y - (fit.y_mean + fit.y_scale * ref)),
                    rtol=RTOL_EXACT, atol=1e-12)


def test_value_y_residuals_give_the_fits_loo_r2() -> None:
    rng = np.random.default_rng(2)
    X = rng.normal(size=(50, 2))
    y = X[:, 0] ** 2 + 0.2 * rng.normal(size=50)
    fit = _fit(X, y, value="y", seed=0)  # no base: leave-one-out = the fit's own LOO
    r = training_residuals(fit)
    assert_allclose(1 - np.sum(r**2) / np.sum((y - y.mean()) ** 2), fit.loo_r2, rtol=1e-8)


def test_bounds_are_the_jackknife_plus_order_statistics(small) -> None:
    X, _, fit = small
    Xq = np.random.default_rng(3).normal(size=(5, 2))
    n = X.shape[0]
    zq = fit._standardise(Xq)
    loo = fit.y_mean + fit.y_scale * _brute_loo(fit, zq, _scores(fit, zq))
    r = training_residuals(fit)
    lwr, upr = jackknife_plus(fit, Xq, 0.8)
    # level 0.8, n = 40: ⌈0.8 · 41⌉ = 33rd smallest of ŷ₋ᵢ + Rᵢ, ⌊0.2 · 41⌋ = 8th of ŷ₋ᵢ − Rᵢ
    assert_allclose(upr, np.sort(loo + r, axis=1)[:, 32], rtol=RTOL_EXACT)
    assert_allclose(lwr, np.sort(loo - r, axis=1)[:, 7], rtol=RTOL_EXACT)
    lo99, up99 = jackknife_plus(fit, Xq, 0.99)  # ⌈0.99 · 41⌉ = 41 > n: unbounded
    assert np.isinf(up99).all() and np.isinf(lo99).all() and n == 40


@pytest.fixture(scope="module")
def frame_fit():
    rng = np.random.default_rng(4)
    df = pd.DataFrame(rng.normal(size=(60, 2)), columns=["x1", "x2"],
                      index=[f"r{i}" for i in range(60)])
    df["y"] = 2 * df.x1 - df.x2 + rng.normal(size=60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = ar.attnreg("y ~ x1 + x2", df, method="softmax", heads=2, max_iter=10, seed=0)
    return df, fit


def test_predict_interval_frame(frame_fit) -> None:
    df, fit = frame_fit
    new = df.iloc[:4].copy()
    new.loc["r1", "x2"] = np.nan
    band = fit.predict(new, interval="jackknife+", level=0.9)
    assert list(band.columns) == ["fit", "lwr", "upr"] and list(band.index) == list(new.index)
    assert band.loc["r1"].isna().all()
    ok = band.drop(index="r1")
    assert_allclose(ok["fit"], fit.predict(new.drop(index="r1")), rtol=RTOL_EXACT)
    lwr, upr = jackknife_plus(fit.fit, fit._query(new.drop(index="r1"))[0], 0.9)
    assert_allclose(ok["lwr"], lwr, rtol=RTOL_EXACT)
    assert_allclose(ok["upr"], upr, rtol=RTOL_EXACT)
    assert (ok["lwr"] < ok["upr"]).all()
    wide = fit.predict(new, interval="jackknife+", level=0.95).drop(index="r1")
    assert (wide["upr"] - wide["lwr"] >= ok["upr"] - ok["lwr"]).all()


def test_interval_on_training_rows_and_after_pickling(frame_fit) -> None:
    import pickle

    df, fit = frame_fit
    band = fit.predict(interval="jackknife+", level=0.9)  # the training rows as new rows
    assert list(band.index) == list(df.index)
    lwr, upr = jackknife_plus(fit.fit, fit._X, 0.9)
    assert_allclose(band[["lwr", "upr"]].to_numpy(), np.column_stack([lwr, upr]), rtol=RTOL_EXACT)
    back = pickle.loads(pickle.dumps(fit))  # the cached residuals travel with the results
    assert_allclose(back.predict(df.iloc[:3], interval="jackknife+", level=0.9).to_numpy(),
                    band.iloc[:3].to_numpy(), rtol=RTOL_EXACT)


def test_interval_errors(frame_fit) -> None:
    df, fit = frame_fit
    with pytest.raises(OptionError, match=r"interval must be one of .*jackknife\+.*'prediction'"):
        fit.predict(df, interval="prediction")
    with pytest.raises(OptionError, match="level must be strictly between 0 and 1"):
        fit.predict(df, interval="jackknife+", level=90)


def test_networks_refuse_intervals_and_name_the_methods_that_have_them() -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=80), "b": rng.normal(size=80)})
    df["y"] = df.a + 0.1 * rng.normal(size=80)
    with warnings.catch_warnings():  # one epoch: the fit is not the point
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = ar.attnreg("y ~ a + b", df, method="block", seed=0, max_epochs=1)
    with pytest.raises(OptionError, match=r"method 'block' has no prediction intervals.*"
                                          r"method='softmax' with interval='jackknife\+'"):
        fit.predict(df, interval="jackknife+")


def _draw(rng: np.random.Generator, n: int, design: str) -> tuple[np.ndarray, np.ndarray]:
    X = rng.uniform(-2, 2, size=(n, 2))
    mean = 2 * np.sin(X[:, 0]) + X[:, 1]
    if design == "homoskedastic":
        e = rng.normal(size=n)
    elif design == "heteroskedastic":
        e = rng.normal(size=n) * (0.3 + 0.5 * np.abs(X[:, 0]))
    else:
        e = rng.standard_t(3, size=n)
    return X, mean + e


@pytest.mark.parametrize("design", ["homoskedastic", "heteroskedastic", "t3"])
def test_coverage_of_90_percent_intervals(design: str) -> None:
    n, reps, n_test, level = 100, 10, 400, 0.9
    rng = np.random.default_rng(7)
    cover = []
    for r in range(reps):
        X, y = _draw(rng, n, design)
        fit = _fit(X, y, seed=r)
        Xt, yt = _draw(rng, n_test, design)
        lwr, upr = jackknife_plus(fit, Xt, level)
        cover.append(np.mean((yt >= lwr) & (yt <= upr)))
    # Monte Carlo error of the mean coverage: the coverage given a training set varies
    # across sets about like a Beta with variance p(1 − p)/(n + 2) (as for conformal
    # intervals calibrated on n residuals), plus the binomial error of n_test test rows;
    # 3 standard errors: 0.9 − 3 · 0.0105 ≈ 0.868. (Observed means 0.89–0.90.)
    p = level
    se = math.sqrt(p * (1 - p) / (n + 2) / reps + p * (1 - p) / (reps * n_test))
    assert np.mean(cover) >= level - 3 * se, (design, np.mean(cover), se)
