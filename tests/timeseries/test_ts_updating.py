"""Recursive/rolling least squares by updating: every origin against a refit on its window."""

from __future__ import annotations

import doctest
import warnings

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal
from statsmodels.regression.rolling import RollingOLS

from attnreg.exceptions import DataError, OptionError, RankDeficiencyWarning
from attnreg.timeseries import _tuning, updating
from attnreg.timeseries.updating import recursive_ls
from tests.conftest import RTOL_EXACT

RTOL_INCREMENTAL = 1e-8  # rank-1 rolling updates vs per-window refit (with reset)
RTOL_GCV = 1e-6  # GCV at the chosen λ vs the minimum over a dense grid (optimiser tolerance)
LOG10_LAM_TOL = 0.02  # chosen λ vs dense-grid argmin, in decades (grid step 0.002, xtol 0.01)


def simulate(n_rows: int = 160, n_reg: int = 4, seed: int = 0, level: float = 0.0):
    rng = np.random.default_rng(seed)
    X = level + rng.standard_normal((n_rows, n_reg)) + 0.3 * rng.standard_normal((n_rows, 1))
    y = 0.5 + X @ rng.standard_normal(n_reg) + rng.standard_normal(n_rows)
    return X, y


def window_of(t: int, window: int | None) -> slice:
    return slice(0 if window is None else max(0, t - window + 1), t + 1)


def ols_refit(X: np.ndarray, y: np.ndarray, intercept: bool) -> np.ndarray:
    design = np.column_stack([np.ones(len(y)), X]) if intercept else X
    return np.linalg.lstsq(design, y, rcond=None)[0]


def ridge_refit(X: np.ndarray, y: np.ndarray, lam: float, intercept: bool,
                standardize: bool) -> np.ndarray:
    """Closed form on the slice: centre, scale by the population SD, solve, scale back."""
    xbar, ybar = (X.mean(axis=0), y.mean()) if intercept else (np.zeros(X.shape[1]), 0.0)
    Xc, yc = X - xbar, y - ybar
    sd = np.sqrt((Xc**2).mean(axis=0)) if standardize else np.ones(X.shape[1])
    Z = Xc / sd
    beta = np.linalg.solve(Z.T @ Z + lam * np.eye(X.shape[1]), Z.T @ yc) / sd
    return np.r_[ybar - xbar @ beta, beta] if intercept else beta


def gcv_curve(X: np.ndarray, y: np.ndarray, lams: np.ndarray, intercept: bool,
              standardize: bool) -> tuple[np.ndarray, float]:
    """Brute-force GCV on the slice from eigh of the standardised centred Gram."""
    n = len(y)
    Xc, yc = (X - X.mean(axis=0), y - y.mean()) if intercept else (X, y)
    sd = np.sqrt((Xc**2).mean(axis=0)) if standardize else np.ones(X.shape[1])
    Z = Xc / sd
    mu, V = np.linalg.eigh(Z.T @ Z)
    z2 = (V.T @ (Z.T @ yc)) ** 2
    fit = np.where(mu > 0, z2 / np.where(mu > 0, mu, 1.0), 0.0)
    shrink = (lams[:, None] / (mu + lams[:, None])) ** 2
    rss = yc @ yc - ((1.0 - shrink) * fit).sum(axis=1)
    df = intercept + (mu / (mu + lams[:, None])).sum(axis=1)
    return np.where(df < n, n * rss / (n - df) ** 2, np.inf), float(mu.mean())


@pytest.mark.parametrize("window", [None, 25])
@pytest.mark.parametrize("intercept", [True, False])
def test_ols_equals_a_refit_at_every_origin(window: int | None, intercept: bool) -> None:
    X, y = simulate()
    fit = recursive_ls(X, y, window=window, min_nobs=8, intercept=intercept, reset=13)
    assert fit.origins[0] == 7 and fit.origins[-1] == len(y) - 1 and fit.n_rank_deficient == 0
    for k, t in enumerate(fit.origins):
        rows = window_of(t, window)
        assert fit.nobs[k] == rows.stop - rows.start
        assert_allclose(fit.coef[k], ols_refit(X[rows], y[rows], intercept),
                        rtol=RTOL_INCREMENTAL, atol=1e-12)


def test_exact_fits_and_exactly_determined_windows_are_not_rank_deficient() -> None:
    X, _ = simulate(n_rows=40)
    y = 1.0 + X @ np.array([0.5, -2.0, 1.0, 3.0])  # no noise: RSS = 0 in every window
    fit = recursive_ls(X, y, return_se=True)  # min_nobs = 5: the first window has n = n_coef
    assert fit.origins[0] == 4 and fit.n_rank_deficient == 0
    assert_allclose(fit.coef, np.tile([1.0, 0.5, -2.0, 1.0, 3.0], (36, 1)), rtol=RTOL_INCREMENTAL)
    assert np.isnan(fit.std_err[0]).all() and np.all(fit.std_err[1:] < 1e-6)
    gcv = recursive_ls(X, y, window=15, method="ridge")
    assert np.isfinite(gcv.coef).all()


@pytest.mark.parametrize("window", [30, None])
def test_ols_params_and_std_err_equal_statsmodels_rolling_ols(window: int | None) -> None:
    X, y = simulate(n_rows=200)
    design = sm.add_constant(X)
    if window is None:
        ref = RollingOLS(y, design, window=len(y), expanding=True, min_nobs=10).fit()
        fit = recursive_ls(X, y, min_nobs=10, return_se=True, reset=50)
    else:
        ref = RollingOLS(y, design, window=window).fit()
        fit = recursive_ls(X, y, window=window, return_se=True, reset=50)
    rows = fit.origins
    assert_allclose(fit.coef, np.asarray(ref.params)[rows], rtol=RTOL_INCREMENTAL)
    assert_allclose(fit.std_err, np.asarray(ref.bse)[rows], rtol=RTOL_INCREMENTAL)


def test_std_err_without_intercept_is_classical() -> None:
    X, y = simulate(n_rows=60)
    fit = recursive_ls(X, y, window=20, intercept=False, return_se=True)
    t = int(fit.origins[-5])
    rows = window_of(t, 20)
    res = sm.OLS(y[rows], X[rows]).fit()
    assert_allclose(fit.std_err[-5], res.bse, rtol=RTOL_INCREMENTAL)


@pytest.mark.parametrize("window", [None, 30])
@pytest.mark.parametrize(("intercept", "standardize"), [(True, True), (True, False),
                                                        (False, True), (False, False)])
@pytest.mark.parametrize("lam", [2.5, "gcv"])
def test_ridge_equals_the_closed_form_on_each_window(window: int | None, intercept: bool,
                                                     standardize: bool, lam: object) -> None:
    X, y = simulate(n_rows=90, level=2.0)
    fit = recursive_ls(X, y, window=window, min_nobs=10, intercept=intercept, method="ridge",
                       lam=lam, standardize=standardize, reset=17)  # type: ignore[arg-type]
    assert fit.lam is not None and np.all(fit.lam > 0)
    for k, t in enumerate(fit.origins):
        rows = window_of(t, window)
        expected = ridge_refit(X[rows], y[rows], fit.lam[k], intercept, standardize)
        assert_allclose(fit.coef[k], expected, rtol=RTOL_INCREMENTAL, atol=1e-12)


@pytest.mark.parametrize("window", [None, 9])
@pytest.mark.parametrize(("method", "lam"), [("ols", None), ("ridge", 0.8), ("ridge", "gcv")])
def test_every_batch_and_recompute_boundary_equals_a_refit(monkeypatch, window: int | None,
                                                           method: str, lam: object) -> None:
    """Tiny batches and a short reset put many batch and exact-recompute boundaries, and
    segments starting with a fresh recompute, inside one run."""
    monkeypatch.setattr(updating, "BATCH_FIXED", 7)
    monkeypatch.setattr(updating, "BATCH_GCV", 5)
    X, y = simulate(n_rows=70, n_reg=3, seed=11, level=3.0)
    fit = recursive_ls(X, y, window=window, min_nobs=6, method=method, lam=lam,  # type: ignore[arg-type]
                       reset=4)
    for k, t in enumerate(fit.origins):
        rows = window_of(int(t), window)
        expected = (ols_refit(X[rows], y[rows], True) if method == "ols"
                    else ridge_refit(X[rows], y[rows], float(fit.lam[k]), True, True))
        assert_allclose(fit.coef[k], expected, rtol=RTOL_INCREMENTAL, atol=1e-12)


@pytest.mark.parametrize("window", [16, 40])
def test_gcv_lambda_on_nearly_square_windows(window: int) -> None:
    """With few rows per coefficient GCV is lopsided in log λ (flat below its minimum, steep
    above): the search must still land on the dense-grid minimum."""
    X, y = simulate(n_rows=220, n_reg=12, seed=4)
    fit = recursive_ls(X, y, window=window, method="ridge")
    lo, hi = updating.GCV_LOG10_BOUNDS
    steps = np.linspace(lo, hi, int((hi - lo) / 0.002) + 1)
    for k in range(0, fit.origins.size, 11):
        rows = window_of(int(fit.origins[k]), window)
        _, mean_eig = gcv_curve(X[rows], y[rows], np.ones(1), True, True)
        curve, _ = gcv_curve(X[rows], y[rows], mean_eig * 10.0**steps, True, True)
        ours, _ = gcv_curve(X[rows], y[rows], fit.lam[k : k + 1], True, True)
        assert ours[0] <= curve.min() * (1 + RTOL_GCV)


@pytest.mark.parametrize(("window", "intercept", "standardize"), [
    (None, True, True), (20, True, True), (20, False, True), (20, True, False)])
def test_gcv_lambda_minimises_gcv_on_a_dense_grid(window: int | None, intercept: bool,
                                                   standardize: bool) -> None:
    X, y = simulate(n_rows=120, n_reg=5, seed=2)
    y = y + 3.0 * np.sin(np.arange(len(y)) / 7.0)  # some origins favour heavy shrinkage
    fit = recursive_ls(X, y, window=window, min_nobs=12, intercept=intercept, method="ridge",
                       standardize=standardize)
    lo, hi = updating.GCV_LOG10_BOUNDS
    steps = np.linspace(lo, hi, int((hi - lo) / 0.002) + 1)
    for k in range(0, fit.origins.size, 7):
        rows = window_of(int(fit.origins[k]), window)
        _, mean_eig = gcv_curve(X[rows], y[rows], np.ones(1), intercept, standardize)
        grid = mean_eig * 10.0**steps
        curve, _ = gcv_curve(X[rows], y[rows], grid, intercept, standardize)
        ours, _ = gcv_curve(X[rows], y[rows], fit.lam[k : k + 1], intercept, standardize)
        best = int(np.argmin(curve))
        assert ours[0] <= curve[best] * (1 + RTOL_GCV)
        assert abs(np.log10(fit.lam[k] / grid[best])) <= LOG10_LAM_TOL


def test_rank_deficient_windows_are_nan_and_counted() -> None:
    X, y = simulate(n_rows=80, n_reg=3)
    X[20:50, 1] = 4.0  # constant in every window inside rows 20..49
    X[60:75, 2] = 2.0 * X[60:75, 0] - 1.0  # collinear with column 0 (and the intercept)
    with pytest.warns(RankDeficiencyWarning, match=r"of \d+ windows are rank deficient"):
        fit = recursive_ls(X, y, window=10, return_se=True)
    ends = fit.origins
    expected = ((ends >= 29) & (ends <= 49)) | ((ends >= 69) & (ends <= 74))
    assert_array_equal(fit.rank_deficient, expected)
    assert fit.n_rank_deficient == expected.sum()
    assert np.isnan(fit.coef[expected]).all() and np.isnan(fit.std_err[expected]).all()
    assert np.isfinite(fit.coef[~expected]).all()
    with pytest.warns(RankDeficiencyWarning):
        ridge = recursive_ls(X, y, window=10, method="ridge", lam=1.0)
    assert_array_equal(ridge.rank_deficient, (ends >= 29) & (ends <= 49))  # λ > 0 copes with 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        unscaled = recursive_ls(X, y, window=10, method="ridge", lam=1.0, standardize=False)
    assert unscaled.n_rank_deficient == 0


@pytest.mark.parametrize("kwargs", [{}, {"method": "ridge", "lam": 1.0}, {"method": "ridge"}])
def test_changing_data_after_an_origin_leaves_earlier_coefficients_unchanged(kwargs) -> None:
    X, y = simulate(n_rows=150, seed=5)
    base = recursive_ls(X, y, window=40, min_nobs=20, reset=25, **kwargs)
    cut = 90
    X2, y2 = X.copy(), y.copy()
    X2[cut + 1 :] = 50.0 * np.random.default_rng(9).standard_normal(X2[cut + 1 :].shape)
    y2[cut + 1 :] = -y2[cut + 1 :] ** 3
    other = recursive_ls(X2, y2, window=40, min_nobs=20, reset=25, **kwargs)
    upto = base.origins <= cut
    assert_array_equal(base.coef[upto], other.coef[upto])
    if base.lam is not None:
        assert_array_equal(base.lam[upto], other.lam[upto])
    assert not np.allclose(base.coef[~upto], other.coef[~upto])


@pytest.mark.parametrize("window", [None, 300])
def test_updating_does_not_drift_on_a_series_far_from_zero(window: int | None) -> None:
    X, y = simulate(n_rows=1500, n_reg=3, seed=6, level=1e3)
    y = y + 1e4
    exact = recursive_ls(X, y, window=window, min_nobs=300, reset=1)  # recomputed every origin
    lazy = recursive_ls(X, y, window=window, min_nobs=300, reset=10**6)  # never recomputed
    assert_allclose(lazy.coef, exact.coef, rtol=RTOL_INCREMENTAL)
    t = int(exact.origins[-1])
    assert_allclose(exact.coef[-1], ols_refit(X[window_of(t, window)], y[window_of(t, window)],
                                              True), rtol=RTOL_INCREMENTAL)


def test_intercept_only_gives_window_means_and_predict_forms_forecasts() -> None:
    X, y = simulate(n_rows=30)
    means = recursive_ls(np.empty((30, 0)), y, window=5, return_se=True)
    assert_allclose(means.coef[:, 0], [y[t - 4 : t + 1].mean() for t in means.origins],
                    rtol=RTOL_EXACT)
    assert_allclose(means.std_err[:, 0], [y[t - 4 : t + 1].std(ddof=1) / np.sqrt(5)
                                          for t in means.origins], rtol=RTOL_EXACT)
    fit = recursive_ls(X[:-1], y[1:], window=10)  # direct one-step forecasts
    rows = X[fit.origins]
    assert_allclose(fit.predict(rows), fit.coef[:, 0] + np.sum(rows * fit.coef[:, 1:], axis=1),
                    rtol=RTOL_EXACT)
    no_icpt = recursive_ls(X, y, window=10, intercept=False)
    assert_allclose(no_icpt.predict(X[no_icpt.origins]),
                    np.sum(X[no_icpt.origins] * no_icpt.coef, axis=1), rtol=RTOL_EXACT)


def test_result_fields() -> None:
    X, y = simulate(n_rows=40)
    fit = recursive_ls(X, y, window=12, min_nobs=6, method="ridge")
    assert fit.method == "ridge" and fit.window == 12 and fit.intercept
    assert fit.coef.shape == (35, 5) and fit.lam.shape == (35,) and fit.std_err is None
    assert_array_equal(fit.nobs, np.minimum(np.arange(6, 41), 12))
    assert recursive_ls(X, y).lam is None and recursive_ls(X, y).window is None


@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"method": "lasso"}, OptionError, "method must be 'ols' or 'ridge'"),
    ({"lam": 1.0}, OptionError, "lam applies to method='ridge' only"),
    ({"method": "ridge", "lam": -1.0}, OptionError, "lam must be a positive number or 'gcv'"),
    ({"method": "ridge", "lam": "loo"}, OptionError, "lam must be a positive number"),
    ({"method": "ridge", "return_se": True}, OptionError, "use method='ols'"),
    ({"window": 0}, OptionError, "window must be a positive integer"),
    ({"window": 5, "min_nobs": 6}, OptionError, "min_nobs must not exceed window"),
    ({"reset": 2.5}, OptionError, "reset must be a positive integer"),
    ({"min_nobs": 41}, DataError, "need at least min_nobs=41 rows"),
])
def test_errors(kwargs: dict, error: type[Exception], message: str) -> None:
    X, y = simulate(n_rows=40)
    with pytest.raises(error, match=message):
        recursive_ls(X, y, **kwargs)


def test_data_errors() -> None:
    X, y = simulate(n_rows=20)
    with pytest.raises(DataError, match=r"X must be \(T, P\) and y \(T,\)"):
        recursive_ls(X, y[:-1])
    X[3, 0] = np.nan
    with pytest.raises(DataError, match="finite"):
        recursive_ls(X, y)


def test_docstring_examples() -> None:
    result = doctest.testmod(updating)
    assert result.attempted > 0 and result.failed == 0


@settings(max_examples=60, deadline=None)
@given(n_piv=st.integers(1, 9), n_orig=st.integers(1, 3), n_grid=st.integers(1, 3),
       seed=st.integers(0, 2**31 - 1))
def test_pivot_sweep_matches_dense_inverse(n_piv: int, n_orig: int, n_grid: int, seed: int) -> None:
    """The GCV sweep's three outputs against M = T + λI inverted densely, per (λ, origin)."""
    rng = np.random.default_rng(seed)
    d = rng.uniform(0.0, 5.0, (n_piv, n_orig))  # T = Q'AQ of a PSD Gram: use a PSD T
    off = rng.normal(size=(n_piv - 1, n_orig))
    for b in range(n_orig):  # make each T positive semidefinite: T = L L' with L bidiagonal
        L = np.diag(np.sqrt(d[:, b])) + np.diag(off[:, b], -1)
        T = L @ L.T
        d[:, b], off[:, b] = np.diag(T), np.diag(T, -1)
    lam = 10.0 ** rng.uniform(-3, 2, (n_grid, n_orig))
    g0, dphi, trace, pivots = _tuning.sweep(d, off**2, lam, keep=True)
    assert pivots is not None and pivots.shape == (n_piv, n_grid, n_orig)
    for g in range(n_grid):
        for b in range(n_orig):
            M = np.diag(d[:, b] + lam[g, b]) + np.diag(off[:, b], 1) + np.diag(off[:, b], -1)
            inv = np.linalg.inv(M)
            assert_allclose(g0[g, b], inv[0, 0], rtol=1e-10)
            assert_allclose(dphi[g, b] * g0[g, b] ** 2, (inv @ inv)[0, 0], rtol=1e-9)
            assert_allclose(trace[g, b], np.trace(inv), rtol=1e-10)
            assert_allclose(np.prod(pivots[:, g, b]), np.linalg.det(M), rtol=1e-9)
