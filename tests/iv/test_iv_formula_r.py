"""IV formula fits against R's AER::ivreg (tests/reference/make_iv_formula.R): the summary's
coefficient table under four covariances, sigma, df, R², the Wald test and the diagnostics,
with factors among the regressors and the instruments and missing values in y, x, d and z."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from tests.conftest import RTOL_R, RTOL_R_VCOV

REF = json.loads((Path(__file__).parents[1] / "reference" / "iv_formula_r.json").read_text())
FORMULAS = {"two": "y ~ x1 + x2 + grp | d1 + d2 ~ z1 + z2 + zf",
            "two_weighted": "y ~ x1 + x2 + grp | d1 + d2 ~ z1 + z2 + zf",
            "one": "y ~ x1 | d1 ~ z1 + z2"}
R_NAMES = {"grpb": "grp[T.b]", "grpc": "grp[T.c]"}
VCOV = {"classical": {}, "HC0": {"vcov": "HC0"}, "HC1": {"vcov": "HC1"},
        "cluster": {"vcov": "cluster", "cluster": "g"}}


def r_data() -> pd.DataFrame:
    """The fixture's data; R's NA (JSON null) as NaN / None."""
    cols = {k: [np.nan if v is None else v for v in vals] if k not in ("grp", "zf") else vals
            for k, vals in REF["data"].items()}
    return pd.DataFrame(cols)


def fit_model(model: str, vcov: str = "classical") -> ar.iv.results.IVResults:
    weights = "w" if model.endswith("weighted") else None
    return ar.attnreg(FORMULAS[model], r_data(), weights=weights, **VCOV[vcov])


def _r_order(model: str) -> list[str]:
    return [R_NAMES.get(n, n) for n in REF[model]["names"]]


@pytest.mark.parametrize("model", list(FORMULAS))
@pytest.mark.parametrize("vcov", list(VCOV))
def test_coefficient_table_equals_aer(model: str, vcov: str) -> None:
    fit = fit_model(model, vcov)
    ref = REF[model] if vcov == "classical" else REF[model][vcov]
    table = fit.summary().table.loc[_r_order(model)].to_numpy()
    want = np.asarray(ref["table"], dtype=float)
    assert_allclose(table[:, :3], want[:, :3], rtol=RTOL_R if vcov == "classical" else RTOL_R_VCOV)
    assert_allclose(table[:, 3], want[:, 3], rtol=RTOL_R_VCOV)  # p-values from t: a steeper map
    V = fit.vcov.loc[_r_order(model), _r_order(model)].to_numpy()
    assert_allclose(V, np.asarray(ref["vcov"], dtype=float),
                    rtol=RTOL_R if vcov == "classical" else RTOL_R_VCOV)


@pytest.mark.parametrize("model", list(FORMULAS))
def test_fit_statistics_equal_aer(model: str) -> None:
    fit, ref = fit_model(model), REF[model]
    assert fit.nobs == ref["nobs"]
    assert_allclose(fit.sigma, ref["sigma"], rtol=RTOL_R)
    assert fit.df_resid == ref["df"][1]
    assert_allclose([fit.r_squared, fit.adj_r_squared], [ref["r2"], ref["adj_r2"]], rtol=RTOL_R)
    wt = fit.f_test
    assert_allclose(wt[["statistic", "p_value", "df1", "df2"]].to_numpy(dtype=float),
                    ref["wald"], rtol=RTOL_R)
    assert_allclose(fit.resid.to_numpy(), ref["resid"], rtol=RTOL_R, atol=RTOL_R)
    assert_allclose(fit.fitted.to_numpy(), ref["fitted"], rtol=RTOL_R)


@pytest.mark.parametrize("model", list(FORMULAS))
@pytest.mark.parametrize("vcov", list(VCOV))
def test_diagnostics_equal_aer(model: str, vcov: str) -> None:
    fit = fit_model(model, vcov)
    ref = REF[model] if vcov == "classical" else REF[model][vcov]
    if vcov == "classical":
        assert list(fit.diagnostics().index) == REF[model]["diagnostic_names"]
    want = np.array([[np.nan if v is None else v for v in row] for row in ref["diagnostics"]])
    rtol = RTOL_R if vcov == "classical" else RTOL_R_VCOV
    assert_allclose(fit.diagnostics().to_numpy(), want, rtol=rtol, equal_nan=True)


@pytest.mark.parametrize("vcov", ["HC1", "cluster"])
def test_wald_test_under_a_robust_covariance_equals_aer(vcov: str) -> None:
    fit = fit_model("two", vcov)
    wt = fit.f_test[["statistic", "p_value", "df1", "df2"]].to_numpy(dtype=float)
    assert_allclose(wt, REF["two"][vcov]["wald"], rtol=RTOL_R_VCOV)


@pytest.mark.parametrize("model", ["two", "two_weighted", "one"])
@pytest.mark.parametrize("vcov", list(VCOV))
def test_wald_test_of_restrictions_equals_car_linear_hypothesis(model: str, vcov: str) -> None:
    fit = fit_model(model, vcov)
    ref = REF[model]["hypothesis"] if vcov == "classical" else REF[model][vcov]["hypothesis"]
    wt = fit.wald_test("d1 + x1 = 1, x1 = 0")
    assert wt.df == (ref[2], ref[3])
    rtol = RTOL_R if vcov == "classical" else RTOL_R_VCOV
    assert_allclose([wt.statistic, wt.p_value], ref[:2], rtol=rtol)
    assert list(wt.table.index) == ["x1 + d1 = 1", "x1 = 0"]
