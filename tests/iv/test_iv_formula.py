"""``attnreg("y ~ x | d ~ z", data, method=...)`` against linearmodels' IV2SLS, IVLIML, IVGMM and
IVGMMCUE, and the results' surface: names, prediction, missing rows, weights, pickling."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.iv.results import IVResults
from tests.conftest import RTOL_EXACT, RTOL_OPTIM, RTOL_SM
from tests.iv.conftest import make_iv_data

lm_iv = pytest.importorskip("linearmodels.iv")

FORMULA = "y ~ x1 + x2 + x3 | d1 + d2 ~ z1 + z2 + z3 + z4"
# our vcov= -> linearmodels' (cov_type, debiased)
COV = {"classical": ("unadjusted", True), "HC0": ("robust", False), "HC1": ("robust", True),
       "cluster": ("clustered", True)}
GMM_WEIGHT = {"classical": "unadjusted", "HC0": "robust", "HC1": "robust", "cluster": "clustered"}


def frame(weighted: bool = False) -> pd.DataFrame:
    d = make_iv_data()
    df = pd.DataFrame(np.column_stack([d.y, d.X[:, 1:], d.D, d.Z]),
                      columns=["y", "x1", "x2", "x3", "d1", "d2", "z1", "z2", "z3", "z4"])
    return df.assign(w=d.w, g=d.g)


def _ours(method: str, vcov: str, weighted: bool, **kw) -> IVResults:
    opts = {"vcov": vcov, **({"cluster": "g"} if vcov == "cluster" else {})}
    return ar.attnreg(FORMULA, frame(), method=method, weights="w" if weighted else None,
                      **opts, **kw)


def _reference(method: str, vcov: str, weighted: bool):
    d = make_iv_data()
    w = d.w if weighted else None
    args = (d.y, d.X, d.D, d.Z)
    cov_type, debiased = COV[vcov]
    cl = {"clusters": d.g} if vcov == "cluster" else {}
    model = {"tsls": lambda: lm_iv.IV2SLS(*args, weights=w),
             "liml": lambda: lm_iv.IVLIML(*args, weights=w),
             "fuller": lambda: lm_iv.IVLIML(*args, weights=w, fuller=4.0),
             "gmm": lambda: lm_iv.IVGMM(*args, weights=w, weight_type=GMM_WEIGHT[vcov], **cl)}[method]()
    return model.fit(cov_type=cov_type, debiased=debiased, **cl)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("vcov", list(COV))
@pytest.mark.parametrize("method", ["tsls", "liml", "fuller", "gmm"])
def test_equals_linearmodels(method: str, vcov: str, weighted: bool) -> None:
    fit = _ours(method, vcov, weighted, **({"alpha": 4.0} if method == "fuller" else {}))
    ref = _reference(method, vcov, weighted)
    assert fit.names == ["(Intercept)", "x1", "x2", "x3", "d1", "d2"]
    assert_allclose(fit.coef.to_numpy(), ref.params.to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.vcov.to_numpy(), ref.cov.to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.std_err.to_numpy(), ref.std_errors.to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.resid.to_numpy(), ref.resids.to_numpy(), rtol=RTOL_SM, atol=RTOL_SM)
    if method == "gmm":
        assert_allclose(fit.fit.j_stat, ref.j_stat.stat, rtol=RTOL_SM)
    if method in ("liml", "fuller"):
        assert_allclose(fit.fit.kappa, ref.kappa, rtol=RTOL_SM)


def test_cue_equals_linearmodels() -> None:
    d = make_iv_data()
    fit = ar.attnreg(FORMULA, frame(), method="cue", vcov="HC0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # linearmodels' optimiser chatter
        ref = lm_iv.IVGMMCUE(d.y, d.X, d.D, d.Z).fit(
            cov_type="robust", opt_options={"method": "BFGS", "options": {"gtol": 1e-12}})
    assert_allclose(fit.coef.to_numpy(), ref.params.to_numpy(), rtol=RTOL_OPTIM)
    assert_allclose(fit.std_err.to_numpy(), ref.std_errors.to_numpy(),
                    rtol=10 * RTOL_OPTIM)  # the vcov amplifies the coefficients' gap


def test_default_method_of_an_iv_formula_is_tsls() -> None:
    fit = ar.attnreg(FORMULA, frame())
    assert fit.method == "tsls" and isinstance(fit, IVResults)
    assert_allclose(fit.coef, _ours("tsls", "classical", False).coef, rtol=RTOL_EXACT)


def test_missing_values_drop_the_same_rows_as_complete_cases() -> None:
    df = frame()
    holes = df.copy()
    for col, row in (("y", 3), ("x2", 10), ("d1", 20), ("z4", 30)):
        holes.loc[row, col] = np.nan
    fit = ar.attnreg(FORMULA, holes)
    ref = ar.attnreg(FORMULA, df.drop(index=[3, 10, 20, 30]))
    assert fit.nobs == len(df) - 4
    assert list(fit.design.dropped_labels) == [3, 10, 20, 30]
    assert_allclose(fit.coef, ref.coef, rtol=RTOL_EXACT)
    assert holes.loc[3, "y"] != holes.loc[3, "y"]  # the user's data is untouched (still NaN)


def test_predict_fitted_confint_and_attention() -> None:
    df = frame()
    fit = ar.attnreg(FORMULA, df)
    X = np.column_stack([np.ones(len(df)), df[["x1", "x2", "x3", "d1", "d2"]].to_numpy()])
    assert_allclose(fit.predict(df.head(7)).to_numpy(), X[:7] @ fit.coef.to_numpy(), rtol=RTOL_EXACT)
    assert_allclose(fit.fitted + fit.resid, df.y, rtol=RTOL_EXACT)
    new = df.head(3).copy()
    new.loc[1, "x1"] = np.nan
    assert np.isnan(fit.predict(new).iloc[1]) and np.isfinite(fit.predict(new).iloc[[0, 2]]).all()
    ci = fit.conf_int(0.9)
    assert list(ci.columns) == ["5 %", "95 %"]
    from scipy import stats

    q = stats.t.ppf(0.95, fit.df_resid)
    assert_allclose(ci.iloc[:, 1] - fit.coef, q * fit.std_err, rtol=RTOL_EXACT)
    att = fit.attention(df.head(5))
    assert_allclose(att.weights @ df.y.to_numpy(), fit.predict(df.head(5)).to_numpy(),
                    rtol=RTOL_EXACT)


def test_with_vcov_returns_a_new_result() -> None:
    fit = ar.attnreg(FORMULA, frame())
    robust = fit.with_vcov("cluster", cluster="g")
    assert fit.vcov_kind == "classical" and robust.vcov_kind == "cluster"
    assert_allclose(robust.coef, fit.coef, rtol=0)
    assert_allclose(robust.vcov, _ours("tsls", "cluster", False).vcov, rtol=RTOL_EXACT)


def test_results_pickle_and_predict_after() -> None:
    fit = ar.attnreg("y ~ x1 + C(g % 3) | d1 ~ z1 + z2", frame(), vcov="HC1")
    again = pickle.loads(pickle.dumps(fit))
    assert_allclose(again.std_err, fit.std_err, rtol=0)
    assert_allclose(again.predict(frame().head(4)), fit.predict(frame().head(4)), rtol=0)
    assert str(again.summary()) == str(fit.summary())


def test_factor_instruments_and_weights_as_a_column() -> None:
    df = frame().assign(zg=lambda f: np.where(f.z1 > 0, "hi", "lo"))
    fit = ar.attnreg("y ~ x1 | d1 ~ zg + z2", df, weights="w")
    assert fit.frame.instrument_names == ("zg[T.lo]", "z2")
    ref = lm_iv.IV2SLS.from_formula("y ~ 1 + x1 + [d1 ~ zlo + z2]",
                                    df.assign(zlo=(df.zg == "lo").astype(float)),
                                    weights=df.w).fit(cov_type="unadjusted", debiased=True)
    assert_allclose(fit.coef.to_numpy(), ref.params.to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.std_err.to_numpy(), ref.std_errors.to_numpy(), rtol=RTOL_SM)


def test_tidy_and_glance() -> None:
    fit = ar.attnreg(FORMULA, frame(), vcov="HC1")
    td = fit.tidy(conf_int=True)
    assert list(td.columns) == ["term", "estimate", "std.error", "statistic", "p.value",
                                "conf.low", "conf.high"]
    assert_allclose(td["std.error"], fit.std_err.to_numpy(), rtol=0)
    gl = fit.glance()
    assert gl.loc[0, "nobs"] == fit.nobs and gl.loc[0, "df.residual"] == fit.nobs - 6
    assert_allclose(gl.loc[0, "statistic"], fit.f_test["statistic"], rtol=0)


def test_etable_shows_iv_fits_next_to_ols() -> None:
    df = frame()
    iv = ar.attnreg("y ~ x1 + x2 | d1 ~ z1 + z2", df).with_vcov("cluster", cluster="g")
    text = str(ar.etable([ar.attnreg("y ~ x1 + x2 + d1", df), iv]))
    assert "tsls" in text and "cluster (g)" in text
    assert f"({iv.std_err['d1']:.3f})" in text
    assert iv.vcov_spec.n_clusters == df.g.nunique()


@pytest.mark.parametrize("vcov", ["classical", "HC0", "HC1", "cluster"])
def test_first_stage_fits_are_ols_and_their_wald_f_is_the_weak_instrument_f(vcov: str) -> None:
    """The first stages are OLS fits of the linear family (another code path), whose Wald F of
    the excluded instruments under the same covariance is the diagnostics' weak-instrument F."""
    df, opts = frame(), {"vcov": vcov, **({"cluster": "g"} if vcov == "cluster" else {})}
    iv = ar.attnreg("y ~ x1 + C(g % 3) | d1 + d2 ~ z1 + z2 + z3", df, **opts)
    diag = iv.diagnostics()
    for j, name in enumerate(["d1", "d2"]):
        ols = iv.first_stage[name]
        ref = ar.attnreg(f"{name} ~ x1 + C(g % 3) + z1 + z2 + z3", df, **opts)
        assert_allclose(ols.coef, ref.coef, rtol=RTOL_EXACT)
        assert_allclose(ols.std_err, ref.std_err, rtol=RTOL_EXACT)
        wald = ols.wald_test(["z1 = 0", "z2 = 0", "z3 = 0"])
        assert_allclose(diag.iloc[j]["statistic"], wald.statistic, rtol=RTOL_EXACT)


def test_a_polars_frame_fits_as_its_pandas_copy() -> None:
    pl = pytest.importorskip("polars")
    df = frame()
    fit = ar.attnreg("y ~ x1 | d1 ~ z1 + z2", pl.from_pandas(df))
    assert_allclose(fit.coef, ar.attnreg("y ~ x1 | d1 ~ z1 + z2", df).coef, rtol=RTOL_EXACT)


def test_2sls_is_tsls_and_ar_confidence_set_is_anderson_rubin() -> None:
    rng = np.random.default_rng(26)
    n = 300
    df = pd.DataFrame({"z1": rng.normal(size=n), "z2": rng.normal(size=n),
                       "x": rng.normal(size=n)})
    u = rng.normal(size=n)
    df["d"] = df.z1 + 0.5 * df.z2 + 0.5 * u + rng.normal(size=n)
    df["y"] = 1 + df.d + df.x + u
    default = ar.attnreg("y ~ x | d ~ z1 + z2", df)
    named = ar.attnreg("y ~ x | d ~ z1 + z2", df, method="2sls")
    assert_allclose(named.coef, default.coef, rtol=0)
    assert_allclose(named.std_err, default.std_err, rtol=0)
    a, b = default.ar_confidence_set(0.9), default.anderson_rubin(0.9)
    assert a == b


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("lags", [1, 3])
def test_gmm_under_hac_is_efficient_for_the_kernel_covariance(lags: int, weighted: bool) -> None:
    """vcov="HAC" with maxlags=L weights GMM's moments by their Bartlett long-run covariance:
    linearmodels' IVGMM(weight_type="kernel", kernel="bartlett", bandwidth=L), coefficients
    and Hansen's J."""
    d = make_iv_data()
    fit = ar.attnreg(FORMULA, frame(), method="gmm", vcov="HAC", maxlags=lags,
                     weights="w" if weighted else None)
    ref = lm_iv.IVGMM(d.y, d.X, d.D, d.Z, weights=d.w if weighted else None,
                      weight_type="kernel", kernel="bartlett", bandwidth=lags).fit(
        cov_type="kernel", kernel="bartlett", bandwidth=lags)
    assert_allclose(fit.coef.to_numpy(), ref.params.to_numpy(), rtol=RTOL_SM)
    assert_allclose(fit.fit.j_stat, ref.j_stat.stat, rtol=RTOL_SM)
    robust = ar.attnreg(FORMULA, frame(), method="gmm", vcov="HC0")
    assert np.max(np.abs(fit.coef.to_numpy() - robust.coef.to_numpy())) > 1e-6  # another W


def test_gmm_under_hac_needs_a_fixed_lag() -> None:
    with pytest.raises(OptionError, match=r"method 'gmm' with vcov='HAC' weights the moments "
                                          r"by their kernel covariance at a fixed lag"):
        ar.attnreg(FORMULA, frame(), method="gmm", vcov="HAC")
