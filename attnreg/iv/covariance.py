r"""Covariances of IV fits from the bread and the per-row scores of an :class:`IVFit`.

``A = T'T`` is the bread and ``s_i`` the scores (see :class:`attnreg.iv.estimators.IVFit`);
with the influence rows ``φ_i = A^{-1} s_i`` (two triangular solves):

* ``"classical"``: ``s² A^{-1} M A^{-1}``, ``s² = e'e / n`` (linearmodels'
  ``cov_type="unadjusted"``; for GMM, ``e`` is centred as linearmodels does) or
  ``e'e / (n - k)`` with ``debiased=True`` (R AER ``vcov(ivreg(...))`` and Stata ``ivregress, small``);
  ``M = A`` except for GMM.
* ``"HC0"``: ``Σ φ_i φ_i'`` (linearmodels ``"robust"``, AER ``sandwich::vcovHC(type="HC0")``);
  ``"HC1"`` multiplies by ``n / (n - k)`` (linearmodels ``"robust"`` with ``debiased=True``,
  AER ``vcovHC(type="HC1")``).
* ``"cluster"``: ``c Σ_g φ_g φ_g'`` with ``φ_g`` the within-cluster sums, ``c = 1``
  (linearmodels ``debiased=False``) or ``c = G/(G-1) · (n-1)/(n-k)`` with
  ``debiased=True`` (linearmodels ``debiased=True``, Stata's small-sample factor).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from scipy.linalg import solve_triangular

from attnreg.exceptions import OptionError
from attnreg.iv._design import FloatArray, group_sums
from attnreg.iv.estimators import IVFit

__all__ = ["KINDS", "influence", "iv_vcov"]

KINDS = ("classical", "HC0", "HC1", "cluster")


def influence(fit: IVFit) -> FloatArray:
    """Influence rows ``φ_i = A^{-1} s_i``, shape (n, k), by triangular solves."""
    return fit.solve_bread(fit.scores.T).T


def _sandwich(fit: IVFit, meat_factor: FloatArray) -> FloatArray:
    """``A^{-1} F'F A^{-1}`` from a factor F (m, k) of the meat."""
    B = solve_triangular(fit.bread, solve_triangular(fit.bread, meat_factor.T, trans="T"), trans="N")
    # B = A^{-1} F'  (k, m)
    return B @ B.T


def iv_vcov(fit: IVFit, kind: str = "classical", *, debiased: bool = False,
            clusters: npt.ArrayLike | None = None) -> FloatArray:
    """Covariance matrix of ``fit.coef``, shape (k, k).

    Parameters
    ----------
    fit : IVFit
    kind : {"classical", "HC0", "HC1", "cluster"}
    debiased : bool
        Small-sample factor (see the module docstring); ``"HC1"`` always has it.
    clusters : array_like, shape (n,), optional
        Cluster labels, required for ``kind="cluster"``.

    Returns
    -------
    ndarray, shape (k, k)
    """
    n, k = fit.nobs, fit.n_params
    if kind == "classical":
        e = fit.wresid - fit.wresid.mean() if fit.method == "GMM" else fit.wresid
        s2 = float(e @ e) / (n - k if debiased else n)
        ident = np.eye(k)
        Ainv = fit.solve_bread(ident)
        V = s2 * (Ainv @ fit.homoskedastic_meat @ Ainv)
    elif kind in ("HC0", "HC1"):
        V = _sandwich(fit, fit.scores)
        if kind == "HC1" or debiased:
            V = V * (n / (n - k))
    elif kind == "cluster":
        if clusters is None:
            raise OptionError("kind='cluster' needs clusters= (one label per row)")
        sums = group_sums(fit.scores, clusters)
        g = sums.shape[0]
        if g < 2:
            raise OptionError(f"kind='cluster' needs at least 2 clusters, got {g}")
        V = _sandwich(fit, sums)
        if debiased:
            V = V * (g / (g - 1) * (n - 1) / (n - k))
    else:
        raise OptionError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    return (V + V.T) / 2
