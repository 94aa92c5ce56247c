"""Forecast intervals without look-ahead: empirical quantiles of past errors and Gaussian
intervals, against hand computations, statsmodels, a coverage simulation, and invariance to
data after the origin."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose
from scipy import stats

import attnreg as ar
from attnreg.timeseries.intervals import ar_psi_weights, empirical_bounds
from attnreg.timeseries.updating import recursive_ls

DIRECT = "y ~ lag(y, h) + lag(x, h)"


def _ar1(seed: int, n: int, phi: float = 0.5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    e, y = rng.standard_normal(n + 50), np.zeros(n + 50)
    for t in range(1, n + 50):
        y[t] = 0.3 + phi * y[t - 1] + e[t]
    return pd.DataFrame({"y": y[50:]})


def test_empirical_coverage_of_90_percent_intervals_on_an_ar1() -> None:
    """Coverage within Monte Carlo error of its expectation, which is 0.9 up to the pool size.

    With n past errors, an interval between numpy's (linear) 5 % and 95 % quantiles covers a new
    independent error with probability 0.9 (n - 1) / (n + 1) (order statistics of a continuous
    law); that is the expectation tested, 0.890 here (100 <= n <= 299 past errors). The
    standard error adds the binomial variance of N indicators, 0.09 / N, and the noise of
    the estimated quantiles, at most 0.09 / n_min per series (fully correlated within a
    series, independent across R series).
    """
    reps, n_min, level = 60, 100, 0.9
    inside, expected, gauss = [], [], []
    for seed in range(reps):
        data = _ar1(seed, 400)
        fc = ar.forecast("y ~ lag(y, 1)", data, start=100, interval="empirical", level=level,
                         min_errors=n_min)
        f = fc.forecasts
        has = f["lower"].notna().to_numpy()
        y = f["actual"].to_numpy()[has]
        inside.append((y >= f["lower"].to_numpy()[has]) & (y <= f["upper"].to_numpy()[has]))
        n_err = np.searchsorted(fc.plan.target_pos, fc.plan.origin_pos, side="right")[has]
        assert n_err.min() == n_min
        expected.append(level * (n_err - 1) / (n_err + 1))
        g = ar.forecast("y ~ lag(y, 1)", data, start=300, interval="gaussian", level=level)
        gauss.append((g.forecasts["actual"] >= g.lower) & (g.forecasts["actual"] <= g.upper))
    hits, target = np.concatenate(inside), np.concatenate(expected).mean()
    N = hits.size
    assert hits.size == reps * 200
    assert abs(target - 0.890) < 5e-4
    se = np.sqrt(level * (1 - level) * (1 / N + 1 / (n_min * reps)))
    assert abs(hits.mean() - target) < 3 * se, (hits.mean(), target, se)
    assert 3 * se < 0.015  # tight enough to tell 90 % from 88 % or 92 %
    g_hits = np.concatenate(gauss)  # exact t intervals of a Gaussian AR(1): binomial error only
    assert abs(g_hits.mean() - level) < 3 * np.sqrt(level * (1 - level) / g_hits.size)


def test_empirical_bounds_against_numpy_quantiles_of_observed_errors(series) -> None:
    fh = ar.forecast(DIRECT, series, method="ridge", start="2008Q1", horizon=[1, 3],
                     interval="empirical", level=0.8, min_errors=8)
    for h in (1, 3):
        f = fh.forecasts.loc[h]
        err = (f["actual"] - f["forecast"]).to_numpy()
        n_known = 0
        for i, (_, row) in enumerate(f.iterrows()):
            known = f.index <= row["origin"]  # h-step errors whose targets are observed by t
            assert not known[i:].any()  # never its own error or a later one
            n_known = int(known.sum())
            if n_known < 8:
                assert np.isnan(row["lower"]) and np.isnan(row["upper"])
                continue
            q = np.quantile(err[known], [0.1, 0.9])
            assert_allclose([row["lower"], row["upper"]], row["forecast"] + q, rtol=1e-12)
        assert n_known == len(f) - h  # the last origin sees all but the last h errors
        e = fh.evaluation.loc[h]
        has = f["lower"].notna()
        inside = (f["actual"] >= f["lower"]) & (f["actual"] <= f["upper"])
        assert e["n_intervals"] == has.sum() == len(f) - 8 - (h - 1)
        assert_allclose(e["coverage"], inside[has].mean())
        assert_allclose(e["mean_width"], (f["upper"] - f["lower"])[has].mean())


def test_empirical_bounds_small_case() -> None:
    lower, upper, n = empirical_bounds(np.zeros(4), np.array([3.0, 1.0, 2.0, 0.0]),
                                       np.arange(4), np.arange(4) - 1, 0.5, 2)
    assert n.tolist() == [0, 1, 2, 3]
    assert np.isnan(lower[:2]).all()
    assert_allclose(lower[2:], [np.quantile([3, 1], 0.25), np.quantile([3, 1, 2], 0.25)])
    assert_allclose(upper[2:], [np.quantile([3, 1], 0.75), np.quantile([3, 1, 2], 0.75)])


@pytest.mark.parametrize(("scheme", "window"), [("recursive", None), ("rolling", 30),
                                                ("fixed", None)])
def test_gaussian_h1_interval_equals_statsmodels_prediction_interval(series, scheme,
                                                                    window) -> None:
    alpha = 0.1
    fc = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", series, scheme=scheme, window=window,
                     start="2010Q1", interval="gaussian", level=1 - alpha)
    assert fc.engine == ("refit" if scheme == "fixed" else "updating")
    y, x = series["y"].to_numpy(), series["x"].to_numpy()
    Y, X = y[1:], sm.add_constant(np.column_stack([y[:-1], x[:-1]]))  # row r: target r + 1
    for i in (0, 11, fc.plan.n_forecasts - 1):
        rows = fc.plan.rows(i)  # design rows = rows of (Y, X) here
        res = sm.OLS(Y[rows], X[rows]).fit()
        j = fc.plan.targets[i]
        frame = res.get_prediction(X[j : j + 1]).summary_frame(alpha)
        assert_allclose(fc.predictions[i], frame["mean"].iloc[0], rtol=1e-10)
        assert_allclose(fc.lower[i], frame["obs_ci_lower"].iloc[0], rtol=1e-9)
        assert_allclose(fc.upper[i], frame["obs_ci_upper"].iloc[0], rtol=1e-9)
        assert_allclose(fc.sigma_path[i], np.sqrt(res.scale), rtol=1e-9)


def test_gaussian_direct_h_steps_is_z_sigma_of_the_h_step_regression(series) -> None:
    fh = ar.forecast(DIRECT, series, start="2010Q1", horizon=[1, 3], interval="gaussian",
                     level=0.8)
    part = fh.at_horizon(3)
    y, x = series["y"].to_numpy(), series["x"].to_numpy()
    Y, X = y[3:], sm.add_constant(np.column_stack([y[:-3], x[:-3]]))
    i = 7
    res = sm.OLS(Y[part.plan.rows(i)], X[part.plan.rows(i)]).fit()
    half = stats.norm.ppf(0.9) * np.sqrt(res.scale)
    assert_allclose(part.upper[i] - part.predictions[i], half, rtol=1e-9)
    assert_allclose(part.predictions[i] - part.lower[i], half, rtol=1e-9)
    assert "z * sigma of the h-step regression" in str(fh.summary())


def test_gaussian_ridge_h1_uses_the_fit_prediction_interval(series) -> None:
    fc = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", series, method="ridge", lam=2.0,
                     start="2015Q1", interval="gaussian", level=0.9)
    assert fc.engine == "refit"
    i = 3
    rows = fc.plan.rows(i)
    lab = fc.plan.design.row_labels
    shifted = pd.DataFrame({"y": series["y"], "y1": series["y"].shift(1),
                            "x1": series["x"].shift(1)})
    fit = ar.attnreg("y ~ y1 + x1", shifted.loc[lab[rows]], method="ridge", lam=2.0)
    band = fit.predict(shifted.loc[[lab[fc.plan.targets[i]]]], interval="prediction", level=0.9)
    assert_allclose(fc.predictions[i], band["fit"].iloc[0], rtol=1e-10)
    assert_allclose([fc.lower[i], fc.upper[i]], [band["lwr"].iloc[0], band["upr"].iloc[0]],
                    rtol=1e-9)


def test_gaussian_iterated_variance_by_hand(series) -> None:
    fi = ar.forecast("y ~ lag(y, 1) + lag(y, 2)", series, start="2010Q1", horizon=[1, 3],
                     strategy="iterated", interval="gaussian", level=0.9)
    direct = ar.forecast("y ~ lag(y, 1) + lag(y, 2)", series, start="2010Q1",
                         interval="gaussian", level=0.9)
    assert_allclose(fi.at_horizon(1).lower, direct.lower, rtol=1e-12)
    part = fi.at_horizon(3)
    y = series["y"].to_numpy()
    i = 9
    o = int(part.plan.origin_pos[i])
    s = np.arange(2, o + 1)
    res = sm.OLS(y[s], sm.add_constant(np.column_stack([y[s - 1], y[s - 2]]))).fit()
    _, p1, p2 = res.params
    var = res.scale * (1 + p1**2 + (p1**2 + p2) ** 2)  # psi_1 = phi_1, psi_2 = phi_1^2 + phi_2
    assert_allclose(part.upper[i] - part.predictions[i], stats.norm.ppf(0.95) * np.sqrt(var),
                    rtol=1e-9)
    assert_allclose(ar_psi_weights(np.array([[p1, p2]]), 3), [[1, p1, p1**2 + p2]])


def test_recursive_ls_prediction_leverage_equals_hat_values() -> None:
    rng = np.random.default_rng(3)
    X, y = rng.standard_normal((60, 3)), rng.standard_normal(60)
    for window, intercept in [(None, True), (20, True), (25, False)]:
        fit = recursive_ls(X, y, window=window, min_nobs=20, intercept=intercept, x_new=X[19:])
        for k in (0, 17, 40):
            t = int(fit.origins[k])
            rows = np.arange(0 if window is None else max(t - window + 1, 0), t + 1)
            D = sm.add_constant(X[rows]) if intercept else X[rows]
            res = sm.OLS(y[rows], D).fit()
            h = res.get_influence().hat_matrix_diag[-1]  # the origin's own row (x_new[k] = X[t])
            assert_allclose(fit.leverage[k], h, rtol=1e-9)
            assert_allclose(fit.sigma[k], np.sqrt(res.scale), rtol=1e-9)


# ------------------------------------------------------------------------------ no look-ahead

CASES = [
    ("ols", {"interval": "empirical", "min_errors": 6}),
    ("ridge", {"interval": "empirical", "min_errors": 6}),
    ("pcr", {"interval": "gaussian", "k": 2}),
    ("ols", {"interval": "gaussian"}),
    ("ridge", {"interval": "gaussian"}),
]


@pytest.mark.parametrize(("method", "options"), CASES)
@pytest.mark.parametrize(("scheme", "window"), [("recursive", None), ("rolling", 30)])
@pytest.mark.parametrize("strategy", ["direct", "iterated"])
def test_future_perturbation_leaves_past_forecasts_and_intervals_unchanged(
        series, method, options, scheme, window, strategy) -> None:
    formula = DIRECT if strategy == "direct" else "y ~ lags(y, 1, 2)"
    kw = dict(method=method, scheme=scheme, window=window, start="2009Q1",
              horizon=[1, 2, 4], strategy=strategy, **options)
    base = ar.forecast(formula, series, **kw).forecasts
    cut = pd.Period("2014Q2", freq="Q")
    noisy = series.copy()
    later = noisy.index > cut
    noisy.loc[later] = noisy.loc[later] * 2.5 - 4.0
    moved = ar.forecast(formula, noisy, **kw).forecasts
    past = (base["origin"] <= cut).to_numpy()
    assert past.sum() > 20 and (~past).sum() > 20
    cols = ["forecast", "lower", "upper", "benchmark", "n_train"]
    assert base.loc[past, ["lower", "upper"]].notna().all(axis=1).sum() > 10
    pd.testing.assert_frame_equal(moved.loc[past, cols], base.loc[past, cols], rtol=1e-11,
                                  atol=1e-11)
    assert not np.allclose(moved.loc[~past, "upper"], base.loc[~past, "upper"])
