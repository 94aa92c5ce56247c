"""Any registered covariance for an estimator that hands over its score design and residuals.

An estimator whose sandwich covariance is B (Σ_i s_i s_iᵀ) B with scores s_i = w_i a_i r_i
hands over the rows a_i of its *score design* A, the *score residuals* r, the row weights w,
the classical scale σ² and the residual df (a :class:`ScoreDesign`); :func:`score_vcov` then
computes every covariance of :data:`~attnreg.inference.vcov.registry.VCOV_REGISTRY` (classical,
HC0–HC5, HAC with sandwich's kernels and bandwidths, one- and multi-way cluster, CR2,
Driscoll–Kraay) with the registry's own code, in the coordinates of the
:class:`~attnreg.linear.spectral.Spectrum` of √w A (the weighted least-squares fit of r on
A). Nothing about the covariances is written twice:

- k-class IV (2SLS, LIML, Fuller): A the projected regressors X̂ = P_Z X, r = y − Xβ, w the
  prior weights (``sandwich`` on ``AER::ivreg`` and linearmodels' IV2SLS/IVLIML);
- a GLM: A = X, r = z − η the working residuals, w the final IRLS weights (``sandwich`` on
  ``glm``: its ``estfun`` is w (z − η) x and its bread (XᵀWX)⁻¹).

When B is the inverse of A's own cross-product, (AᵀWA)⁻¹, the registry's result is the
covariance. Otherwise the estimator also hands over the factor T (upper triangular,
TᵀT = H) of its Hessian, B = H⁻¹, and the covariance is K V_A Kᵀ with V_A the registry's
covariance for A and K = H⁻¹ (AᵀWA) (two triangular solves). Its classical covariance is
then σ² H⁻¹ (``classical="hessian"``: LIML and Fuller, as linearmodels' ``IVLIML``) or the
sandwich of the homoskedastic meat σ² AᵀWA (``classical="scores"``: GMM, as linearmodels'
``IVGMM`` with ``cov_type="unadjusted"``).

Hat values (HC2, HC3, HC4–HC5) are those of √w A unless the estimator hands over its own
(``AER::hatvalues.ivreg`` is the diagonal of the asymmetric X (X̂ᵀX̂)⁻¹ X̂ᵀ).

Examples
--------
>>> import numpy as np
>>> from attnreg.inference.vcov.registry import make_vcov_spec
>>> from attnreg.linear.score_vcov import ScoreDesign, score_vcov
>>> rng = np.random.default_rng(0)
>>> A = np.column_stack([np.ones(50), rng.normal(size=50)])
>>> r = rng.normal(size=50)
>>> hand = ScoreDesign(A, r, sigma2=float(r @ r) / 48, df_resid=48.0, intercept=0)
>>> V = score_vcov(hand, make_vcov_spec("HC0"))
>>> Q = np.linalg.solve(A.T @ A, A.T)          # (AᵀA)⁻¹ Aᵀ: the HC0 sandwich by hand
>>> bool(np.allclose(V, (Q * r**2) @ Q.T))
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.linalg import solve_triangular

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.linear.filters import hat_diagonal, ols_filter
from attnreg.inference.vcov.registry import (
    VcovSpec,
    make_vcov_spec,
    middle_matrix,
    scale_back,
    vcov_scaled,
)
from attnreg.linear.spectral import Spectrum, decompose

__all__ = ["ScoreDesign", "bind_vcov", "score_vcov"]


@dataclass(frozen=True, eq=False)
class ScoreDesign:
    """What an estimator hands over for its covariances (see the module docstring).

    Attributes
    ----------
    A : ndarray, shape (n_obs, k)
        The score design's rows a_i (unweighted: √w enters through ``weights``).
    resid : ndarray, shape (n_obs,)
        The score residuals r_i (unweighted).
    sigma2 : float
        Scale of the classical covariance (σ² H⁻¹ or σ² (AᵀWA)⁻¹).
    df_resid : float
        Residual degrees of freedom n − k (HC1's n/(n − k), vcovCL's (n − 1)/(n − k)).
    weights : ndarray, shape (n_obs,), or None
        Row weights w (prior weights, or a GLM's working weights).
    intercept : int or None
        The column of A that is constant 1 (sandwich gives it weight 0 in its HAC
        bandwidths); None when there is none.
    hessian : ndarray, shape (k, k), or None
        Upper triangular T with TᵀT = H when the bread is H⁻¹ ≠ (AᵀWA)⁻¹.
    classical : {"hessian", "scores"}
        With ``hessian``: the classical covariance σ² H⁻¹, or H⁻¹ (σ² AᵀWA) H⁻¹.
    hat : ndarray, shape (n_obs,), or None
        The estimator's own hat values (default: those of √w A).
    """

    A: FloatArray
    resid: FloatArray
    sigma2: float
    df_resid: float
    weights: FloatArray | None = None
    intercept: int | None = None
    hessian: FloatArray | None = field(default=None, repr=False)
    classical: Literal["hessian", "scores"] = "hessian"
    hat: FloatArray | None = field(default=None, repr=False)

    @property
    def n_obs(self) -> int:
        """Rows n."""
        return int(self.A.shape[0])

    @cached_property
    def spectrum(self) -> Spectrum:
        """The spectrum of √w A (r as its response), in which the registry computes."""
        # U stored (A is in memory already): the registry reads its rows once per statistic
        return decompose(self.A, self.resid, intercept=self.intercept, weights=self.weights,
                         scaling="sd", lazy_u=False)

    @cached_property
    def bread_map(self) -> FloatArray | None:
        """K = H⁻¹ (AᵀWA), shape (k, k), by two triangular solves (None without ``hessian``)."""
        if self.hessian is None:
            return None
        Aw = self.A if self.weights is None else self.A * np.sqrt(self.weights)[:, None]
        T = self.hessian
        return solve_triangular(T, solve_triangular(T, Aw.T @ Aw, trans="T"))


def score_vcov(hand: ScoreDesign, spec: VcovSpec) -> FloatArray:
    """The covariance ``spec`` of an estimator's coefficients, shape (k, k).

    Parameters
    ----------
    hand : ScoreDesign
        What the estimator handed over.
    spec : VcovSpec
        A bound covariance (:func:`bind_vcov` or
        :func:`~attnreg.inference.vcov.registry.make_vcov_spec`).

    Returns
    -------
    ndarray, shape (k, k)
        NaN rows and columns for columns of A that are linear combinations of others.
    """
    k = hand.A.shape[1]
    if spec.estimator.classical and hand.hessian is not None and hand.classical == "hessian":
        Tinv = solve_triangular(hand.hessian, np.eye(k))  # the covariance itself: σ² H⁻¹
        return hand.sigma2 * (Tinv @ Tinv.T)
    sp = hand.spectrum
    f = ols_filter(sp.s)
    e = sp.y_exponent
    resid_w = hand.resid if hand.weights is None else hand.resid * np.sqrt(hand.weights)
    if hand.hat is not None:
        hat = hand.hat
    else:
        hat = hat_diagonal(sp, f) if spec.estimator.needs_hat else np.full(sp.n_obs, np.nan)
    middle = middle_matrix(sp, spec=spec, sigma2=float(np.ldexp(hand.sigma2, -2 * e)),
                           resid_w=np.ldexp(resid_w, -e), hat=hat, df_resid=hand.df_resid,
                           f=f)
    Vz, E = vcov_scaled(sp, f, k, middle)
    K = hand.bread_map
    if K is None:
        return scale_back(spec.estimator.adjust_vcov(spec, Vz, E), E)
    V = K @ scale_back(Vz, E) @ K.T
    V = spec.estimator.adjust_vcov(spec, (V + V.T) / 2.0, np.zeros(k, dtype=np.int64))
    return np.asarray(V)


def bind_vcov(kind: str, *, n_obs: int, design: Any = None, **options: Any) -> VcovSpec:
    """A registered covariance bound to a fit's rows (cluster ids and periods resolved).

    As :func:`~attnreg.inference.vcov.registry.make_vcov_spec`; ``cluster=`` / ``time=`` name
    columns of ``design``'s data or give one id per row. Without a design (an estimator
    fitted on arrays), ids are given one per row of the fit.

    Parameters
    ----------
    kind : str
        A name in :data:`~attnreg.inference.vcov.registry.VCOV_REGISTRY`.
    n_obs : int
        Rows of the fit.
    design : Design, optional
        The fit's design (its data and the positions of its rows).
    **options
        The estimator's options (``maxlags=``, ``cluster=``, ``type=``, ...).

    Returns
    -------
    VcovSpec
    """
    if design is None:
        design = _RowsOnly(n_obs)
    maxlags = options.pop("maxlags", None)
    adjust = options.pop("adjust", False)
    if not isinstance(kind, str):
        raise OptionError(f"vcov must be a covariance name, however: vcov={kind!r}")
    return make_vcov_spec(kind, maxlags=maxlags, adjust=adjust, n_obs=n_obs, design=design,
                          **options)


class _RowsOnly:
    """A stand-in design for a fit on arrays: ids are given one per row of the fit."""

    data = None
    data_rows = None
    data_complete = True

    def __init__(self, n_obs: int) -> None:
        self.n_obs = n_obs
        self.row_labels = pd.RangeIndex(n_obs)
