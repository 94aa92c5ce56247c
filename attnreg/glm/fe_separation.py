"""Separation in a Poisson GLM with absorbed fixed effects: ppmlhdfe's iterative rectifier.

Rows whose responses are all 0 in a fixed-effect level are dropped before the fit
(:func:`attnreg.glm.fe_irls.perfectly_fitted`), but a separation can also come from the
regressors, or from a combination of regressors and fixed effects that no single level shows.
The data are separated when some ``z = X b + D a`` (D the fixed-effect dummies) has ``z = 0``
where ``y > 0`` and ``z >= 0`` where ``y = 0``, not all zero; the rows with ``z > 0`` are
fitted only by a mean of 0 (Correia, Guimarães & Zylkin 2021).

:func:`rectifier` is their iterative rectifier (ppmlhdfe's ``separation(ir)``): starting from
``u = 1(y = 0)``, regress ``u`` on [X, D] by weighted least squares, the rows with ``y > 0``
weighted ``K = N0 / tol²`` (so that their fitted values are 0 within ``tol``), set fitted
values within ``tol`` of 0 to 0, stop when none is negative, else ``u = max(fitted, 0)`` and
repeat. The fitted values at the end are such a ``z``: a certificate that the rows with
``z > 0`` are separated (they are fitted values of [X, D], so exactly of the form X b + D a);
when none is positive nothing is separated. The regressions are the fixed-effects
demeaning of :func:`attnreg.fe.demean.demean`, never forming D.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular

from attnreg._typing import BoolArray, FloatArray
from attnreg.fe.demean import FixedEffects, demean
from attnreg.linear.tallqr import streaming_r

__all__ = ["RectifierResult", "rectifier"]

#: ppmlhdfe's tolerance of the rectifier: fitted values within it of 0 are 0
TOL = 1e-5
#: a row is separated when its z exceeds this share of the largest (far above the ~tol
#: residue the weighting leaves, far below the z of a separated row, of the order of 1)
SEPARATED = 1e-3


@dataclass(frozen=True)
class RectifierResult:
    """What the iterative rectifier found.

    Attributes
    ----------
    separated : ndarray of bool, shape (n,)
        Rows with ``z > 0``.
    z : ndarray, shape (n,)
        The certificate: 0 where ``y > 0`` (within ``tol``), ``>= 0`` elsewhere.
    coef : ndarray, shape (k,)
        ``b`` of ``z = X b + D a`` (which regressors take part).
    converged : bool
        No fitted value was negative within ``maxit`` iterations.
    """

    separated: BoolArray
    z: FloatArray
    coef: FloatArray
    converged: bool


def _fit(u: FloatArray, X: FloatArray, fe: FixedEffects, w: FloatArray
         ) -> tuple[FloatArray, FloatArray]:
    """Fitted values and slopes of the weighted least-squares fit of ``u`` on [X, D]
    (Frisch–Waugh–Lovell: the demeaned u on the demeaned X)."""
    dm = demean(np.column_stack([u, X]), fe, w, method="auto")
    ut, Xt = dm.resid[:, 0], dm.resid[:, 1:]
    k = Xt.shape[1]
    beta = np.zeros(k)
    if k:
        R = streaming_r(np.ascontiguousarray(Xt), ut, np.arange(k), np.zeros(k), np.sqrt(w),
                        0.0)
        r = np.triu(R[:k, :k])
        ok = np.abs(np.diag(r)) > 1e-12 * max(1.0, float(np.abs(np.diag(r)).max()))
        if ok.any():  # columns absorbed by the fixed effects take no part
            idx = np.flatnonzero(ok)
            sub = streaming_r(np.ascontiguousarray(Xt[:, idx]), ut, np.arange(idx.size),
                              np.zeros(idx.size), np.sqrt(w), 0.0)
            beta[idx] = solve_triangular(np.triu(sub[:idx.size, :idx.size]), sub[:idx.size,
                                                                                     idx.size])
    return u - (ut - Xt @ beta), beta


def rectifier(X: FloatArray, y: FloatArray, fe: FixedEffects, *, tol: float = TOL,
              maxit: int = 1000) -> RectifierResult:
    """ppmlhdfe's iterative rectifier on a Poisson design with fixed effects.

    Parameters
    ----------
    X : ndarray, shape (n, k)
        Regressors (no intercept: the fixed effects hold it).
    y : ndarray, shape (n,)
        Counts.
    fe : FixedEffects
        The fixed effects of the same rows.
    tol, maxit : float, int

    Returns
    -------
    RectifierResult
    """
    zero = y <= 0
    n, k = X.shape
    if not zero.any():
        return RectifierResult(np.zeros(n, dtype=bool), np.zeros(n), np.zeros(k), True)
    w = np.where(zero, 1.0, np.ceil(zero.sum() / tol ** 2))
    u = zero.astype(np.float64)
    beta = np.zeros(k)
    for _ in range(maxit):
        z, beta = _fit(u, X, fe, w)
        z[np.abs(z) < tol] = 0.0
        if (z >= 0).all():
            # the weighting leaves components of size ~tol in z (a slope of ~tol on a row
            # fitted by nothing): a row is separated when its z stands out of them
            top = float(z.max(initial=0.0))
            return RectifierResult(zero & (z > SEPARATED * top), z, beta, True)
        u = np.maximum(z, 0.0)
    return RectifierResult(np.zeros(n, dtype=bool), np.zeros(n), beta, False)
