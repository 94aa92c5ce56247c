"""Continuously updated GMM against linearmodels' IVGMMCUE."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from attnreg.iv import iv_vcov
from attnreg.iv.cue import cue
from tests.conftest import RTOL_OPTIM
from tests.iv.conftest import make_iv_data

lm_iv = pytest.importorskip("linearmodels.iv")
OPT = {"method": "BFGS", "options": {"gtol": 1e-12}}


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("clustered", [False, True])
def test_cue_matches_linearmodels(weighted, clustered):
    d = make_iv_data()
    w = d.w if weighted else None
    g = d.g if clustered else None
    fit = cue(d.y, d.X, d.D, d.Z, w, clusters=g)
    kw = {"weight_type": "clustered", "clusters": d.g} if clustered else {}
    cov = {"cov_type": "clustered", "clusters": d.g} if clustered else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # linearmodels' optimiser chatter
        ref = lm_iv.IVGMMCUE(d.y, d.X, d.D, d.Z, weights=w, **kw).fit(opt_options=OPT, **cov)
    np.testing.assert_allclose(fit.coef, ref.params.to_numpy(), rtol=RTOL_OPTIM)
    np.testing.assert_allclose(fit.j_stat, ref.j_stat.stat, rtol=RTOL_OPTIM)
    V = iv_vcov(fit, "cluster", clusters=d.g) if clustered else iv_vcov(fit, "HC0")
    np.testing.assert_allclose(V, ref.cov.to_numpy(), rtol=10 * RTOL_OPTIM)  # the vcov amplifies the coef gap
    assert fit.j_stat <= ref.j_stat.stat * (1 + 1e-12)  # ours is at least as low a minimum
