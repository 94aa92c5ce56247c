r"""Covariances of IV fits: what an :class:`IVFit` hands over to the shared covariance registry.

No covariance formula lives here. An IV fit's covariance is ``H^{-1} (Σ s_i s_i') H^{-1}``
with scores ``s_i = a_i e_i`` (``e`` the structural residuals on the weighted scale) and
``H = T'T`` the bread factor of :class:`IVFit`; :func:`score_design` hands over the rows
``a_i`` (:attr:`IVFit.score_design`), the residuals and ``T``, and
:func:`attnreg.linear.score_vcov.score_vcov` computes any registered covariance (classical,
HC0–HC5, HAC, one- and multi-way cluster, CR2, Driscoll–Kraay) from them:

* 2SLS: ``a_i = x̂_i`` and ``H = X̂'X̂`` (sandwich on ``AER::ivreg``, linearmodels' IV2SLS);
* k-class (LIML, Fuller): ``a_i = x̂_i`` and ``H = R'(I − κ M_Q)R``, linearmodels' IVLIML
  convention; the classical covariance is ``s² H^{-1}``;
* GMM and CUE: ``a_i = G'z̃_i`` (``z̃ = Q R_s^{-1}``, the instruments in the metric of the
  efficient weight matrix) and ``H = G'G``. Their sandwich differs from the others in the
  weight matrix only, which enters through ``a_i`` and ``H`` (the estimator's own); their
  classical covariance is ``H^{-1} (s² Σ a_i a_i') H^{-1}`` with the *centred* residuals'
  ``s²``, as linearmodels' IVGMM with ``cov_type="unadjusted"`` (the homoskedastic meat of
  the moments, which is not ``s² H``).

HC2 and HC3 use AER's hat values of an IV fit, the diagonal of ``X (X̂'X̂)^{-1} X̂'``
(:func:`iv_hat`; ``H`` in place of ``X̂'X̂`` for the other estimators).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from attnreg.exceptions import DataError, OptionError
from attnreg.iv._design import FloatArray
from attnreg.iv.estimators import IVFit
from attnreg.inference.vcov.registry import VCOV_REGISTRY, get_vcov
from attnreg.linear.score_vcov import ScoreDesign, bind_vcov, score_vcov

__all__ = ["KINDS", "influence", "iv_hat", "iv_vcov", "score_design"]

#: The covariances of the array-level :func:`iv_vcov` that take no options.
KINDS = ("classical", "HC0", "HC1", "HC2", "HC3", "cluster", "HAC")


def influence(fit: IVFit) -> FloatArray:
    """Influence rows ``φ_i = H^{-1} s_i``, shape (n, k), by triangular solves."""
    return fit.solve_bread(fit.scores.T).T


def iv_hat(fit: IVFit, regressors: FloatArray) -> FloatArray:
    """AER's ``hatvalues(ivreg)``: ``h_i = r_i' H^{-1} a_i``, shape (n,).

    ``regressors`` are the rows ``r_i`` of ``[X, D]`` on the weighted scale (``sqrt(w)``
    times the data's, w rescaled to mean 1 as the fit's), ``a_i`` the score design's rows
    (``x̂_i`` for 2SLS, where this is the diagonal of ``X (X̂'X̂)^{-1} X̂'``).
    """
    if fit.score_design is None:
        raise OptionError("this IV fit carries no score design (fit it with attnreg.iv's "
                          "estimators)")
    return np.einsum("ij,ji->i", regressors, fit.solve_bread(fit.score_design.T))


def score_design(fit: IVFit, *, df_resid: float, weights: FloatArray | None = None,
                 intercept: int | None = None, hat: FloatArray | None = None) -> ScoreDesign:
    """What ``fit`` hands over to :func:`~attnreg.linear.score_vcov.score_vcov`.

    Parameters
    ----------
    fit : IVFit
    df_resid : float
        n − k (k the coefficients and any absorbed levels): the classical ``s²`` divides by
        it, and HC1 and vcovCL's HC1 use it.
    weights : ndarray, shape (n,), optional
        The prior weights the fit used (the score rows are then handed over unweighted, so
        that an intercept column is constant).
    intercept : int, optional
        The intercept's column.
    hat : ndarray, shape (n,), optional
        Hat values for HC2/HC3 (:func:`iv_hat`).

    Returns
    -------
    ScoreDesign
    """
    if fit.score_design is None:
        raise OptionError("this IV fit carries no score design (fit it with attnreg.iv's "
                          "estimators)")
    A, e = fit.score_design, fit.wresid
    gmm_like = not np.isfinite(fit.kappa)  # GMM and CUE: no κ
    ec = e - e.mean() if gmm_like else e  # linearmodels centres GMM's homoskedastic s²
    sigma2 = float(ec @ ec) / df_resid if df_resid > 0 else float("nan")
    if weights is not None and np.all(weights > 0):
        weights = weights / weights.mean()  # the fit's weights are rescaled to mean 1
        sw = np.sqrt(weights)
        A, e = A / sw[:, None], e / sw
    elif weights is not None:  # the weighted rows as they are: no constant column
        weights, intercept = None, None
    if gmm_like:  # G'z̃_i has no constant column
        intercept = None
    # the fit's own bread factor (2SLS: H = X̂'X̂, A's own cross-product): the classical
    # covariance needs no other decomposition
    return ScoreDesign(A, e, sigma2=sigma2, df_resid=float(df_resid), weights=weights,
                       intercept=intercept, hessian=fit.bread,
                       classical="scores" if gmm_like else "hessian", hat=hat)


def iv_vcov(fit: IVFit, kind: str = "classical", *, debiased: bool = False,
            clusters: npt.ArrayLike | None = None, regressors: FloatArray | None = None,
            **options: Any) -> FloatArray:
    """Covariance matrix of ``fit.coef``, shape (k, k), under any registered covariance.

    Parameters
    ----------
    fit : IVFit
    kind : str
        A name of :data:`~attnreg.inference.vcov.registry.VCOV_REGISTRY`: ``"classical"`` (``s²``
        on n, or n − k with ``debiased=True``: AER's ``vcov(ivreg)``), ``"HC0"`` (times
        n/(n − k) with ``debiased=True``: linearmodels' robust), ``"HC1"``, ``"HC2"``,
        ``"HC3"`` (need ``regressors``), ``"cluster"`` (``clusters=``: G/(G − 1) · (n − 1)/(n − k)
        with ``debiased=True``, linearmodels' convention; no factor otherwise), ``"HAC"``...
    debiased : bool
        The small-sample factors above.
    clusters : array_like, shape (n,), optional
        Cluster labels, required for ``kind="cluster"``.
    regressors : ndarray, shape (n, k), optional
        ``sqrt(w) [X, D]`` (w rescaled to mean 1, as the fit's), for the hat values of HC2
        and HC3 (:func:`iv_hat`).
    **options
        The covariance's other options (``maxlags=``, ``kernel=``, ...).

    Returns
    -------
    ndarray, shape (k, k)
    """
    get_vcov("classical")  # the built-in estimators are registered on first lookup
    if not isinstance(kind, str) or kind not in VCOV_REGISTRY:
        raise OptionError(f"kind must be one of {', '.join(KINDS)} (or another registered "
                          f"covariance); got {kind!r}")
    n, k = fit.nobs, fit.n_params
    if kind == "cluster":
        options = {**options, **_cluster_options(clusters, n, debiased)}
    spec = bind_vcov(kind, n_obs=n, **options)
    hat = None
    if spec.estimator.needs_hat and get_vcov(kind).name != "classical":
        if regressors is None:
            raise OptionError(f"kind={kind!r} needs the hat values: pass regressors= "
                              "(sqrt(w) [X, D], shape (n, k))")
        hat = iv_hat(fit, regressors)
    hand = score_design(fit, df_resid=n - k, hat=hat)
    V = score_vcov(hand, spec)
    if spec.estimator.classical and not debiased:
        V = V * ((n - k) / n)
    elif kind == "HC0" and debiased:
        V = V * (n / (n - k))
    return V


def _cluster_options(clusters: npt.ArrayLike | None, n: int, debiased: bool) -> dict[str, Any]:
    """``cluster=`` ids and linearmodels' small-sample convention (``debiased``)."""
    if clusters is None:
        raise OptionError("kind='cluster' needs clusters= (one label per row)")
    ids = np.asarray(clusters).reshape(-1)
    if ids.shape[0] != n:
        raise DataError(f"clusters must have one label per row: {n} expected, got {ids.shape[0]}")
    g = int(np.unique(ids).shape[0])
    if g < 2:
        raise OptionError(f"kind='cluster' needs at least 2 clusters, got {g}")
    if debiased:
        return {"cluster": ids, "type": "HC1"}
    return {"cluster": ids, "type": "HC0", "cadjust": False}
