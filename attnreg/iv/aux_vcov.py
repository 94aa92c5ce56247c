r"""Covariances of the auxiliary regressions behind an IV fit's weak-instrument statistics
and diagnostics, from the shared covariance registry.

Each robust statistic of the weak-instrument block and of AER's diagnostics is a Wald test
in a least-squares regression on the fit's rows: the first stage ``D_j ~ X + Z`` (robust
first-stage F, the Kleibergen–Paap rk statistics, the effective F) or the control-function
regression ``y ~ X + D + V̂`` (robust Wu–Hausman). Its covariance is the registry's
(:func:`attnreg.linear.score_vcov.score_vcov`) for that regression's own score design: its
regressors, its residuals, the prior weights, its own hat values (HC2–HC5) and the cluster
ids and periods of the fit's bound :class:`~attnreg.inference.vcov.registry.VcovSpec`. No covariance
formula lives here.

Examples
--------
>>> import numpy as np
>>> from attnreg.iv._design import make_design
>>> from attnreg.iv.aux_vcov import aux_vcov
>>> from attnreg.linear.score_vcov import bind_vcov
>>> rng = np.random.default_rng(0)
>>> X, Z = np.ones((60, 1)), rng.normal(size=(60, 2))
>>> D = Z @ [1.0, 0.5] + rng.normal(size=60)
>>> d = make_design(np.zeros(60), X, D, Z)
>>> v = d.annihilate(d.D[:, 0])                        # first-stage residuals
>>> V = aux_vcov(d.instruments, v, d, bind_vcov("HC0", n_obs=60), df_resid=57, intercept=0)
>>> A = d.instruments
>>> Q = np.linalg.solve(A.T @ A, A.T)                  # HC0 by hand
>>> bool(np.allclose(V, (Q * v**2) @ Q.T))
True
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd
import scipy.linalg as sla

from attnreg.exceptions import OptionError
from attnreg.iv._design import FloatArray, IVDesign
from attnreg.inference.vcov.registry import VcovSpec
from attnreg.linear.score_vcov import ScoreDesign, bind_vcov, score_vcov

__all__ = ["LEGACY_KINDS", "aux_vcov", "control_function_wald", "legacy_specs", "n_clusters",
           "quad_form", "unscaled"]

#: The ``kind=`` of the array-level weak-instrument function (bound here to registry specs).
LEGACY_KINDS = ("HC0", "HC1", "cluster")


def aux_vcov(regressors: FloatArray, resid: FloatArray, d: IVDesign, spec: VcovSpec, *,
             df_resid: float, intercept: int | None,
             absorbed_hat: FloatArray | None = None) -> FloatArray:
    """The registry's covariance ``spec`` of an auxiliary least-squares regression.

    Parameters
    ----------
    regressors : ndarray, shape (n, m)
        The regression's columns on the fit's weighted scale (``sqrt(w)`` times the data's,
        as the arrays of ``d``).
    resid : ndarray, shape (n,)
        Its residuals on the same scale (or the restricted ones, for a score test).
    d : IVDesign
        The fit's arrays (its ``sqrt_w``).
    spec : VcovSpec
        A bound covariance other than the classical one.
    df_resid : float
        n − m − (levels absorbed by fixed effects): HC1's and vcovCL's n − k.
    intercept : int or None
        The column of ``regressors`` that is the intercept (HAC bandwidths give it weight 0).
    absorbed_hat : ndarray, shape (n,), optional
        The absorbed fixed effects' own leverage ``w_i d_i'(D'WD)⁺d_i``, added to the hat
        values of the demeaned regressors (HC2–HC5: the dummy-variable regression's).

    Returns
    -------
    ndarray, shape (m, m)
    """
    if spec.estimator.classical:
        raise OptionError("the auxiliary regressions' Wald tests need a robust covariance, "
                          f"however: vcov={spec.kind!r}")
    sw = d.sqrt_w
    weighted = not bool(np.all(sw == 1.0))
    A = regressors / sw[:, None] if weighted else regressors
    r = resid / sw if weighted else resid
    hat = None
    if absorbed_hat is not None and spec.estimator.needs_hat:
        Qa = sla.qr(regressors, mode="economic")[0]  # hat values of sqrt(w) A: row norms of Q
        hat = np.sum(Qa**2, axis=1) + absorbed_hat
    hand = ScoreDesign(A, r, sigma2=float("nan"), df_resid=float(df_resid),
                       weights=sw**2 if weighted else None, intercept=intercept, hat=hat)
    return score_vcov(hand, spec)


def control_function_wald(d: IVDesign, spec: VcovSpec, *, absorbed: int = 0,
                          intercept: int | None = None,
                          absorbed_hat: FloatArray | None = None) -> float:
    """The Wald statistic of ``γ = 0`` in ``y = [X, D]β + V̂γ + u`` (``V̂ = M_Q D``) under
    ``spec``: the robust Wu–Hausman (AER's, times k2) and Wooldridge's regression test.

    Parameters
    ----------
    d : IVDesign
    spec : VcovSpec
        A bound robust covariance.
    absorbed : int
        Levels absorbed by fixed effects (the residual df is n − k1 − 2 k2 − absorbed).
    intercept : int, optional
        X's intercept column.
    absorbed_hat : ndarray, shape (n,), optional
        The fixed effects' own leverage (:func:`aux_vcov`).

    Returns
    -------
    float
    """
    k = d.X.shape[1] + d.D.shape[1]
    A = np.hstack([d.regressors, d.annihilate(d.D)])
    coef, *_ = np.linalg.lstsq(A, d.y, rcond=None)
    u = d.y - A @ coef
    V = aux_vcov(A, u, d, spec, df_resid=d.n - A.shape[1] - absorbed, intercept=intercept,
                 absorbed_hat=absorbed_hat)
    return quad_form(np.asarray(coef[k:], dtype=np.float64), V[k:, k:])


def quad_form(g: FloatArray, W: FloatArray) -> float:
    """``g' W^{-1} g`` for a symmetric positive definite W (m, m), by Cholesky (no inverse)."""
    return float(g @ sla.cho_solve(sla.cho_factor(W), g))


def unscaled(spec: VcovSpec) -> VcovSpec:
    """``spec`` without vcovCL's cluster adjustments (G/(G − 1) and (n − 1)/(n − k)), as
    ivreg2 computes the rk statistics without ``small``; every other covariance as it is."""
    if spec.kind != "cluster" or spec.option("type") == "CR2":
        return spec
    options = {**dict(spec.options), "type": "HC0", "cadjust": False}
    return dataclasses.replace(spec, options=tuple(sorted(options.items())))


def n_clusters(spec: VcovSpec) -> int | None:
    """The clusters of a cluster covariance (the fewest over the dimensions), else None."""
    if spec.kind != "cluster":
        return None
    return int(min(spec.option("cluster").n_clusters))


def legacy_specs(kind: str, clusters: Any, n: int, debiased: bool) -> tuple[VcovSpec, VcovSpec]:
    """The registry's covariances for the array-level ``kind=``: (first-stage F's, the rk
    statistics' and effective F's). ``debiased`` gives HC0 the factor n/(n − k) and a
    cluster covariance vcovCL's HC1 adjustments; HC1 has n/(n − k) always; the rk statistics
    use cluster sums unscaled."""
    if kind not in LEGACY_KINDS:
        raise OptionError(f"kind must be one of {', '.join(LEGACY_KINDS)}; got {kind!r}")
    if kind == "cluster":
        if clusters is None:
            raise OptionError("kind='cluster' needs clusters= (one label per row)")
        ids = pd.Series(np.asarray(clusters).reshape(-1), name="cluster")
        raw = bind_vcov("cluster", n_obs=n, cluster=ids, type="HC0", cadjust=False)
        return (bind_vcov("cluster", n_obs=n, cluster=ids) if debiased else raw), raw
    first = bind_vcov("HC1" if kind == "HC1" or debiased else "HC0", n_obs=n)
    return first, (first if first.kind == kind else bind_vcov(kind, n_obs=n))
