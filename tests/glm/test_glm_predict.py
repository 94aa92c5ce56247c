"""GLM predictions with standard errors and intervals (R's ``predict.glm(se.fit = TRUE)``) and
the attention view (the link-scale prediction as a vote of the working responses).

Reference: tests/reference/glm_predict_r.json, made by tests/reference/make_glm_predict.R.
"""

from __future__ import annotations

import json
import pickle
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats

import attnreg as ar
from attnreg.exceptions import OptionError
from tests.conftest import RTOL_EXACT, RTOL_R, RTOL_SM

FIXTURE = Path(__file__).resolve().parents[1] / "reference" / "glm_predict_r.json"
CASES = ("logit", "probit", "poisson_offset", "gamma_log")


@cache
def fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text())


def data() -> tuple[pd.DataFrame, pd.DataFrame]:
    return pd.DataFrame(fixture()["data"]), pd.DataFrame(fixture()["new"])


def fit_case(name: str, **options: Any) -> Any:
    case = fixture()["cases"][name]
    return ar.attnreg(case["formula"], data()[0], method="glm", family=case["family"],
                      link=case["link"], offset=case["offset"], **options)


def close(ours: Any, ref: Any) -> None:
    ref = np.asarray(ref, dtype=float)
    # R's fit stops at its own rule (epsilon 1e-14): relative to the largest value, as the
    # link-scale values cross zero
    assert_allclose(np.asarray(ours, dtype=float), ref, rtol=RTOL_R,
                    atol=RTOL_R * np.max(np.abs(ref)))


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("type", ["link", "response"])
def test_se_fit_equals_r(name: str, type: str) -> None:
    case = fixture()["cases"][name]
    out = fit_case(name).predict(data()[1], type=type, se_fit=True)
    assert list(out.columns) == ["fit", "se_fit"]
    close(out["fit"], case[f"{type}_fit"])
    close(out["se_fit"], case[f"{type}_se"])


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("level", [0.95, 0.8])
def test_confidence_interval_on_the_link_scale_mapped_through_the_inverse_link(
        name: str, level: float) -> None:
    case = fixture()["cases"][name]
    fit = fit_case(name)
    fixed = case["family"] in ("binomial", "poisson")
    q = (stats.norm.ppf(0.5 + level / 2) if fixed
         else stats.t.ppf(0.5 + level / 2, case["df_resid"]))
    eta, se = np.asarray(case["link_fit"]), np.asarray(case["link_se"])
    band = fit.predict(data()[1], type="link", interval="confidence", level=level)
    close(band["lwr"], eta - q * se)
    close(band["upr"], eta + q * se)
    resp = fit.predict(data()[1], type="response", interval="confidence", level=level)
    inv = fit.link.linkinv
    close(resp["lwr"], inv(eta - q * se))
    close(resp["upr"], inv(eta + q * se))
    assert (resp["lwr"] < resp["fit"]).all() and (resp["fit"] < resp["upr"]).all()


def test_a_decreasing_link_keeps_lower_below_upper() -> None:
    df, new = data()
    fit = ar.attnreg("ygam ~ x", df, method="glm", family="Gamma", link="inverse")
    band = fit.predict(new, type="response", interval="confidence")
    assert (band["lwr"] < band["fit"]).all() and (band["fit"] < band["upr"]).all()


def test_sandwich_standard_errors_equal_statsmodels() -> None:
    sm = pytest.importorskip("statsmodels.api")
    df, new = data()
    fit = ar.attnreg("yb ~ x + z", df, method="logit", vcov="HC0")
    X = np.column_stack([np.ones(len(df)), df["x"], df["z"]])
    ref = sm.GLM(df["yb"], X, family=sm.families.Binomial()).fit(cov_type="HC0", tol=1e-14)
    Xn = np.column_stack([np.ones(len(new)), new["x"], new["z"]])
    pred = ref.get_prediction(Xn, which="linear").summary_frame()
    out = fit.predict(new, se_fit=True)
    assert_allclose(out["fit"], pred["predicted"], rtol=RTOL_SM)
    assert_allclose(out["se_fit"], pred["se"], rtol=RTOL_SM)
    model = fit.with_vcov("classical").predict(new, se_fit=True)["se_fit"]
    assert not np.allclose(model, out["se_fit"], rtol=1e-3)  # the covariance in use decides


def test_training_rows_and_missing_new_rows() -> None:
    new = data()[1]
    fit = fit_case("logit")
    own = fit.predict(type="response", se_fit=True)
    assert_allclose(own["fit"], fit.fitted, rtol=0)
    assert own.index.equals(fit.design.row_labels)
    holes = new.copy()
    holes.loc[1, "x"] = np.nan
    out = fit.predict(holes, interval="confidence")
    assert out.iloc[1].isna().all() and out.drop(index=1).notna().all().all()


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"interval": "prediction"}, "no prediction interval"),
    ({"interval": "conf"}, "interval must be"),
    ({"interval": "confidence", "level": 1.5}, "level must be"),
    ({"type": "probability"}, "type must be"),
])
def test_bad_options_are_named(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(OptionError, match=match):
        fit_case("logit").predict(data()[1], **kwargs)


# ------------------------------------------------------------------------------ attention view

@pytest.mark.parametrize("name", CASES)
def test_attention_reproduces_the_link_scale_prediction(name: str) -> None:
    fit = fit_case(name)
    new = data()[1]
    att = fit.attention(new)
    assert att.weights.shape == (len(new), fit.nobs)
    # the weights average the working responses at the IRLS fixed point, reached to working
    # precision by the default control
    assert_allclose(att.diagnostics["prediction"], fit.predict(new), rtol=RTOL_EXACT,
                    atol=RTOL_EXACT)
    own = fit.attention()
    assert_allclose(own.diagnostics["prediction"], fit.linear_predictor, rtol=RTOL_EXACT,
                    atol=RTOL_EXACT)
    assert att.top_k(3).shape[0] == 3 * len(new)


def test_attention_weights_are_the_weighted_hat_matrix() -> None:
    fit = fit_case("poisson_offset")
    X = fit.design.X
    w = fit.fit.working_weights
    H = X @ np.linalg.solve(X.T @ (X * w[:, None]), (X * w[:, None]).T)  # closed form, small n
    assert_allclose(fit.attention().weights.to_numpy(), H, rtol=RTOL_EXACT, atol=RTOL_EXACT)


def test_gaussian_identity_glm_attention_is_the_ols_attention() -> None:
    df, new = data()
    glm = ar.attnreg("ygam ~ x + z", df, method="glm", family="gaussian")
    ols = ar.attnreg("ygam ~ x + z", df)
    assert_allclose(glm.attention(new).weights, ols.attention(new).weights, rtol=RTOL_EXACT,
                    atol=RTOL_EXACT)
    assert_allclose(glm.attention().y_train, ols.design.y, rtol=RTOL_EXACT)


def test_attention_pickles() -> None:
    att = fit_case("logit").attention(data()[1])
    back = pickle.loads(pickle.dumps(att))
    assert_allclose(back.weights, att.weights, rtol=0)
