"""The diagnostics battery and vif() against R (lmtest, car, tseries) and statsmodels.

Reference values: tests/reference/diagnostics.json, written by make_diagnostics.R (its
header says how to regenerate). Four cases: a time series with AR(1) errors, a weighted fit
with a factor and a planted outlier, weights with zeros, and a model without intercept.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, OptionError
from attnreg.diagnostics import autocorrelation, collinearity

REF = json.loads((Path(__file__).parents[1] / "reference" / "diagnostics.json").read_text())
CASES = REF["cases"]
RTOL = 1e-8


def fit_case(name: str):
    case = CASES[name]
    data = pd.DataFrame(case["data"], index=case["row_names"])
    weights = data["w"] if case["weights"] else None
    return ar.attnreg(case["formula"], data, weights=weights)


@pytest.fixture(scope="module", params=list(CASES))
def case(request):
    return CASES[request.param], fit_case(request.param)


def _check(row: pd.Series, ref: dict, df: str | None = None, atol: float = 0.0) -> None:
    assert_allclose(row["statistic"], ref["statistic"], rtol=RTOL)
    assert_allclose(row["p_value"], ref["p_value"], rtol=RTOL, atol=atol)
    if df is not None:
        assert row["df"] == df


def test_fit_reproduces_r(case) -> None:
    ref, fit = case
    assert_allclose(fit.coef.to_numpy(), ref["coef"], rtol=1e-10, atol=1e-12)


def test_breusch_pagan_matches_bptest(case) -> None:
    ref, fit = case
    table = fit.diagnostics().to_frame()
    _check(table.loc["Breusch-Pagan (studentized)"], ref["bp_pos"], str(ref["bp_pos"]["df"]))
    raw = fit.diagnostics(studentize=False).to_frame().loc["Breusch-Pagan"]
    _check(raw, ref["bp_raw_pos"])
    if ref["name"] != "zero":  # bptest counts rows of weight zero; attnreg does not
        _check(table.loc["Breusch-Pagan (studentized)"], ref["bp"])


def test_white_matches_bptest_on_products(case) -> None:
    ref, fit = case
    _check(fit.diagnostics().to_frame().loc["White"], ref["white"], str(ref["white"]["df"]))


@pytest.mark.parametrize("name", ["ts"])
def test_white_matches_statsmodels_het_white(name: str) -> None:
    from statsmodels.stats.diagnostic import het_white

    fit = fit_case(name)
    lm, lm_p, _, _ = het_white(fit.resid.to_numpy(), fit.design.X)
    row = fit.diagnostics().to_frame().loc["White"]
    assert_allclose([row["statistic"], row["p_value"]], [lm, lm_p], rtol=RTOL)


def test_durbin_watson_matches_dwtest(case) -> None:
    ref, fit = case
    row = fit.diagnostics().to_frame().loc["Durbin-Watson"]
    # against Pan's quadrature converged (200 nodes); dwtest's default 15 can be off by 2e-3
    _check(row, {**ref["dw"], "p_value": ref["dw"]["p_converged"]})
    approx = fit.diagnostics(dw_exact=False).to_frame().loc["Durbin-Watson"]
    assert_allclose(approx["p_value"], ref["dw"]["p_approx"], rtol=RTOL)
    assert "normal approximation" in approx["note"]


def test_durbin_watson_statistic_matches_statsmodels(case) -> None:
    from statsmodels.stats.stattools import durbin_watson

    _, fit = case
    assert_allclose(fit.diagnostics().statistic("Durbin-Watson"),
                    durbin_watson(fit.weighted_resid.to_numpy()), rtol=1e-12)


def test_breusch_godfrey_matches_bgtest(case) -> None:
    ref, fit = case
    for order, tests in ref["bg"].items():
        table = fit.diagnostics(bg_order=int(order)).to_frame()
        _check(table.loc[f"Breusch-Godfrey LM (order {order})"], tests["Chisq"], order)
        df = ", ".join(f"{d:g}" for d in tests["F"]["df"])
        _check(table.loc[f"Breusch-Godfrey F (order {order})"], tests["F"], df)


def test_reset_matches_resettest(case) -> None:
    ref, fit = case
    df = ", ".join(f"{d:g}" for d in ref["reset"]["df"])
    _check(fit.diagnostics().to_frame().loc["RESET"], ref["reset"], df)


def test_reset_single_power_depends_on_centring() -> None:
    """With power (3,) alone the centring matters; compare against a direct F test on the
    standardised fitted values, as lmtest's scale(y) gives."""
    fit = fit_case("ts")
    y, X = fit.design.y, fit.design.X
    z = (fit.fitted.to_numpy() - y.mean())
    Z = np.column_stack([X, z**3])
    rss1 = fit.rss
    r2 = y - Z @ np.linalg.lstsq(Z, y, rcond=None)[0]
    rss2 = float(r2 @ r2)
    df2 = fit.nobs - 4
    expected = (rss1 - rss2) / (rss2 / df2)
    got = fit.diagnostics(reset_power=(3,)).statistic("RESET")
    assert_allclose(got, expected, rtol=1e-9)


def test_jarque_bera_matches_tseries_and_statsmodels(case) -> None:
    from statsmodels.stats.stattools import jarque_bera

    ref, fit = case
    row = fit.diagnostics().to_frame().loc["Jarque-Bera"]
    _check(row, ref["jb"], "2", atol=1e-15)  # tseries: 1 - pchisq(), 0 below 1e-16
    jb, p, _, _ = jarque_bera(fit.weighted_resid.to_numpy())
    assert_allclose([row["statistic"], row["p_value"]], [jb, p], rtol=1e-12)


def test_condition_numbers_match_kappa(case) -> None:
    ref, fit = case
    table = fit.diagnostics().to_frame()
    assert_allclose(table.loc["Condition number (scaled)", "statistic"], ref["kappa"]["scaled"],
                    rtol=RTOL)
    assert_allclose(table.loc["Condition number", "statistic"], ref["kappa"]["unscaled"],
                    rtol=RTOL)


def test_condition_number_matches_statsmodels() -> None:
    import statsmodels.api as sm

    fit = fit_case("wls")
    case = CASES["wls"]
    sm_fit = sm.WLS(fit.design.y, fit.design.X, weights=np.asarray(case["data"]["w"])).fit()
    assert_allclose(collinearity.condition_numbers(fit)[1], sm_fit.condition_number, rtol=1e-8)


def test_vif_matches_car(case) -> None:
    ref, fit = case
    v = ref["vif"]
    if "error" in v or ref["name"] == "noint":
        with pytest.raises(OptionError, match="intercept"):
            fit.vif()
        return
    got = fit.vif()
    if "gvif" in v:
        assert list(got.columns) == ["GVIF", "Df", "GVIF^(1/(2*Df))"]
        assert_allclose(got["GVIF"], v["gvif"], rtol=RTOL)
        assert_allclose(got["Df"], v["df"])
        assert_allclose(got["GVIF^(1/(2*Df))"], v["gvif_adj"], rtol=RTOL)
        assert got.index[0] == "C(g)"
    else:
        assert list(got.columns) == ["VIF"]
        assert_allclose(got["VIF"], v["vif"], rtol=RTOL)


def test_vif_errors() -> None:
    data = pd.DataFrame(CASES["ts"]["data"])
    with pytest.raises(DataError, match="at least 2 terms"):
        ar.attnreg("y ~ x1", data).vif()
    data["x3"] = data["x1"] + data["x2"]
    with pytest.warns(UserWarning):
        fit = ar.attnreg("y ~ x1 + x2 + x3", data)
    with pytest.raises(DataError, match=r"aliased.*x3"):
        fit.vif()


def test_vif_of_ridge_is_that_of_the_design() -> None:
    data = pd.DataFrame(CASES["ts"]["data"])
    ridge = ar.attnreg("y ~ x1 + x2", data, method="ridge", lam=1.0)
    assert_allclose(ridge.vif(), fit_case("ts").vif(), rtol=1e-12)


def test_table_is_frozen_pickles_and_prints() -> None:
    table = fit_case("ts").diagnostics(bg_order=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        table.title = "x"  # type: ignore[misc]
    back = pickle.loads(pickle.dumps(table))
    pd.testing.assert_frame_equal(back.table, table.table)
    text = str(table)
    assert text.splitlines()[0] == "Regression diagnostics"
    assert "Breusch-Godfrey F (order 3)" in text and "rows in data order" in text
    assert list(table.to_frame().columns) == ["statistic", "df", "p_value", "note"]
    assert table.p_value("Durbin-Watson") == table.to_frame().loc["Durbin-Watson", "p_value"]
    with pytest.raises(OptionError, match="test must be one of"):
        table.statistic("Shapiro-Wilk")


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"bg_order": 0}, "bg_order"), ({"bg_order": 1.5}, "bg_order"),
    ({"reset_power": (1, 2)}, "reset_power"), ({"reset_power": (2, 2)}, "reset_power"),
    ({"reset_power": "2"}, "reset_power"), ({"studentize": "yes"}, "studentize"),
    ({"dw_exact": 1}, "dw_exact")])
def test_option_errors(kwargs, match) -> None:
    with pytest.raises(OptionError, match=match):
        fit_case("ts").diagnostics(**kwargs)


def test_tests_the_data_cannot_support_are_nan_with_the_reason() -> None:
    fit = ar.attnreg("y ~ x1 + x2", pd.DataFrame(CASES["ts"]["data"]).iloc[:6])
    with pytest.raises(DataError, match="Breusch-Godfrey test of order 3"):
        autocorrelation.breusch_godfrey(fit, 3)
    table = fit.diagnostics(bg_order=3).to_frame()
    for test in ("White", "Breusch-Godfrey LM (order 3)", "Breusch-Godfrey F (order 3)"):
        assert np.isnan(table.loc[test, "statistic"])
        assert "needs more" in table.loc[test, "note"]
    assert np.isfinite(table.loc["Breusch-Pagan (studentized)", "statistic"])


def test_ridge_battery_is_conditional_and_says_what_is_not_defined() -> None:
    data = pd.DataFrame(CASES["ts"]["data"])
    ridge = ar.attnreg("y ~ x1 + x2", data, method="ridge", lam=2.0)
    table = ridge.diagnostics().to_frame()
    for test in ("Breusch-Godfrey LM (order 1)", "RESET"):
        assert np.isnan(table.loc[test, "statistic"]) and "OLS only" in table.loc[test, "note"]
    assert np.isnan(table.loc["Durbin-Watson", "p_value"])
    assert "ridge" in ridge.diagnostics().title
    # BP on the ridge residuals: n R² of e² on X, by hand
    e = ridge.resid.to_numpy()
    v = e**2 - np.mean(e**2)
    X = ridge.design.X
    fitted = X @ np.linalg.lstsq(X, v, rcond=None)[0]
    assert_allclose(table.loc["Breusch-Pagan (studentized)", "statistic"],
                    len(e) * (fitted @ fitted) / (v @ v), rtol=1e-10)
    d = np.diff(e)
    assert_allclose(table.loc["Durbin-Watson", "statistic"], d @ d / (e @ e), rtol=1e-12)


def test_imhof_against_chi_square() -> None:
    """Σ μ z² with equal weights of both signs: P(χ²_a < r χ²_b) is an F probability."""
    from scipy import stats

    for a, b, r in ((3, 5, 0.7), (1, 8, 2.0), (6, 2, 0.1)):
        mu = np.r_[np.ones(a), -r * np.ones(b)]
        expected = stats.f.cdf(r * b / a, a, b)
        assert_allclose(autocorrelation._imhof_below_zero(mu), expected, rtol=1e-9)
