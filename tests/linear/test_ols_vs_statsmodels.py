"""OLS and WLS against statsmodels: every number the coefficient view reports."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.linear import decompositions, filters, spectral
from tests.conftest import RTOL_SM

FORMULA = "y ~ x1 + np.log(x2) + C(g)"


@pytest.fixture(params=["stored", "lazy"])
def u_mode(request, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run with U stored (small designs' default) and recomputed from X (large designs')."""
    if request.param == "lazy":
        monkeypatch.setattr(decompositions, "LAZY_U_MIN_CELLS", 0)
    return request.param


@pytest.fixture
def pair(mixed_frame: pd.DataFrame, u_mode: str):
    fit = ar.attnreg(FORMULA, data=mixed_frame)
    assert fit.spectrum.U.is_stored == (u_mode == "stored")
    ref = smf.ols(FORMULA, data=mixed_frame).fit()
    return fit, ref


@pytest.fixture
def wls_pair(mixed_frame: pd.DataFrame, u_mode: str):
    fit = ar.attnreg(FORMULA, data=mixed_frame, weights="w")
    ref = smf.wls(FORMULA, data=mixed_frame, weights=mixed_frame["w"]).fit()
    return fit, ref


def test_coefficients_and_inference(pair) -> None:
    fit, ref = pair
    assert list(fit.coef.index) == ["(Intercept)", "C(g)[T.b]", "C(g)[T.c]", "x1", "np.log(x2)"]
    assert_allclose(fit.coef.to_numpy(), ref.params.to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.std_err.to_numpy(), ref.bse.to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.t_value.to_numpy(), ref.tvalues.to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.p_value.to_numpy(), ref.pvalues.to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.vcov.to_numpy(), ref.cov_params().to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.conf_int(0.9).to_numpy(), ref.conf_int(0.1).to_numpy(), rtol=RTOL_SM)


def test_fit_statistics(pair) -> None:
    fit, ref = pair
    assert fit.nobs == ref.nobs
    assert fit.df_resid == ref.df_resid
    assert_allclose(fit.sigma, np.sqrt(ref.scale), rtol=RTOL_SM)
    assert_allclose(fit.r_squared, ref.rsquared, rtol=RTOL_SM)
    assert_allclose(fit.adj_r_squared, ref.rsquared_adj, rtol=RTOL_SM)
    assert_allclose(fit.f_test.statistic, ref.fvalue, rtol=RTOL_SM)
    assert_allclose(fit.f_test.p_value, ref.f_pvalue, rtol=RTOL_SM)
    assert (fit.f_test.df1, fit.f_test.df2) == (ref.df_model, ref.df_resid)
    assert_allclose(fit.loglik, ref.llf, rtol=RTOL_SM)
    # R counts sigma as a parameter, statsmodels does not: AIC differs by exactly 2, BIC by log(n)
    assert_allclose(fit.aic, ref.aic + 2.0, rtol=RTOL_SM)
    assert_allclose(fit.bic, ref.bic + np.log(ref.nobs), rtol=RTOL_SM)
    assert_allclose(fit.fitted.to_numpy(), ref.fittedvalues.to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.resid.to_numpy(), ref.resid.to_numpy(), rtol=RTOL_SM, atol=1e-12)


@pytest.mark.parametrize("kind", ["HC0", "HC1", "HC2", "HC3"])
def test_robust_covariances(pair, kind: str) -> None:
    fit, ref = pair
    robust = fit.with_vcov(kind)
    assert_allclose(robust.vcov.to_numpy(), ref.get_robustcov_results(kind).cov_params(),
                    rtol=RTOL_SM)
    assert robust.vcov_spec.kind == kind and fit.vcov_spec.kind == "classical"  # fit unchanged
    assert_allclose(robust.coef.to_numpy(), fit.coef.to_numpy(), rtol=0)


@pytest.mark.parametrize("maxlags", [0, 1, 4])
def test_hac_newey_west(pair, maxlags: int) -> None:
    fit, ref = pair
    expected = ref.get_robustcov_results("HAC", maxlags=maxlags, use_correction=False)
    assert_allclose(fit.with_vcov("HAC", maxlags=maxlags).vcov.to_numpy(),
                    expected.cov_params(), rtol=RTOL_SM)


def test_hac_adjust_scales_by_n_over_df(pair) -> None:
    fit, _ = pair
    plain = fit.with_vcov("HAC", maxlags=3).vcov.to_numpy()
    adjusted = fit.with_vcov("HAC", maxlags=3, adjust=True).vcov.to_numpy()
    assert_allclose(adjusted, plain * fit.nobs / fit.df_resid, rtol=1e-12)


@pytest.mark.parametrize("interval", ["confidence", "prediction"])
def test_prediction_intervals(pair, mixed_frame: pd.DataFrame, interval: str) -> None:
    fit, ref = pair
    new = mixed_frame.iloc[:7].drop(columns="y")
    got = fit.predict(new, interval=interval, level=0.9)
    frame = ref.get_prediction(new).summary_frame(alpha=0.1)
    lo, hi = ("mean_ci_lower", "mean_ci_upper") if interval == "confidence" else (
        "obs_ci_lower", "obs_ci_upper")
    assert list(got.columns) == ["fit", "lwr", "upr"]
    assert_allclose(got["fit"], frame["mean"], rtol=RTOL_SM)
    assert_allclose(got["lwr"], frame[lo], rtol=RTOL_SM)
    assert_allclose(got["upr"], frame[hi], rtol=RTOL_SM)
    assert list(got.index) == list(new.index)


def test_influence(pair) -> None:
    fit, ref = pair
    infl = ref.get_influence()
    got = fit.influence()
    assert_allclose(got["hat"], infl.hat_matrix_diag, rtol=RTOL_SM)
    assert_allclose(got["cooks_distance"], infl.cooks_distance[0], rtol=RTOL_SM)
    assert_allclose(got["std_resid"], infl.resid_studentized_internal, rtol=RTOL_SM)


def test_wls(wls_pair) -> None:
    fit, ref = wls_pair
    assert_allclose(fit.coef.to_numpy(), ref.params.to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.std_err.to_numpy(), ref.bse.to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.r_squared, ref.rsquared, rtol=RTOL_SM)
    assert_allclose(fit.loglik, ref.llf, rtol=RTOL_SM)
    assert_allclose(fit.f_test.statistic, ref.fvalue, rtol=RTOL_SM)
    for kind in ("HC0", "HC3"):
        assert_allclose(fit.with_vcov(kind).vcov.to_numpy(),
                        ref.get_robustcov_results(kind).cov_params(), rtol=RTOL_SM)
    # weighted hat values from their definition diag(W^½ X (X'WX)⁻¹ X' W^½)
    Xw = fit.design.X * np.sqrt(fit.design.weights)[:, None]
    hat = np.einsum("ij,ji->i", Xw, np.linalg.solve(Xw.T @ Xw, Xw.T))
    assert_allclose(fit.influence()["hat"], hat, rtol=RTOL_SM)


def test_no_intercept_uses_uncentred_r_squared(mixed_frame: pd.DataFrame) -> None:
    fit = ar.attnreg("y ~ 0 + x1 + x2", data=mixed_frame)
    ref = smf.ols("y ~ 0 + x1 + x2", data=mixed_frame).fit()
    assert_allclose(fit.coef.to_numpy(), ref.params.to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.r_squared, ref.rsquared, rtol=RTOL_SM)
    assert_allclose(fit.f_test.statistic, ref.fvalue, rtol=RTOL_SM)
    assert_allclose(fit.std_err.to_numpy(), ref.bse.to_numpy(), rtol=RTOL_SM)


def test_longley_is_accurate(longley: pd.DataFrame) -> None:
    fit = ar.attnreg("TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR", data=longley)
    # NIST certified values for Longley (StRD), 15 significant digits
    certified = [-3482258.63459582, 15.0618722713733, -0.358191792925910e-01,
                 -2.02022980381683, -1.03322686717359, -0.511041056535807e-01,
                 1829.15146461355]
    assert_allclose(fit.coef.to_numpy(), certified, rtol=1e-9)


def test_large_design_recomputes_u_and_matches_statsmodels() -> None:
    """Above LAZY_U_MIN_CELLS (and well conditioned) U is not stored; nothing changes."""
    rng = np.random.default_rng(3)
    n, p = 25_000, 10
    X = rng.standard_normal((n, p)) + 3.0
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)])
    frame["y"] = 1.0 + X @ rng.standard_normal(p) + rng.standard_normal(n) * (1 + X[:, 0] ** 2)
    frame["w"] = rng.uniform(0.5, 2.0, n)
    formula = "y ~ " + " + ".join(f"x{j}" for j in range(p))
    fit = ar.attnreg(formula, data=frame, weights="w")
    assert not fit.spectrum.U.is_stored
    ref = smf.wls(formula, data=frame, weights=frame["w"]).fit()
    assert_allclose(fit.coef.to_numpy(), ref.params.to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.std_err.to_numpy(), ref.bse.to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.with_vcov("HC3").std_err.to_numpy(),
                    ref.get_robustcov_results("HC3").bse, rtol=RTOL_SM)
    assert_allclose(fit.with_vcov("HAC", maxlags=2).vcov.to_numpy(),
                    ref.get_robustcov_results("HAC", maxlags=2, use_correction=False).cov_params(),
                    rtol=RTOL_SM)
    Xw = fit.design.X * np.sqrt(fit.design.weights)[:, None]
    hat = np.einsum("ij,ji->i", Xw, np.linalg.solve(Xw.T @ Xw, Xw.T))
    assert_allclose(fit.influence()["hat"], hat, rtol=RTOL_SM)
    assert_allclose(fit.rss, ref.ssr, rtol=RTOL_SM)
    assert_allclose(fit.r_squared, ref.rsquared, rtol=RTOL_SM)
    # the same fit with U formed exactly: every derived quantity agrees
    exact = spectral.decompose(fit.design.X, fit.design.y, intercept=0,
                               weights=fit.design.weights, scaling="norm", lazy_u=False)
    lazy = fit.spectrum
    assert_allclose(np.asarray(lazy.U), np.asarray(exact.U) * np.sign(
        np.asarray(exact.U)[0] * np.asarray(lazy.U)[0]), atol=1e-12)
    f = np.ones(lazy.rank)
    assert_allclose(filters.hat_diagonal(lazy, f), filters.hat_diagonal(exact, f),
                    rtol=1e-12)


# ---------------------------------------------------------------- the F test under a vcov
# statsmodels' fvalue under a cov_type (and R's lmtest::waldtest(fit, vcov=)) is the Wald
# test b' V⁻¹ b / q of the non-intercept coefficients on (q, df_resid) degrees of freedom.


def _check_f(got, expected) -> None:
    assert_allclose(got.statistic, expected.fvalue, rtol=RTOL_SM)
    assert_allclose(got.p_value, expected.f_pvalue, rtol=RTOL_SM)
    assert (got.df1, got.df2) == (expected.df_model, expected.df_resid)


KINDS = ["classical", "HC0", "HC1", "HC2", "HC3"]


@pytest.mark.parametrize("kind", KINDS)
def test_f_test_is_the_wald_test_under_the_covariance(pair, kind: str) -> None:
    fit, ref = pair
    _check_f(fit.with_vcov(kind).f_test, ref if kind == "classical" else
             ref.get_robustcov_results(kind))


@pytest.mark.parametrize("kind", KINDS)
def test_wls_f_test_is_the_wald_test_under_the_covariance(wls_pair, kind: str) -> None:
    fit, ref = wls_pair
    _check_f(fit.with_vcov(kind).f_test, ref if kind == "classical" else
             ref.get_robustcov_results(kind))


def _check_hac(fit, ref, maxlags: int, adjust: bool) -> None:
    """attnreg's HAC is statsmodels' (Bartlett kernel, the same lags); adjust=True is its
    use_correction=True (n / (n − k)), the default adjust=False its use_correction=False."""
    hac = fit.with_vcov("HAC", maxlags=maxlags, adjust=adjust)
    expected = ref.get_robustcov_results("HAC", maxlags=maxlags, use_correction=adjust)
    assert_allclose(hac.vcov.to_numpy(), expected.cov_params(), rtol=RTOL_SM)
    _check_f(hac.f_test, expected)


@pytest.mark.parametrize("maxlags", [0, 1, 4])
@pytest.mark.parametrize("adjust", [False, True])
def test_f_test_under_hac(pair, maxlags: int, adjust: bool) -> None:
    _check_hac(*pair, maxlags, adjust)


@pytest.mark.parametrize("maxlags", [0, 1, 4])
@pytest.mark.parametrize("adjust", [False, True])
def test_wls_f_test_under_hac(wls_pair, maxlags: int, adjust: bool) -> None:
    _check_hac(*wls_pair, maxlags, adjust)


@pytest.mark.filterwarnings("ignore::attnreg.exceptions.RankDeficiencyWarning")
@pytest.mark.filterwarnings("ignore:covariance of constraints does not have full rank")
@pytest.mark.parametrize("kind", ["classical", "HC1", "HAC"])
def test_f_test_with_an_aliased_column(mixed_frame: pd.DataFrame, kind: str) -> None:
    """x3 = x1 + x2: q is the rank (statsmodels: the rank of the restrictions' covariance)."""
    data = mixed_frame.assign(x3=mixed_frame["x1"] + np.log(mixed_frame["x2"]))
    formula = "y ~ x1 + np.log(x2) + x3 + C(g)"
    fit = ar.attnreg(formula, data=data)
    assert fit.aliased == ["x3"]
    ref = smf.ols(formula, data=data).fit()
    extra = {"maxlags": 2} if kind == "HAC" else {}
    expected = ref if kind == "classical" else ref.get_robustcov_results(
        kind, **extra, **({"use_correction": False} if kind == "HAC" else {}))
    got = fit.with_vcov(kind, **extra).f_test
    assert got.df1 == 4 and got.df2 == ref.df_resid
    assert_allclose(got.statistic, expected.fvalue, rtol=RTOL_SM)
    assert_allclose(got.p_value, expected.f_pvalue, rtol=RTOL_SM)


@pytest.mark.parametrize("kind", ["HC1", "HC3"])
def test_f_test_without_intercept_tests_every_coefficient(mixed_frame: pd.DataFrame,
                                                          kind: str) -> None:
    fit = ar.attnreg("y ~ 0 + x1 + x2", data=mixed_frame)
    ref = smf.ols("y ~ 0 + x1 + x2", data=mixed_frame).fit().get_robustcov_results(kind)
    _check_f(fit.with_vcov(kind).f_test, ref)
