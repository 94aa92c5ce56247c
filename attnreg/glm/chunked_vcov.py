"""The covariances of a GLM fitted chunk by chunk: the registry's estimators, fed by its final pass.

No covariance formula lives here. The final pass over the rows accumulates what the registered
estimator asks of the scores (:meth:`~attnreg.inference.vcov.registry.CovarianceEstimator.score_needs`:
cross-products, Bartlett-lagged ones across chunk boundaries, score sums per cluster or
period) in the coordinates where the bread is the identity: with X'WX = R'R (R the last IRLS
step's factor) the scores w_i (z_i − η_i) x_i are mapped to s̃_i = R⁻ᵀ s_i, the rows of the
orthonormal basis √W X R⁻¹ times the weighted working residuals, as the spectral scores of a
linear fit are. The estimator computes its middle matrix M from them
(:meth:`~attnreg.inference.vcov.registry.CovarianceEstimator.middle_from_scores`, the same code as
for an in-memory or chunked linear fit) and the covariance is R⁻¹ M R⁻ᵀ: vcovHC HC0–HC3 (the
hat values w_i x_iᵀ(X'WX)⁻¹x_i come with the rows), vcovCL one- and multi-way, Newey–West
with fixed lags, Driscoll–Kraay, and the classical dispersion × (X'WX)⁻¹.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy.linalg import solve_triangular

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.large.covariance import score_stats
from attnreg.large.meat import MeatPart
from attnreg.inference.vcov.registry import VcovSpec, check_vcov_options, get_vcov, make_vcov_spec
from attnreg.inference.vcov.scorestats import ScoreNeeds, ScoreStats

__all__ = ["ScoreAccumulator", "check_streamed_vcov", "streamed_vcov"]


def check_streamed_vcov(checked: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """The covariance of a chunked GLM's ``vcov=`` and its checked options (None: classical);
    OptionError, before any pass, for one that needs every row or ids given as values."""
    v = checked["vcov"]
    if v["vcov"] == "classical":
        return None
    options = dict(v["options"])
    if v["vcov"] == "cluster":
        if not isinstance(v["cluster"], (str, list, tuple)):
            raise OptionError("cluster= of a chunked GLM must name a column of the data, "
                              f"however: type(cluster) is {type(v['cluster']).__name__}")
        options.update(cluster=v["cluster"], type=v["type"] or "HC1")
    estimator = get_vcov(v["vcov"])
    options = check_vcov_options(estimator.name, **options)
    estimator.check_streamed(options)
    return estimator.name, options


class ScoreAccumulator:
    """What a registered covariance needs of a chunked GLM's scores, one chunk at a time.

    Parameters
    ----------
    spec : VcovSpec
        The covariance bound for a fit that keeps no rows
        (:meth:`~attnreg.inference.vcov.registry.CovarianceEstimator.bind_streamed`).
    r : ndarray, shape (k, k)
        Upper triangular R with X'WX = R'R.
    """

    def __init__(self, spec: VcovSpec, r: FloatArray) -> None:
        self.spec = spec
        needs = spec.estimator.score_needs(spec)
        assert needs is not None  # checked by check_streamed_vcov
        self.needs: ScoreNeeds = needs
        self.r = r
        self.part = MeatPart.empty(1 + r.shape[0], needs.maxlags)

    @property
    def keys(self) -> tuple[str, ...]:
        """The columns the pass must read (cluster or period ids)."""
        return tuple(self.needs.keys) if self.needs.groups else ()

    def add(self, X: FloatArray, u: FloatArray, w: FloatArray, ids: pd.DataFrame | None) -> None:
        """Add a chunk: design rows X (kept columns), score multipliers u = w (z − η) (the
        scores are u_i x_i), working weights w and the key columns' values."""
        n, k = X.shape
        scores = np.zeros((n, 1 + k))  # no intercept part: the first entry stays 0
        scores[:, 1:] = solve_triangular(self.r, (X * u[:, None]).T, trans="T").T
        if self.needs.residuals != "plain":
            q = solve_triangular(self.r, (X * np.sqrt(w)[:, None]).T, trans="T")
            h = np.einsum("ij,ij->j", q, q)  # w_i x_i'(X'WX)⁻¹x_i
            scores /= (np.sqrt(1.0 - h) if self.needs.residuals == "HC2" else 1.0 - h)[:, None]
        L = self.needs.maxlags
        meat = _lagged(scores, L) if self.needs.cross else np.zeros((1 + k, 1 + k))
        sums = []
        for dims in self.needs.groups:
            assert ids is not None
            by = [ids[self.keys[d]].to_numpy() for d in dims]
            sums.append(pd.DataFrame(scores).groupby(by, sort=False).sum())
        part = MeatPart(n_obs=n, meat=meat, head=scores[:L], tail=scores[n - L:] if L else
                        scores[:0], sums=tuple(sums), maxlags=L)
        self.part = self.part.merge(part) if self.part.n_obs else part


def _lagged(scores: FloatArray, maxlags: int) -> FloatArray:
    """Σ_l (1 − l/(L + 1)) (Γ_l + Γ_lᵀ) within one chunk's scores (Γ_0 once)."""
    S = scores.T @ scores
    for lag in range(1, min(maxlags, scores.shape[0] - 1) + 1):
        gamma = scores[lag:].T @ scores[:-lag]
        S += (1.0 - lag / (maxlags + 1.0)) * (gamma + gamma.T)
    return S


def streamed_vcov(spec: VcovSpec | None, part: MeatPart | None, r: FloatArray, *,
                  n_obs: int, df_resid: float,
                  dispersion: float) -> tuple[VcovSpec, FloatArray]:
    """The covariance ``spec`` (None: classical) from a final pass's merged ``part``, and the
    spec completed with what the pass found (numbers of clusters or periods).

    Returns
    -------
    spec : VcovSpec
    vcov : ndarray, shape (k, k)
        R⁻¹ M R⁻ᵀ, M the estimator's middle matrix.
    """
    k = r.shape[0]
    base = ScoreStats(n_obs=n_obs, df_resid=df_resid, sigma2=dispersion, sum_w=float(n_obs),
                      intercept=False, rank=k)
    if spec is None or part is None:
        spec, stats = make_vcov_spec("classical"), base
    else:
        needs = spec.estimator.score_needs(spec)
        assert needs is not None
        stats = score_stats(base, needs, part)
        spec = spec.estimator.bind_stats(spec, stats)
    middle = spec.estimator.middle_from_scores(spec, stats)[1:, 1:]
    r_inv = solve_triangular(r, np.eye(k))  # the covariance itself: R⁻¹ M R⁻ᵀ
    V = r_inv @ middle @ r_inv.T
    V = spec.estimator.adjust_vcov(spec, (V + V.T) / 2.0, np.zeros(k, dtype=np.int64))
    if spec.kind != "classical":
        spec = VcovSpec(spec.kind, spec.maxlags, spec.adjust, spec.options, df=math.inf)
    return spec, np.asarray(V)
