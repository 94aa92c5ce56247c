"""Property tests (hypothesis): identities on random, collinear and nearly square designs."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import RankDeficiencyWarning


@st.composite
def designs(draw):
    p = draw(st.integers(1, 5))
    n = draw(st.integers(p + 3, 30))  # N close to P included
    seed = draw(st.integers(0, 2**32 - 1))
    collinear = draw(st.booleans())
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * rng.uniform(0.01, 100, size=p)
    if collinear and p >= 2:
        X[:, -1] = 2.0 * X[:, 0] - 0.5 * X[:, 1 % (p - 1)]
    y = X @ rng.normal(size=p) + rng.normal(size=n)
    frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(p)])
    frame["y"] = y
    return frame, collinear and p >= 2


COMMON = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def fit_quietly(frame: pd.DataFrame, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        return ar.attnreg("y ~ .", data=frame, **kw)


@COMMON
@given(designs())
def test_ols_weights_identities(case) -> None:
    frame, collinear = case
    fit = fit_quietly(frame)
    W = fit.attention().weights.to_numpy()
    scale = 1 + np.abs(frame["y"]).max()
    assert_allclose(W @ frame["y"].to_numpy(), fit.fitted, atol=1e-9 * scale)
    assert_allclose(W.sum(axis=1), 1.0, atol=1e-10)
    assert_allclose(np.trace(W), fit.edf, atol=1e-9)
    assert_allclose(W @ W, W, atol=1e-9)
    assert bool(collinear) == bool(fit.aliased)
    F = fit.embedding.train_factors.to_numpy()
    assert_allclose(F.T @ F, np.eye(F.shape[1]), atol=1e-10)


@COMMON
@given(designs())
def test_ols_equals_lstsq_on_estimable_columns(case) -> None:
    frame, _ = case
    fit = fit_quietly(frame)
    keep = ~np.isnan(fit.coef.to_numpy())
    X = fit.design.X[:, keep]
    ref, *_ = np.linalg.lstsq(X, fit.design.y, rcond=None)
    assert_allclose(X @ fit.coef.to_numpy()[keep], X @ ref, rtol=1e-8, atol=1e-8)


@COMMON
@given(designs(), st.floats(1e-3, 1e3))
def test_ridge_shrinks_and_weights_sum_to_one(case, lam: float) -> None:
    frame, _ = case
    ridge = fit_quietly(frame, method="ridge", lam=lam)
    W = ridge.attention().weights.to_numpy()
    assert_allclose(W.sum(axis=1), 1.0, atol=1e-10)
    assert_allclose(W @ frame["y"].to_numpy(), ridge.fitted, atol=1e-9 * (1 + np.abs(frame["y"]).max()))
    ols = fit_quietly(frame)
    assert ridge.edf <= ols.edf + 1e-9  # shrinkage never adds degrees of freedom
    assert ridge.rss >= ols.rss * (1 - 1e-9)


@COMMON
@given(designs())
def test_pcr_with_all_components_is_ols(case) -> None:
    frame, _ = case
    ols = fit_quietly(frame)
    rank = round(ols.edf) - 1
    pcr = fit_quietly(frame, method="pcr", k=rank)
    assert_allclose(pcr.fitted, ols.fitted, rtol=1e-7, atol=1e-7 * np.abs(frame["y"]).max())
