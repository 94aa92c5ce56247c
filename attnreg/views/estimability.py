"""Estimability of a rank-deficient fit: how the aliased columns depend on the kept ones,
and which new rows lie outside the training design's column space (R's "prediction from
rank-deficient fit")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from attnreg._typing import FloatArray
from attnreg.scaling import column_norms

if TYPE_CHECKING:
    from attnreg.linear.spectral import Spectrum

__all__ = ["AliasRelations", "alias_relations", "outside_span"]


@dataclass(frozen=True)
class AliasRelations:
    """How each aliased column of the training design depends on the kept columns.

    Attributes
    ----------
    gamma : ndarray, shape (n_kept, n_aliased)
        Least-squares coefficients of each centred, weighted aliased column on the kept
        columns divided by their scales d (so of order one at any scale).
    spread : ndarray, shape (n_aliased,)
        Each aliased column's weighted standard deviation (its root mean square without an
        intercept; its absolute mean when it is constant).
    """

    gamma: FloatArray
    spread: FloatArray


def alias_relations(sp: Spectrum, X: FloatArray) -> AliasRelations:
    """The relations that made the aliased columns of ``X`` aliased (one pass over their rows).

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.linear import spectral
    >>> from attnreg.views import estimability
    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=(20, 2))
    >>> X = np.column_stack([np.ones(20), x, x[:, 0] - 2 * x[:, 1]])
    >>> sp = spectral.decompose(X, rng.normal(size=20), intercept=0, weights=None,
    ...                         scaling="norm")
    >>> rel = estimability.alias_relations(sp, X)
    >>> print(np.round(rel.gamma[:, 0] / sp.scale[sp.kept], 12))  # x3 = x1 − 2 x2
    [ 1. -2.]
    """
    al = sp.aliased
    Za = X[:, al] - sp.center[al]
    if sp.weighted:
        Za *= sp.sqrt_w[:, None]
    gamma = sp.V @ (sp.U.t_dot(Za) / sp.s[:, None]) if sp.rank else np.zeros((0, al.size))
    spread = column_norms(Za) / np.sqrt(sp.sum_w)
    spread = np.where(spread > 0, spread, np.abs(sp.center[al]))
    return AliasRelations(gamma=gamma, spread=spread)


def outside_span(sp: Spectrum, rel: AliasRelations,
                 Xq: FloatArray) -> npt.NDArray[np.bool_]:
    """Which query rows lie outside the training design's column span, per aliased column.

    A query's part outside the span along aliased column j is δ_j = (x_j − x̄_j) − ξ'γ_j with
    ξ = (x_kept − x̄_kept)/d. Training rows have |δ_j| ≤ tol·sqrt(Σw/w_i)·spread_j (the
    aliasing rule), and rounding gives about eps·cond(Z) times the size of the terms; a row is
    flagged when |δ_j| exceeds sqrt(tol) (sqrt(eps) at least) times spread_j plus those terms:
    far above both, and scale invariant.

    Returns
    -------
    ndarray of bool, shape (n_queries, n_aliased)
    """
    al = sp.aliased
    xa = Xq[:, al] - sp.center[al]
    xi = (Xq[:, sp.kept] - sp.center[sp.kept]) / sp.scale[sp.kept]
    with np.errstate(over="ignore", invalid="ignore"):
        delta = xa - xi @ rel.gamma
        size = np.abs(xa) + np.abs(xi) @ np.abs(rel.gamma)
    tau = np.sqrt(max(sp.tol, float(np.finfo(np.float64).eps)))
    return ~(np.abs(delta) <= tau * (rel.spread + size))
