"""The mergeable partial of a pass over the rows: residual statistics and the covariance meat.

A :class:`MeatPart` is what :func:`attnreg.large.passes.second_pass` returns for some
consecutive rows: the residual sum of squares, the extreme and sampled weighted residuals,
the largest hat value, and what a covariance asks for of the scores s_i: their
cross-products Σ s_i s_iᵀ (with Bartlett lags Σ_l k_l (Γ_l + Γ_lᵀ) in row order: a part
keeps its first and last ``maxlags`` scores, so the lagged products across a boundary are
formed when parts merge) and their sums per value of key columns (clusters, periods).
Parts of neighbouring row ranges merge, the earlier first.

Examples
--------
>>> import numpy as np
>>> a = MeatPart(n_obs=2, rss=1.0, meat=np.eye(2), head=np.zeros((0, 2)),
...              tail=np.zeros((0, 2)))
>>> b = a.merge(a)
>>> b.n_obs, b.rss, b.meat.tolist()
(4, 2.0, [[2.0, 0.0], [0.0, 2.0]])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray

__all__ = ["MeatPart", "bartlett_lagged"]


@dataclass(frozen=True)
class MeatPart:
    """The mergeable result of :func:`~attnreg.large.passes.second_pass` over some consecutive rows.

    Attributes
    ----------
    n_obs : int
    rss : float
        Σ (√w e)².
    resid_min, resid_max : float
        Extreme weighted residuals.
    sample : tuple of ndarray
        The sampled weighted residuals, in pieces (:attr:`sample_values` joins them).
    hat_max : float
    hat_max_label : object
    meat : ndarray, shape (1 + rank, 1 + rank)
        HC: Σ s sᵀ; HAC: the within-part lagged sum.
    head, tail : ndarray, shape (≤ maxlags, 1 + rank)
        HAC: the first and last scores of the part.
    sums : tuple of DataFrame
        Cluster / DK: per intersection, score sums indexed by the key columns.
    """

    n_obs: int
    rss: float = 0.0
    resid_min: float = np.inf
    resid_max: float = -np.inf
    sample: tuple[FloatArray, ...] = field(default=(), repr=False)
    hat_max: float = -np.inf
    hat_max_label: Any = None
    meat: FloatArray | None = field(default=None, repr=False)
    head: FloatArray | None = field(default=None, repr=False)
    tail: FloatArray | None = field(default=None, repr=False)
    sums: tuple[pd.DataFrame, ...] = field(default=(), repr=False)
    maxlags: int = 0

    @property
    def sample_values(self) -> FloatArray:
        """The sampled weighted residuals (every one when the fit has few enough rows)."""
        return np.concatenate(self.sample) if self.sample else np.zeros(0)

    @classmethod
    def empty(cls, width: int, maxlags: int = 0) -> MeatPart:
        """The partial of no rows."""
        return cls(n_obs=0, meat=np.zeros((width, width)), head=np.zeros((0, width)),
                   tail=np.zeros((0, width)), maxlags=maxlags)

    def merge(self, other: MeatPart) -> MeatPart:
        """The partial of this part's rows followed by ``other``'s (row order matters for HAC)."""
        if other.n_obs == 0:
            return self
        if self.n_obs == 0:
            return other
        sample = tuple(p for p in self.sample + other.sample if p.size)
        if len(sample) > 32:  # joined now and then: merging stays O(1) per piece
            sample = (np.concatenate(sample),)
        better = other.hat_max > self.hat_max
        meat = head = tail = None
        L = max(self.maxlags, other.maxlags)
        if self.meat is not None and other.meat is not None:
            meat = self.meat + other.meat
            if L and self.tail is not None and other.head is not None:
                meat = meat + _cross_lags(self.tail, other.head, L)
                head = np.vstack([self.head, other.head])[:L] if self.head is not None else None
                tail = np.vstack([self.tail, other.tail])[-L:] if other.tail is not None else None
        sums = tuple(_add_sums(a, b) for a, b in zip(self.sums, other.sums, strict=True))
        return MeatPart(n_obs=self.n_obs + other.n_obs, rss=self.rss + other.rss,
                        resid_min=min(self.resid_min, other.resid_min),
                        resid_max=max(self.resid_max, other.resid_max), sample=sample,
                        hat_max=other.hat_max if better else self.hat_max,
                        hat_max_label=other.hat_max_label if better else self.hat_max_label,
                        meat=meat, head=head, tail=tail, sums=sums, maxlags=L)


def _add_sums(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    both = pd.concat([a, b])
    return both.groupby(level=list(range(both.index.nlevels)), sort=False).sum()


def _bartlett(lag: int, maxlags: int) -> float:
    return 1.0 - lag / (maxlags + 1.0)


def bartlett_lagged(scores: FloatArray, maxlags: int) -> FloatArray:
    """Σ_l k_l (Γ_l + Γ_lᵀ) within one block of consecutive scores (Γ_0 once)."""
    S = scores.T @ scores
    for lag in range(1, min(maxlags, scores.shape[0] - 1) + 1):
        gamma = scores[lag:].T @ scores[:-lag]
        S += _bartlett(lag, maxlags) * (gamma + gamma.T)
    return S


def _cross_lags(tail: FloatArray, head: FloatArray, maxlags: int) -> FloatArray:
    """The lagged products between the last scores of one part and the first of the next."""
    both = np.vstack([tail, head])
    t = tail.shape[0]
    out = np.zeros((both.shape[1], both.shape[1]))
    for lag in range(1, maxlags + 1):
        # pairs (i, i + lag) with i in the tail and i + lag in the head
        lo, hi = max(0, t - lag), t
        later = np.arange(lo, hi) + lag
        ok = later < both.shape[0]
        if not ok.any():
            continue
        a, b = both[later[ok]], both[np.arange(lo, hi)[ok]]
        gamma = a.T @ b
        out += _bartlett(lag, maxlags) * (gamma + gamma.T)
    return out
