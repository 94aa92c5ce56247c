"""What a covariance needs of the scores, and the statistics of one pass over the rows.

Every sandwich covariance of :mod:`attnreg.inference.vcov.registry` is a function of the scores
s_i = v_i [c_i, U_i] (v the weighted residuals, possibly rescaled by the hat values; c_i =
√w_i / Σw the intercept's direction, U_i the row of the left singular vectors) through a
few sums that one pass over the rows accumulates, in memory or chunk by chunk:

- the cross-products Σ_i s_i s_iᵀ, or with Bartlett lags Σ_l k_l (Γ_l + Γ_lᵀ) in row order
  (HC0–HC3, Newey–West HAC);
- the score sums per group s_g = Σ_{i∈g} s_i, for each intersection of the clustering
  dimensions (cluster-robust covariances) or per period (Driscoll–Kraay).

An estimator states what it needs as a :class:`ScoreNeeds` and computes its middle matrix
from the answer, a :class:`ScoreStats`
(:meth:`~attnreg.inference.vcov.registry.CovarianceEstimator.middle_from_scores`): the in-memory fit
answers with :func:`memory_stats` (every row at hand), the chunked and dask fits with the
merged partials of their passes (:mod:`attnreg.large.passes`). So one registration serves
both, and the chunked path has no covariance formula of its own.

Examples
--------
>>> import numpy as np
>>> from attnreg.inference.vcov.scorestats import ScoreNeeds, subsets
>>> ScoreNeeds(cross=True, residuals="HC3").maxlags
0
>>> subsets(2)
((0,), (1,), (0, 1))
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.inference.vcov._blocks import indicator, scores_c

if TYPE_CHECKING:
    from attnreg.linear.spectral import Spectrum

__all__ = ["RESIDUAL_SCALES", "ScoreNeeds", "ScoreStats", "cross_products", "group_score_sums",
           "memory_stats", "residual_scale", "subset_codes", "subsets"]

#: How the weighted residuals of the scores may be rescaled by the hat values h:
#: ``"plain"`` v = e, ``"HC2"`` e / √(1 − h), ``"HC3"`` e / (1 − h).
RESIDUAL_SCALES = ("plain", "HC2", "HC3")


@dataclass(frozen=True)
class ScoreNeeds:
    """What a covariance estimator needs of the scores s_i = v_i [c_i, U_i].

    Attributes
    ----------
    residuals : {"plain", "HC2", "HC3"}
        The residuals v of the scores (:data:`RESIDUAL_SCALES`).
    cross : bool
        Whether the cross-products of the scores are needed.
    maxlags : int
        Bartlett lags of the cross-products (0: Σ s sᵀ; L: Σ_{l≤L} (1 − l/(L+1)) (Γ_l + Γ_lᵀ),
        the rows in their order).
    groups : tuple of tuple of int
        Score sums per group of each of these intersections of the key dimensions (indices
        into the dimensions of ``keys``; ``(0,)`` one dimension, ``(0, 1)`` the pairs).
    keys : object
        What tells each row's group: the :class:`~attnreg.inference.vcov.cluster_ids.ClusterIds` of an
        in-memory fit (its ``codes``, one column per dimension), or the column names a
        chunked pass reads.
    ordered : bool
        Whether the groups' sums must come in the sorted order of their keys (periods).
    """

    residuals: str = "plain"
    cross: bool = False
    maxlags: int = 0
    groups: tuple[tuple[int, ...], ...] = ()
    keys: Any = field(default=None, repr=False)
    ordered: bool = False


@dataclass(frozen=True)
class ScoreStats:
    """The answer to a :class:`ScoreNeeds`: the fit's sizes and the scores' sums.

    Everything is on the spectrum's rescaled response (divided by ``y_scale``).

    Attributes
    ----------
    n_obs : int
        Rows in the fit.
    df_resid : float
        Residual degrees of freedom n − tr(H).
    sigma2 : float
        Residual variance RSS / df_resid.
    sum_w : float
        Σ w.
    intercept : bool
        Whether the fit has an intercept (the scores' first entry is then not 0).
    rank : int
        Components of the spectrum (a score has 1 + rank entries).
    cross : ndarray, shape (1 + rank, 1 + rank), or None
        The (lagged) cross-products, when asked for.
    sums : tuple of ndarray, each shape (n_groups, 1 + rank)
        The score sums of each intersection of ``ScoreNeeds.groups``, in that order (rows in
        sorted key order when ``ordered``).
    """

    n_obs: int
    df_resid: float
    sigma2: float
    sum_w: float
    intercept: bool
    rank: int
    cross: FloatArray | None = field(default=None, repr=False)
    sums: tuple[FloatArray, ...] = field(default=(), repr=False)


def subsets(n_dims: int) -> tuple[tuple[int, ...], ...]:
    """The non-empty subsets of ``n_dims`` dimensions, by size (Cameron–Gelbach–Miller)."""
    return tuple(s for size in range(1, n_dims + 1)
                 for s in itertools.combinations(range(n_dims), size))


def residual_scale(kind: str, resid_w: FloatArray, hat: FloatArray) -> FloatArray:
    """The residuals of the scores: ``resid_w`` rescaled as ``kind`` says (:data:`RESIDUAL_SCALES`)."""
    if kind == "HC2":
        return resid_w / np.sqrt(1.0 - hat)
    if kind == "HC3":
        return resid_w / (1.0 - hat)
    return resid_w


def cross_products(sp: Spectrum, e: FloatArray, maxlags: int) -> FloatArray:
    """Σ_l k_l (Γ_l + Γ_l') of the scores s_i = e_i [c_i, U_i] (Bartlett k_l), in row blocks.

    Without lags the cross-products are accumulated block by block (nothing n_obs × rank is
    held); HAC needs products across block boundaries, so the scores are formed whole.
    """
    c = scores_c(sp)
    k = 1 + sp.rank
    if maxlags == 0:
        S = np.zeros((k, k))
        for start, stop, U in sp.U.blocks():
            block = np.empty((stop - start, k))
            block[:, 0] = c[start:stop] * e[start:stop]
            np.multiply(U, e[start:stop, None], out=block[:, 1:])
            S += block.T @ block
        return S
    scores = np.empty((sp.n_obs, k))
    scores[:, 0] = c * e
    for start, stop, U in sp.U.blocks():
        np.multiply(U, e[start:stop, None], out=scores[start:stop, 1:])
    S = scores.T @ scores
    for lag in range(1, maxlags + 1):
        gamma = scores[lag:].T @ scores[:-lag]
        S += (1.0 - lag / (maxlags + 1.0)) * (gamma + gamma.T)
    return S


def group_score_sums(sp: Spectrum, v: FloatArray, codes: IntArray, n_groups: int) -> FloatArray:
    """Score sums s_g = Σ_{i∈g} v_i [c_i, U_i], shape (n_groups, 1 + rank).

    ``v`` is a vector of (weighted, rescaled) residuals, shape (n_obs,); computed block by
    block of U as sparse indicator products.
    """
    c = scores_c(sp)
    out = np.zeros((n_groups, 1 + sp.rank))
    for start, stop, U in sp.U.blocks():
        ind = indicator(codes[start:stop], n_groups, v[start:stop])
        out[:, 0] += ind @ c[start:stop]
        out[:, 1:] += ind @ U
    return out


def subset_codes(codes: IntArray, dims: tuple[int, ...]) -> tuple[IntArray, int]:
    """The group code of each row in the intersection ``dims`` of the dimensions of ``codes``
    (shape (n_obs, n_dims), each 0 … G_d − 1), and the number of groups."""
    if len(dims) == 1:
        sub = codes[:, dims[0]]
        return sub, int(sub.max()) + 1
    _, sub = np.unique(codes[:, list(dims)], axis=0, return_inverse=True)
    sub = sub.reshape(-1).astype(np.int64)
    return sub, int(sub.max()) + 1


def memory_stats(sp: Spectrum, needs: ScoreNeeds, *, sigma2: float, resid_w: FloatArray,
                 hat: FloatArray, df_resid: float) -> ScoreStats:
    """:class:`ScoreStats` from every row of an in-memory fit.

    Parameters
    ----------
    sp : Spectrum
    needs : ScoreNeeds
        Its ``keys`` (when it asks for groups) have ``codes``, shape (n_obs, n_dims).
    sigma2 : float
        Residual variance on the rescaled response.
    resid_w : ndarray, shape (n_obs,)
        Weighted residuals on the rescaled response.
    hat : ndarray, shape (n_obs,)
        Hat values (read only for ``residuals="HC2"`` or ``"HC3"``).
    df_resid : float

    Returns
    -------
    ScoreStats
    """
    v = residual_scale(needs.residuals, resid_w, hat)
    cross = cross_products(sp, v, needs.maxlags) if needs.cross else None
    sums = []
    for dims in needs.groups:  # group codes are sorted levels: ordered as asked
        codes, n_groups = subset_codes(needs.keys.codes, dims)
        sums.append(group_score_sums(sp, v, codes, n_groups))
    return ScoreStats(n_obs=sp.n_obs, df_resid=df_resid, sigma2=sigma2, sum_w=sp.sum_w,
                      intercept=sp.intercept is not None, rank=sp.rank, cross=cross,
                      sums=tuple(sums))
