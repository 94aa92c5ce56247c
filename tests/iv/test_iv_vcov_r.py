"""Every registered covariance of an IV fit against sandwich (and clubSandwich's CR2) on
``AER::ivreg`` and linearmodels' IV2SLS (golden values from tests/reference/make_score_vcov.R)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError
from tests.conftest import REPO, RTOL_R, RTOL_SM

REF = json.loads((REPO / "tests" / "reference" / "score_vcov_r.json").read_text())
FORMULA = "y ~ x1 + x2 | d1 + d2 ~ z1 + z2 + z3"

#: reference key -> with_vcov arguments (vcovCL's fix = FALSE is R's default, ours is True)
VCOV: dict[str, tuple[str, dict[str, Any]]] = {
    "HC0": ("HC0", {}), "HC1": ("HC1", {}), "HC2": ("HC2", {}), "HC3": ("HC3", {}),
    "HC4": ("HC4", {}), "HC4m": ("HC4m", {}), "HC5": ("HC5", {}),
    "CL_a": ("cluster", {"cluster": "a"}),
    "CL_a_HC0": ("cluster", {"cluster": "a", "type": "HC0"}),
    "CL_ab": ("cluster", {"cluster": "a + b", "fix": False}),
    "CL_ab_HC0": ("cluster", {"cluster": "a + b", "type": "HC0", "fix": False}),
    "NW3": ("HAC", {"maxlags": 3}),
    "HAC_qs": ("HAC", {"kernel": "qs", "adjust": True}),
    "CR2_a": ("cluster", {"cluster": "a", "type": "CR2"}),  # clubSandwich::vcovCR
}


def data() -> pd.DataFrame:
    return pd.DataFrame(REF["data"])


#: (key, weighted): AER's hat values of a weighted ivreg are those of the unweighted design,
#: so HC2 and HC3 are checked unweighted only
CASES = [(key, w) for w in (False, True) for key in VCOV if key in REF["iv_weighted" if w else "iv"]]


@pytest.mark.parametrize(("key", "weighted"), CASES,
                         ids=[f"{k}-{'weighted' if w else 'unweighted'}" for k, w in CASES])
def test_every_covariance_equals_sandwich_on_ivreg(key: str, weighted: bool) -> None:
    ref = REF["iv_weighted" if weighted else "iv"]
    fit = ar.attnreg(FORMULA, data(), weights="w" if weighted else None)
    assert_allclose(fit.coef.to_numpy(), ref["coef"], rtol=RTOL_R)
    kind, options = VCOV[key]
    assert_allclose(fit.with_vcov(kind, **options).vcov.to_numpy(), ref[key], rtol=RTOL_R)


def test_a_covariance_chosen_at_fit_time_is_the_same() -> None:
    fit = ar.attnreg(FORMULA, data(), vcov="cluster", cluster="a + b", fix=False)
    assert_allclose(fit.vcov.to_numpy(), REF["iv"]["CL_ab"], rtol=RTOL_R)
    hac = ar.attnreg(FORMULA, data(), vcov="HAC", maxlags=3)
    assert_allclose(hac.std_err.to_numpy(), np.sqrt(np.diag(REF["iv"]["NW3"])), rtol=RTOL_R)
    assert "Newey-West" in hac.vcov_spec.label()


lm_iv = pytest.importorskip("linearmodels.iv")


def _linearmodels(**fit_options: Any) -> Any:
    df = data()
    exog = df[["x1", "x2"]].assign(const=1.0)[["const", "x1", "x2"]]
    model = lm_iv.IV2SLS(df.y, exog, df[["d1", "d2"]], df[["z1", "z2", "z3"]])
    return model.fit(**fit_options)


#: linearmodels' fit options -> ours, where the conventions coincide
LINEARMODELS = [
    ({"cov_type": "robust", "debiased": False}, ("HC0", {})),
    ({"cov_type": "robust", "debiased": True}, ("HC1", {})),
    ({"cov_type": "kernel", "kernel": "bartlett", "bandwidth": 3, "debiased": False},
     ("HAC", {"maxlags": 3})),
    ({"cov_type": "kernel", "kernel": "bartlett", "bandwidth": 3, "debiased": True},
     ("HAC", {"maxlags": 3, "adjust": True})),
    ({"cov_type": "clustered", "clusters": "a", "debiased": True}, ("cluster", {"cluster": "a"})),
    ({"cov_type": "clustered", "clusters": ["a", "b"], "debiased": True},
     ("cluster", {"cluster": "a + b", "fix": False})),
    ({"cov_type": "clustered", "clusters": ["a", "b"], "debiased": False},
     ("cluster", {"cluster": "a + b", "type": "HC0", "cadjust": False, "fix": False})),
]


@pytest.mark.parametrize(("theirs", "ours"), LINEARMODELS,
                         ids=[f"{t['cov_type']}-{t['debiased']}-{i}"
                              for i, (t, _) in enumerate(LINEARMODELS)])
def test_equals_linearmodels_iv2sls(theirs: dict[str, Any], ours: tuple[str, dict]) -> None:
    theirs = dict(theirs)
    if "clusters" in theirs:
        theirs["clusters"] = data()[theirs["clusters"]]
    ref = _linearmodels(**theirs)
    kind, options = ours
    fit = ar.attnreg(FORMULA, data()).with_vcov(kind, **options)
    assert_allclose(fit.vcov.to_numpy(), ref.cov.to_numpy(), rtol=RTOL_SM)


@pytest.mark.parametrize(("theirs", "ours"), LINEARMODELS,
                         ids=[f"{t['cov_type']}-{t['debiased']}-{i}"
                              for i, (t, _) in enumerate(LINEARMODELS)])
def test_liml_equals_linearmodels_ivliml(theirs: dict[str, Any], ours: tuple[str, dict]) -> None:
    """The k-class bread (not X̂'X̂) around the same scores: linearmodels' IVLIML."""
    df, theirs = data(), dict(theirs)
    if "clusters" in theirs:
        theirs["clusters"] = df[theirs["clusters"]]
    exog = df[["x1", "x2"]].assign(const=1.0)[["const", "x1", "x2"]]
    ref = lm_iv.IVLIML(df.y, exog, df[["d1", "d2"]], df[["z1", "z2", "z3"]]).fit(**theirs)
    kind, options = ours
    fit = ar.attnreg(FORMULA, df, method="liml").with_vcov(kind, **options)
    assert_allclose(fit.vcov.to_numpy(), ref.cov.to_numpy(), rtol=RTOL_SM)


@pytest.mark.parametrize("method", ["fuller", "gmm", "cue"])
def test_other_estimators_take_every_covariance(method: str) -> None:
    fit = ar.attnreg(FORMULA, data(), method=method, vcov="HC0")
    for kind, options in VCOV.values():
        V = fit.with_vcov(kind, **options).vcov.to_numpy()
        assert np.isfinite(V).all() and np.all(np.diag(V) > 0)


def test_the_label_and_the_df_of_a_registry_covariance() -> None:
    fit = ar.attnreg(FORMULA, data()).with_vcov("cluster", cluster="a + b", fix=False)
    assert fit.vcov_spec.label() == ("cluster-robust (HC1, two-way) by a and b, 12 and 8 "
                                     "clusters; t and F on n - k df")
    # the weak-instrument block is computed under the two-way covariance itself (no HC1)
    assert "(cluster covariance for the robust statistics)" in str(fit.summary())
    with pytest.raises(OptionError, match=r"df does not apply to an IV fit's covariance: its t "
                                          r"and F tests are on the residual df n - k"):
        ar.attnreg(FORMULA, data(), vcov="HC3", df=np.inf)


@pytest.mark.parametrize(("kind", "options"), [
    ("cluster", {"cluster": "firm + year", "fix": False}), ("HAC", {"maxlags": 2}),
    ("DK", {"time": "year"}),
], ids=["two-way", "newey-west", "driscoll-kraay"])
def test_fixed_effects_equal_the_dummy_variable_fit(kind: str, options: dict[str, Any]) -> None:
    from tests.iv.test_iv_fe import DV, FE, panel

    df = panel()
    fe = ar.attnreg(FE, df, vcov=kind, **options)
    dv = ar.attnreg(DV, df, vcov=kind, **options)
    names = list(fe.coef.index)
    assert_allclose(fe.vcov.to_numpy(), dv.vcov.loc[names, names].to_numpy(), rtol=RTOL_SM)
