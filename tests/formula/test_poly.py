"""poly(x, d) in formulas against R's stats::poly (tests/reference/make_poly.R)."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, FormulaError, LeakageError, OptionError
from attnreg.formula.poly import orthogonal_coefs, orthogonal_values, poly

from tests.conftest import REPO, RTOL_EXACT, RTOL_R

POLY_R = json.loads((REPO / "tests" / "reference" / "poly_r.json").read_text())
CASES = POLY_R["cases"]


def _frame(columns: dict) -> pd.DataFrame:
    return pd.DataFrame({k: np.array(v, dtype=np.float64) for k, v in columns.items()})


def _fit(name: str):
    case = CASES[name]
    return ar.attnreg(case["formula_py"], _frame(case["data"]))


@pytest.mark.parametrize("name", sorted(CASES))
def test_lm_with_poly_equals_r(name: str) -> None:
    case, fit = CASES[name], _fit(name)
    assert fit.nobs == case["nobs"]
    assert_allclose(fit.coef.to_numpy(), case["coef"], rtol=RTOL_R)
    assert_allclose(fit.std_err.to_numpy(), case["std_err"], rtol=RTOL_R)
    assert_allclose(fit.t_value.to_numpy(), case["t_value"], rtol=RTOL_R)
    assert_allclose(fit.sigma, case["sigma"], rtol=RTOL_R)
    assert_allclose(fit.r_squared, case["r_squared"], rtol=RTOL_R)


@pytest.mark.parametrize("name", sorted(CASES))
def test_predict_uses_the_training_polynomials_as_r(name: str) -> None:
    case, fit = CASES[name], _fit(name)
    new = _frame(case["newdata"])  # x outside the training range too
    assert_allclose(fit.predict(new).to_numpy(), case["predict"], rtol=RTOL_R)
    back = pickle.loads(pickle.dumps(fit))
    assert_allclose(back.predict(new).to_numpy(), case["predict"], rtol=RTOL_R)


@pytest.mark.parametrize("name", ["cubic", "with_z", "na_response"])
def test_column_names_are_r_names(name: str) -> None:
    assert _fit(name).names == CASES[name]["names"]


def test_interaction_names_are_r_names() -> None:
    # R 4.2: names(coef(lm(y ~ poly(x, 2):z)))
    df = _frame(CASES["with_z"]["data"])
    fit = ar.attnreg("y ~ poly(x, 2):z", df)
    assert fit.names == ["(Intercept)", "poly(x, 2)1:z", "poly(x, 2)2:z"]
    assert pickle.loads(pickle.dumps(fit)).names == fit.names


def test_raw_names_follow_the_python_call() -> None:
    # R prints poly(x, 2, raw = TRUE)1; the formula here spells the call raw=True
    assert _fit("raw").names == ["(Intercept)", "poly(x, 2, raw=True)1", "poly(x, 2, raw=True)2"]


@pytest.mark.parametrize("name", ["cubic", "with_z", "na_response"])
def test_summary_text_is_r_text(name: str) -> None:
    """From the residuals block to the F statistic (the Call block differs by design)."""
    r_lines = CASES[name]["summary"]
    r_body = r_lines[r_lines.index("Residuals:"):]
    while r_body and not r_body[-1]:
        r_body.pop()
    ours = str(_fit(name).summary()).splitlines()
    start = ours.index("Residuals:")
    assert ours[start:start + len(r_body)] == r_body


def test_basis_coefs_and_values_equal_r() -> None:
    basis = POLY_R["basis"]
    x, degree = np.array(basis["x"]), basis["degree"]
    alpha, norm2 = orthogonal_coefs(x, degree)
    assert_allclose(alpha, basis["alpha"], rtol=RTOL_R)
    assert_allclose(norm2, basis["norm2"], rtol=RTOL_R)
    assert_allclose(poly(x, degree), np.array(basis["values"]).T, rtol=RTOL_R, atol=RTOL_R)
    new = orthogonal_values(np.array(basis["newx"]), alpha, norm2)
    assert_allclose(new, np.array(basis["predict"]).T, rtol=RTOL_R)


def test_basis_is_orthonormal_and_spans_the_powers() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(5.0, 2.0, 50)
    Z = poly(x, 4)
    assert_allclose(Z.T @ Z, np.eye(4), atol=RTOL_EXACT)
    assert_allclose(Z.sum(axis=0), 0.0, atol=RTOL_EXACT)  # orthogonal to the constant
    df = pd.DataFrame({"x": x, "y": np.sin(x)})
    orth, raw = ar.attnreg("y ~ poly(x, 4)", df), ar.attnreg("y ~ poly(x, 4, raw=True)", df)
    assert_allclose(orth.fitted.to_numpy(), raw.fitted.to_numpy(), rtol=RTOL_EXACT)


def test_missing_x_is_left_out_of_the_polynomials() -> None:
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"x": rng.uniform(0, 3, 25), "y": rng.normal(size=25)})
    df.loc[[3, 17], "x"] = np.nan
    fit = ar.attnreg("y ~ poly(x, 2)", df)
    complete = ar.attnreg("y ~ poly(x, 2)", df.dropna())
    assert fit.nobs == 23 and list(fit.design.dropped_labels) == [3, 17]
    assert_allclose(fit.coef.to_numpy(), complete.coef.to_numpy(), rtol=RTOL_EXACT)
    pred = fit.predict(pd.DataFrame({"x": [1.0, np.nan]}))
    assert np.isfinite(pred.iloc[0]) and np.isnan(pred.iloc[1])


def test_subset_after_poly_as_r() -> None:
    """R's model.frame evaluates poly(x) on every row, then applies subset."""
    case = CASES["cubic"]
    df = _frame(case["data"])
    keep = np.arange(len(df)) % 3 != 0
    fit = ar.attnreg("y ~ poly(x, 3)", df, subset=keep)
    Z = poly(df["x"].to_numpy(), 3)[keep]
    X = np.column_stack([np.ones(keep.sum()), Z])
    ref = np.linalg.lstsq(X, df["y"].to_numpy()[keep], rcond=None)[0]
    assert_allclose(fit.coef.to_numpy(), ref, rtol=RTOL_EXACT)


@pytest.mark.parametrize(("formula", "exc", "pattern"), [
    ("y ~ poly(x, 4)", DataError, r"poly\(\): degree \(4\) must be less than the number of "
                                     r"distinct values of the variable \(4\)"),
    ("y ~ poly(x, 0)", FormulaError, r"poly\(\): degree must be a positive integer"),
    ("y ~ poly(x, 2.5)", FormulaError, r"poly\(\): degree must be a positive integer"),
])
def test_poly_errors(formula: str, exc: type, pattern: str) -> None:
    df = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0, 1.0, 2.0], "y": np.arange(6.0)})
    with pytest.raises(exc, match=pattern):
        ar.attnreg(formula, df)


def test_poly_error_classes_outside_formulas() -> None:
    with pytest.raises(DataError, match=r"degree \(3\) must be less than"):
        poly(np.array([1.0, 2.0, 3.0]), 3)
    with pytest.raises(OptionError, match=r"raw must be True or False"):
        poly(np.array([1.0, 2.0, 3.0]), 1, raw="yes")


def test_forecast_refuses_orthogonal_poly_and_takes_raw() -> None:
    idx = pd.period_range("2000Q1", periods=40, freq="Q")
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"x": rng.normal(size=40), "y": rng.normal(size=40)}, index=idx)
    with pytest.raises(LeakageError, match=r"stateful transform poly\(\).*raw=True"):
        ar.forecast("y ~ poly(lag(x, 1), 2)", df)
    fc = ar.forecast("y ~ poly(lag(x, 1), 2, raw=True)", df)
    assert fc.plan.n_forecasts > 0
