"""Ridge and PCR against closed forms, explicit PCA and brute-force model selection."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from tests.conftest import RTOL_EXACT

FORMULA = "TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR"


def standardized(fit) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Z = (X − mean)/sd (population sd) without the intercept column, centred y."""
    X = fit.design.X[:, 1:]
    mean, sd = X.mean(axis=0), X.std(axis=0)
    y = fit.design.y
    return (X - mean) / sd, y - y.mean(), mean, sd


def ridge_closed_form(Z: np.ndarray, yc: np.ndarray, lam: float) -> np.ndarray:
    return np.linalg.solve(Z.T @ Z + lam * np.eye(Z.shape[1]), Z.T @ yc)


@pytest.mark.parametrize("lam", [0.01, 1.0, 25.0])
def test_ridge_matches_closed_form(longley: pd.DataFrame, lam: float) -> None:
    fit = ar.attnreg(FORMULA, data=longley, method="ridge", lam=lam)
    Z, yc, mean, sd = standardized(fit)
    beta = ridge_closed_form(Z, yc, lam) / sd
    assert_allclose(fit.coef.to_numpy()[1:], beta, rtol=1e-8)
    assert_allclose(fit.coef.iloc[0], fit.design.y.mean() - mean @ beta, rtol=1e-8)
    H = Z @ np.linalg.solve(Z.T @ Z + lam * np.eye(Z.shape[1]), Z.T)
    assert_allclose(fit.edf, 1 + np.trace(H), rtol=1e-8)
    assert_allclose(fit.influence()["hat"], 1 / len(yc) + np.diag(H), rtol=1e-8)


def test_ridge_zero_penalty_is_ols(mixed_frame: pd.DataFrame) -> None:
    ols = ar.attnreg("y ~ x1 + x2 + C(g)", data=mixed_frame)
    ridge = ar.attnreg("y ~ x1 + x2 + C(g)", data=mixed_frame, method="ridge", lam=0.0)
    assert_allclose(ridge.coef, ols.coef, rtol=RTOL_EXACT)
    assert_allclose(ridge.std_err, ols.std_err, rtol=RTOL_EXACT)


def test_ridge_unstandardized_penalises_raw_coefficients(mixed_frame: pd.DataFrame) -> None:
    fit = ar.attnreg("y ~ x1 + x2", data=mixed_frame, method="ridge", lam=3.0, standardize=False)
    X = fit.design.X[:, 1:]
    Xc, yc = X - X.mean(axis=0), fit.design.y - fit.design.y.mean()
    assert_allclose(fit.coef.to_numpy()[1:], ridge_closed_form(Xc, yc, 3.0), rtol=1e-10)


def brute_force_gcv(Z: np.ndarray, yc: np.ndarray, lam: float) -> float:
    n = len(yc)
    H = Z @ np.linalg.solve(Z.T @ Z + lam * np.eye(Z.shape[1]), Z.T)
    rss = np.sum((yc - H @ yc) ** 2)
    return n * rss / (n - 1 - np.trace(H)) ** 2


def brute_force_loo(Z: np.ndarray, y: np.ndarray, lam: float) -> float:
    """Refit without each row (intercept unpenalised, scaling held fixed)."""
    n, p = Z.shape
    A = np.column_stack([np.ones(n), Z])
    P = lam * np.diag(np.r_[0.0, np.ones(p)])
    errs = []
    for i in range(n):
        keep = np.arange(n) != i
        c = np.linalg.solve(A[keep].T @ A[keep] + P, A[keep].T @ y[keep])
        errs.append(y[i] - A[i] @ c)
    return float(np.mean(np.square(errs)))


@pytest.mark.parametrize("criterion", ["gcv", "loo"])
def test_ridge_selection_minimises_brute_force_criterion(longley: pd.DataFrame,
                                                         criterion: str) -> None:
    fit = ar.attnreg(FORMULA, data=longley, method="ridge", lam=criterion)
    Z, yc, _, _ = standardized(fit)
    score = (lambda lam: brute_force_gcv(Z, yc, lam)) if criterion == "gcv" else (
        lambda lam: brute_force_loo(Z, fit.design.y, lam))
    grid = np.logspace(-6, 3, 200)
    best_grid = min(score(lam) for lam in grid)
    assert score(fit.lam) <= best_grid * (1 + 1e-6)
    # the closed-form criterion the package minimised equals the brute-force one
    sel = fit.selection
    i = len(sel.grid) // 2
    assert_allclose(sel.scores[i], score(sel.grid[i]), rtol=1e-8)
    assert fit.selection.criterion == criterion


def explicit_pcr(fit, k: int) -> np.ndarray:
    """PCR from an explicit PCA of the correlation matrix, mapped back to the original scale."""
    Z, yc, mean, sd = standardized(fit)
    evals, evecs = np.linalg.eigh(Z.T @ Z)
    top = evecs[:, np.argsort(evals)[::-1][:k]]
    scores = Z @ top
    gamma = np.linalg.lstsq(scores, yc, rcond=None)[0]
    beta = top @ gamma / sd
    return np.r_[fit.design.y.mean() - mean @ beta, beta]


@pytest.mark.parametrize("k", [1, 2, 4])
def test_pcr_matches_explicit_pca(longley: pd.DataFrame, k: int) -> None:
    fit = ar.attnreg(FORMULA, data=longley, method="pcr", k=k)
    assert_allclose(fit.coef.to_numpy(), explicit_pcr(fit, k), rtol=1e-7)
    assert fit.k == k and fit.edf == k + 1


def test_pcr_full_rank_is_ols(mixed_frame: pd.DataFrame) -> None:
    ols = ar.attnreg("y ~ x1 + x2 + C(g)", data=mixed_frame)
    pcr = ar.attnreg("y ~ x1 + x2 + C(g)", data=mixed_frame, method="pcr", k=4)
    assert_allclose(pcr.coef, ols.coef, rtol=1e-9)


@pytest.mark.parametrize("criterion", ["gcv", "loo"])
def test_pcr_selection(longley: pd.DataFrame, criterion: str) -> None:
    fit = ar.attnreg(FORMULA, data=longley, method="pcr", k=criterion)
    _, yc, _, _ = standardized(fit)
    n = len(yc)

    def score(k: int) -> float:
        ref = ar.attnreg(FORMULA, data=longley, method="pcr", k=k)
        e = ref.resid.to_numpy()
        if criterion == "gcv":
            return n * np.sum(e**2) / (n - k - 1) ** 2
        h = ref.influence()["hat"].to_numpy()
        return float(np.mean((e / (1 - h)) ** 2))

    scores = [score(k) for k in range(1, 7)]
    assert fit.k == int(np.argmin(scores)) + 1
    assert_allclose(fit.selection.scores, scores, rtol=1e-8)


def test_ridge_summary_states_conditional_inference(longley: pd.DataFrame) -> None:
    text = str(ar.attnreg(FORMULA, data=longley, method="ridge").summary())
    assert "chosen by GCV" in text and "conditional on the chosen lambda" in text
    assert "effective df tr(H)" in text


@pytest.mark.parametrize(("method", "criterion"), [("ridge", "gcv"), ("ridge", "loo"),
                                                   ("pcr", "gcv"), ("pcr", "loo")])
def test_selection_is_the_same_with_u_recomputed(mixed_frame: pd.DataFrame, method: str,
                                                 criterion: str, monkeypatch) -> None:
    """Large designs recompute U from X instead of storing it: the same λ / k and scores."""
    from attnreg.linear import decompositions

    option = {"lam": criterion} if method == "ridge" else {"k": criterion}
    stored = ar.attnreg("y ~ x1 + x2 + C(g)", data=mixed_frame, method=method, **option)
    monkeypatch.setattr(decompositions, "LAZY_U_MIN_CELLS", 0)
    lazy = ar.attnreg("y ~ x1 + x2 + C(g)", data=mixed_frame, method=method, **option)
    assert stored.spectrum.U.is_stored and not lazy.spectrum.U.is_stored
    assert_allclose(lazy.selection.scores, stored.selection.scores, rtol=1e-10)
    assert_allclose(lazy.selection.value, stored.selection.value, rtol=1e-6)
    assert_allclose(lazy.coef, stored.coef, rtol=1e-6)
