"""method="softmax" through the formula interface: result object, attention view, report."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    n = 160
    df = pd.DataFrame({"x1": rng.uniform(size=n), "x2": rng.uniform(size=n),
                       "g": rng.choice(["a", "b"], n)}, index=[f"r{i}" for i in range(n)])
    df["y"] = np.sin(5 * df.x1) + df.x2**2 + 0.5 * (df.g == "b") + rng.normal(0, 0.1, n)
    return df


@pytest.fixture(scope="module")
def fit(frame: pd.DataFrame):
    return ar.attnreg("y ~ x1 + x2 + C(g)", data=frame, method="softmax", heads=2, seed=3,
                      max_iter=40)


def test_predict_and_labels(fit, frame: pd.DataFrame) -> None:
    new = frame.iloc[:6]
    pred = fit.predict(new)
    assert list(pred.index) == list(new.index)
    assert_allclose(pred.to_numpy(), fit.fit.predict(fit._X[:6]))
    assert_allclose(fit.fitted.to_numpy(), fit.fit.predict(fit._X))
    assert fit.names == ["C(g)[T.b]", "x1", "x2"]


def test_attention_is_convex_and_reproduces_predictions(fit, frame: pd.DataFrame) -> None:
    new = frame.iloc[10:20]
    att = fit.attention(new, chunk_size=3)
    W = att.weights.to_numpy()
    assert (W >= 0).all()
    assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
    assert_allclose(att.diagnostics["prediction"], fit.predict(new), rtol=1e-10)
    ex = att.explain(0, top=5)
    assert_allclose(ex.attrs["prediction"], fit.predict(new).iloc[0], rtol=1e-10)


def test_training_attention_masks_self(fit) -> None:
    att = fit.attention(chunk_size=25)
    W = att.weights.to_numpy()
    assert_allclose(np.diag(W), 0.0)
    assert_allclose(W.sum(axis=1), 1.0, atol=1e-12)
    # the leave-one-out predictions from these weights give the reported LOO R²
    y = fit.design.y
    loo = att.diagnostics["prediction"].to_numpy()
    assert_allclose(1 - np.sum((y - loo) ** 2) / np.sum((y - y.mean()) ** 2), fit.loo_r2,
                    rtol=1e-8)


def test_heads_metric_and_marginal_effects(fit) -> None:
    heads = fit.heads
    assert_allclose(heads["alpha"].sum(), 1.0)
    assert (heads["effective_rank"] > 0).all()
    omega = fit.metric(0, scale="standardized").to_numpy()
    assert_allclose(omega, omega.T)
    assert np.linalg.eigvalsh(omega).min() >= -1e-12
    me = fit.marginal_effects()
    assert list(me.index) == fit.names
    # finite-difference check of the average partial effect of x2
    X = fit._X.copy()
    eps = 1e-5
    up, down = X.copy(), X.copy()
    up[:, 2] += eps
    down[:, 2] -= eps
    fd = np.mean((fit.fit.predict(up) - fit.fit.predict(down)) / (2 * eps))
    assert_allclose(me.loc["x2", "average_partial_effect"], fd, rtol=1e-4)


def test_summary_is_honest_about_inference(fit) -> None:
    text = str(fit.summary())
    assert "Classical standard errors are not available" in text
    assert "Pr(>|t|)" not in text and "leave-one-out" in text and "heads" in text


@pytest.mark.parametrize(("kwargs", "pattern"), [
    ({"weights": np.ones(160)}, r"weights are not supported by method 'softmax'"),
    ({"k": 2}, r"option\(s\) k do not apply to method 'softmax'"),
    ({"heads": 0}, r"heads must be an integer >= 1"),
    ({"device": "tpu"}, r"device must be one of 'cpu', 'cuda', 'auto'"),
])
def test_softmax_option_errors(frame: pd.DataFrame, kwargs: dict, pattern: str) -> None:
    with pytest.raises(OptionError, match=pattern):
        ar.attnreg("y ~ x1 + x2", data=frame, method="softmax", **kwargs)
