r"""Instrumental-variable estimators on arrays: 2SLS, k-class (LIML, Fuller) and two-step GMM.

Every estimator returns an :class:`IVFit` holding the coefficients, the *bread* (an upper
triangular ``T`` with ``A = T'T``, never an inverse) and the per-row scores, so that every
covariance is ``A^{-1} (sum of score outer products) A^{-1}`` (see
:mod:`attnreg.iv.covariance`).  The coefficient order is ``[X, D]``.  Weighted fits use
``sqrt(w)``-scaled rows; scores and ``wresid`` are on that scale.

References
----------
Davidson, R. and MacKinnon, J. G. (2004), *Econometric Theory and Methods*, ch. 8–9.
Hayashi, F. (2000), *Econometrics*, ch. 3 (GMM).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.linalg import cholesky, qr, solve_triangular

from attnreg.exceptions import DataError, OptionError
from attnreg.iv._design import FloatArray, IVDesign, group_sums, make_design
from attnreg.inference.vcov.hac_kernels import long_run

__all__ = ["IVFit", "fuller", "gmm", "kclass", "liml", "liml_kappa", "tsls"]


@dataclass(frozen=True)
class IVFit:
    """A fitted IV model (numbers only).

    Attributes
    ----------
    method : str
        ``"2SLS"``, ``"LIML"``, ``"Fuller"``, ``"k-class"`` or ``"GMM"``.
    coef : ndarray, shape (k,)
        Coefficients of ``[X, D]`` (k = k1 + k2).
    bread : ndarray, shape (k, k)
        Upper triangular ``T`` with ``T'T = A``: ``A = X̂'X̂`` for 2SLS,
        ``R'(I - κ M_Q)R`` for k-class, ``R'Q W Q'R`` for GMM (``R = [X, D]``,
        ``Q = [X, Z]``).
    scores : ndarray, shape (n, k)
        Per-row scores ``s_i`` with ``sum_i s_i = 0`` at the estimate: ``x̂_i e_i`` for
        2SLS and k-class (linearmodels' convention also for k-class), ``R'Q W q_i e_i``
        for GMM.
    homoskedastic_meat : ndarray, shape (k, k)
        ``M`` with classical covariance ``s² A^{-1} M A^{-1}`` (``M = A`` except for GMM).
    resid : ndarray, shape (n,)
        Residuals ``y - [X, D] coef`` on the data's scale.
    wresid : ndarray, shape (n,)
        Weighted residuals ``sqrt(w) * resid``.
    kappa : float
        κ of a k-class fit (1 for 2SLS, NaN for GMM).
    liml_kappa : float
        The LIML κ (NaN when not computed).
    n_instruments : int
        Number of instruments ``k1 + l``.
    j_stat : float
        Hansen's J of a GMM fit (NaN otherwise).
    iterations : int
        GMM steps taken (1 for the others).
    score_design : ndarray, shape (n, k), or None
        Rows a_i with ``scores = a_i * wresid`` (weighted scale): the projected regressors
        ``x̂_i`` (2SLS, k-class), ``G'z̃_i`` (GMM, CUE); the covariances are computed from
        them by :func:`attnreg.iv.covariance.iv_vcov`.
    """

    method: str
    coef: FloatArray
    bread: FloatArray
    scores: FloatArray
    homoskedastic_meat: FloatArray
    resid: FloatArray
    wresid: FloatArray
    kappa: float
    liml_kappa: float
    n_instruments: int
    j_stat: float = float("nan")
    iterations: int = 1
    score_design: FloatArray | None = None

    @property
    def nobs(self) -> int:
        """Number of rows n."""
        return int(self.resid.shape[0])

    @property
    def n_params(self) -> int:
        """Number of coefficients k."""
        return int(self.coef.shape[0])

    def solve_bread(self, b: FloatArray) -> FloatArray:
        """``A^{-1} b`` by two triangular solves; ``b`` of shape (k,) or (k, m)."""
        return solve_triangular(self.bread, solve_triangular(self.bread, b, trans="T"))


def _upper_r(a: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Thin QR with a positive diagonal of R."""
    q, r = qr(a, mode="economic")
    s = np.where(np.diag(r) < 0, -1.0, 1.0)
    return q * s, r * s[:, None]


def _finish(d: IVDesign, method: str, coef: FloatArray, bread: FloatArray, xhat: FloatArray,
            meat: FloatArray | None, kappa: float, liml_k: float, **extra: float | int) -> IVFit:
    wres = d.y - d.regressors @ coef
    resid = wres / d.sqrt_w
    scores = xhat * wres[:, None]
    return IVFit(method=method, coef=coef, bread=bread, scores=scores,
                 homoskedastic_meat=bread.T @ bread if meat is None else meat, resid=resid,
                 wresid=wres, kappa=kappa, liml_kappa=liml_k,
                 n_instruments=d.X.shape[1] + d.Z.shape[1], score_design=xhat, **extra)  # type: ignore[arg-type]


def _check_identified(P: FloatArray, T: FloatArray, what: str) -> None:
    """Refuse a rank-deficient bread (relative to each column's norm)."""
    norms = np.sqrt(np.sum(P**2, axis=0))
    if np.any(np.abs(np.diag(T)) <= 1e-9 * np.maximum(norms, np.finfo(float).tiny)):
        raise DataError(f"the {what} is rank deficient: a column of [X, D] is not identified by the "
                        "instruments [X, Z] (collinear regressors or an endogenous regressor "
                        "unrelated to Z); drop it or add instruments")


def _tsls(d: IVDesign) -> IVFit:
    Q = d.Q
    P = Q.T @ d.regressors  # (L, k): coordinates of X̂ in the instrument basis
    U, T = _upper_r(P)
    _check_identified(P, T, "projection of [X, D] on the instruments")
    coef = solve_triangular(T, U.T @ (Q.T @ d.y))
    return _finish(d, "2SLS", coef, T, Q @ P, None, 1.0, float("nan"))


def _liml_kappa(d: IVDesign) -> float:
    W = np.column_stack([d.y, d.D])
    E1 = d.annihilate(W)  # M_Q [y, D]
    R1 = _upper_r(E1)[1]
    G = solve_triangular(R1, (d.Qz.T @ W).T, trans="T").T  # (l, k2 + 1): Qz'W R1^{-1}
    s = np.linalg.svd(G, compute_uv=False)
    smin = s.min() if G.shape[0] >= G.shape[1] else 0.0
    return float(1.0 + smin**2)


def _kclass(d: IVDesign, kappa: float, method: str, liml_k: float) -> IVFit:
    Q, k1 = d.Q, d.X.shape[1]
    P = Q.T @ d.regressors
    T0 = _upper_r(P)[1]
    _check_identified(P, T0, "projection of [X, D] on the instruments")
    ED = d.annihilate(d.D)  # M_Q D; M_Q X = 0
    RE = _upper_r(ED)[1]
    A = T0.T @ T0
    A[k1:, k1:] += (1.0 - kappa) * (RE.T @ RE)
    b = P.T @ (Q.T @ d.y)
    b[k1:] += (1.0 - kappa) * (ED.T @ d.annihilate(d.y))
    try:
        T = cholesky(A, lower=False)
    except np.linalg.LinAlgError:
        raise DataError(f"the k-class matrix R'(I - κ M_Q)R is not positive definite at κ = {kappa:.6g}; "
                        "use a smaller kappa (2SLS is κ = 1)") from None
    coef = solve_triangular(T, solve_triangular(T, b, trans="T"))
    return _finish(d, method, coef, T, Q @ P, None, kappa, liml_k)


def tsls(y: npt.ArrayLike, X: npt.ArrayLike | None, D: npt.ArrayLike, Z: npt.ArrayLike,
         weights: npt.ArrayLike | None = None) -> IVFit:
    r"""Two-stage least squares, :math:`\hat\beta = (\hat R'\hat R)^{-1}\hat R'y`, ``R̂ = P_Q [X, D]``.

    Computed from the QR of ``Q'[X, D]`` with ``Q`` an orthonormal basis of ``[X, Z]``.

    Parameters
    ----------
    y : array_like, shape (n,)
    X : array_like, shape (n, k1) or None
        Exogenous regressors (include a column of ones for an intercept).
    D : array_like, shape (n, k2)
        Endogenous regressors.
    Z : array_like, shape (n, l), l >= k2
        Excluded instruments.
    weights : array_like, shape (n,), optional

    Returns
    -------
    IVFit
    """
    return _tsls(make_design(y, X, D, Z, weights))


def liml_kappa(y: npt.ArrayLike, X: npt.ArrayLike | None, D: npt.ArrayLike, Z: npt.ArrayLike,
               weights: npt.ArrayLike | None = None) -> float:
    r"""LIML κ: the smallest root of :math:`|W'M_X W - κ W'M_Q W| = 0`, ``W = [y, D]``.

    With ``E = M_Q W = U R₁`` and ``M_X W = M_Q W + Q_z Q_z'W`` (``Q_z`` the part of the
    instrument basis orthogonal to X), κ = 1 + σ_min²(Q_z'W R₁^{-1}): an SVD of an
    l × (k2 + 1) matrix, never the products ``W'M W``.  κ = 1 when exactly identified.
    """
    return _liml_kappa(make_design(y, X, D, Z, weights))


def kclass(y: npt.ArrayLike, X: npt.ArrayLike | None, D: npt.ArrayLike, Z: npt.ArrayLike,
           kappa: float, weights: npt.ArrayLike | None = None) -> IVFit:
    r"""k-class estimator :math:`(R'(I-κM_Q)R)^{-1}R'(I-κM_Q)y` for a given κ.

    ``A = R'(I - κ M_Q)R = (Q'R)'(Q'R) + (1 - κ)(M_Q D)'(M_Q D)`` (in the D block) is
    assembled from QR factors and Cholesky-factored. Parameters as :func:`tsls`.
    """
    return _kclass(make_design(y, X, D, Z, weights), float(kappa), "k-class", float("nan"))


def liml(y: npt.ArrayLike, X: npt.ArrayLike | None, D: npt.ArrayLike, Z: npt.ArrayLike,
         weights: npt.ArrayLike | None = None) -> IVFit:
    """Limited-information maximum likelihood: the k-class fit at κ = :func:`liml_kappa`."""
    d = make_design(y, X, D, Z, weights)
    k = _liml_kappa(d)
    return _kclass(d, k, "LIML", k)


def fuller(y: npt.ArrayLike, X: npt.ArrayLike | None, D: npt.ArrayLike, Z: npt.ArrayLike,
           alpha: float = 1.0, weights: npt.ArrayLike | None = None) -> IVFit:
    """Fuller's (1977) modified LIML: κ = κ_LIML − α / (n − L), L = k1 + l instruments.

    The same definition as Stata ivreg2 ``fuller()`` and linearmodels ``IVLIML(fuller=)``.
    """
    if not np.isfinite(alpha) or alpha < 0:
        raise OptionError(f"alpha must be a non-negative number, got {alpha!r}")
    d = make_design(y, X, D, Z, weights)
    k = _liml_kappa(d)
    L = d.X.shape[1] + d.Z.shape[1]
    return _kclass(d, k - alpha / (d.n - L), "Fuller", k)


def _moment_factor(Qi: FloatArray, e: FloatArray, weight: str, clusters: npt.ArrayLike | None,
                   lag_weights: FloatArray | None = None) -> FloatArray:
    """Upper R_s with R_s'R_s = n S, S linearmodels' unscaled moment covariance (for
    ``weight="kernel"``: the long-run covariance of the moments with ``lag_weights``
    w_0 = 1, w_1, ..., by its Cholesky factor)."""
    if weight == "robust":
        return _upper_r(Qi * e[:, None])[1]
    if weight == "kernel":
        if lag_weights is None:
            raise OptionError("weight='kernel' needs lag_weights= (w_0 = 1, w_1, ...)")
        S = long_run(Qi * e[:, None], np.asarray(lag_weights, dtype=np.float64))
        try:
            return np.asarray(cholesky(S, lower=False))
        except np.linalg.LinAlgError:
            raise DataError("the kernel-weighted covariance of the moments is not positive "
                            "definite (use the Bartlett kernel, or fewer lags)") from None
    if weight == "cluster":
        if clusters is None:
            raise OptionError("weight='cluster' needs clusters= (one label per row)")
        return _upper_r(group_sums(Qi * e[:, None], clusters))[1]
    if weight == "unadjusted":
        ec = e - e.mean()  # linearmodels' homoskedastic weight always centres the residuals
        return float(np.sqrt(ec @ ec / e.shape[0])) * _upper_r(Qi)[1]
    raise OptionError(f"weight must be 'robust', 'cluster', 'kernel' or 'unadjusted', got "
                      f"{weight!r}")


def _gmm_step(d: IVDesign, Rs: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray]:
    Zt = solve_triangular(Rs, d.instruments.T, trans="T").T  # Q R_s^{-1}, shape (n, L)
    G = Zt.T @ d.regressors  # (L, k)
    U, T = _upper_r(G)
    coef = solve_triangular(T, U.T @ (Zt.T @ d.y))
    return coef, T, Zt, G


def gmm(y: npt.ArrayLike, X: npt.ArrayLike | None, D: npt.ArrayLike, Z: npt.ArrayLike,
        weights: npt.ArrayLike | None = None, *, weight: str = "robust",
        clusters: npt.ArrayLike | None = None, iter_limit: int = 2, tol: float = 1e-10,
        lag_weights: npt.ArrayLike | None = None) -> IVFit:
    r"""Efficient GMM with the moment conditions ``E[q_i e_i] = 0``, ``q = [X, Z]``.

    Step 1 is 2SLS; each later step uses ``W = S^{-1}`` with ``S`` the robust
    (``Σ q_i q_i' e_i²``), cluster (``Σ_g (Σ_{i∈g} q_i e_i)(…)'``), kernel (HAC:
    ``Σ_t Σ_s w_|t−s| g_t g_s'`` with ``g = q e`` in row order and ``lag_weights`` w, as
    linearmodels' ``weight_type="kernel"``) or homoskedastic (``s² Q'Q``) covariance of the
    moments at the previous step's residuals.  ``S = R_s'R_s``
    comes from a QR of the score (or cluster-sum) matrix, so
    :math:`\hat\beta` is least squares of ``R_s^{-T}Q'y`` on ``R_s^{-T}Q'R``.
    ``iter_limit=2`` is two-step GMM (linearmodels' default); larger values iterate until the
    largest relative change of a coefficient is below ``tol``.
    Hansen's J is ``n ḡ'S^{-1}ḡ`` (``ḡ = Q'e/n``) with the final estimate and the last weight
    matrix, as linearmodels ``IVGMM(...).fit().j_stat`` (uncentred, not debiased).
    """
    if iter_limit < 2:
        raise OptionError(f"iter_limit must be at least 2 (two-step GMM), got {iter_limit}")
    d = make_design(y, X, D, Z, weights)
    coef = _tsls(d).coef
    it = 1
    while it < iter_limit:
        Rs = _moment_factor(d.instruments, d.y - d.regressors @ coef, weight, clusters,
                            None if lag_weights is None else np.asarray(lag_weights))
        new, T, Zt, G = _gmm_step(d, Rs)
        change = np.max(np.abs(new - coef) / np.maximum(np.abs(coef), 1e-12))
        coef, it = new, it + 1
        if change < tol:
            break
    wres = d.y - d.regressors @ coef
    J = float(np.sum(solve_triangular(Rs, d.instruments.T @ wres, trans="T") ** 2))
    H = Zt @ G
    return IVFit(method="GMM", coef=coef, bread=T, scores=(Zt * wres[:, None]) @ G,
                 homoskedastic_meat=H.T @ H, resid=wres / d.sqrt_w, wresid=wres,
                 kappa=float("nan"), liml_kappa=float("nan"), n_instruments=G.shape[0],
                 j_stat=J, iterations=it, score_design=H)
