r"""Specification tests of IV models: endogeneity and over-identification (numbers only).

Notation as :mod:`attnreg.iv.weak`; ``e`` the 2SLS residuals, ``e₀`` the OLS residuals of y
on ``[X, D]``, ``V̂ = M_Q D``.  All on ``sqrt(w)``-scaled rows.

References
----------
Durbin, J. (1954); Wu, D.-M. (1973); Hausman, J. A. (1978), Specification tests in
econometrics, *Econometrica* 46, 1251–1271.  Wooldridge, J. M. (2010), *Econometric Analysis
of Cross Section and Panel Data*, 2nd ed., §6.3.1 (regression-based robust test).
Sargan, J. D. (1958); Basmann, R. L. (1960); Hansen, L. P. (1982).
Anderson, T. W. and Rubin, H. (1949) (LIML over-identification test ``n ln κ``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats
from scipy.linalg import cholesky, qr, solve_triangular

from attnreg.iv._design import IVDesign, make_design
from attnreg.iv._wald import robust_wald
from attnreg.iv.aux_vcov import aux_vcov, control_function_wald, unscaled
from attnreg.iv.estimators import _gmm_step, _liml_kappa, _tsls, gmm
from attnreg.inference.vcov.registry import VcovSpec

__all__ = ["IVTest", "endogeneity", "overidentification"]


@dataclass(frozen=True)
class IVTest:
    """One test statistic.

    Attributes
    ----------
    name : str
    stat : float
    df : int
        Degrees of freedom (numerator for an F statistic).
    df_denom : int or None
        Denominator degrees of freedom of an F statistic, None for χ².
    pvalue : float
    """

    name: str
    stat: float
    df: int
    df_denom: int | None
    pvalue: float


def _chi2(name: str, stat: float, df: int) -> IVTest:
    return IVTest(name, float(stat), df, None, float(stats.chi2.sf(stat, df)))


def _f(name: str, stat: float, df: int, df_denom: int) -> IVTest:
    return IVTest(name, float(stat), df, df_denom, float(stats.f.sf(stat, df, df_denom)))


def _orth(a: np.ndarray) -> np.ndarray:
    return qr(a, mode="economic")[0]


def _durbin_wu(d: IVDesign) -> tuple[IVTest, IVTest]:
    n, k1, k2 = d.n, d.X.shape[1], d.D.shape[1]
    R = d.regressors
    e0 = d.y - _orth(R) @ (_orth(R).T @ d.y)
    e2 = d.y - R @ _tsls(d).coef
    Qv = _orth(d.annihilate(d.D))  # extends the instrument basis to span [X, Z, D]
    delta = float(np.sum((d.Q.T @ e0) ** 2) + np.sum((Qv.T @ e0) ** 2) - np.sum((d.Q.T @ e2) ** 2))
    ss0 = float(e0 @ e0)
    dfd = n - k1 - 2 * k2
    return (_chi2("Durbin", delta / (ss0 / n), k2),
            _f("Wu-Hausman", (delta / k2) / ((ss0 - delta) / dfd), k2, dfd))


def _wooldridge(d: IVDesign, kind: str, clusters: npt.ArrayLike | None, debiased: bool,
                vcov: VcovSpec | None = None, intercept: int | None = None) -> IVTest:
    """Wald test of γ = 0 in ``y = [X, D]β + V̂γ + u`` (control function), by FWL."""
    if vcov is not None:
        stat = control_function_wald(d, vcov, intercept=intercept)
        return _chi2(f"Wooldridge regression ({vcov.kind})", stat, d.D.shape[1])
    n, k = d.n, d.X.shape[1] + 2 * d.D.shape[1]
    aug = np.hstack([d.regressors, d.annihilate(d.D)])
    u = d.y - _orth(aug) @ (_orth(aug).T @ d.y)
    Rb = _orth(d.regressors)
    Vt = d.annihilate(d.D)
    Qt = _orth(Vt - Rb @ (Rb.T @ Vt))  # M_{[X, D]} V̂
    g = Qt.T @ d.y
    if kind == "classical":
        stat = float(g @ g) / (float(u @ u) / (n - k if debiased else n))
    else:
        stat = robust_wald(g, Qt * u[:, None], kind, clusters, k, debiased)
    return _chi2(f"Wooldridge regression ({kind})", stat, d.D.shape[1])


def endogeneity(y: npt.ArrayLike, X: npt.ArrayLike | None, D: npt.ArrayLike, Z: npt.ArrayLike,
                weights: npt.ArrayLike | None = None, *, kind: str = "HC0",
                clusters: npt.ArrayLike | None = None, debiased: bool = False,
                vcov: VcovSpec | None = None, intercept: int | None = None) -> dict[str, IVTest]:
    r"""Tests of H0: D is exogenous.

    * Durbin: ``δ / (e₀'e₀/n) ~ χ²(k2)``, ``δ = e₀'P_{[Q,D]}e₀ - e'P_Q e``.
    * Wu–Hausman: ``(δ/k2) / ((e₀'e₀ - δ)/(n - k1 - 2 k2)) ~ F(k2, n - k1 - 2k2)``.
    * Wooldridge's regression test: Wald of γ = 0 in the OLS of y on ``[X, D, V̂]`` with the
      ``kind`` covariance (``"classical"``, ``"HC0"``, ``"HC1"``, ``"cluster"``) ~ χ²(k2), or
      under ``vcov=`` (any registered robust covariance bound to these rows; ``intercept``
      the column of X that is constant, for HAC bandwidths), the registry's covariance of
      that regression (:func:`attnreg.iv.aux_vcov.control_function_wald`).

    These are linearmodels' ``durbin()``, ``wu_hausman()`` and ``wooldridge_regression``.

    Returns
    -------
    dict
        ``{"durbin", "wu_hausman", "wooldridge"}`` → :class:`IVTest`.
    """
    d = make_design(y, X, D, Z, weights)
    dur, wu = _durbin_wu(d)
    return {"durbin": dur, "wu_hausman": wu,
            "wooldridge": _wooldridge(d, kind, clusters, debiased, vcov, intercept)}


def _hansen_j(d: IVDesign, spec: VcovSpec, intercept: int | None) -> float:
    """Two-step efficient GMM's ``n ḡ'S^{-1}ḡ`` with ``S`` the moments' covariance under
    ``spec`` (less vcovCL's adjustments) at the 2SLS residuals: the registry's meat of the
    regression on the instruments, ``S = Q'Q V Q'Q`` (:mod:`attnreg.iv.aux_vcov`)."""
    Qi, R = d.instruments, d.regressors
    e1 = d.y - R @ _tsls(d).coef
    V = aux_vcov(Qi, e1, d, unscaled(spec), df_resid=d.n - R.shape[1], intercept=intercept)
    QQ = Qi.T @ Qi
    S = QQ @ V @ QQ
    Rs = cholesky((S + S.T) / 2.0, lower=False)  # S = R_s'R_s
    e = d.y - R @ _gmm_step(d, Rs)[0]
    return float(np.sum(solve_triangular(Rs, Qi.T @ e, trans="T") ** 2))


def overidentification(y: npt.ArrayLike, X: npt.ArrayLike | None, D: npt.ArrayLike,
                       Z: npt.ArrayLike, weights: npt.ArrayLike | None = None, *,
                       kind: str = "HC0", clusters: npt.ArrayLike | None = None,
                       vcov: VcovSpec | None = None,
                       intercept: int | None = None) -> dict[str, IVTest]:
    r"""Tests of the over-identifying restrictions (needs l > k2), all with df ``q = l - k2``.

    * Sargan: ``s = n e'P_Q e / e'e ~ χ²(q)``.
    * Basmann: ``s (n - L) / (n - s) ~ χ²(q)``.
    * Anderson–Rubin (LIML): ``n ln κ̂ ~ χ²(q)``; Basmann F: ``(κ̂ - 1)(n - L)/q ~ F(q, n - L)``.
    * Hansen J: two-step efficient GMM's ``n ḡ'S^{-1}ḡ`` with ``S`` robust (``kind`` "HC0"/"HC1")
      or cluster (``kind="cluster"``) ~ χ²(q); or, with ``vcov=`` (any registered robust
      covariance bound to these rows, e.g. ``bind_vcov("HAC", n_obs=n, maxlags=3)``), ``S``
      the registry's covariance of the moments ``q_i e_i`` at the 2SLS residuals, without
      vcovCL's adjustments (``intercept``: the column of X that is constant, for HAC
      bandwidths).

    These are linearmodels' ``sargan``, ``basmann``, ``anderson_rubin``, ``basmann_f`` and
    ``IVGMM(...).fit().j_stat`` (``weight_type="kernel"`` with ``vcov=`` a Bartlett HAC).

    Returns
    -------
    dict
        ``{"sargan", "basmann", "anderson_rubin", "basmann_f", "hansen_j"}`` → :class:`IVTest`.
    """
    d = make_design(y, X, D, Z, weights)
    n, L, k2 = d.n, d.X.shape[1] + d.Z.shape[1], d.D.shape[1]
    q = d.Z.shape[1] - k2
    if q == 0:
        from attnreg.exceptions import DataError

        raise DataError("over-identification tests need more excluded instruments (Z) than "
                        "endogenous regressors (D); the model is exactly identified")
    e = d.y - d.regressors @ _tsls(d).coef
    s = n * float(np.sum((d.Q.T @ e) ** 2)) / float(e @ e)
    kap = _liml_kappa(d)
    if vcov is None:
        weight = "cluster" if kind == "cluster" else "robust"
        J = gmm(y, X, D, Z, weights, weight=weight, clusters=clusters).j_stat
    else:
        weight, J = vcov.kind, _hansen_j(d, vcov, intercept)
    return {"sargan": _chi2("Sargan", s, q), "basmann": _chi2("Basmann", s * (n - L) / (n - s), q),
            "anderson_rubin": _chi2("Anderson-Rubin (LIML)", n * np.log(kap), q),
            "basmann_f": _f("Basmann F", (kap - 1) * (n - L) / q, q, n - L),
            "hansen_j": _chi2(f"Hansen J ({weight})", J, q)}
