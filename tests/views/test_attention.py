"""The dual view: identities of the attention weights of spectral fits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.linear import decompositions
from tests.conftest import ATOL_IDENTITY

FORMULA = "y ~ x1 + np.log(x2) + C(g)"


@pytest.fixture(params=["stored", "lazy"])
def u_mode(request, monkeypatch: pytest.MonkeyPatch) -> str:
    """U stored (small designs' default) or recomputed from the design (large designs')."""
    if request.param == "lazy":
        monkeypatch.setattr(decompositions, "LAZY_U_MIN_CELLS", 0)
    return request.param


@pytest.fixture(params=["ols", "ridge", "pcr"])
def fit(request, mixed_frame: pd.DataFrame, u_mode: str):
    options = {"ols": {}, "ridge": {"lam": 2.0}, "pcr": {"k": 3}}[request.param]
    res = ar.attnreg(FORMULA, data=mixed_frame, method=request.param, **options)
    assert res.spectrum.U.is_stored == (u_mode == "stored")
    return res


def test_weights_reproduce_predictions(fit, mixed_frame: pd.DataFrame) -> None:
    new = mixed_frame.iloc[::7].drop(columns="y")
    att = fit.attention(new)
    W = att.weights
    assert W.shape == (len(new), fit.nobs)
    assert list(W.index) == list(new.index) and list(W.columns) == list(fit.design.row_labels)
    scale = np.abs(fit.design.y).max()
    assert_allclose(W.to_numpy() @ fit.design.y, fit.predict(new).to_numpy(),
                    atol=ATOL_IDENTITY * scale)
    assert_allclose(W.sum(axis=1), 1.0, atol=ATOL_IDENTITY)  # intercept: rows sum to one


def test_training_weights_are_the_hat_matrix(fit) -> None:
    W = fit.attention().weights.to_numpy()
    assert_allclose(W, W.T, atol=ATOL_IDENTITY)
    assert_allclose(np.diag(W), fit.influence()["hat"], atol=ATOL_IDENTITY)
    assert_allclose(np.trace(W), fit.edf, atol=1e-8)
    assert_allclose(W @ fit.design.y, fit.fitted, atol=ATOL_IDENTITY * 10)
    if fit.method != "ridge":  # projections are idempotent; ridge's smoother is not
        assert_allclose(W @ W, W, atol=1e-9)


def test_hat_values_equal_statsmodels(mixed_frame: pd.DataFrame) -> None:
    fit = ar.attnreg(FORMULA, data=mixed_frame)
    ref = smf.ols(FORMULA, data=mixed_frame).fit().get_influence().hat_matrix_diag
    W = fit.attention().weights.to_numpy()
    assert_allclose(np.diag(W), ref, atol=ATOL_IDENTITY)
    # the leverage of a training query (Σ_i ω²) equals its hat value because H = H' = H²
    assert_allclose(fit.attention().diagnostics["leverage"], ref, atol=ATOL_IDENTITY)


def test_embedding(fit) -> None:
    emb = fit.embedding
    F = emb.train_factors.to_numpy()
    expected = np.diag(np.r_[1.0, fit.filtered.f[fit.filtered.f > 0]])
    assert_allclose(F.T @ F, expected, atol=ATOL_IDENTITY)  # OLS and PCR: the identity
    assert_allclose(emb.factors(fit.design.X, fit.design.row_labels).to_numpy(), F,
                    atol=ATOL_IDENTITY)
    Omega = emb.omega.to_numpy()
    X = fit.design.X
    assert_allclose(X @ Omega @ X.T, fit.attention().weights.to_numpy(), atol=ATOL_IDENTITY)
    if fit.method == "ols":
        assert_allclose(Omega, np.linalg.inv(X.T @ X), rtol=1e-8)


def test_weighted_attention(mixed_frame: pd.DataFrame) -> None:
    fit = ar.attnreg(FORMULA, data=mixed_frame, weights="w")
    att = fit.attention()
    assert_allclose(att.weights.to_numpy() @ fit.design.y, fit.fitted, atol=1e-9)
    assert_allclose(att.weights.sum(axis=1), 1.0, atol=ATOL_IDENTITY)
    F = fit.embedding.train_factors.to_numpy()
    assert_allclose(F.T @ (F * fit.design.weights[:, None]), np.eye(F.shape[1]),
                    atol=ATOL_IDENTITY)


@pytest.mark.parametrize("chunk_size", [1, 7, None])
def test_chunking_does_not_change_results(fit, mixed_frame: pd.DataFrame,
                                          chunk_size: int | None) -> None:
    new = mixed_frame.drop(columns="y")
    full = fit.attention(new).weights.to_numpy()
    chunked = fit.attention(new, chunk_size=chunk_size)
    assert_allclose(chunked.weights.to_numpy(), full, rtol=0, atol=1e-14)
    d = chunked.diagnostics
    assert_allclose(d["negative_mass"], np.minimum(full, 0).sum(axis=1), atol=1e-12)
    assert_allclose(d["leverage"], (full**2).sum(axis=1), atol=1e-12)
    assert_allclose(d["effective_neighbours"], full.sum(1) ** 2 / (full**2).sum(1), rtol=1e-10)


def test_top_k_and_explain(fit, mixed_frame: pd.DataFrame) -> None:
    new = mixed_frame.iloc[:5].drop(columns="y")
    att = fit.attention(new, chunk_size=2)
    W = att.weights.to_numpy()
    top = att.top_k(4)
    assert len(top) == 5 * 4
    for q in range(5):
        rows = top[top["query"] == new.index[q]]
        expected = np.sort(np.abs(W[q]))[::-1][:4]
        assert_allclose(np.abs(rows["weight"].to_numpy()), expected, rtol=0, atol=0)
    ex = att.explain(2, top=6)
    contrib = W[2] * fit.design.y
    assert_allclose(np.abs(ex["contribution"]).to_numpy(), np.sort(np.abs(contrib))[::-1][:6])
    assert_allclose(ex.attrs["prediction"], fit.predict(new).iloc[2], rtol=1e-10)
    assert_allclose(ex["contribution"], ex["weight"] * ex["y"])
    assert set(ex.index) <= set(fit.design.row_labels)


def test_full_matrix_is_never_formed_for_diagnostics(fit) -> None:
    att = fit.attention(chunk_size=10)
    _ = att.diagnostics, att.top_k(3)
    assert "weights" not in att.__dict__  # cached_property not triggered


def test_summary_weight_statistics_match_the_full_matrix(fit) -> None:
    """The summary's sampled weight statistics (one pass with the hat values) are exact."""
    W = fit.attention().weights.to_numpy()
    neg, lev, m = fit.sampled_weight_stats()
    assert m == fit.nobs  # small n: every training row is a query
    assert_allclose(neg, np.minimum(W, 0).sum(axis=1), atol=ATOL_IDENTITY)
    assert_allclose(lev, (W**2).sum(axis=1), atol=ATOL_IDENTITY)
    ref_neg, ref_lev, _ = fit.sampled_weight_stats()
    assert_allclose(neg, ref_neg, atol=ATOL_IDENTITY)
    assert_allclose(lev, ref_lev, atol=ATOL_IDENTITY)


def test_weighted_summary_weight_statistics(mixed_frame: pd.DataFrame) -> None:
    fit = ar.attnreg(FORMULA, data=mixed_frame, weights="w", method="pcr", k=2)
    W = fit.attention().weights.to_numpy()
    neg, lev, _ = fit.sampled_weight_stats()
    assert_allclose(neg, np.minimum(W, 0).sum(axis=1), atol=ATOL_IDENTITY)
    assert_allclose(lev, (W**2).sum(axis=1), atol=ATOL_IDENTITY)
