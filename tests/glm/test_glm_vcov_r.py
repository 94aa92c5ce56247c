"""Every registered covariance of a logit and a Poisson GLM against sandwich on ``glm``
(golden values from tests/reference/make_score_vcov.R)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError
from tests.conftest import REPO, RTOL_R, RTOL_R_VCOV

REF = json.loads((REPO / "tests" / "reference" / "score_vcov_r.json").read_text())
MODELS = {"logit": "yb ~ x1 + x2", "poisson": "yc ~ x1 + x2"}
#: R's glm returns the working weights of the step before the last (glm.fit computes them
#: before its final update), ours are at the optimum: with R's deviance rule at 1e-14 the
#: logit's last step moves them by about 1e-7 of their size, so its sandwiches agree to
#: RTOL_R_VCOV; the Poisson fit's last step is smaller and agrees to RTOL_R
RTOL = {"logit": RTOL_R_VCOV, "poisson": RTOL_R}

#: reference key -> with_vcov arguments (vcovCL's fix = FALSE is R's default, ours is True)
VCOV: dict[str, tuple[str, dict[str, Any]]] = {
    "HC0": ("HC0", {}), "HC1": ("HC1", {}), "HC2": ("HC2", {}), "HC3": ("HC3", {}),
    "HC4": ("HC4", {}), "HC4m": ("HC4m", {}), "HC5": ("HC5", {}),
    "CL_a": ("cluster", {"cluster": "a"}),
    "CL_a_HC0": ("cluster", {"cluster": "a", "type": "HC0"}),
    "CL_ab": ("cluster", {"cluster": "a + b", "fix": False}),
    "CL_ab_HC0": ("cluster", {"cluster": ["a", "b"], "type": "HC0", "fix": False}),
    "NW3": ("HAC", {"maxlags": 3}),
    "HAC_qs": ("HAC", {"kernel": "qs", "adjust": True}),
}


def data() -> pd.DataFrame:
    return pd.DataFrame(REF["data"])


@pytest.mark.parametrize("key", list(VCOV))
@pytest.mark.parametrize("model", list(MODELS))
def test_every_covariance_equals_sandwich_on_glm(model: str, key: str) -> None:
    ref = REF[model]
    fit = ar.attnreg(MODELS[model], data(), method=model)
    assert_allclose(fit.coef.to_numpy(), ref["coef"], rtol=RTOL_R)
    kind, options = VCOV[key]
    robust = fit.with_vcov(kind, **options)
    assert_allclose(robust.vcov.to_numpy(), ref[key], rtol=RTOL[model])
    assert robust.z_tests and robust.robust is not None


def test_chosen_at_fit_time_and_shown_in_the_summary() -> None:
    fit = ar.attnreg(MODELS["poisson"], data(), method="poisson", vcov="HAC", maxlags=3)
    assert_allclose(fit.vcov.to_numpy(), REF["poisson"]["NW3"], rtol=RTOL_R)
    assert "(Standard errors: HAC (Newey-West, Bartlett kernel, 3 lags); z tests" in str(
        fit.summary())
    two = ar.attnreg(MODELS["poisson"], data(), method="poisson", vcov="cluster",
                     cluster="a + b", fix=False)
    assert_allclose(two.std_err.to_numpy(), np.sqrt(np.diag(REF["poisson"]["CL_ab"])),
                    rtol=RTOL_R)
    assert "two-way" in str(two.summary())
    hc3 = ar.attnreg(MODELS["poisson"], data(), method="poisson", vcov="HC3")
    assert "(Standard errors: sandwich::vcovHC, type HC3; z tests" in str(hc3.summary())
    assert hc3.with_vcov().vcov.equals(fit.with_vcov().vcov)


def test_df_is_refused_its_tests_are_z_tests() -> None:
    fit = ar.attnreg(MODELS["logit"], data(), method="logit")
    assert fit.with_vcov("HC0", df=np.inf).vcov.equals(fit.with_vcov("HC0").vcov)
    with pytest.raises(OptionError, match=r"df does not apply to a GLM's sandwich covariance: "
                                          r"its tests are z tests"):
        fit.with_vcov("cluster", cluster="a", df="residual")
