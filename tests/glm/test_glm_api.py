"""The GLM front door: shortcuts, options checked before any work, offsets, prediction,
residual types, rank deficiency, warnings and pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import ConvergenceWarning, DataError, OptionError, RankDeficiencyWarning
from tests.conftest import RTOL_EXACT, RTOL_R, RTOL_R_VCOV
from tests.glm._reference import cases, fit_case, frame, r_order


@pytest.fixture
def mtcars() -> pd.DataFrame:
    return frame(cases()["binomial_logit_mtcars"])


@pytest.mark.parametrize(("method", "family", "link"), [
    ("logit", "binomial", "logit"), ("probit", "binomial", "probit"),
    ("poisson", "poisson", "log")])
def test_shortcuts_are_the_glm_of_their_family(method, family, link) -> None:
    case = cases()["poisson_log_warpbreaks"] if family == "poisson" else \
        cases()["binomial_logit_mtcars"]
    df = frame(case)
    short = ar.attnreg(case["formula"], df, method=method)
    full = ar.attnreg(case["formula"], df, method="glm", family=family, link=link)
    assert (short.family_name, short.link_name, short.method) == (family, link, method)
    assert_allclose(short.coef, full.coef, rtol=RTOL_EXACT)


def test_family_spellings_and_default(mtcars) -> None:
    gauss = ar.attnreg("mpg ~ wt", mtcars, method="glm")
    assert (gauss.family_name, gauss.link_name) == ("gaussian", "identity")  # R's default
    ols = ar.attnreg("mpg ~ wt", mtcars)
    assert_allclose(gauss.coef, ols.coef, rtol=RTOL_EXACT)
    assert_allclose(gauss.std_err, ols.std_err, rtol=RTOL_EXACT)
    gamma = ar.attnreg("mpg ~ wt", mtcars, method="glm", family="gamma", link="log")
    assert gamma.family_name == "Gamma"


@pytest.mark.parametrize(("options", "match"), [
    ({"family": "tweedie"}, r"family must be one of 'gaussian', 'binomial'.*family='tweedie'"),
    ({"family": "poisson", "link": "logit"},
     r"link 'logit' is not available for the poisson family; use one of 'log', 'identity'"),
    ({"epsilon": 0}, r"epsilon must be a number in \(0, 1\), however: epsilon=0"),
    ({"maxit": 2.5}, r"maxit must be a positive integer, however: maxit=2.5"),
    ({"control": "exact"}, r"control must be 'optimum' .* or 'R' .*control='exact'"),
    ({"lam": 1.0}, r"option\(s\) lam do not apply to method 'glm'"),
    ({"vcov": "HC9"}, r"vcov must be one of 'classical', 'HC0', 'HC1', 'HC2', 'HC3', 'cluster', "
                      r".* for a GLM, however: vcov='HC9'"),
    ({"vcov": "HC1", "cluster": "g"}, r"cluster= and type= go with vcov='cluster'"),
    ({"vcov": "cluster"}, r"vcov='cluster' needs cluster="),
    ({"vcov": "cluster", "cluster": "g", "type": "HC3"},
     r"type must be one of 'HC1', 'HC0', 'CR2', however: type='HC3'"),
    ({"heads": 2}, r"unknown option\(s\) for method 'glm': heads"),
    ({"offset": [[1, 2]]}, r"offset must be a column name, an expression"),
])
def test_options_are_checked_before_any_work(options, match) -> None:
    with pytest.raises(OptionError, match=match):  # no data: the check comes first
        ar.attnreg("y ~ x", pd.DataFrame({"y": [], "x": []}), method="glm", **options)


def test_shortcuts_refuse_family_and_fixed_link() -> None:
    empty = pd.DataFrame({"y": [], "x": []})
    with pytest.raises(OptionError, match=r"method 'logit' is the binomial family: family="):
        ar.attnreg("y ~ x", empty, method="logit", family="poisson")
    with pytest.raises(OptionError, match=r"method 'probit' fixes the link: link= does not"):
        ar.attnreg("y ~ x", empty, method="probit", link="logit")


def test_registry_lists_the_glm_family() -> None:
    from attnreg import methods

    assert methods.method_names("glm") == ("glm", "logit", "probit", "poisson")
    assert set(methods.method_names("weights")) >= {"glm", "logit", "probit", "poisson"}


def test_offset_by_name_expression_or_vector_and_prediction() -> None:
    case = cases()["poisson_offset"]
    df = frame(case)
    df["logpy"] = np.log(df["pyears"])
    by_expr = fit_case(case)
    by_name = ar.attnreg(case["formula"], df, method="poisson", offset="logpy")
    by_vector = ar.attnreg(case["formula"], df, method="poisson", offset=df["logpy"].to_numpy())
    ref = case["optimum"]
    for fit in (by_expr, by_name, by_vector):
        assert_allclose(fit.fitted, ref["fitted"], rtol=RTOL_R)
    new = df.iloc[:7]
    assert_allclose(by_expr.predict(new, type="response"), ref["fitted"][:7], rtol=RTOL_R)
    assert_allclose(by_name.predict(new), ref["linear_predictor"][:7], rtol=RTOL_R)
    assert_allclose(by_vector.predict(new, offset=new["logpy"].to_numpy()),
                    ref["linear_predictor"][:7], rtol=RTOL_R)
    doubled = by_expr.predict(new, offset=new["logpy"] + np.log(2), type="response")
    assert_allclose(doubled, 2 * np.asarray(ref["fitted"][:7]), rtol=RTOL_R)
    with pytest.raises(OptionError, match=r"offset was a vector: give predict\(newdata, offset"):
        by_vector.predict(new)


def test_offset_errors_name_the_offset() -> None:
    df = frame(cases()["poisson_offset"])
    with pytest.raises(DataError, match=r"offset 'np.log\(pyearz\)' could not be evaluated"):
        ar.attnreg("deaths ~ x", df, method="poisson", offset="np.log(pyearz)")
    df.loc[3, "pyears"] = np.nan
    with pytest.raises(DataError, match=r"offset 'np.log\(pyears\)' is missing .* in 1 row"):
        ar.attnreg("deaths ~ x", df, method="poisson", offset="np.log(pyears)")


def test_binomial_proportions_with_weights_equal_the_expanded_0_1_rows() -> None:
    case = cases()["binomial_probit_esoph"]
    df = frame(case)
    k = np.round(df["prop"] * df["ntot"]).astype(int)
    rows = np.repeat(np.arange(len(df)), df["ntot"])
    ones = np.concatenate([np.arange(n) < c for n, c in zip(df["ntot"], k, strict=True)])
    long = df.iloc[rows].assign(case=ones.astype(float)).reset_index(drop=True)
    grouped = fit_case(case)
    expanded = ar.attnreg("case ~ C(agegp) + C(tobgp)", long, method="probit")
    assert_allclose(expanded.coef, grouped.coef, rtol=1e-9)  # two IRLS runs to the optimum
    assert_allclose(expanded.std_err, grouped.std_err, rtol=1e-9)


def test_responses_outside_the_family_are_refused(mtcars) -> None:
    with pytest.raises(DataError, match=r"y values must be 0 <= y <= 1 for the binomial"):
        ar.attnreg("mpg ~ wt", mtcars, method="logit")
    with pytest.raises(DataError, match=r"negative values not allowed for the 'poisson'"):
        ar.attnreg("I(mpg - 20) ~ wt", mtcars, method="poisson")
    with pytest.raises(DataError, match=r"non-positive values not allowed for the 'Gamma'"):
        ar.attnreg("am ~ wt", mtcars, method="glm", family="Gamma")


def test_residual_types_and_errors(mtcars) -> None:
    fit = ar.attnreg("am ~ wt", mtcars, method="logit")
    assert_allclose(fit.resid, fit.residuals("deviance"))
    with pytest.raises(OptionError, match=r"type must be one of 'deviance', 'pearson'.*'raw'"):
        fit.residuals("raw")
    with pytest.raises(OptionError, match=r"type must be 'link' or 'response'"):
        fit.predict(mtcars, type="probability")


def test_aliased_columns_are_na_as_in_r(mtcars) -> None:
    df = mtcars.assign(wt2=2 * mtcars["wt"])
    with pytest.warns(RankDeficiencyWarning, match=r"1 coefficient\(s\) not defined.*wt2"):
        fit = ar.attnreg("am ~ wt + wt2", df, method="logit")
    assert np.isnan(fit.coef["wt2"]) and np.isnan(fit.std_err["wt2"])
    assert_allclose(fit.coef[:2], ar.attnreg("am ~ wt", df, method="logit").coef, rtol=RTOL_EXACT)
    assert "Coefficients: (1 not defined because of singularities)" in str(fit.summary())
    assert fit.df_resid == 30
    assert_allclose(fit.predict(df.head()), fit.linear_predictor.head(), rtol=RTOL_EXACT)


def test_non_convergence_warns(mtcars) -> None:
    with pytest.warns(ConvergenceWarning, match=r"algorithm did not converge"):
        fit = ar.attnreg("am ~ wt", mtcars, method="logit", maxit=2)
    assert not fit.converged and fit.iterations == 2


def test_missing_rows_are_reported_as_r(mtcars) -> None:
    df = mtcars.copy()
    df.iloc[[0, 5], 1] = np.nan  # wt
    text = str(ar.attnreg("am ~ wt", df, method="logit").summary())
    assert "  (2 observations deleted due to missingness)\nAIC: " in text


def test_results_pickle(mtcars) -> None:
    case = cases()["poisson_offset"]
    fit = fit_case(case)
    back = pickle.loads(pickle.dumps(fit))
    new = frame(case).iloc[:5]
    assert_allclose(back.predict(new, type="response"), fit.predict(new, type="response"),
                    rtol=RTOL_EXACT)
    assert str(back.summary()) == str(fit.summary())
    assert_allclose(back.covariance("HC1"), fit.covariance("HC1"), rtol=RTOL_EXACT)


def test_a_sandwich_chosen_at_fit_time_is_coeftest_and_vcovcl() -> None:
    case = cases()["binomial_cloglog"]
    ref = case["optimum"]
    robust = fit_case(case, vcov="HC1")
    order = r_order(robust, ref["names"])
    table = np.array(ref["coeftest_hc1"])  # lmtest::coeftest(fit, vcovHC(fit, "HC1")): z tests
    for j, got in enumerate((robust.std_err, robust.statistic, robust.p_value)):
        assert_allclose(got.to_numpy()[order], table[:, j], rtol=RTOL_R_VCOV)
    gamma = fit_case(cases()["gamma_log"], vcov="HC1")
    assert list(gamma.summary().table.columns)[2:] == ["z value", "Pr(>|z|)"]
    clustered = fit_case(case, vcov="cluster", cluster="g")
    se = np.sqrt(np.diag(ref["vcov_cl_hc1"]))
    assert_allclose(clustered.std_err.to_numpy()[order], se, rtol=RTOL_R_VCOV)
    text = str(clustered.summary())
    assert "(Standard errors: sandwich::vcovCL, 3 clusters, type HC1; z tests" in text
    back = clustered.with_vcov()
    assert_allclose(back.std_err.to_numpy()[order], ref["se"], rtol=RTOL_R)
    with pytest.raises(OptionError, match=r"cluster column 'firm' is not in the data"):
        back.with_vcov("cluster", cluster="firm")
    assert pickle.loads(pickle.dumps(clustered)).std_err.equals(clustered.std_err)


def test_offset_follows_the_rows_kept_after_missing_values() -> None:
    case = cases()["poisson_offset"]
    df = frame(case)
    holes = df.copy()
    holes.loc[[2, 9], "x"] = np.nan
    fit = ar.attnreg("deaths ~ x", holes, method="poisson", offset="np.log(pyears)")
    ref = ar.attnreg("deaths ~ x", df.drop(index=[2, 9]), method="poisson",
                     offset="np.log(pyears)")
    assert_allclose(fit.coef, ref.coef, rtol=RTOL_EXACT)
    assert_allclose(fit.predict(holes.iloc[:4], type="response").to_numpy()[[0, 1, 3]],
                    ref.fitted.iloc[:3], rtol=RTOL_EXACT)
    assert np.isnan(fit.predict(holes.iloc[:4]).iloc[2])  # a missing x predicts NaN


def test_offset_in_forecasting_windows_is_refused(series) -> None:
    df = series.assign(y=np.abs(np.round(series["y"])))
    with pytest.raises(DataError, match=r"offset= needs the data .* forecasting windows"):
        ar.forecast("y ~ lag(x, 1)", df, method="poisson", offset="x", start=df.index[-4])


def test_non_integer_binomial_successes_warn_as_r(mtcars) -> None:
    from attnreg.exceptions import InferenceWarning

    df = mtcars.assign(p=np.linspace(0.1, 0.9, len(mtcars)))
    with pytest.warns(InferenceWarning, match=r"non-integer #successes in a binomial glm"):
        ar.attnreg("p ~ wt", df, method="logit")
