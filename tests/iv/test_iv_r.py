"""attnreg.iv against R AER::ivreg and sandwich (golden values from tests/reference/make_iv.R)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnreg.iv import endogeneity, iv_vcov, overidentification, tsls, weak_instruments
from tests.conftest import REPO, RTOL_R, RTOL_R_VCOV

REF = json.loads((REPO / "tests" / "reference" / "iv_r.json").read_text())


def _arrays():
    d = {k: np.asarray(v, dtype=float) for k, v in REF["data"].items()}
    X = np.column_stack([np.ones(len(d["y"])), d["x1"], d["x2"], d["x3"]])
    D = np.column_stack([d["d1"], d["d2"]])
    Z = np.column_stack([d["z1"], d["z2"], d["z3"], d["z4"]])
    return d["y"], X, D, Z, d["w"], d["g"]


@pytest.mark.parametrize("case", ["unweighted", "weighted"])
def test_ivreg_coef_and_vcov(case):
    y, X, D, Z, w, g = _arrays()
    ref = REF[case]
    fit = tsls(y, X, D, Z, w if case == "weighted" else None)
    np.testing.assert_allclose(fit.coef, ref["coef"], rtol=RTOL_R)
    # AER's classical vcov divides RSS by n - k: debiased=True
    np.testing.assert_allclose(iv_vcov(fit, "classical", debiased=True), ref["vcov"], rtol=RTOL_R)
    np.testing.assert_allclose(iv_vcov(fit, "HC0"), ref["HC0"], rtol=RTOL_R_VCOV)
    np.testing.assert_allclose(iv_vcov(fit, "HC1"), ref["HC1"], rtol=RTOL_R_VCOV)
    np.testing.assert_allclose(iv_vcov(fit, "cluster", clusters=g, debiased=True), ref["CL_HC1"],
                               rtol=RTOL_R_VCOV)


@pytest.mark.parametrize("case", ["unweighted", "weighted"])
def test_ivreg_diagnostics(case):
    y, X, D, Z, w, _ = _arrays()
    ref = REF[case]
    wt = w if case == "weighted" else None
    wk = weak_instruments(X, D, Z, wt)
    np.testing.assert_allclose(wk.f_classical, ref["weak_f"], rtol=RTOL_R)
    assert [wk.df[1]] * 2 == ref["weak_df2"]
    wu = endogeneity(y, X, D, Z, wt)["wu_hausman"]
    np.testing.assert_allclose(wu.stat, ref["wu_hausman"], rtol=RTOL_R)
    assert wu.df_denom == ref["wu_hausman_df2"]
    np.testing.assert_allclose(overidentification(y, X, D, Z, wt)["sargan"].stat, ref["sargan"], rtol=RTOL_R)
