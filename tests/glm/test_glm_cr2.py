"""CR2 (Bell–McCaffrey) of GLM fits against ``clubSandwich::vcovCR(glm, cluster, type =
"CR2")`` (golden values from tests/reference/make_glm_cr2.R, on the data of
score_vcov_r.json and the binomial counts it adds): the shared score layer with
clubSandwich's working model for a glm."""

from __future__ import annotations

import json
import pickle
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError
from tests.conftest import REPO, RTOL_EXACT, RTOL_R, RTOL_R_VCOV

REF = json.loads((REPO / "tests" / "reference" / "glm_cr2_r.json").read_text())
DATA = pd.DataFrame(json.loads((REPO / "tests" / "reference" / "score_vcov_r.json")
                               .read_text())["data"]).assign(**REF["data"])
#: reference key -> (formula, attnreg arguments, prior-weight column)
MODELS: dict[str, tuple[str, dict[str, Any], str | None]] = {
    "logit": ("yb ~ x1 + x2", {"method": "logit"}, None),
    "probit": ("yb ~ x1 + x2", {"method": "probit"}, None),
    "poisson": ("yc ~ x1 + x2", {"method": "poisson"}, None),
    "poisson_w": ("yc ~ x1 + x2", {"method": "poisson"}, "w"),
    "gaussian_w": ("y ~ x1 + x2 + d1", {"method": "glm", "family": "gaussian"}, "w"),
    "cbind": ("cbind(succ, fail) ~ x1 + x2", {"method": "logit"}, None),
}
#: R's glm returns the working weights of the step before the last (see test_glm_vcov_r.py):
#: the Bernoulli fits' last step moves them by about 1e-7 of their size, so their sandwiches
#: agree to RTOL_R_VCOV; the others to RTOL_R
RTOL = {"logit": RTOL_R_VCOV, "probit": RTOL_R_VCOV}


def _fit(key: str, **vcov: Any) -> Any:
    formula, options, weights = MODELS[key]
    return ar.attnreg(formula, DATA, weights=None if weights is None else DATA[weights],
                      **options, **vcov)


@pytest.mark.parametrize("key", list(MODELS))
def test_cr2_equals_clubsandwich_vcovcr_on_glm(key: str) -> None:
    ref = REF[key]
    fit = _fit(key)
    assert_allclose(fit.coef.to_numpy(), ref["coef"], rtol=RTOL_R)
    cr2 = fit.with_vcov("cluster", cluster=ref["cluster"], type="CR2")
    assert_allclose(cr2.vcov.to_numpy(), ref["CR2"], rtol=RTOL.get(key, RTOL_R))
    assert_allclose(fit.covariance("CR2", cluster=ref["cluster"]).to_numpy(), ref["CR2"],
                    rtol=RTOL.get(key, RTOL_R))
    assert cr2.z_tests and "CR2" in str(cr2.summary())


def test_cr2_chosen_at_fit_time_pickles_and_differs_from_hc1() -> None:
    fit = _fit("poisson_w", vcov="cluster", cluster="a", type="CR2")
    assert_allclose(fit.vcov.to_numpy(), REF["poisson_w"]["CR2"], rtol=RTOL_R)
    again = pickle.loads(pickle.dumps(fit))
    assert again.vcov.equals(fit.vcov)
    hc1 = fit.with_vcov("cluster", cluster="a")
    assert not np.allclose(hc1.vcov.to_numpy(), fit.vcov.to_numpy(), rtol=1e-3)  # CR2 ≠ vcovCL


def test_the_working_model_is_the_glms_own() -> None:
    fit = _fit("logit")
    with pytest.raises(OptionError, match=r"working_variance is not an option of a GLM"):
        fit.with_vcov("cluster", cluster="a", type="CR2", working_variance=np.ones(240))
    with pytest.raises(OptionError, match=r"unknown option\(s\).*working_variance"):
        _fit("logit", vcov="cluster", cluster="a", type="CR2", working_variance=np.ones(240))


def test_working_variance_needs_cr2_and_positive_values() -> None:
    ols = ar.attnreg("y ~ x1 + x2", DATA)
    with pytest.raises(OptionError, match=r"working_variance .* applies to type='CR2'.*"
                                          r"type='HC1'"):
        ols.with_vcov("cluster", cluster="a", working_variance=np.ones(240))
    with pytest.raises(OptionError, match=r"working_variance must be positive and finite"):
        ols.with_vcov("cluster", cluster="a", type="CR2", working_variance=-np.ones(240))


def test_with_unit_working_variances_it_is_the_registrys_cr2() -> None:
    """θ = 1 on an unweighted least-squares fit: clubSandwich's lm CR2 (inverse_var = TRUE)."""
    ols = ar.attnreg("y ~ x1 + x2 + d1", DATA)
    plain = ols.with_vcov("cluster", cluster="a", type="CR2")
    unit = ols.with_vcov("cluster", cluster="a", type="CR2", working_variance=np.ones(240))
    assert_allclose(unit.vcov.to_numpy(), plain.vcov.to_numpy(), rtol=RTOL_EXACT)


def test_cr2_with_absorbed_fixed_effects_is_refused() -> None:
    fe = ar.attnreg("yc ~ x1 + x2 | b", DATA, method="poisson")
    with pytest.raises(OptionError, match=r"type='CR2' of a GLM with absorbed fixed effects"):
        fe.with_vcov("cluster", cluster="a", type="CR2")
