"""Endogeneity and over-identification tests against linearmodels."""

from __future__ import annotations

import numpy as np
import pytest

from attnreg.exceptions import DataError
from attnreg.iv.spec import endogeneity, overidentification
from tests.conftest import RTOL_SM
from tests.iv.conftest import make_iv_data

lm_iv = pytest.importorskip("linearmodels.iv")


def _lm(data, w, cls=None, **fit):
    cls = cls or lm_iv.IV2SLS
    return cls(data.y, data.X, data.D, data.Z, weights=w).fit(**fit)


def test_endogeneity_matches_linearmodels(ivdata):
    data, w = ivdata
    res = _lm(data, w, cov_type="robust")
    out = endogeneity(data.y, data.X, data.D, data.Z, w)
    for ours, ref in ((out["durbin"], res.durbin()), (out["wu_hausman"], res.wu_hausman()),
                      (out["wooldridge"], res.wooldridge_regression)):
        np.testing.assert_allclose(ours.stat, ref.stat, rtol=RTOL_SM)
        np.testing.assert_allclose(ours.pvalue, ref.pval, rtol=RTOL_SM)
        assert ours.df == ref.df


@pytest.mark.parametrize(("kind", "debiased", "cov", "kw"), [
    ("classical", False, "unadjusted", {}), ("HC1", False, "robust", {"debiased": True}),
    ("cluster", True, "clustered", {"debiased": True})])
def test_wooldridge_covariances(ivdata, kind, debiased, cov, kw):
    data, w = ivdata
    extra = {"clusters": data.g} if cov == "clustered" else {}
    res = _lm(data, w, cov_type=cov, **kw, **extra)
    out = endogeneity(data.y, data.X, data.D, data.Z, w, kind=kind, clusters=data.g, debiased=debiased)
    np.testing.assert_allclose(out["wooldridge"].stat, res.wooldridge_regression.stat, rtol=RTOL_SM)


def test_overidentification_matches_linearmodels(ivdata):
    data, w = ivdata
    res = _lm(data, w, cls=lm_iv.IVLIML)
    out = overidentification(data.y, data.X, data.D, data.Z, w)
    ref2 = _lm(data, w)
    pairs = [("sargan", ref2.sargan), ("basmann", ref2.basmann), ("anderson_rubin", res.anderson_rubin),
             ("basmann_f", res.basmann_f), ("hansen_j", _lm(data, w, cls=lm_iv.IVGMM).j_stat)]
    for key, ref in pairs:
        np.testing.assert_allclose(out[key].stat, ref.stat, rtol=RTOL_SM, err_msg=key)
        np.testing.assert_allclose(out[key].pvalue, ref.pval, rtol=RTOL_SM, err_msg=key)
    outc = overidentification(data.y, data.X, data.D, data.Z, w, kind="cluster", clusters=data.g)
    refc = lm_iv.IVGMM(data.y, data.X, data.D, data.Z, weights=w, weight_type="clustered",
                       clusters=data.g).fit(cov_type="clustered", clusters=data.g)
    np.testing.assert_allclose(outc["hansen_j"].stat, refc.j_stat.stat, rtol=RTOL_SM)


def test_overidentification_exactly_identified_error():
    d = make_iv_data()
    with pytest.raises(DataError, match="over-identification tests need more excluded instruments"):
        overidentification(d.y, d.X, d.D, d.Z[:, :2])
