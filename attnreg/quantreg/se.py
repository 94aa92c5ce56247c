"""Standard errors of linear quantile regression, as R's ``quantreg::summary.rq``.

``"iid"``: Koenker–Bassett, ``τ(1 − τ) s² (X'X)⁻¹`` with the sparsity ``s`` estimated by a
median regression on the order statistics of the residuals around the Hall–Sheather band;
``"nid"``: Hendricks–Koenker, the sandwich ``τ(1 − τ) H⁻¹ X'X H⁻¹`` with ``H = X'FX`` and the
densities ``f_i = 2h / x_i'(β̂(τ + h) − β̂(τ − h))``; ``"ker"``: Powell's kernel estimate of
``H`` (Gaussian kernel); ``"boot"``: the xy-pairs bootstrap. Prior weights enter as in R: the
rows, responses and residuals multiplied by them. Matrices of the form ``A⁻¹`` are applied by
triangular solves with the R factor of a QR decomposition.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla
from scipy import stats

from attnreg._typing import FloatArray
from attnreg._warn import warn_user
from attnreg.exceptions import InferenceWarning, OptionError
from attnreg.quantreg.solver import rq_fit

__all__ = ["SE_KINDS", "bandwidth_rq", "quantreg_vcov"]

#: The ``se=`` values available.
SE_KINDS = ("nid", "iid", "ker", "boot")
_SQRT_EPS = math.sqrt(np.finfo(float).eps)  # R's .Machine$double.eps^(1/2)


def bandwidth_rq(tau: float, n: int, hs: bool = True, alpha: float = 0.05) -> float:
    """R's ``quantreg::bandwidth.rq``: Hall–Sheather (``hs=True``) or Bofinger bandwidth."""
    x0 = stats.norm.ppf(tau)
    f0 = stats.norm.pdf(x0)
    if hs:
        return float(n ** (-1 / 3) * stats.norm.ppf(1 - alpha / 2) ** (2 / 3)
                     * ((1.5 * f0**2) / (2 * x0**2 + 1)) ** (1 / 3))
    return float(n**-0.2 * ((4.5 * f0**4) / (2 * x0**2 + 1) ** 2) ** 0.2)


def _half_band(tau: float, n: int, hs: bool) -> float:
    h = bandwidth_rq(tau, n, hs)
    while tau - h < 0 or tau + h > 1:
        h /= 2
    return h


def _r_factor(X: FloatArray) -> FloatArray:
    """The p × p upper triangular R of ``X = QR``."""
    return sla.qr(X, mode="r", check_finite=False)[0][: X.shape[1]]


def _sandwich(X: FloatArray, f: FloatArray, tau: float) -> FloatArray:
    """``τ(1 − τ) H⁻¹ X'X H⁻¹`` with ``H = X'FX``: ``G = X H⁻¹`` by two triangular solves with
    the R factor of ``√f X``, then ``G'G``."""
    R = _r_factor(np.sqrt(f)[:, None] * X)
    Gt = sla.solve_triangular(R, sla.solve_triangular(R, X.T, trans="T", check_finite=False),
                              check_finite=False)  # H⁻¹ X', shape (p, n)
    return tau * (1 - tau) * (Gt @ Gt.T)


def _vcov_iid(X: FloatArray, resid: FloatArray, tau: float, hs: bool) -> FloatArray:
    n, p = X.shape
    pz = int(np.sum(np.abs(resid) < _SQRT_EPS))
    h = max(p + 1, math.ceil(n * bandwidth_rq(tau, n, hs)))
    ir = np.arange(pz + 1, h + pz + 2)  # R's 1-based (pz + 1):(h + pz + 1)
    order = np.argsort(np.abs(resid), kind="stable")
    ord_resid = np.sort(resid[order[ir - 1]])
    xt = ir / (n - p)
    sparsity = rq_fit(np.column_stack([np.ones(ir.size), xt]), ord_resid, 0.5).coef[1]
    R = _r_factor(X)
    Rinv_t = sla.solve_triangular(R, np.eye(p), trans="T", check_finite=False)  # R⁻ᵀ
    xxinv = sla.solve_triangular(R, Rinv_t, check_finite=False)  # (X'X)⁻¹ = R⁻¹R⁻ᵀ
    return float(sparsity) ** 2 * tau * (1 - tau) * xxinv


def _vcov_nid(X: FloatArray, y: FloatArray, tau: float, hs: bool) -> FloatArray:
    n = X.shape[0]
    h = _half_band(tau, n, hs)
    bhi = rq_fit(X, y, tau + h).coef
    blo = rq_fit(X, y, tau - h).coef
    dyhat = X @ (bhi - blo)
    bad = int(np.sum(dyhat <= 0))
    if bad:
        warn_user(f"{bad} non-positive fis: the fitted quantiles at tau ± h cross at "
                  f"{bad} row(s); their densities are set to 0 (as R's summary.rq)",
                  InferenceWarning)
    f = np.maximum(0.0, (2 * h) / (dyhat - _SQRT_EPS))
    return _sandwich(X, f, tau)


def _vcov_ker(X: FloatArray, y: FloatArray, coef: FloatArray, tau: float,
              hs: bool) -> FloatArray:
    n = X.shape[0]
    h = _half_band(tau, n, hs)
    uhat = y - X @ coef
    q75, q25 = np.quantile(uhat, [0.75, 0.25])  # R's type 7
    h = (stats.norm.ppf(tau + h) - stats.norm.ppf(tau - h)) * min(
        float(np.std(uhat, ddof=1)), (q75 - q25) / 1.34)
    f = stats.norm.pdf(uhat / h) / h
    return _sandwich(X, f, tau)


def _vcov_boot(X: FloatArray, y: FloatArray, tau: float, replicates: int,
               seed: int | None) -> FloatArray:
    """xy-pairs bootstrap: rows drawn with replacement, the covariance of the refits."""
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    draws = rng.integers(0, n, size=(replicates, n))
    # a resample is the rows with integer weights (their counts): the same check loss,
    # without the repeated rows that make the LP degenerate
    counts = [np.bincount(rows, minlength=n) for rows in draws]
    B = np.stack([rq_fit(X[c > 0], y[c > 0], tau, c[c > 0].astype(np.float64)).coef
                  for c in counts])  # one fit per replicate
    return np.atleast_2d(np.cov(B, rowvar=False, ddof=1))


def quantreg_vcov(se: str, X: FloatArray, y: FloatArray, coef: FloatArray, tau: float, *,
                  weights: FloatArray | None = None, hs: bool = True, replicates: int = 200,
                  seed: int | None = None) -> FloatArray:
    """The covariance of one τ's coefficients.

    Parameters
    ----------
    se : {"nid", "iid", "ker", "boot"}
    X : ndarray, shape (n, p)
    y : ndarray, shape (n,)
    coef : ndarray, shape (p,)
        The fit at ``tau``.
    tau : float
    weights : ndarray, shape (n,), optional
        Prior weights (rows, responses and residuals multiplied by them, as R).
    hs : bool
        Hall–Sheather bandwidth (else Bofinger), R's ``hs``.
    replicates, seed : int
        The bootstrap's replicates and random seed.

    Returns
    -------
    ndarray, shape (p, p)
    """
    if weights is not None:
        X, y = X * weights[:, None], y * weights
    if se == "iid":
        return _vcov_iid(X, y - X @ coef, tau, hs)
    if se == "nid":
        return _vcov_nid(X, y, tau, hs)
    if se == "ker":
        return _vcov_ker(X, y, coef, tau, hs)
    if se == "boot":
        return _vcov_boot(X, y, tau, replicates, seed)
    raise OptionError(f"se must be one of {', '.join(map(repr, SE_KINDS))}, however: {se=}")
