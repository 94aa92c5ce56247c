"""The weak-instrument block and AER's diagnostics under every registered covariance: against
car::linearHypothesis on the first-stage and control-function lm with sandwich's
covariances (tests/reference/make_iv_weak_vcov.R), linearmodels' IV2SLS, the
Montiel Olea–Pflueger formula with R's first-stage covariance, and the fit's own first-stage
OLS results (Driscoll–Kraay, CR2); Hansen J under a registered covariance against IVGMM."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats

import attnreg as ar
from attnreg.iv import endogeneity, overidentification
from attnreg.linear.score_vcov import bind_vcov
from tests.conftest import REPO, RTOL_EXACT, RTOL_R, RTOL_SM

REF = json.loads((REPO / "tests" / "reference" / "iv_weak_vcov_r.json").read_text())
DATA = json.loads((REPO / "tests" / "reference" / "score_vcov_r.json").read_text())["data"]
FORMULAS = {"one": "y ~ x1 + x2 | d1 ~ z1 + z2 + z3",
            "two": "y ~ x1 + x2 | d1 + d2 ~ z1 + z2 + z3"}
#: reference key -> with_vcov arguments (vcovCL's fix = FALSE is R's default, ours is True)
VCOV: dict[str, tuple[str, dict[str, Any]]] = {
    "HC2": ("HC2", {}), "HC3": ("HC3", {}), "HC4": ("HC4", {}), "HC5": ("HC5", {}),
    "CL_a_HC0": ("cluster", {"cluster": "a", "type": "HC0"}),
    "CL_ab": ("cluster", {"cluster": "a + b", "fix": False}),
    "CL_ab_HC0": ("cluster", {"cluster": "a + b", "type": "HC0", "fix": False}),
    "NW3": ("HAC", {"maxlags": 3}),
    "HAC_qs": ("HAC", {"kernel": "qs", "adjust": True}),
}
CASES = [(m, w, key) for m in FORMULAS for w in (False, True) for key in VCOV]


def data() -> pd.DataFrame:
    return pd.DataFrame(DATA)


def fitted(model: str, weighted: bool = False, **vcov: Any) -> Any:
    return ar.attnreg(FORMULAS[model], data(), weights="w" if weighted else None, **vcov)


@pytest.mark.parametrize(("model", "weighted", "key"), CASES,
                         ids=[f"{m}-{'w' if w else 'u'}-{k}" for m, w, k in CASES])
def test_robust_first_stage_f_and_wu_hausman_equal_car(model: str, weighted: bool,
                                                       key: str) -> None:
    ref = REF[model + ("_weighted" if weighted else "")][key]
    kind, options = VCOV[key]
    fit = fitted(model, weighted).with_vcov(kind, **options)
    weak = np.atleast_1d(np.asarray(ref["weak"], dtype=float))
    k2 = weak.shape[0]
    diag = fit.diagnostics()["statistic"].to_numpy()
    assert_allclose(diag[:k2], weak, rtol=RTOL_R)  # AER's "Weak instruments" rows
    assert_allclose(diag[k2], ref["wu_hausman"], rtol=RTOL_R)  # AER's robust Wu-Hausman
    assert_allclose(fit.weak_instruments().f_robust, weak, rtol=RTOL_R)
    assert_allclose(fit.first_stage_f()["ivwald"].to_numpy(), weak, rtol=RTOL_R)


def _mop(pi: np.ndarray, V: np.ndarray, tau: float = 0.10) -> tuple[float, float, float]:
    """Montiel Olea–Pflueger (2013): F_eff = π'Z̃'Z̃π / tr(V Z̃'Z̃) and the simplified
    critical value, from the first stage's coefficients π of Z and their covariance V,
    written out (Z̃ = M_X Z = Q R, W₂ = R V R' the covariance of R π)."""
    df = data()
    X = np.column_stack([np.ones(len(df)), df[["x1", "x2"]].to_numpy()])
    Z = df[["z1", "z2", "z3"]].to_numpy()
    Zt = Z - X @ np.linalg.lstsq(X, Z, rcond=None)[0]
    R = np.linalg.qr(Zt, mode="r")
    W2 = R @ V @ R.T
    tr, x = np.trace(W2), 1 / tau
    f_eff = float(pi @ Zt.T @ Zt @ pi / tr)
    k_eff = tr**2 * (1 + 2 * x) / (np.trace(W2 @ W2) + 2 * x * tr * np.linalg.eigvalsh(W2)[-1])
    return f_eff, float(k_eff), float(stats.ncx2.ppf(0.95, k_eff, x * k_eff) / k_eff)


@pytest.mark.parametrize(("ref_key", "kind", "options"), [
    ("NW3", "HAC", {"maxlags": 3}),
    ("CL_ab_raw", "cluster", {"cluster": "a + b", "fix": False}),
], ids=["newey-west", "two-way"])
def test_effective_f_and_kp_equal_their_formulas_under_r_covariance(
        ref_key: str, kind: str, options: dict[str, Any]) -> None:
    """The effective F and the rk statistics use the covariance in use (two-way: without
    vcovCL's adjustments, as ivreg2 without ``small``)."""
    fs = REF["first_stage_one"]
    V = np.asarray(fs[ref_key])[3:, 3:]  # the covariance of the instruments' coefficients
    pi = np.asarray(fs["coef"])[3:]
    wk = fitted("one", vcov=kind, **options).weak_instruments()
    f_eff, k_eff, cv = _mop(pi, V)
    assert_allclose([wk.effective_f, wk.k_eff, wk.effective_f_cv], [f_eff, k_eff, cv], rtol=RTOL_R)
    wald = float(pi @ np.linalg.solve(V, pi))  # k2 = 1: the rk Wald is the Wald of π = 0
    assert_allclose(wk.kp_rk_wald, wald, rtol=RTOL_R)
    if kind == "cluster":
        assert_allclose(wald, fs["CL_ab_raw_wald"], rtol=RTOL_R)  # car's own Wald
        n, L, G = 240, 6, 8  # G: the fewer clusters of the two dimensions (ivreg2)
        assert_allclose(wk.kp_rk_wald_f, wald / 3 * (n - L) / (n - 1) * (G - 1) / G,
                        rtol=RTOL_EXACT)
    assert wk.kind == kind


lm_iv = pytest.importorskip("linearmodels.iv")

#: linearmodels' fit options -> ours, where the conventions coincide
LINEARMODELS = [
    ({"cov_type": "kernel", "kernel": "bartlett", "bandwidth": 3, "debiased": False},
     ("HAC", {"maxlags": 3})),
    ({"cov_type": "clustered", "clusters": ["a", "b"], "debiased": True},
     ("cluster", {"cluster": "a + b", "fix": False})),
    ({"cov_type": "clustered", "clusters": ["a", "b"], "debiased": False},
     ("cluster", {"cluster": "a + b", "type": "HC0", "cadjust": False, "fix": False})),
]


@pytest.mark.parametrize(("theirs", "ours"), LINEARMODELS,
                         ids=["kernel", "two-way-debiased", "two-way"])
def test_first_stage_and_wooldridge_equal_linearmodels(theirs: dict[str, Any],
                                                       ours: tuple[str, dict[str, Any]]) -> None:
    df, theirs = data(), dict(theirs)
    if "clusters" in theirs:
        theirs["clusters"] = df[theirs["clusters"]]
    exog = df[["x1", "x2"]].assign(const=1.0)[["const", "x1", "x2"]]
    ref = lm_iv.IV2SLS(df.y, exog, df[["d1", "d2"]], df[["z1", "z2", "z3"]]).fit(**theirs)
    kind, options = ours
    fit = fitted("two").with_vcov(kind, **options)
    wk = fit.weak_instruments()
    l = 3  # noqa: E741 — excluded instruments: linearmodels' f.stat is the Wald, not Wald / l
    assert_allclose(wk.f_robust * l, ref.first_stage.diagnostics["f.stat"].astype(float),
                    rtol=RTOL_SM)
    k2 = 2  # the Wu-Hausman row is Wald / k2; linearmodels' Wooldridge test is the Wald
    assert_allclose(fit.diagnostics().loc["Wu-Hausman", "statistic"] * k2,
                    ref.wooldridge_regression.stat, rtol=RTOL_SM)


@pytest.mark.parametrize(("kind", "options"), [
    ("DK", {"time": "a"}), ("cluster", {"cluster": "a", "type": "CR2"}),
], ids=["driscoll-kraay", "cr2"])
def test_first_stage_f_equals_the_first_stage_ols_wald(kind: str, options: dict[str, Any]) -> None:
    """Covariances R has no ``lm`` method for here: the robust first-stage F equals the Wald
    F of the instruments in the fit's own first-stage OLS results under the same covariance
    (the linear fit's spectral path, not the auxiliary score design)."""
    fit = fitted("two", vcov=kind, **options)
    wk = fit.weak_instruments()
    for j, (name, ols) in enumerate(fit.first_stage.items()):
        test = ols.wald_test("z1 = 0, z2 = 0, z3 = 0")
        assert_allclose(wk.f_robust[j], test.statistic, rtol=RTOL_EXACT,
                        err_msg=name)
    assert wk.kind == kind
    assert f"({kind} covariance for the robust statistics)" in str(fit.summary())


#: IVGMM's weight_type and options -> the registry covariance of the moments
GMM_WEIGHTS = [
    ("robust", {}, ("HC0", {})),
    ("kernel", {"kernel": "bartlett", "bandwidth": 3}, ("HAC", {"maxlags": 3})),
    ("clustered", {"clusters": "a"}, ("cluster", {"cluster": "a"})),
]


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize(("weight_type", "theirs", "ours"), GMM_WEIGHTS,
                         ids=[g[0] for g in GMM_WEIGHTS])
def test_hansen_j_under_a_registered_covariance_equals_ivgmm(
        weight_type: str, theirs: dict[str, Any], ours: tuple[str, dict[str, Any]],
        weighted: bool) -> None:
    """``overidentification(vcov=)``: the moments' covariance from the registry (vcovCL's
    adjustments dropped, as IVGMM's unadjusted cluster weight)."""
    df, theirs = data(), dict(theirs)
    if "clusters" in theirs:
        theirs["clusters"] = df[theirs["clusters"]].to_numpy()
    w = df.w.to_numpy() if weighted else None
    exog = df[["x1", "x2"]].assign(const=1.0)[["const", "x1", "x2"]]
    ref = lm_iv.IVGMM(df.y, exog, df[["d1"]], df[["z1", "z2", "z3"]], weights=w,
                      weight_type=weight_type, **theirs).fit()
    kind, options = ours
    if "cluster" in options:
        options = {"cluster": pd.Series(df[options["cluster"]].to_numpy(), name="a")}
    spec = bind_vcov(kind, n_obs=len(df), **options)
    J = overidentification(df.y.to_numpy(), exog.to_numpy(), df[["d1"]].to_numpy(),
                           df[["z1", "z2", "z3"]].to_numpy(), w, vcov=spec, intercept=0)
    assert_allclose(J["hansen_j"].stat, ref.j_stat.stat, rtol=RTOL_SM)
    assert J["hansen_j"].name == f"Hansen J ({kind})"


def test_wooldridge_under_a_registered_covariance_equals_linearmodels() -> None:
    """``endogeneity(vcov=)``: the control-function Wald under a Bartlett HAC."""
    df = data()
    exog = df[["x1", "x2"]].assign(const=1.0)[["const", "x1", "x2"]]
    D, Z = df[["d1", "d2"]], df[["z1", "z2", "z3"]]
    ref = lm_iv.IV2SLS(df.y, exog, D, Z).fit(cov_type="kernel", kernel="bartlett", bandwidth=3,
                                            debiased=False)
    spec = bind_vcov("HAC", n_obs=len(df), maxlags=3)
    ours = endogeneity(df.y.to_numpy(), exog.to_numpy(), D.to_numpy(), Z.to_numpy(), vcov=spec,
                       intercept=0)["wooldridge"]
    assert_allclose(ours.stat, ref.wooldridge_regression.stat, rtol=RTOL_SM)
    assert (ours.name, ours.df) == ("Wooldridge regression (HAC)", 2)


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("kind", ["HC2", "HC3", "HC4", "HC5"])
def test_absorbed_fixed_effects_equal_the_dummy_variable_fit_under_hc2_to_hc5(
        kind: str, weighted: bool) -> None:
    """The hat values of HC2–HC5 count the absorbed dummies' own leverage: the coefficients'
    covariance, the weak-instrument block and the diagnostics equal the dummy-variable fit's."""
    from tests.iv.test_iv_fe import DV, FE, panel

    df, w = panel(), ("w" if weighted else None)
    fe = ar.attnreg(FE, df, vcov=kind, weights=w)
    dv = ar.attnreg(DV, df, vcov=kind, weights=w)
    names = list(fe.coef.index)
    assert_allclose(fe.vcov.to_numpy(), dv.vcov.loc[names, names].to_numpy(), rtol=RTOL_SM)
    a, b = fe.weak_instruments(), dv.weak_instruments()
    for field in ("f_robust", "kp_rk_wald", "kp_rk_lm", "effective_f", "effective_f_cv"):
        assert_allclose(getattr(a, field), getattr(b, field), rtol=RTOL_SM, err_msg=field)
    assert_allclose(fe.diagnostics().to_numpy(), dv.diagnostics().to_numpy(), rtol=RTOL_SM,
                    equal_nan=True)
