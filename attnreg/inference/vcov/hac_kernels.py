"""HAC kernels, automatic bandwidths and prewhitening with sandwich's conventions.

The numerical parts of the ``"HAC"`` estimator (:mod:`attnreg.inference.vcov.hac`), on score
matrices: the kernels' weights (``kweights``), Andrews' and Newey–West's bandwidths
(``bwAndrews``, ``bwNeweyWest``), the VAR prewhitening of ``meatHAC`` and the kernel-weighted
long-run sum.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla
from scipy.signal import fftconvolve

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError

__all__ = ["BANDWIDTH_RULES", "KERNELS", "KERNEL_TITLES", "WEIGHT_TOL", "bw_andrews",
           "bw_newey_west", "kernel_weights", "long_run", "prewhiten"]

#: kernel names (and R's spellings) -> canonical name
KERNELS = {"bartlett": "bartlett", "parzen": "parzen", "qs": "qs",
           "quadratic spectral": "qs", "quadratic-spectral": "qs"}
KERNEL_TITLES = {"bartlett": "Bartlett", "parzen": "Parzen", "qs": "Quadratic Spectral"}
#: bandwidth rules
BANDWIDTH_RULES = ("andrews", "newey-west")
#: kernel weights at or below this in absolute value end the lags (sandwich's ``tol``)
WEIGHT_TOL = 1e-7
#: above this many lags the kernel sum is a convolution by FFT (below, exact lag products)
_FFT_LAGS = 64

def kernel_weights(x: FloatArray, kernel: str) -> FloatArray:
    """Kernel weights k(x), sandwich's ``kweights(x, kernel)`` (not normalised).

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.inference.vcov.hac_kernels import kernel_weights
    >>> kernel_weights(np.array([0.0, 0.25, 0.75, 1.5]), "parzen").round(4).tolist()
    [1.0, 0.7188, 0.0312, 0.0]
    """
    a = np.abs(np.asarray(x, dtype=float))
    if kernel == "bartlett":
        return np.where(a > 1, 0.0, 1.0 - a)
    if kernel == "parzen":
        return np.where(a > 1, 0.0, np.where(a < 0.5, 1 - 6 * a**2 + 6 * a**3, 2 * (1 - a)**3))

    def qs(v: FloatArray) -> FloatArray:
        y = 6 * np.pi * v / 5
        with np.errstate(divide="ignore", invalid="ignore"):
            return 3 * (1 / y) ** 2 * (np.sin(y) / y - np.cos(y))

    w = qs(a)
    small = a < 0.001  # sandwich: a Gaussian through k(0.001) near 0
    cf = 1e6 * math.log(float(qs(np.array(0.001))))
    return np.where(small, np.exp(cf * a**2), w)


def _score_weights(EF: FloatArray, intercept: bool) -> FloatArray:
    """sandwich's weights of the score columns: 1, the intercept's 0 (all 1 if none is left)."""
    k = EF.shape[1]
    w = np.ones(k)
    if intercept:
        w[0] = 0.0
    if not (w > 0).any() or k < 2:
        w = np.ones(k)
    return w


def bw_andrews(EF: FloatArray, kernel: str, *, intercept: bool, prewhite: int) -> float:
    """Andrews (1991) bandwidth with an AR(1) per score column (``bwAndrews``).

    Parameters
    ----------
    EF : ndarray, shape (n_obs - prewhite, n_coef)
        Scores in the design's columns (intercept first), already prewhitened.
    kernel : {"bartlett", "parzen", "qs"}
    intercept : bool
        Column 0 is the intercept's (weight 0).
    prewhite : int
        Only for the record: n is the number of rows of ``EF``.
    """
    n = EF.shape[0]
    a, b = EF[1:] - EF.mean(axis=0), EF[:-1] - EF.mean(axis=0)
    a, b = a - a.mean(axis=0), b - b.mean(axis=0)  # ar.ols: demeaned, with an intercept
    rho = np.einsum("ij,ij->j", a, b) / np.einsum("ij,ij->j", b, b)
    sigma2 = np.einsum("ij,ij->j", a - rho * b, a - rho * b) / (n - 1)
    w = _score_weights(EF, intercept)
    s4 = sigma2**2
    denum = np.sum(w * s4 / (1 - rho) ** 4)
    alpha2 = np.sum(w * 4 * rho**2 * s4 / (1 - rho) ** 8) / denum
    alpha1 = np.sum(w * 4 * rho**2 * s4 / ((1 - rho) ** 6 * (1 + rho) ** 2)) / denum
    if kernel == "bartlett":
        return float(1.1447 * (n * alpha1) ** (1 / 3))
    return float((2.6614 if kernel == "parzen" else 1.3221) * (n * alpha2) ** (1 / 5))


def bw_newey_west(EF: FloatArray, kernel: str, *, intercept: bool, prewhite: int) -> float:
    """Newey–West (1994) bandwidth (``bwNeweyWest``), unfloored.

    ``EF`` (shape (n_obs - prewhite, n_coef)) are the prewhitened scores in the design's
    columns; the pilot lag is floor((3 if prewhitened else 4) (n_obs/100)^rate).
    """
    n = EF.shape[0]
    n_orig = n + prewhite
    rate = {"bartlett": 2 / 9, "parzen": 4 / 25, "qs": 2 / 25}[kernel]
    m = math.floor((3 if prewhite > 0 else 4) * (n_orig / 100) ** rate)
    hw = EF @ _score_weights(EF, intercept)
    sigma = np.array([hw[: n - j] @ hw[j:] / n for j in range(m + 1)])
    j = np.arange(1, m + 1)
    s0 = sigma[0] + 2 * sigma[1:].sum()
    if kernel == "bartlett":
        s1 = 2 * np.sum(j * sigma[1:])
        return float(1.1447 * ((s1 / s0) ** 2) ** (1 / 3) * n_orig ** (1 / 3))
    s2 = 2 * np.sum(j**2 * sigma[1:])
    c = 2.6614 if kernel == "parzen" else 1.3221
    return float(c * ((s2 / s0) ** 2) ** (1 / 5) * n_orig ** (1 / 5))


def prewhiten(S: FloatArray, order: int) -> tuple[FloatArray, FloatArray]:
    """VAR(order) by least squares, no intercept (``ar(S, demean = FALSE, method = "ols")``).

    Returns the residuals, shape (n - order, k), and I − Σ_l A_l, shape (k, k), with
    u_t = Σ_l A_l u_{t−l} + ε_t in column form.
    """
    n, k = S.shape
    if n - order <= order * k:
        raise OptionError(f"prewhite={order} fits a VAR({order}) to {k} score columns, which "
                          f"needs more than {order * k} rows after the first {order}, however: "
                          f"n_obs={n}; use a lower order or prewhite=False")
    lagged = np.hstack([S[order - lag: n - lag] for lag in range(1, order + 1)])
    coef, *_ = sla.lstsq(lagged, S[order:])  # (order k, k): rows of lag l are A_l'
    resid = S[order:] - lagged @ coef
    total = coef.reshape(order, k, k).sum(axis=0).T
    return resid, np.eye(k) - total


def long_run(R: FloatArray, weights: FloatArray) -> FloatArray:
    """Σ_t Σ_s w_|t−s| R_t R_s' (``meatHAC``'s utu + t(utu), before scaling)."""
    lags = weights.size - 1
    if lags <= _FFT_LAGS:
        out = weights[0] * (R.T @ R)
        for lag in range(1, lags + 1):
            gamma = R[:-lag].T @ R[lag:]
            out += weights[lag] * (gamma + gamma.T)
        return out
    kernel = np.r_[weights[:0:-1], weights]  # w_L ... w_1 w_0 w_1 ... w_L
    KR = fftconvolve(R, kernel[:, None], mode="same", axes=0)  # (K R)_t = Σ_s w_|t−s| R_s
    out = R.T @ KR
    return (out + out.T) / 2.0
