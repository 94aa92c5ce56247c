"""Wide designs (n_obs ≤ number of coefficients): ridge and PCR through the thin SVD of Z.

References are computed independently: the primal ridge solve (Z'Z + λI)⁻¹Z'y in P×P,
scikit-learn's Ridge, an explicit PCA, and brute-force GCV / leave-one-out refits.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, OptionError, RankDeficiencyWarning
from tests.conftest import ATOL_IDENTITY, RTOL_EXACT
from tests.linear.test_ridge_pcr import brute_force_gcv, brute_force_loo

N, P = 20, 50


@pytest.fixture
def wide() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    X = rng.standard_normal((N, P)) * rng.uniform(0.5, 3.0, P) + rng.uniform(-2.0, 2.0, P)
    y = X[:, :3] @ np.array([1.0, 2.0, -1.0]) + rng.standard_normal(N)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(P)],
                         index=[f"r{i:02d}" for i in range(N)])
    frame["y"] = y
    frame["w"] = rng.uniform(0.5, 2.0, N)
    return frame


def xy(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    return frame[[f"x{j}" for j in range(P)]].to_numpy(), frame["y"].to_numpy()


FORMULA = "y ~ . - w"


def ridge_primal(X: np.ndarray, y: np.ndarray, lam: float, *, standardize: bool = True,
                 w: np.ndarray | None = None) -> np.ndarray:
    """[intercept, slopes] of ridge with an unpenalised intercept, from the P×P normal system."""
    w = np.ones(len(y)) if w is None else w
    mean = w @ X / w.sum()
    sd = np.sqrt(w @ (X - mean) ** 2 / w.sum()) if standardize else np.ones(X.shape[1])
    Z = (X - mean) / sd
    ybar = w @ y / w.sum()
    A = Z.T @ (Z * w[:, None]) + lam * np.eye(X.shape[1])
    beta = np.linalg.solve(A, Z.T @ (w * (y - ybar))) / sd
    return np.r_[ybar - mean @ beta, beta]


@pytest.mark.parametrize("lam", [0.1, 1.0, 30.0])
def test_ridge_matches_primal_closed_form(wide: pd.DataFrame, lam: float) -> None:
    fit = ar.attnreg(FORMULA, data=wide, method="ridge", lam=lam)
    X, y = xy(wide)
    assert fit.nobs == N and len(fit.coef) == P + 1
    assert_allclose(fit.coef.to_numpy(), ridge_primal(X, y, lam), rtol=1e-9, atol=1e-12)
    # hat matrix and effective df from their definitions
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    H = Z @ np.linalg.solve(Z.T @ Z + lam * np.eye(P), Z.T) + 1.0 / N
    assert_allclose(fit.edf, np.trace(H), rtol=1e-9)
    assert_allclose(fit.influence()["hat"], np.diag(H), rtol=1e-9)
    assert_allclose(fit.fitted.to_numpy(), H @ y, rtol=1e-9)
    assert 0 < fit.df_resid < N - 1


def test_ridge_matches_sklearn(wide: pd.DataFrame) -> None:
    from sklearn.linear_model import Ridge

    X, y = xy(wide)
    fit = ar.attnreg(FORMULA, data=wide, method="ridge", lam=2.5, standardize=False)
    ref = Ridge(alpha=2.5, fit_intercept=True, solver="svd").fit(X, y)
    assert_allclose(fit.coef.to_numpy()[1:], ref.coef_, rtol=1e-8, atol=1e-12)
    assert_allclose(fit.coef.iloc[0], ref.intercept_, rtol=1e-8)
    assert_allclose(fit.coef.to_numpy(), ridge_primal(X, y, 2.5, standardize=False), rtol=1e-9,
                    atol=1e-12)


def test_weighted_ridge(wide: pd.DataFrame) -> None:
    X, y = xy(wide)
    w = wide["w"].to_numpy()
    fit = ar.attnreg(FORMULA, data=wide, method="ridge", lam=0.7, weights="w")
    assert_allclose(fit.coef.to_numpy(), ridge_primal(X, y, 0.7, w=w), rtol=1e-9, atol=1e-12)
    att = fit.attention()
    assert_allclose(att.weights.to_numpy() @ y, fit.fitted, atol=ATOL_IDENTITY * np.abs(y).max())
    assert_allclose(att.weights.sum(axis=1), 1.0, atol=ATOL_IDENTITY)


def test_no_intercept(wide: pd.DataFrame) -> None:
    X, y = xy(wide)
    fit = ar.attnreg("y ~ 0 + . - w", data=wide, method="ridge", lam=1.5, standardize=False)
    beta = np.linalg.solve(X.T @ X + 1.5 * np.eye(P), X.T @ y)
    assert_allclose(fit.coef.to_numpy(), beta, rtol=1e-9, atol=1e-12)


def test_attention_identities(wide: pd.DataFrame) -> None:
    fit = ar.attnreg(FORMULA, data=wide, method="ridge", lam=1.0)
    y = wide["y"].to_numpy()
    scale = np.abs(y).max()
    W = fit.attention().weights.to_numpy()
    assert W.shape == (N, N)
    assert_allclose(W @ y, fit.fitted, atol=ATOL_IDENTITY * scale)
    assert_allclose(W, W.T, atol=ATOL_IDENTITY)
    assert_allclose(np.diag(W), fit.influence()["hat"], atol=ATOL_IDENTITY)
    assert_allclose(W.sum(axis=1), 1.0, atol=ATOL_IDENTITY)
    new = wide.iloc[::3].drop(columns="y") * 1.1
    Wn = fit.attention(new).weights.to_numpy()
    assert_allclose(Wn @ y, fit.predict(new).to_numpy(), atol=ATOL_IDENTITY * scale)
    assert_allclose(Wn.sum(axis=1), 1.0, atol=ATOL_IDENTITY)
    X = fit.design.X
    assert_allclose(X @ fit.embedding.omega.to_numpy() @ X.T, W, atol=ATOL_IDENTITY)


@pytest.mark.parametrize("criterion", ["gcv", "loo"])
def test_ridge_selection_in_closed_form(wide: pd.DataFrame, criterion: str) -> None:
    fit = ar.attnreg(FORMULA, data=wide, method="ridge", lam=criterion)
    X, y = xy(wide)
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    if criterion == "gcv":
        def score(lam: float) -> float:
            return brute_force_gcv(Z, y - y.mean(), lam)
    else:
        def score(lam: float) -> float:
            return brute_force_loo(Z, y, lam)
    sel = fit.selection
    for i in (len(sel.grid) // 3, len(sel.grid) // 2, 2 * len(sel.grid) // 3):
        assert_allclose(sel.scores[i], score(sel.grid[i]), rtol=1e-7)
    grid = np.logspace(-4, 3, 60)
    assert score(fit.lam) <= min(score(lam) for lam in grid) * (1 + 1e-6)
    assert fit.lam > 0 and fit.edf < N


def explicit_pcr(X: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    mean, sd = X.mean(axis=0), X.std(axis=0)
    Z = (X - mean) / sd
    _, _, Vt = np.linalg.svd(Z, full_matrices=False)
    top = Vt[:k].T
    gamma = np.linalg.lstsq(Z @ top, y - y.mean(), rcond=None)[0]
    beta = top @ gamma / sd
    return np.r_[y.mean() - mean @ beta, beta]


@pytest.mark.parametrize("k", [1, 4, N - 1])
def test_pcr_matches_explicit_pca(wide: pd.DataFrame, k: int) -> None:
    fit = ar.attnreg(FORMULA, data=wide, method="pcr", k=k)
    X, y = xy(wide)
    assert_allclose(fit.coef.to_numpy(), explicit_pcr(X, y, k), rtol=1e-8, atol=1e-12)
    assert fit.k == k and fit.edf == pytest.approx(k + 1)
    W = fit.attention().weights.to_numpy()
    assert_allclose(W @ W, W, atol=1e-9)  # a projection
    assert_allclose(W @ y, fit.fitted, atol=ATOL_IDENTITY * np.abs(y).max())


def test_pcr_k_beyond_rank_is_refused(wide: pd.DataFrame) -> None:
    with pytest.raises(OptionError, match=r"rank of the predictors \(19\)"):
        ar.attnreg(FORMULA, data=wide, method="pcr", k=N)
    fit = ar.attnreg(FORMULA, data=wide, method="pcr", k="loo")
    assert 1 <= fit.k <= N - 1
    assert fit.selection.grid.size == N - 1


def test_ols_wide_is_refused(wide: pd.DataFrame) -> None:
    with pytest.raises(DataError, match=r"n_obs \(20\) must exceed the number of coefficients "
                                        r"\(51\).*ridge and PCR accept wide designs"):
        ar.attnreg(FORMULA, data=wide)


def test_constant_column_is_aliased_duplicates_are_kept(wide: pd.DataFrame) -> None:
    frame = wide.assign(x5=3.0, x7=wide["x6"])
    with pytest.warns(RankDeficiencyWarning, match="x5"):
        fit = ar.attnreg(FORMULA, data=frame, method="ridge", lam=1.0)
    assert fit.aliased == ["x5"]
    assert np.isnan(fit.coef["x5"])
    # ridge splits a duplicated column equally (the penalty is on the standardised scale)
    assert_allclose(fit.coef["x6"], fit.coef["x7"], rtol=RTOL_EXACT)
    X, y = xy(frame)
    keep = np.arange(P) != 5
    ref = ridge_primal(X[:, keep], y, 1.0)
    assert_allclose(fit.coef.drop("x5").to_numpy(), ref, rtol=1e-9, atol=1e-12)


def test_tall_and_wide_agree_at_the_boundary(wide: pd.DataFrame) -> None:
    """Rows = columns + 1 takes the tall path; dropping a row (so n = p) the wide one."""
    frame = wide[["y"] + [f"x{j}" for j in range(N - 2)]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tall = ar.attnreg("y ~ .", data=frame, method="ridge", lam=0.5)
        wide_fit = ar.attnreg("y ~ .", data=frame.iloc[:-1], method="ridge", lam=0.5)
    X, y = frame.drop(columns="y").to_numpy(), frame["y"].to_numpy()
    assert_allclose(tall.coef.to_numpy(), ridge_primal(X, y, 0.5), rtol=1e-9, atol=1e-12)
    assert_allclose(wide_fit.coef.to_numpy(), ridge_primal(X[:-1], y[:-1], 0.5), rtol=1e-9,
                    atol=1e-12)


def test_summary_and_robust_vcov(wide: pd.DataFrame) -> None:
    # LOO leaves 6.6 residual df here; GCV interpolates (λ → 0, df → 0: NaN inference, see
    # tests/linear/test_edge_numerics.py)
    fit = ar.attnreg(FORMULA, data=wide, method="ridge", lam="loo")
    text = str(fit.summary())
    assert "chosen by LOO" in text and "effective df tr(H)" in text
    for kind in ("HC0", "HC3"):
        V = fit.with_vcov(kind).vcov.to_numpy()
        assert np.all(np.isfinite(V)) and np.all(np.diag(V) > 0)
    ci = fit.conf_int()
    assert ci.shape == (P + 1, 2)
