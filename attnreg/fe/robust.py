"""Robust standard errors of predictions that include the fixed effects.

A prediction of the dummy-variable regression is linear in y: ŷ₀ = Σᵢ wᵢ cᵢ yᵢ with
c = D (D'WD)⁺d₀ + X̃ (X̃'WX̃)⁻¹x̃₀ (the block inverse of [X D]'W[X D] through the residualised
regressors X̃, as in :mod:`attnreg.fe.predict`). A sandwich covariance of the coefficients,
used for z₀'θ̂, is then the same sum of squared score sums Σ_g (Σ_{i∈g} wᵢ cᵢ êᵢ)², with the
estimator's small-sample factors: HC0–HC3 (rows as clusters, HC2/HC3 residuals rescaled by
the leverages), and one- or multi-way cluster (sandwich's G/(G − 1) per intersection and
(n − 1)/(n − K) for HC1, or fixest's, :mod:`attnreg.fe.ssc`). Without the negative-eigenvalue
fix of a multi-way covariance (a single variance needs none: a negative one is NaN).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np
import scipy.linalg as sla

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import OptionError
from attnreg.fe.solve import BLOCK_ENTRIES
from attnreg.fe.ssc import nested_fixed_effects

if TYPE_CHECKING:
    from attnreg.fe.results import FixedEffectsResults

__all__ = ["ROBUST_KINDS", "prediction_weights", "robust_prediction_variance"]

#: covariances under which predictions with fixed effects have robust standard errors
ROBUST_KINDS = ("HC0", "HC1", "HC2", "HC3", "cluster")


def prediction_weights(fit: FixedEffectsResults, Xt0: FloatArray,
                       codes: list[IntArray]) -> FloatArray:
    """c = D (D'WD)⁺d₀ + X̃ (X̃'WX̃)⁻¹x̃₀ for each new row, so that ŷ₀ = Σᵢ wᵢ cᵢ yᵢ.

    Parameters
    ----------
    fit : FixedEffectsResults
    Xt0 : ndarray, shape (m, n_coef)
        The new rows' regressors less their fixed-effect part (x̃₀).
    codes : list of ndarray of int, each shape (m,)
        Their level in each fixed effect (all seen).

    Returns
    -------
    ndarray, shape (n_obs, m)
        The fixed effects' part by sparse solves (:class:`attnreg.fe.solve.LevelSolver`).
    """
    return fit._level_solver.projection(codes) + _slope_weights(fit, Xt0)


def _slope_weights(fit: FixedEffectsResults, Xt0: FloatArray) -> FloatArray:
    """X̃ (X̃'WX̃)⁻¹ x̃₀ over the estimable slopes: shape (n_obs, m)."""
    kept = np.asarray(fit.spectrum.kept, dtype=np.int64)
    X = fit.design.X[:, kept]
    if not kept.size:
        return np.zeros((X.shape[0], Xt0.shape[0]))
    w = np.ones(X.shape[0]) if fit.design.weights is None else fit.design.weights
    gram = X.T @ (w[:, None] * X)
    B = sla.cho_solve(sla.cho_factor(gram), Xt0[:, kept].T)
    return np.asarray(X @ B)


def _cluster_meat(fit: FixedEffectsResults, S: FloatArray) -> FloatArray:
    """Σ over intersections of sign · adj · Σ_g (score sums)², with the HC1 factor."""
    spec = fit.vcov_spec
    ids = spec.option("cluster")
    dims = ids.codes.shape[1]
    fixest = fit.ssc == "fixest"
    cadjust = bool(spec.option("cadjust"))
    total = np.zeros(S.shape[1])
    for size in range(1, dims + 1):
        for subset in itertools.combinations(range(dims), size):
            _, code = np.unique(ids.codes[:, list(subset)], axis=0, return_inverse=True)
            code = code.reshape(-1)
            g = int(code.max()) + 1
            sums = np.zeros((g, S.shape[1]))
            np.add.at(sums, code, S)
            adj = 1.0
            if cadjust and not fixest:
                adj = g / (g - 1.0)
            total += (-1) ** (size + 1) * adj * np.einsum("gm,gm->m", sums, sums)
    if cadjust and fixest:
        g_min = min(ids.n_clusters)
        total *= g_min / (g_min - 1.0)
    if spec.option("type") == "HC1":
        k = fit.edf
        if fixest:
            levels, count = nested_fixed_effects(fit.absorbed.fe, ids.codes)
            k = k - levels + count
        total *= (fit.nobs - 1.0) / (fit.nobs - k)
    return total


def robust_prediction_variance(fit: FixedEffectsResults, Xt0: FloatArray,
                               codes: list[IntArray]) -> FloatArray:
    """Variance of the predictions under the fit's robust covariance.

    Parameters
    ----------
    fit : FixedEffectsResults
    Xt0 : ndarray, shape (m, n_coef)
        The new rows' regressors less their fixed-effect part (x̃₀).
    codes : list of ndarray of int, each shape (m,)
        Their level in each fixed effect (all seen).

    Returns
    -------
    ndarray, shape (m,)
    """
    kind = fit.vcov_spec.kind
    if kind not in ROBUST_KINDS or (kind == "cluster" and fit.vcov_spec.option("type") == "CR2"):
        raise OptionError(f"intervals of predictions with fixed effects are computed under "
                          f"the classical, HC0-HC3 and cluster (HC0, HC1) covariances, however "
                          f"the fit uses {kind!r}")
    w = np.ones(fit.nobs) if fit.design.weights is None else fit.design.weights
    e = w * fit._resid_fit
    if kind in ("HC2", "HC3"):
        e = e / (np.sqrt(1.0 - fit._hat) if kind == "HC2" else 1.0 - fit._hat)
    out = np.empty(Xt0.shape[0])
    step = max(1, BLOCK_ENTRIES // max(fit.nobs, 1))  # new rows at a time: N × step numbers
    for lo in range(0, Xt0.shape[0], step):
        part = [c[lo:lo + step] for c in codes]
        S = e[:, None] * prediction_weights(fit, Xt0[lo:lo + step], part)
        if kind == "cluster":
            out[lo:lo + step] = _cluster_meat(fit, S)
        else:
            out[lo:lo + step] = np.einsum("im,im->m", S, S)
    return out * (fit.nobs / fit.df_resid if kind == "HC1" else 1.0)
