"""GLM inference against R (tests/reference/glm_inference_r.json, made by
make_glm_inference.R): analysis of deviance."""

from __future__ import annotations

import json
import pickle
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import attnreg as ar
from attnreg.exceptions import InferenceWarning, OptionError, RankDeficiencyWarning
from tests.conftest import RTOL_EXACT, RTOL_FD, RTOL_R, RTOL_R_VCOV, RTOL_SM

FIXTURE = Path(__file__).resolve().parents[1] / "reference" / "glm_inference_r.json"
CASES = ("logit", "poisson_offset", "gamma_log")
TESTS = ("none", "Chisq", "LRT", "F")


@cache
def fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text())


def _fit(name: str, which: str) -> Any:
    case = fixture()["cases"][name]
    data = pd.DataFrame(fixture()["data"])
    return ar.attnreg(case[which], data, method="glm", family=case["family"],
                      link=case["link"], offset=case["offset"])


def _check(table: Any, ref: dict[str, Any]) -> None:
    assert list(table.table.index) == ref["rows"]
    assert list(table.table.columns) == ref["columns"]
    for col in ref["columns"]:
        want = np.array([np.nan if v is None else v for v in ref["values"][col]], dtype=float)
        np.testing.assert_allclose(table.table[col].to_numpy(dtype=float), want, rtol=RTOL_R,
                                   equal_nan=True, err_msg=col)


@pytest.mark.filterwarnings("ignore:using F test")
@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("name", CASES)
def test_sequential_matches_r(name: str, test: str) -> None:
    ref = fixture()["cases"][name]["sequential"][test]
    out = ar.anova(_fit(name, "big"), test=None if test == "none" else test)
    _check(out, ref)
    assert str(out).rstrip("\n").split("\n") == ref["printed"]


@pytest.mark.filterwarnings("ignore:using F test")
@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("name", CASES)
def test_nested_matches_r(name: str, test: str) -> None:
    ref = fixture()["cases"][name]["nested"][test]
    out = ar.anova(_fit(name, "small"), _fit(name, "big"),
                   test=None if test == "none" else test)
    _check(out, ref)
    assert str(out).rstrip("\n").split("\n") == ref["printed"]


def test_method_and_pickle() -> None:
    fit = _fit("gamma_log", "big")
    out = fit.anova(test="Chisq")
    assert out.kind == "sequential"
    again = pickle.loads(pickle.dumps(out))
    pd.testing.assert_frame_equal(again.table, out.table)


def test_f_on_fixed_dispersion_warns() -> None:
    with pytest.warns(InferenceWarning, match="F test with a 'binomial' family"):
        ar.anova(_fit("logit", "big"), test="F")


def test_errors() -> None:
    with pytest.raises(OptionError, match="test must be one of"):
        ar.anova(_fit("logit", "big"), test="Rao")
    with pytest.raises(OptionError, match="fit 2 is poisson/log but fit 1 is binomial/logit"):
        ar.anova(_fit("logit", "big"), _fit("poisson_offset", "big"))
    with pytest.raises(OptionError, match="type 2 and 3 tables are not available for GLMs"):
        ar.anova(_fit("logit", "big"), type=2)


# ------------------------------------------------------------------ confidence intervals
@pytest.mark.parametrize(("kind", "level", "method"), [("profile", 0.95, "profile"),
                                                       ("profile90", 0.9, "profile"),
                                                       ("wald", 0.95, "wald")])
@pytest.mark.parametrize("name", CASES)
def test_confint_matches_r(name: str, kind: str, level: float, method: str) -> None:
    ref = fixture()["cases"][name]["confint"][kind]
    ci = _fit(name, "big").confint(level=level, method=method)
    assert list(ci.columns) == ref["columns"]
    # profile limits agree to ~1e-9 (Gamma) and ~1e-14; Wald limits use the standard
    # errors, compared as covariances (the Gamma dispersion: ~3e-8)
    rtol = RTOL_R if method == "profile" else RTOL_R_VCOV
    np.testing.assert_allclose(ci.iloc[:, 0], ref["lower"], rtol=rtol)
    np.testing.assert_allclose(ci.iloc[:, 1], ref["upper"], rtol=rtol)


def test_confint_errors_and_aliased() -> None:
    fit = _fit("logit", "big")
    with pytest.raises(OptionError, match="level must be a number in"):
        fit.confint(level=95)
    with pytest.raises(OptionError, match="method must be 'profile' or 'wald'"):
        fit.confint(method="exact")
    data = pd.DataFrame(fixture()["data"]).assign(x2=lambda f: 2 * f.x)
    with pytest.warns(RankDeficiencyWarning):
        alias = ar.attnreg("yb ~ x + x2", data, method="logit")
    ci = alias.confint()
    assert ci.loc["x2"].isna().all() and ci.loc["x"].notna().all()


# ------------------------------------------------------------------ marginal effects
SM_MODELS = {"logit": ("yb", sm.Logit), "probit": ("yb", sm.Probit),
             "poisson": ("deaths", sm.Poisson)}


@pytest.mark.parametrize("dummy", [False, True])
@pytest.mark.parametrize("at", ["overall", "mean"])
@pytest.mark.parametrize("method", list(SM_MODELS))
def test_margins_match_statsmodels(method: str, at: str, dummy: bool) -> None:
    yname, model = SM_MODELS[method]
    data = pd.DataFrame(fixture()["data"])
    fit = ar.attnreg(f"{yname} ~ g + x + z", data, method=method)
    ref = model(fit.design.y, fit.design.X).fit(disp=0, tol=1e-12, maxiter=100)
    if method == "probit":  # statsmodels' Probit covariance is the observed information,
        # a GLM's (R's vcov.glm) the expected one: give statsmodels' delta method ours
        ref._results.cov_params = lambda: fit.vcov.to_numpy()
    sm_me = ref.get_margeff(at=at, dummy=dummy)
    ours = fit.margins(at=at, dummy=dummy)
    assert list(ours.index) == fit.design.column_names[1:]
    np.testing.assert_allclose(ours["dy/dx"], sm_me.margeff, rtol=RTOL_SM)
    np.testing.assert_allclose(ours["std_err"], sm_me.margeff_se, rtol=RTOL_SM)
    np.testing.assert_allclose(ours["p_value"], sm_me.pvalues, rtol=RTOL_SM)


def test_margins_use_the_covariance_in_use() -> None:
    data = pd.DataFrame(fixture()["data"])
    fit = ar.attnreg("yb ~ g + x + z", data, method="logit")
    robust = fit.with_vcov("HC0")
    ref = sm.Logit(fit.design.y, fit.design.X).fit(disp=0, tol=1e-12, cov_type="HC0")
    np.testing.assert_allclose(robust.margins()["std_err"], ref.get_margeff().margeff_se,
                               rtol=RTOL_SM)
    np.testing.assert_allclose(robust.margins()["dy/dx"], fit.margins()["dy/dx"],
                               rtol=RTOL_EXACT)
    with pytest.raises(OptionError, match="at must be 'overall' or 'mean'"):
        fit.margins(at="median")
    pickle.loads(pickle.dumps(fit.margins()))


@pytest.mark.parametrize(("family", "link", "y"), [("Gamma", "log", "ygam"),
                                                   ("Gamma", "inverse", "ygam"),
                                                   ("binomial", "cloglog", "yb"),
                                                   ("poisson", "sqrt", "deaths")])
def test_margins_against_finite_differences(family: str, link: str, y: str) -> None:
    data = pd.DataFrame(fixture()["data"])
    fit = ar.attnreg(f"{y} ~ g + x + z", data, method="glm", family=family, link=link)
    X, beta, cov = fit.design.X, fit.coef.to_numpy(), fit.vcov.to_numpy()
    h = 1e-5

    def average_effects(b: np.ndarray) -> np.ndarray:
        """Mean over rows of dμ/dx_j, by central differences of μ in x_j (j ≥ 1)."""
        out = []
        for j in range(1, X.shape[1]):
            step = np.zeros(X.shape[1])
            step[j] = h
            out.append(np.mean(fit.link.linkinv((X + step) @ b)
                               - fit.link.linkinv((X - step) @ b)) / (2 * h))
        return np.array(out)

    jac = np.column_stack([(average_effects(beta + h * e) - average_effects(beta - h * e))
                           / (2 * h) for e in np.eye(beta.size)])
    ours = fit.margins()
    np.testing.assert_allclose(ours["dy/dx"], average_effects(beta), rtol=RTOL_FD)
    np.testing.assert_allclose(ours["std_err"], np.sqrt(np.diag(jac @ cov @ jac.T)),
                               rtol=RTOL_FD)
