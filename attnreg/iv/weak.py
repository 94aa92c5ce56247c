r"""Weak-instrument statistics of the first stage ``D = X Γ + Z Π + V`` (numbers only).

Notation: ``Z̃ = M_X Z = Q_z R_z`` (thin QR, ``Q_z'Q_z = I``), ``D̃ = M_X D = Q_d R_d``,
``V̂ = M_Q D`` the first-stage residuals, ``n`` rows, ``l`` excluded instruments,
``L = k1 + l`` instruments, ``k2`` endogenous regressors.  Robust statistics are computed
under any registered covariance (``vcov=``, an IV fit's) or ``kind`` in
``{"HC0", "HC1", "cluster"}`` (``debiased`` adds the small-sample factor), each from the
first stage's own score design through the shared registry (:mod:`attnreg.iv.aux_vcov`).
Weighted data use ``sqrt(w)``-scaled rows.

References
----------
Cragg, J. G. and Donald, S. G. (1993), Testing identifiability and specification in
instrumental variable models, *Econometric Theory* 9, 222–240.
Kleibergen, F. and Paap, R. (2006), Generalized reduced rank tests using the singular value
decomposition, *Journal of Econometrics* 133, 97–126.
Sanderson, E. and Windmeijer, F. (2016), A weak instrument F-test in linear IV models with
multiple endogenous variables, *Journal of Econometrics* 190, 212–221.
Montiel Olea, J. L. and Pflueger, C. (2013), A robust test for weak instruments, *Journal of
Business & Economic Statistics* 31, 358–369.
Baum, C. F., Schaffer, M. E. and Stillman, S. (2007), Enhanced routines for instrumental
variables/GMM estimation and testing, *Stata Journal* 7, 465–506 (ivreg2's definitions).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats
from scipy.linalg import qr

from attnreg.iv._design import FloatArray, IVDesign, make_design
from attnreg.iv.aux_vcov import aux_vcov, legacy_specs, n_clusters, quad_form, unscaled
from attnreg.inference.vcov.registry import VcovSpec

__all__ = ["WeakIV", "weak_instruments"]


@dataclass(frozen=True)
class WeakIV:
    """Weak-instrument statistics (see :func:`weak_instruments` for every formula).

    Attributes
    ----------
    partial_r2 : ndarray, shape (k2,)
        First-stage partial R² of each endogenous regressor.
    f_classical : ndarray, shape (k2,)
        First-stage partial F (homoskedastic, ``s² = RSS/(n - L)``), ~ F(l, n - L).
    f_robust : ndarray, shape (k2,)
        Robust first-stage Wald / l under ``kind``.
    sw_f : ndarray, shape (k2,)
        Sanderson–Windmeijer conditional F, ~ F(l - k2 + 1, n - L).
    cragg_donald_f : float
    anderson_lm : float
        Anderson's canonical-correlation LM ``n r²`` (ivreg2's i.i.d. under-identification test),
        ~ χ²(l - k2 + 1).
    cragg_donald_wald : float
        ``n r²/(1 - r²)``, ~ χ²(l - k2 + 1).
    kp_rk_wald : float
        Kleibergen–Paap rk Wald statistic, ~ χ²(l - k2 + 1) under under-identification.
    kp_rk_wald_f : float
        ivreg2's KP rk Wald F (see :func:`weak_instruments`).
    kp_rk_lm : float
        Kleibergen–Paap rk LM under-identification statistic, ~ χ²(l - k2 + 1).
    kp_rk_lm_pvalue : float
    effective_f : float
        Montiel Olea–Pflueger effective F (NaN when k2 > 1).
    effective_f_cv : float
        Its simplified (Nagar) 5 % critical value for τ = 10 % (NaN when k2 > 1).
    k_eff : float
        The simplified effective degrees of freedom (NaN when k2 > 1).
    kind : str
        The robust covariance (a registered name, e.g. ``"HC3"``, ``"HAC"``, ``"cluster"``).
    df : tuple of int
        ``(l, n - L)``.
    """

    partial_r2: FloatArray
    f_classical: FloatArray
    f_robust: FloatArray
    sw_f: FloatArray
    cragg_donald_f: float
    anderson_lm: float
    cragg_donald_wald: float
    kp_rk_wald: float
    kp_rk_wald_f: float
    kp_rk_lm: float
    kp_rk_lm_pvalue: float
    effective_f: float
    effective_f_cv: float
    k_eff: float
    kind: str
    df: tuple[int, int]


@dataclass(frozen=True)
class _Covs:
    """The robust covariances of the block: ``first`` for the first-stage F, ``rk`` for the
    rk statistics and the effective F; ``intercept`` is X's intercept column."""

    first: VcovSpec
    rk: VcovSpec
    intercept: int | None
    absorbed: int
    absorbed_hat: FloatArray | None = None

    def of_pi(self, d: IVDesign, resid: FloatArray, spec: VcovSpec) -> FloatArray:
        """Covariance (l, l) of ``π = Q_z'D_j`` from the first stage ``D_j ~ X + Z`` with
        residuals ``resid``: ``T V_ZZ T'`` with ``T = Q_z'Z`` (π = T Π̂, as Q_z'X = 0)."""
        k1 = d.X.shape[1]
        df_resid = d.n - k1 - d.Z.shape[1] - self.absorbed
        V = aux_vcov(d.instruments, resid, d, spec, df_resid=df_resid, intercept=self.intercept,
                     absorbed_hat=self.absorbed_hat)[k1:, k1:]
        T = d.Qz.T @ d.Z
        return np.asarray(T @ V @ T.T)


def _first_stage(d: IVDesign,
                 covs: _Covs) -> tuple[FloatArray, FloatArray, FloatArray, list[FloatArray]]:
    """Partial R², classical and robust first-stage F, and the covariances of π_j."""
    n, L, nz = d.n, d.X.shape[1] + d.Z.shape[1] + covs.absorbed, d.Z.shape[1]
    G = d.Qz.T @ d.D  # (nz, k2): R_z Π̂ in the orthonormal basis
    V = d.annihilate(d.D)
    Dt = d.annihilate_x(d.D)
    rss = np.sum(V**2, axis=0)
    partial_r2 = 1.0 - rss / np.sum(Dt**2, axis=0)
    f_classical = np.sum(G**2, axis=0) / nz / (rss / (n - L))
    W = [covs.of_pi(d, V[:, j], covs.first) for j in range(G.shape[1])]
    f_robust = np.array([quad_form(G[:, j], W[j]) / nz for j in range(G.shape[1])])
    return partial_r2, f_classical, f_robust, W


def _sw_f(d: IVDesign, absorbed: int = 0) -> FloatArray:
    """SW conditional F of each endogenous regressor (2SLS of D_j on D_{-j}, X with [X, Z])."""
    from attnreg.iv.estimators import tsls

    n, L, nz, k2 = d.n, d.X.shape[1] + d.Z.shape[1] + absorbed, d.Z.shape[1], d.D.shape[1]
    out = np.empty(k2)
    for j in range(k2):
        others = np.delete(d.D, j, axis=1)
        # data already weighted: the 2SLS residuals are on the weighted scale
        e = d.annihilate_x(d.D[:, 0]) if k2 == 1 else tsls(d.D[:, j], d.X, others, d.Z).wresid
        num = np.sum((d.Qz.T @ e) ** 2) / (nz - k2 + 1)
        out[j] = num / (np.sum(d.annihilate(e) ** 2) / (n - L))
    return out


def _kp(d: IVDesign, covs: _Covs) -> tuple[float, float, float, float]:
    """Cragg–Donald F, KP rk Wald and rk LM from the canonical-correlation matrix ``Q_z'Q_d``.

    ``λ = U_⊥'Q_z'(Q_d v)``: the rk statistics are Wald (and score) tests of ``U_⊥'π = 0`` in
    the first stage of the combination ``Q_d v`` (unrestricted residuals ``M_Q Q_d v``; the LM
    imposes the null: residuals ``Q_d v``), under ``covs.rk``."""
    n, L, nz, k2 = d.n, d.X.shape[1] + d.Z.shape[1] + covs.absorbed, d.Z.shape[1], d.D.shape[1]
    Qd = qr(d.annihilate_x(d.D), mode="economic")[0]
    U, s, Vt = np.linalg.svd(d.Qz.T @ Qd)  # s: canonical correlations, descending
    r2 = float(s[-1] ** 2)
    cd_f = r2 / (1.0 - r2) * (n - L) / nz
    u_perp = U[:, k2 - 1:]  # (nz, nz - k2 + 1); first column is the smallest-direction one
    dir_ = Qd @ Vt[-1]  # D̃ c: the combination with the smallest canonical correlation
    g = np.zeros(u_perp.shape[1])
    g[0] = s[-1]
    stats_ = [quad_form(g, u_perp.T @ covs.of_pi(d, e, covs.rk) @ u_perp)
              for e in (d.annihilate(dir_), dir_)]
    return r2, cd_f, stats_[0], stats_[1]


def _effective_f(d: IVDesign, covs: _Covs, tau: float,
                 W_first: FloatArray) -> tuple[float, float, float]:
    """MOP effective F and the simplified critical value (k2 = 1); ``W_first`` the first
    stage's covariance of π under ``covs.first`` (the same unless vcovCL's adjustments)."""
    pi = d.Qz.T @ d.D[:, 0]  # first-stage coefficients on the orthonormal Z̃ basis
    W2 = (W_first if covs.rk is covs.first
          else covs.of_pi(d, d.annihilate(d.D[:, 0]), covs.rk))
    tr = float(np.trace(W2))
    f_eff = float(pi @ pi) / tr
    x = 1.0 / tau
    eig_max = float(np.linalg.eigvalsh(W2)[-1])
    k_eff = tr**2 * (1 + 2 * x) / (float(np.sum(W2 * W2)) + 2 * x * tr * eig_max)
    cv = float(stats.ncx2.ppf(0.95, k_eff, x * k_eff)) / k_eff
    return f_eff, cv, k_eff


def _kp_f(rk: float, n: int, L: int, nz: int, spec: VcovSpec) -> float:
    """ivreg2's rk Wald F: ``rk/l · (n-L)/n``; cluster: ``rk/l · (n-L)/(n-1) · (G-1)/G``
    (G the fewest clusters over the dimensions)."""
    g = n_clusters(spec)
    if g is not None:
        return rk / nz * (n - L) / (n - 1) * (g - 1) / g
    return rk / nz * (n - L) / n


def weak_instruments(X: npt.ArrayLike | None, D: npt.ArrayLike, Z: npt.ArrayLike,
                     weights: npt.ArrayLike | None = None, *, kind: str = "HC0",
                     clusters: npt.ArrayLike | None = None, debiased: bool = False,
                     tau: float = 0.10, absorbed: int = 0, vcov: VcovSpec | None = None,
                     intercept: int | None = None,
                     absorbed_hat: npt.ArrayLike | None = None) -> WeakIV:
    r"""First-stage strength statistics.

    * partial R²: ``1 - V̂_j'V̂_j / D̃_j'D̃_j``.
    * classical partial F: ``||Q_z'D_j||² / l / (V̂_j'V̂_j / (n - L))`` (the F test of Π_j = 0
      in the first stage; linearmodels ``first_stage.diagnostics["f.stat"]`` with
      ``cov_type="unadjusted", debiased=True``).
    * robust partial F: ``W / l``, ``W = π'S^{-1}π`` with ``π = Q_z'D_j`` and
      ``S = Σ q_i q_i' v̂_ij²`` (or cluster sums; linearmodels' robust ``f.stat`` is ``W``).
    * Sanderson–Windmeijer: ``ε̂_j`` the residuals of the 2SLS fit of ``D_j`` on
      ``D_{-j}`` and X with instruments [X, Z]; ``F_j = [ε̂_j'P_{Z̃}ε̂_j/(l-k2+1)] /
      [ε̂_j'M_Q ε̂_j/(n-L)]`` (the first-stage F when k2 = 1).
    * Cragg–Donald: ``r²`` the smallest squared canonical correlation of ``D̃`` and ``Z̃``
      (singular values of ``Q_z'Q_d``); ``CD F = r²/(1-r²) · (n - L)/l`` (ivreg2 ``cdf``).
    * Kleibergen–Paap (2006) rk statistics for H0: rank Π = k2 - 1, with ivreg2's (ranktest's)
      standardisation ``Θ = Q_z'Q_d``: with the SVD ``Θ = U S V'``, ``λ = U_⊥'Θ v`` (``v``
      the last right singular vector, ``U_⊥`` the last ``l - k2 + 1`` left ones),
      ``rk = λ'Ω^{-1}λ`` with ``Ω = Σ h_i h_i'``, ``h_i = (ê_i) U_⊥'q_i`` and ``ê = M_Q Q_d v``
      (Wald) or ``ê = Q_d v`` (LM, the null imposed); no small-sample factor (ivreg2 without
      ``small``).  ``kp_rk_wald_f = rk / l · (n - L)/n``, and with clusters
      ``rk / l · (n - L)/(n - 1) · (G - 1)/G`` (ivreg2's ``rkf``; its help: "the adjustment is
      N/(N-1) * (N_clust-1)/N_clust" in the cluster-robust case).  Homoskedastic
      versions reduce to ``n r²/(1-r²)`` (Cragg–Donald) and ``n r²`` (Anderson LM).
    * Montiel Olea–Pflueger (k2 = 1): ``F_eff = π'π / tr(Ŵ₂)``, ``π = Q_z'D``, ``Ŵ₂`` the
      ``kind`` covariance of π; simplified critical value ``c = χ²_{0.95}(K, xK)/K``,
      ``x = 1/τ``, ``K = tr(Ŵ₂)²(1+2x) / (tr(Ŵ₂²) + 2x tr(Ŵ₂) λ_max(Ŵ₂))`` (their
      Nagar-based simplified procedure; conservative relative to the generalised one).

    Parameters
    ----------
    X : array_like, shape (n, k1) or None
    D : array_like, shape (n, k2)
    Z : array_like, shape (n, l)
    weights : array_like, shape (n,), optional
    kind : {"HC0", "HC1", "cluster"}
        The robust covariance when ``vcov`` is not given.
    clusters : array_like, shape (n,), optional
    debiased : bool
        Small-sample factor for ``f_robust`` (with ``kind``).
    tau : float
        Worst-case Nagar bias threshold of the effective-F critical value.
    absorbed : int
        Levels of fixed effects absorbed from X, D and Z beforehand (demeaned arrays): counted
        in ``L``, so every statistic equals the dummy-variable regression's.
    vcov : VcovSpec, optional
        Any registered robust covariance bound to these rows (an IV fit's, in place of
        ``kind``): the robust first-stage F under it, the rk statistics and the effective F
        under it less vcovCL's cluster adjustments (:func:`attnreg.iv.aux_vcov.unscaled`).
        Each is the registry's covariance of the first stage's own score design
        (:mod:`attnreg.iv.aux_vcov`), its hat values for HC2–HC5.
    intercept : int, optional
        X's intercept column (HAC bandwidths give it weight 0).
    absorbed_hat : array_like, shape (n,), optional
        The absorbed fixed effects' own leverage ``w_i d_i'(D'WD)⁺d_i``, added to the first
        stage's hat values (HC2–HC5 then equal the dummy-variable regression's).

    Returns
    -------
    WeakIV
    """
    dummy_y = np.zeros(np.asarray(D).shape[0])
    d = make_design(dummy_y, X, D, Z, weights)
    if vcov is None:
        first, rk = legacy_specs(kind, clusters, d.n, debiased)
    else:
        first, rk, kind = vcov, unscaled(vcov), vcov.kind
    extra = None if absorbed_hat is None else np.asarray(absorbed_hat, dtype=np.float64)
    covs = _Covs(first, rk, intercept, absorbed, extra)
    pr2, fc, fr, W = _first_stage(d, covs)
    r2, cd_f, rk_w, rk_lm = _kp(d, covs)
    n, L, nz, k2 = d.n, d.X.shape[1] + d.Z.shape[1] + absorbed, d.Z.shape[1], d.D.shape[1]
    f_eff = cv = k_eff = float("nan")
    if k2 == 1:
        f_eff, cv, k_eff = _effective_f(d, covs, tau, W[0])
    return WeakIV(partial_r2=pr2, f_classical=fc, f_robust=fr, sw_f=_sw_f(d, absorbed),
                  cragg_donald_f=cd_f,
                  anderson_lm=n * r2, cragg_donald_wald=n * r2 / (1 - r2),
                  kp_rk_wald=rk_w, kp_rk_wald_f=_kp_f(rk_w, n, L, nz, rk), kp_rk_lm=rk_lm,
                  kp_rk_lm_pvalue=float(stats.chi2.sf(rk_lm, nz - k2 + 1)), effective_f=f_eff,
                  effective_f_cv=cv, k_eff=k_eff, kind=kind, df=(nz, n - L))


