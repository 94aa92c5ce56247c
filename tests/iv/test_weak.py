"""Weak-instrument statistics against linearmodels' first stage and closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from attnreg.iv.weak import weak_instruments
from tests.conftest import RTOL_EXACT, RTOL_SM
from tests.iv.conftest import make_iv_data

lm_iv = pytest.importorskip("linearmodels.iv")


def _diag(data, w, cov_type, debiased, **kw):
    res = lm_iv.IV2SLS(data.y, data.X, data.D, data.Z, weights=w).fit(
        cov_type=cov_type, debiased=debiased, **kw)
    return res.first_stage.diagnostics


def test_first_stage_matches_linearmodels(ivdata):
    data, w = ivdata
    l = data.Z.shape[1]  # noqa: E741
    wk = weak_instruments(data.X, data.D, data.Z, w)
    ref = _diag(data, w, "unadjusted", True)
    np.testing.assert_allclose(wk.partial_r2, ref["partial.rsquared"].astype(float), rtol=RTOL_SM)
    np.testing.assert_allclose(wk.f_classical, ref["f.stat"].astype(float), rtol=RTOL_SM)
    ref = _diag(data, w, "robust", False)
    np.testing.assert_allclose(wk.f_robust * l, ref["f.stat"].astype(float), rtol=RTOL_SM)
    wk1 = weak_instruments(data.X, data.D, data.Z, w, kind="HC1")
    ref = _diag(data, w, "robust", True)
    np.testing.assert_allclose(wk1.f_robust * l, ref["f.stat"].astype(float), rtol=RTOL_SM)
    wkc = weak_instruments(data.X, data.D, data.Z, w, kind="cluster", clusters=data.g, debiased=True)
    ref = _diag(data, w, "clustered", True, clusters=data.g)
    np.testing.assert_allclose(wkc.f_robust * l, ref["f.stat"].astype(float), rtol=RTOL_SM)


def test_one_endogenous_identities():
    d = make_iv_data(k2=1)
    n, L, l = d.y.shape[0], d.X.shape[1] + d.Z.shape[1], d.Z.shape[1]  # noqa: E741
    wk = weak_instruments(d.X, d.D, d.Z, d.w)
    # homoskedastic: CD F = first-stage F = SW F (k2 = 1)
    np.testing.assert_allclose(wk.cragg_donald_f, wk.f_classical[0], rtol=RTOL_EXACT)
    np.testing.assert_allclose(wk.sw_f[0], wk.f_classical[0], rtol=RTOL_EXACT)
    # KP rk Wald (k2 = 1) is the robust Wald of Π = 0; the F is ivreg2's rescaling
    np.testing.assert_allclose(wk.kp_rk_wald, wk.f_robust[0] * l, rtol=RTOL_EXACT)
    np.testing.assert_allclose(wk.kp_rk_wald_f, wk.f_robust[0] * (n - L) / n, rtol=RTOL_EXACT)
    # one instrument: the effective F is the robust F; K_eff = 1 and c = χ²(1, 1/τ) quantile
    w1 = weak_instruments(d.X, d.D, d.Z[:, :1], d.w)
    np.testing.assert_allclose(w1.effective_f, w1.f_robust[0], rtol=RTOL_EXACT)
    np.testing.assert_allclose(w1.k_eff, 1.0, rtol=RTOL_EXACT)
    np.testing.assert_allclose(w1.effective_f_cv, 23.1085, rtol=1e-5)  # MOP (2013) table: 23.109


def test_effective_f_direct_formula():
    # MOP on the original (non-orthonormal) Z̃ scale: the statistic is invariant to it
    d = make_iv_data(k2=1)
    wk = weak_instruments(d.X, d.D, d.Z)
    pi = np.linalg.lstsq(np.hstack([d.X, d.Z]), d.D[:, 0], rcond=None)[0][d.X.shape[1]:]
    Zt = d.Z - d.X @ np.linalg.lstsq(d.X, d.Z, rcond=None)[0]
    e = d.D[:, 0] - np.hstack([d.X, d.Z]) @ np.linalg.lstsq(np.hstack([d.X, d.Z]), d.D[:, 0], rcond=None)[0]
    # direct MOP formula: π'Z̃'Z̃π / tr(Σ_ππ Z̃'Z̃) with Σ_ππ the HC0 covariance of π
    ZZ = Zt.T @ Zt
    Spp = np.linalg.solve(ZZ, (Zt * e[:, None] ** 2).T @ Zt) @ np.linalg.inv(ZZ)
    np.testing.assert_allclose(wk.effective_f, pi @ ZZ @ pi / np.trace(Spp @ ZZ), rtol=RTOL_SM)


def _kp_literal(Xm, D, Z):
    """KP (2006) rk Wald for rank k2 - 1 with A_q, B_q and Kronecker products (HC0)."""
    n = D.shape[0]
    Mx = np.eye(n) - Xm @ np.linalg.pinv(Xm)
    Zt, Dt = Mx @ Z, Mx @ D
    Pi = np.linalg.lstsq(Zt, Dt, rcond=None)[0]
    V = Dt - Zt @ Pi
    ZZi = np.linalg.inv(Zt.T @ Zt)
    sc = np.einsum("ij,ik->ijk", V, Zt).reshape(n, -1)  # rows v_i ⊗ z_i (vec order: column-major Π)
    Vpi = np.kron(np.eye(D.shape[1]), ZZi) @ (sc.T @ sc) @ np.kron(np.eye(D.shape[1]), ZZi)
    evals, evecs = np.linalg.eigh(Zt.T @ Zt)
    G = evecs @ np.diag(np.sqrt(evals)) @ evecs.T
    evals, evecs = np.linalg.eigh(Dt.T @ Dt)
    F = evecs @ np.diag(evals ** -0.5) @ evecs.T
    Th = G @ Pi @ F.T
    U, _s, Vt = np.linalg.svd(Th)
    Vm = Vt.T
    m = Th.shape[1]
    q = m - 1
    U12, U22 = U[:q, q:], U[q:, q:]
    V12, V22 = Vm[:q, q:], Vm[q:, q:]
    sq = lambda A: (lambda e, v: v @ np.diag(np.sqrt(e)) @ v.T)(*np.linalg.eigh(A))  # noqa: E731
    Aq = np.vstack([U12, U22]) @ np.linalg.inv(U22) @ sq(U22 @ U22.T)
    Bq = sq(V22 @ V22.T) @ np.linalg.inv(V22.T) @ np.hstack([V12.T, V22.T])
    lam = np.kron(Bq, Aq.T) @ Th.reshape(-1, order="F")
    K = np.kron(Bq, Aq.T) @ np.kron(F, G)
    return float(lam @ np.linalg.solve(K @ Vpi @ K.T, lam))


def test_kp_rk_wald_equals_literal_kp2006():
    d = make_iv_data(n=150)
    wk = weak_instruments(d.X, d.D, d.Z)
    np.testing.assert_allclose(wk.kp_rk_wald, _kp_literal(d.X, d.D, d.Z), rtol=RTOL_SM)
    assert wk.kp_rk_lm_pvalue == pytest.approx(stats.chi2.sf(wk.kp_rk_lm, 3), rel=RTOL_EXACT)


def test_sw_f_regression_form():
    # SW F of D_1: regress the 2SLS residual of D_1 on D_2 on [X, Z]; F test of Z with df l - k2 + 1
    import statsmodels.api as sm

    d = make_iv_data()
    wk = weak_instruments(d.X, d.D, d.Z)
    from attnreg.iv import tsls

    e = tsls(d.D[:, 0], d.X, d.D[:, 1:], d.Z).resid
    full = sm.OLS(e, np.hstack([d.X, d.Z])).fit()
    restr = sm.OLS(e, d.X).fit()
    l, k2 = d.Z.shape[1], 2  # noqa: E741
    f = (restr.ssr - full.ssr) / (l - k2 + 1) / (full.ssr / full.df_resid)
    np.testing.assert_allclose(wk.sw_f[0], f, rtol=RTOL_SM)


def test_kp_f_cluster_adjustment():
    # ivreg2: (N-L)/L1 as for CD, but N/(N-1)·(G-1)/G replaces N in the cluster case
    d = make_iv_data(k2=1)
    n, L, l = d.y.shape[0], d.X.shape[1] + d.Z.shape[1], d.Z.shape[1]  # noqa: E741
    wk = weak_instruments(d.X, d.D, d.Z, kind="cluster", clusters=d.g)
    G = np.unique(d.g).size
    np.testing.assert_allclose(wk.kp_rk_wald, wk.f_robust[0] * l, rtol=RTOL_EXACT)
    np.testing.assert_allclose(wk.kp_rk_wald_f, wk.kp_rk_wald / l * (n - L) / (n - 1) * (G - 1) / G,
                               rtol=RTOL_EXACT)


def test_anderson_lm_and_cd_wald_one_endogenous():
    # k2 = 1: the smallest squared canonical correlation is the partial R²
    d = make_iv_data(k2=1)
    n = d.y.shape[0]
    wk = weak_instruments(d.X, d.D, d.Z, d.w)
    r2 = wk.partial_r2[0]
    np.testing.assert_allclose(wk.anderson_lm, n * r2, rtol=RTOL_EXACT)
    np.testing.assert_allclose(wk.cragg_donald_wald, n * r2 / (1 - r2), rtol=RTOL_EXACT)
