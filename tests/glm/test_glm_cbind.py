"""``cbind(successes, failures) ~ x`` binomial responses against R's glm()
(tests/reference/glm_cbind_r.json, made by make_glm_cbind.R).

R reads the two columns as the proportion of successes with the trials multiplying the prior
weights; rows with no trials get weight zero and are left out of the fit.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, FormulaError, OptionError
from attnreg.report.sections import Coefficients
from tests.conftest import RTOL_EXACT, RTOL_R
from tests.glm._reference import r_order

FIXTURE = Path(__file__).resolve().parents[1] / "reference" / "glm_cbind_r.json"


@cache
def _ref() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text())


NAMES = sorted(_ref()["cases"])


def _fit(name: str, **options: Any) -> Any:
    case = _ref()["cases"][name]
    return ar.attnreg(case["formula"], pd.DataFrame(case["data"]), method="glm",
                      family="binomial", link=case["link"], weights=case["weights"],
                      offset=case["offset"], **options)


def _check(fit: Any, ref: dict[str, Any]) -> None:
    order = r_order(fit, ref["names"])
    for ours, theirs in ((fit.coef, "coef"), (fit.std_err, "se"), (fit.statistic, "stat"),
                         (fit.p_value, "p")):
        assert_allclose(ours.to_numpy()[order], ref[theirs], rtol=RTOL_R, err_msg=theirs)
    for ours, theirs in ((fit.deviance, "deviance"), (fit.null_deviance, "null_deviance"),
                         (fit.aic, "aic")):
        assert_allclose(ours, ref[theirs], rtol=RTOL_R, err_msg=theirs)
    assert (fit.df_resid, fit.df_null) == (ref["df_residual"], ref["df_null"])


def _fitted_rows(ref: dict[str, Any]) -> np.ndarray:
    """R's rows with a positive prior weight (those attnreg fits)."""
    return np.asarray(ref["prior_weights"]) > 0


@pytest.mark.parametrize("name", NAMES)
def test_control_r_is_r_glm_step_for_step(name: str) -> None:
    ref = _ref()["cases"][name]["r"]
    fit = _fit(name, control="R")
    _check(fit, ref)
    assert fit.iterations == ref["iter"] and fit.converged


@pytest.mark.parametrize("name", NAMES)
def test_default_reaches_r_glm_at_the_optimum(name: str) -> None:
    ref = _ref()["cases"][name]["optimum"]
    fit = _fit(name)
    _check(fit, ref)
    rows = _fitted_rows(ref)
    assert_allclose(fit.fitted, np.asarray(ref["fitted"])[rows], rtol=RTOL_R)
    assert_allclose(fit.prior_weights, np.asarray(ref["prior_weights"])[rows], rtol=0)
    for kind in ("deviance", "pearson"):
        theirs = np.asarray(ref[f"resid_{kind}"])[rows]
        assert_allclose(fit.residuals(kind), theirs, rtol=RTOL_R,
                        atol=RTOL_R * np.max(np.abs(theirs)), err_msg=kind)


@pytest.mark.parametrize("name", NAMES)
def test_predict_response_gives_proportions_as_r(name: str) -> None:
    ref = _ref()["cases"][name]["optimum"]
    new = pd.DataFrame(_ref()["new"])
    got = _fit(name).predict(new, type="response")
    assert_allclose(got.to_numpy(), ref["predict_response"], rtol=RTOL_R)


@pytest.mark.parametrize("name", NAMES)
def test_summary_prints_as_r_from_coefficients_on(name: str) -> None:
    ref = _ref()["cases"][name]["r"]
    fit = _fit(name, control="R")
    order = r_order(fit, ref["names"])
    sections = tuple(dataclasses.replace(s, table=s.table.iloc[order].set_axis(ref["names"]))
                     if isinstance(s, Coefficients) else s for s in fit.summary().sections)
    text = str(dataclasses.replace(fit.summary(), sections=sections))
    assert text[text.index("Coefficients:"):] == ref["summary"] + "\n"


def test_counts_equal_the_proportion_with_trials_as_weights() -> None:
    """R's identity: cbind(s, f) with weights w is the proportion s/(s+f) with weights
    w·(s+f); the estimates, deviance and AIC agree (the prior weights are 1 here)."""
    data = pd.DataFrame(_ref()["cases"]["logit_factor"]["data"])
    before = data.copy()
    counts = ar.attnreg("cbind(succ, fail) ~ x + z", data, method="logit")
    prop = data.assign(p=data["succ"] / data["trials"])
    plain = ar.attnreg("p ~ x + z", prop, method="logit", weights="trials")
    assert_allclose(counts.coef, plain.coef, rtol=RTOL_EXACT)
    assert_allclose(counts.std_err, plain.std_err, rtol=RTOL_EXACT)
    assert_allclose([counts.deviance, counts.aic], [plain.deviance, plain.aic], rtol=RTOL_EXACT)
    assert counts.iterations == plain.iterations
    pd.testing.assert_frame_equal(data, before)  # the caller's data is not modified


def test_probit_shortcut_and_pickle() -> None:
    case = _ref()["cases"]["probit_weights_offset"]
    fit = ar.attnreg(case["formula"], pd.DataFrame(case["data"]), method="probit",
                     weights="w", offset="expo")
    _check(fit, case["optimum"])
    back = pickle.loads(pickle.dumps(fit))
    assert_allclose(back.aic, fit.aic, rtol=0)
    assert_allclose(back.design.trials, fit.design.trials, rtol=0)


def test_fixed_effects_equal_the_dummy_variable_fit() -> None:
    data = pd.DataFrame(_ref()["cases"]["logit_factor"]["data"])
    absorbed = ar.attnreg("cbind(succ, fail) ~ x + z | g", data, method="logit")
    dummies = ar.attnreg("cbind(succ, fail) ~ x + z + C(g)", data, method="logit")
    assert_allclose(absorbed.coef, dummies.coef[["x", "z"]], rtol=RTOL_R)
    assert_allclose([absorbed.deviance, absorbed.aic], [dummies.deviance, dummies.aic],
                    rtol=RTOL_R)


def _counts(**columns: Any) -> pd.DataFrame:
    base = {"s": [1.0, 3, 0, 2, 5], "f": [2.0, 1, 4, 2, 1], "x": [0.5, 1.0, 2.0, 1.5, 0.1]}
    return pd.DataFrame({**base, **columns})


def test_a_non_binomial_family_is_refused() -> None:
    with pytest.raises(OptionError, match=r"'cbind\(s, f\)'.*binomial family, not 'poisson'"):
        ar.attnreg("cbind(s, f) ~ x", _counts(), method="poisson")


def test_a_method_other_than_a_glm_is_refused() -> None:
    with pytest.raises(FormulaError, match=r"'cbind\(s, f\)' counts successes.*binomial GLM"):
        ar.attnreg("cbind(s, f) ~ x", _counts(), method="ols")


def test_negative_and_fractional_counts_are_refused() -> None:
    with pytest.raises(DataError, match=r"count 'f' must be a finite non-negative.*row 2 has -4"):
        ar.attnreg("cbind(s, f) ~ x", _counts(f=[2.0, 1, -4, 2, 1]), method="logit")
    with pytest.raises(DataError, match=r"count 's' must be a whole number; row 1 has 2.5"):
        ar.attnreg("cbind(s, f) ~ x", _counts(s=[1.0, 2.5, 0, 2, 5]), method="logit")


def test_cbind_takes_two_columns() -> None:
    with pytest.raises(FormulaError, match=r"must be cbind\(successes, failures\)"):
        ar.attnreg("cbind(s, f, x) ~ x", _counts(), method="logit")


def test_chunked_fit_is_refused_with_the_equivalent(tmp_path: Path) -> None:
    _counts().to_parquet(tmp_path / "part.parquet")
    with pytest.raises(OptionError, match=r"cbind\(s, f\) response is fitted in memory only.*"
                                          r"weights='trials'"):
        ar.attnreg("cbind(s, f) ~ x", str(tmp_path / "*.parquet"), method="logit")


def test_least_squares_with_fixed_effects_refuses_counts() -> None:
    with pytest.raises(FormulaError, match=r"'cbind\(s, f\)' counts successes"):
        ar.attnreg("cbind(s, f) ~ x | g", _counts(g=["a", "a", "b", "b", "b"]), method="ols")
