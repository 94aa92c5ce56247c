"""Anderson–Rubin test (against statsmodels) and its confidence set (exact inversion)."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from attnreg.exceptions import DataError
from attnreg.iv import tsls
from attnreg.iv.arset import anderson_rubin_set, anderson_rubin_test
from tests.conftest import RTOL_EXACT, RTOL_SM
from tests.iv.conftest import make_iv_data


def _one_endog(seed: int, strength: float, direct: float = 0.0):
    rng = np.random.default_rng(seed)
    n = 100
    X = np.column_stack([np.ones(n), rng.normal(size=n)])
    Z = rng.normal(size=(n, 3))
    u = rng.normal(size=n)
    d = Z @ np.full(3, strength) + 0.8 * u + rng.normal(size=n)
    y = X @ [1.0, 1.0] + 0.5 * d + u + direct * Z[:, 0]
    return y, X, d, Z


@pytest.mark.parametrize("weighted", [False, True])
def test_ar_test_matches_statsmodels(weighted):
    data = make_iv_data()
    w = data.w if weighted else None
    b0 = np.array([0.8, -0.7])
    yt = data.y - data.D @ b0
    Q = np.hstack([data.X, data.Z])
    R = np.hstack([np.zeros((4, 4)), np.eye(4)])  # the excluded instruments' coefficients
    mod = sm.WLS(yt, Q, weights=w if weighted else 1.0)
    ar = anderson_rubin_test(data.y, data.X, data.D, data.Z, b0, w)
    ref = mod.fit().f_test(R)
    np.testing.assert_allclose(ar.f, float(np.squeeze(ref.fvalue)), rtol=RTOL_SM)
    np.testing.assert_allclose(ar.f_pvalue, float(ref.pvalue), rtol=RTOL_SM)
    arr = anderson_rubin_test(data.y, data.X, data.D, data.Z, b0, w, kind="HC0")
    refr = mod.fit(cov_type="HC0").wald_test(R, scalar=True)
    np.testing.assert_allclose(arr.chi2, float(refr.statistic), rtol=RTOL_SM)
    arc = anderson_rubin_test(data.y, data.X, data.D, data.Z, b0, w, kind="cluster", clusters=data.g)
    refc = mod.fit(cov_type="cluster", cov_kwds={"groups": data.g, "use_correction": False}).wald_test(
        R, scalar=True)
    np.testing.assert_allclose(arc.chi2, float(refc.statistic), rtol=RTOL_SM)


def test_ar_is_zero_at_just_identified_2sls():
    data = make_iv_data()
    b = tsls(data.y, data.X, data.D, data.Z[:, :2]).coef[-2:]
    ar = anderson_rubin_test(data.y, data.X, data.D, data.Z[:, :2], b)
    assert ar.chi2 < 1e-18 * np.sum(data.y**2)  # rounding only: the moments hold exactly


def _ar_f(y, X, d, Z, b):
    return anderson_rubin_test(y, X, d, Z, [b]).f


@pytest.mark.parametrize(("seed", "strength", "direct", "shape"), [
    (0, 0.5, 0.0, "interval"), (0, 0.15, 0.0, "rays"), (0, 0.0, 0.0, "real line"), (0, 1.0, 3.0, "empty")])
def test_ar_set_shapes_and_endpoints(seed, strength, direct, shape):
    y, X, d, Z = _one_endog(seed, strength, direct)
    s = anderson_rubin_set(y, X, d, Z)
    assert s.shape == shape
    if shape in ("interval", "rays"):
        # endpoints solve AR_F(β) = c exactly
        for b in (s.lower, s.upper):
            np.testing.assert_allclose(_ar_f(y, X, d, Z, b), s.critical_value, rtol=1e-8)
        mid = 0.5 * (s.lower + s.upper)
        outside = [s.lower - 1.0, s.upper + 1.0]
        inside_mid = shape == "interval"
        assert (_ar_f(y, X, d, Z, mid) <= s.critical_value) == inside_mid
        assert all((_ar_f(y, X, d, Z, b) <= s.critical_value) != inside_mid for b in outside)
        assert s.contains(mid) == inside_mid
    grid = np.linspace(-20, 20, 41)
    accepted = [_ar_f(y, X, d, Z, b) <= s.critical_value for b in grid]
    assert accepted == [s.contains(b) for b in grid]
    if shape == "real line":
        assert all(accepted) and s.lower == -np.inf
    if shape == "empty":
        assert not any(accepted)


def test_ar_set_contains_tsls_when_strong_and_errors():
    y, X, d, Z = _one_endog(0, 0.5)
    s = anderson_rubin_set(y, X, d, Z)
    b = tsls(y, X, d, Z).coef[-1]
    assert s.lower < b < s.upper
    np.testing.assert_allclose(s.level, 0.95, rtol=RTOL_EXACT)
    data = make_iv_data()
    with pytest.raises(DataError, match="needs exactly one endogenous regressor; D has 2"):
        anderson_rubin_set(data.y, data.X, data.D, data.Z)
    with pytest.raises(DataError, match=r"beta0 must have one value per column of D \(2\)"):
        anderson_rubin_test(data.y, data.X, data.D, data.Z, [1.0])
