"""GLM fits against R's glm() (tests/reference/glm_r.json, made by make_glm.R).

``control="R"`` stops where R's ``glm.fit`` stops (same iterations, same numbers); the
default goes on to the optimum and is compared with R's glm restarted from its own
coefficients until they stop changing.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from tests.conftest import RTOL_R, RTOL_R_VCOV
from tests.glm._reference import cases, fit_case, r_order

NAMES = sorted(cases())
#: Cases with an R fit at the optimum (not the fits R halves onto a boundary).
AT_OPTIMUM = [n for n in NAMES if cases()[n]["optimum"] is not None]
FAMILY_LINKS = {(c["family"], c["link"]) for c in cases().values()}


def test_the_fixture_covers_every_family_and_link() -> None:
    from attnreg.glm import FAMILIES

    expected = {(f.name, link) for f in FAMILIES.values() for link in f.links}
    assert expected == FAMILY_LINKS


def _check(fit, ref) -> None:
    order = r_order(fit, ref["names"])
    for ours, theirs in ((fit.coef, "coef"), (fit.std_err, "se"), (fit.statistic, "stat"),
                         (fit.p_value, "p")):
        assert_allclose(ours.to_numpy()[order], ref[theirs], rtol=RTOL_R, err_msg=theirs)
    for ours, theirs in ((fit.deviance, "deviance"), (fit.null_deviance, "null_deviance"),
                         (fit.aic, "aic"), (fit.dispersion, "dispersion")):
        assert_allclose(ours, ref[theirs], rtol=RTOL_R, err_msg=theirs)
    assert (fit.df_resid, fit.df_null) == (ref["df_residual"], ref["df_null"])


@pytest.mark.parametrize("name", NAMES)
def test_control_r_is_r_glm_step_for_step(name: str) -> None:
    ref = cases()[name]["r"]
    fit = fit_case(cases()[name], control="R")
    _check(fit, ref)
    assert fit.iterations == ref["iter"] and fit.converged


@pytest.mark.parametrize("name", AT_OPTIMUM)
def test_default_reaches_r_glm_iterated_to_the_optimum(name: str) -> None:
    case = cases()[name]
    ref = case["optimum"]
    fit = fit_case(case)
    _check(fit, ref)
    assert fit.iterations >= case["r"]["iter"]
    assert_allclose(fit.fitted, ref["fitted"], rtol=RTOL_R)
    assert_allclose(fit.linear_predictor, ref["linear_predictor"], rtol=RTOL_R)
    for kind in ("deviance", "pearson", "working", "response"):
        assert_allclose(fit.residuals(kind), ref[f"resid_{kind}"], rtol=RTOL_R,
                        atol=RTOL_R * np.max(np.abs(ref[f"resid_{kind}"])), err_msg=kind)


@pytest.mark.parametrize("name", AT_OPTIMUM)
def test_covariances_equal_vcov_and_sandwich_vcovhc(name: str) -> None:
    ref = cases()[name]["optimum"]
    fit = fit_case(cases()[name])
    order = r_order(fit, ref["names"])
    idx = np.ix_(order, order)
    scale = np.max(np.abs(ref["vcov"]))  # exact zeros off the diagonal: judged on its scale
    assert_allclose(fit.vcov.to_numpy()[idx], ref["vcov"], rtol=RTOL_R, atol=RTOL_R * scale)
    for kind in ("HC0", "HC1"):
        hc = ref[f"vcov_{kind.lower()}"]
        assert_allclose(fit.covariance(kind).to_numpy()[idx], hc, rtol=RTOL_R_VCOV,
                        atol=RTOL_R_VCOV * np.max(np.abs(hc)), err_msg=kind)
    if cases()[name]["cluster"] is None:
        return
    for kind in ("HC0", "HC1"):  # sandwich::vcovCL, clustered by a factor of the data
        cl = ref[f"vcov_cl_{kind.lower()}"]
        assert_allclose(fit.covariance(kind, cluster=cases()[name]["cluster"]).to_numpy()[idx], cl,
                        rtol=RTOL_R_VCOV, atol=RTOL_R_VCOV * np.max(np.abs(cl)),
                        err_msg=f"cluster {kind}")


def test_r_rule_stops_short_and_the_default_does_not() -> None:
    """On a probit fit R's rule leaves ~1.6e-9 relative error; the default is at the optimum."""
    case = cases()["binomial_probit_esoph"]
    ref = np.array(case["optimum"]["coef"])
    stopped, default = fit_case(case, control="R"), fit_case(case)
    order = r_order(default, case["optimum"]["names"])
    assert np.max(np.abs(stopped.coef.to_numpy()[order] / ref - 1)) > 1e-10  # R's own gap
    assert_allclose(default.coef.to_numpy()[order], ref, rtol=1e-12)  # working precision
    assert default.iterations > stopped.iterations


@pytest.mark.parametrize("name", [n for n in NAMES if cases()[n]["halving"]])
def test_halved_steps_warn_and_the_default_is_no_worse(name: str) -> None:
    from attnreg.exceptions import ConvergenceWarning

    case = cases()[name]
    with pytest.warns(ConvergenceWarning, match=r"step size truncated in \d+ IRLS step"):
        fit = fit_case(case)
    assert fit.deviance <= case["r"]["deviance"] * (1 + 1e-12)  # rounding of equal optima


@pytest.mark.parametrize("name", AT_OPTIMUM)
def test_epsilon_and_maxit_are_r_glm_control(name: str) -> None:
    """control="R", epsilon=1e-14, maxit=100 is R's glm.control(1e-14, 100), step for step."""
    case = cases()[name]
    fit = fit_case(case, control="R", epsilon=1e-14, maxit=100)
    assert fit.iterations == case["tight"]["iter"]
    assert_allclose(fit.coef.to_numpy()[r_order(fit, case["optimum"]["names"])],
                    case["tight"]["coef"], rtol=RTOL_R)
