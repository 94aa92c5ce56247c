"""IV estimators and covariances against linearmodels (IV2SLS, IVLIML, IVGMM)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from attnreg.exceptions import DataError, OptionError
from attnreg.iv import fuller, gmm, iv_vcov, kclass, liml, tsls
from tests.conftest import RTOL_SM

lm_iv = pytest.importorskip("linearmodels.iv")

COV = [("classical", False, "unadjusted", False), ("classical", True, "unadjusted", True),
       ("HC0", False, "robust", False), ("HC1", False, "robust", True),
       ("cluster", False, "clustered", False), ("cluster", True, "clustered", True)]


def _lm_fit(model, data, kind_lm: str, debiased: bool):
    kw = {"clusters": data.g} if kind_lm == "clustered" else {}
    return model.fit(cov_type=kind_lm, debiased=debiased, **kw)


def _ours_and_lm(name: str, data, w):
    args = (data.y, data.X, data.D, data.Z)
    if name == "2SLS":
        return tsls(*args, weights=w), lm_iv.IV2SLS(*args, weights=w)
    if name == "LIML":
        return liml(*args, weights=w), lm_iv.IVLIML(*args, weights=w)
    return fuller(*args, alpha=4.0, weights=w), lm_iv.IVLIML(*args, weights=w, fuller=4.0)


@pytest.mark.parametrize("name", ["2SLS", "LIML", "Fuller"])
@pytest.mark.parametrize(("kind", "debiased", "kind_lm", "deb_lm"), COV)
def test_ls_family_matches_linearmodels(ivdata, name, kind, debiased, kind_lm, deb_lm):
    data, w = ivdata
    fit, model = _ours_and_lm(name, data, w)
    ref = _lm_fit(model, data, kind_lm, deb_lm)
    np.testing.assert_allclose(fit.coef, ref.params.to_numpy(), rtol=RTOL_SM)
    V = iv_vcov(fit, kind, debiased=debiased, clusters=data.g)
    np.testing.assert_allclose(V, ref.cov.to_numpy(), rtol=RTOL_SM)
    np.testing.assert_allclose(fit.resid, ref.resids.to_numpy(), rtol=RTOL_SM, atol=RTOL_SM)
    if name != "2SLS":
        np.testing.assert_allclose(fit.kappa, ref.kappa, rtol=RTOL_SM)


@pytest.mark.parametrize(("weight", "cov_lm"), [("robust", "robust"), ("cluster", "clustered"),
                                                ("unadjusted", "unadjusted")])
@pytest.mark.parametrize("debiased", [False, True])
def test_gmm_matches_linearmodels(ivdata, weight, cov_lm, debiased):
    data, w = ivdata
    args = (data.y, data.X, data.D, data.Z)
    kw = {"clusters": data.g} if weight == "cluster" else {}
    fit = gmm(*args, weights=w, weight=weight, **kw)
    lm_weight = {"cluster": "clustered"}.get(weight, weight)
    model = lm_iv.IVGMM(*args, weights=w, weight_type=lm_weight, **kw)
    ref = model.fit(cov_type=cov_lm, debiased=debiased, **kw)
    np.testing.assert_allclose(fit.coef, ref.params.to_numpy(), rtol=RTOL_SM)
    np.testing.assert_allclose(fit.j_stat, ref.j_stat.stat, rtol=RTOL_SM)
    kind = {"robust": "HC0", "cluster": "cluster", "unadjusted": "classical"}[weight]
    V = iv_vcov(fit, kind, debiased=debiased, clusters=data.g)
    np.testing.assert_allclose(V, ref.cov.to_numpy(), rtol=RTOL_SM)


def test_iterated_gmm_matches_linearmodels(ivdata):
    data, w = ivdata
    args = (data.y, data.X, data.D, data.Z)
    fit = gmm(*args, weights=w, iter_limit=500, tol=1e-13)
    ref = lm_iv.IVGMM(*args, weights=w).fit(iter_limit=500, tol=1e-20)
    np.testing.assert_allclose(fit.coef, ref.params.to_numpy(), rtol=RTOL_SM)
    np.testing.assert_allclose(fit.j_stat, ref.j_stat.stat, rtol=RTOL_SM)


def test_kclass_identities():
    from tests.iv.conftest import make_iv_data

    d = make_iv_data()
    args = (d.y, d.X, d.D, d.Z)
    np.testing.assert_allclose(kclass(*args, kappa=1.0).coef, tsls(*args).coef, rtol=1e-10)  # κ=1 is 2SLS
    ols = np.linalg.lstsq(np.hstack([d.X, d.D]), d.y, rcond=None)[0]
    np.testing.assert_allclose(kclass(*args, kappa=0.0).coef, ols, rtol=1e-10)  # κ=0 is OLS
    # exactly identified: LIML = 2SLS (κ = 1)
    ex = liml(d.y, d.X, d.D, d.Z[:, :2])
    np.testing.assert_allclose(ex.kappa, 1.0, rtol=1e-12)
    np.testing.assert_allclose(ex.coef, tsls(d.y, d.X, d.D, d.Z[:, :2]).coef, rtol=1e-10)
    assert pickle.loads(pickle.dumps(ex)).coef.tolist() == ex.coef.tolist()


def test_scores_sum_to_zero_and_input_not_mutated():
    from tests.iv.conftest import make_iv_data

    d = make_iv_data()
    y0 = d.y.copy()
    for fit in (tsls(d.y, d.X, d.D, d.Z, weights=d.w), gmm(d.y, d.X, d.D, d.Z, weights=d.w)):
        # moment conditions hold at the estimate, to rounding
        assert np.abs(fit.scores.sum(axis=0)).max() < 1e-9 * np.abs(fit.scores).sum()
    assert np.array_equal(d.y, y0)


def test_errors():
    from tests.iv.conftest import make_iv_data

    d = make_iv_data()
    with pytest.raises(DataError, match="under-identified: Z has 1 excluded instruments for 2"):
        tsls(d.y, d.X, d.D, d.Z[:, :1])
    with pytest.raises(DataError, match="D has a missing or infinite value in row 3"):
        D = d.D.copy()
        D[3, 1] = np.nan
        tsls(d.y, d.X, D, d.Z)
    with pytest.raises(DataError, match=r"Z \(after partialling out X\) is rank deficient"):
        tsls(d.y, d.X, d.D, np.column_stack([d.Z, d.Z[:, 0] + d.X[:, 1]]))
    with pytest.raises(OptionError, match="weight must be 'robust', 'cluster', 'kernel' or 'unadjusted'"):
        gmm(d.y, d.X, d.D, d.Z, weight="hac")
    with pytest.raises(OptionError, match=r"kind must be one of classical, HC0, HC1, HC2, HC3, "
                                          r"cluster, HAC \(or another registered covariance\); "
                                          r"got 'HC9'"):
        iv_vcov(tsls(d.y, d.X, d.D, d.Z), "HC9")
    with pytest.raises(OptionError, match=r"kind='HC3' needs the hat values: pass regressors="):
        iv_vcov(tsls(d.y, d.X, d.D, d.Z), "HC3")
    with pytest.raises(OptionError, match="alpha must be a non-negative number"):
        fuller(d.y, d.X, d.D, d.Z, alpha=-1.0)


def test_liml_kappa_public_and_results_pickle():
    from attnreg.iv import (anderson_rubin_set, endogeneity, liml_kappa, overidentification,
                            tsls_attention, weak_instruments)
    from tests.iv.conftest import make_iv_data

    d = make_iv_data()
    args = (d.y, d.X, d.D, d.Z)
    assert liml_kappa(*args, weights=d.w) == liml(*args, weights=d.w).kappa
    d1 = make_iv_data(k2=1)
    objs = [weak_instruments(d.X, d.D, d.Z), endogeneity(*args)["durbin"],
            overidentification(*args)["sargan"],
            anderson_rubin_set(d1.y, d1.X, d1.D, d1.Z), tsls_attention(np.hstack([d.X, d.D])[:2], *args),
            gmm(*args)]
    for o in objs:
        assert repr(pickle.loads(pickle.dumps(o))) == repr(o)


def test_liml_kappa_is_invariant_to_column_scales():
    # κ solves |W'M_X W - κ W'M_Q W| = 0, invariant to rescaling y, D and Z; computed from QR
    # factors it stays so across 10 orders of magnitude (the products W'MW would not)
    from tests.conftest import RTOL_EXACT
    from tests.iv.conftest import make_iv_data

    d = make_iv_data()
    sd, sz, sy = np.array([1e-3, 1e5]), np.array([1e6, 1e-4, 1.0, 1e3]), 1e4
    f0 = liml(d.y, d.X, d.D, d.Z)
    f1 = liml(d.y * sy, d.X, d.D * sd, d.Z * sz)
    np.testing.assert_allclose(f1.kappa, f0.kappa, rtol=RTOL_EXACT)
    np.testing.assert_allclose(f1.coef[4:] * sd / sy, f0.coef[4:], rtol=RTOL_EXACT)
    np.testing.assert_allclose(f1.coef[:4] / sy, f0.coef[:4], rtol=RTOL_EXACT)


def test_influence_rows_give_hc0():
    from attnreg.iv import influence
    from tests.conftest import RTOL_EXACT
    from tests.iv.conftest import make_iv_data

    d = make_iv_data()
    for fit in (tsls(d.y, d.X, d.D, d.Z, weights=d.w), liml(d.y, d.X, d.D, d.Z), gmm(d.y, d.X, d.D, d.Z)):
        phi = influence(fit)
        assert phi.shape == (d.y.shape[0], 6)
        np.testing.assert_allclose(phi.T @ phi, iv_vcov(fit, "HC0"), rtol=RTOL_EXACT)
