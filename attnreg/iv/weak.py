r"""Weak-instrument statistics of the first stage ``D = X Γ + Z Π + V`` (numbers only).

Notation: ``Z̃ = M_X Z = Q_z R_z`` (thin QR, ``Q_z'Q_z = I``), ``D̃ = M_X D = Q_d R_d``,
``V̂ = M_Q D`` the first-stage residuals, ``n`` rows, ``l`` excluded instruments,
``L = k1 + l`` instruments, ``k2`` endogenous regressors.  Robust statistics take ``kind``
in ``{"HC0", "HC1", "cluster"}``; ``debiased`` adds the small-sample factor (see
:func:`attnreg.iv._wald.meat_scale`).  Weighted data use ``sqrt(w)``-scaled rows.

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

from attnreg.iv._design import FloatArray, IVDesign, group_sums, make_design
from attnreg.iv._wald import robust_wald

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


def _first_stage(d: IVDesign, kind: str, clusters: npt.ArrayLike | None,
                 debiased: bool, absorbed: int = 0) -> tuple[FloatArray, FloatArray, FloatArray]:
    n, L, nz = d.n, d.X.shape[1] + d.Z.shape[1] + absorbed, d.Z.shape[1]
    G = d.Qz.T @ d.D  # (nz, k2): R_z Π̂ in the orthonormal basis
    V = d.annihilate(d.D)
    Dt = d.annihilate_x(d.D)
    rss = np.sum(V**2, axis=0)
    partial_r2 = 1.0 - rss / np.sum(Dt**2, axis=0)
    f_classical = np.sum(G**2, axis=0) / nz / (rss / (n - L))
    f_robust = np.array([robust_wald(G[:, j], d.Qz * V[:, [j]], kind, clusters, L, debiased) / nz
                         for j in range(G.shape[1])])
    return partial_r2, f_classical, f_robust


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


def _kp(d: IVDesign, kind: str, clusters: npt.ArrayLike | None,
        absorbed: int = 0) -> tuple[float, float, float, float]:
    """Cragg–Donald F, KP rk Wald and rk LM from the canonical-correlation matrix ``Q_z'Q_d``."""
    n, L, nz, k2 = d.n, d.X.shape[1] + d.Z.shape[1] + absorbed, d.Z.shape[1], d.D.shape[1]
    Qd = qr(d.annihilate_x(d.D), mode="economic")[0]
    U, s, Vt = np.linalg.svd(d.Qz.T @ Qd)  # s: canonical correlations, descending
    r2 = float(s[-1] ** 2)
    cd_f = r2 / (1.0 - r2) * (n - L) / nz
    u_perp = U[:, k2 - 1:]  # (nz, nz - k2 + 1); first column is the smallest-direction one
    dir_ = Qd @ Vt[-1]  # D̃ c: the combination with the smallest canonical correlation
    a_wald = d.annihilate(dir_)  # V̂ c (unrestricted residuals)
    Pu = d.Qz @ u_perp  # (n, nz - k2 + 1)
    g = np.zeros(u_perp.shape[1])
    g[0] = s[-1]
    wald = robust_wald(g, Pu * a_wald[:, None], kind, clusters, L)
    lm = robust_wald(g, Pu * dir_[:, None], kind, clusters, L)
    return r2, cd_f, wald, lm


def _effective_f(d: IVDesign, kind: str, clusters: npt.ArrayLike | None,
                 tau: float, absorbed: int = 0) -> tuple[float, float, float]:
    """MOP effective F and the simplified critical value (k2 = 1)."""
    pi = d.Qz.T @ d.D[:, 0]  # first-stage coefficients on the orthonormal Z̃ basis
    H = d.Qz * d.annihilate(d.D[:, 0])[:, None]
    if kind == "cluster":
        H = group_sums(H, clusters)  # type: ignore[arg-type]
    W2 = H.T @ H
    if kind == "HC1":
        W2 = W2 * d.n / (d.n - d.X.shape[1] - d.Z.shape[1] - absorbed)
    tr = float(np.trace(W2))
    f_eff = float(pi @ pi) / tr
    x = 1.0 / tau
    eig_max = float(np.linalg.eigvalsh(W2)[-1])
    k_eff = tr**2 * (1 + 2 * x) / (float(np.sum(W2 * W2)) + 2 * x * tr * eig_max)
    cv = float(stats.ncx2.ppf(0.95, k_eff, x * k_eff)) / k_eff
    return f_eff, cv, k_eff


def _kp_f(rk: float, n: int, L: int, nz: int, kind: str, clusters: npt.ArrayLike | None) -> float:
    """ivreg2's rk Wald F: ``rk/l · (n-L)/n``; cluster: ``rk/l · (n-L)/(n-1) · (G-1)/G``."""
    if kind == "cluster":
        g = int(np.unique(np.asarray(clusters)).shape[0])
        return rk / nz * (n - L) / (n - 1) * (g - 1) / g
    return rk / nz * (n - L) / n


def weak_instruments(X: npt.ArrayLike | None, D: npt.ArrayLike, Z: npt.ArrayLike,
                     weights: npt.ArrayLike | None = None, *, kind: str = "HC0",
                     clusters: npt.ArrayLike | None = None, debiased: bool = False,
                     tau: float = 0.10, absorbed: int = 0) -> WeakIV:
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
    clusters : array_like, shape (n,), optional
    debiased : bool
        Small-sample factor for ``f_robust``.
    tau : float
        Worst-case Nagar bias threshold of the effective-F critical value.
    absorbed : int
        Levels of fixed effects absorbed from X, D and Z beforehand (demeaned arrays): counted
        in ``L``, so every statistic equals the dummy-variable regression's.

    Returns
    -------
    WeakIV
    """
    dummy_y = np.zeros(np.asarray(D).shape[0])
    d = make_design(dummy_y, X, D, Z, weights)
    pr2, fc, fr = _first_stage(d, kind, clusters, debiased, absorbed)
    r2, cd_f, rk_w, rk_lm = _kp(d, kind, clusters, absorbed)
    n, L, nz, k2 = d.n, d.X.shape[1] + d.Z.shape[1] + absorbed, d.Z.shape[1], d.D.shape[1]
    f_eff = cv = k_eff = float("nan")
    if k2 == 1:
        f_eff, cv, k_eff = _effective_f(d, kind, clusters, tau, absorbed)
    return WeakIV(partial_r2=pr2, f_classical=fc, f_robust=fr, sw_f=_sw_f(d, absorbed),
                  cragg_donald_f=cd_f,
                  anderson_lm=n * r2, cragg_donald_wald=n * r2 / (1 - r2),
                  kp_rk_wald=rk_w, kp_rk_wald_f=_kp_f(rk_w, n, L, nz, kind, clusters), kp_rk_lm=rk_lm,
                  kp_rk_lm_pvalue=float(stats.chi2.sf(rk_lm, nz - k2 + 1)), effective_f=f_eff,
                  effective_f_cv=cv, k_eff=k_eff, kind=kind, df=(nz, n - L))


