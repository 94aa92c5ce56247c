"""The attention view of a fit with absorbed fixed effects: the dummy-variable hat matrix.

The prediction of the dummy-variable regression on [X D] for a row with regressors x₀ and
levels d₀ is linear in y: ŷ₀ = Σᵢ ωᵢ yᵢ with ω = W (D (D'WD)⁺d₀ + X̃ (X̃'WX̃)⁻¹x̃₀)
(:func:`attnreg.fe.robust.prediction_weights`: the fixed effects' part by sparse solves, the
slopes' part from the residualised regressors X̃ and x̃₀). These are the weights the fit
``y ~ x + C(firm) + C(year)`` gives, computed a chunk of queries at a time, never N × N nor
with the dummies; on the training rows they are the hat matrix. :meth:`FixedEffectsAttention.by_group`
splits each prediction's weight between the training rows of its own level and the others,
for every fixed effect.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray, IntArray
from attnreg.views.attention import AttentionWeights
from attnreg.fe.predict import query_rows
from attnreg.fe.robust import prediction_weights

if TYPE_CHECKING:
    from attnreg.fe.results import FixedEffectsResults

__all__ = ["FixedEffectsAttention", "fixed_effects_attention"]


@dataclass(frozen=True)
class _FixedEffectsWeights:
    """``weight_fn(start, stop)``: the weights of queries ``start:stop`` (a class: it pickles).
    A query with an unseen or missing level has NaN weights."""

    fit: Any = field(repr=False)  # FixedEffectsResults
    Xt: FloatArray = field(repr=False)  # (J, n_coef) regressors less their fixed-effect part
    codes: tuple[IntArray, ...] = field(repr=False)  # (J,) level codes per fixed effect

    def __call__(self, start: int, stop: int) -> FloatArray:
        Xt = self.Xt[start:stop]
        codes = [c[start:stop] for c in self.codes]
        ok = np.isfinite(Xt).all(axis=1) & np.all([c >= 0 for c in codes], axis=0)
        out = np.full((stop - start, self.fit.nobs), np.nan)
        if ok.any():
            w = np.ones(self.fit.nobs) if self.fit.design.weights is None \
                else self.fit.design.weights
            C = prediction_weights(self.fit, Xt[ok], [c[ok] for c in codes])  # (N, m)
            out[ok] = (w[:, None] * C).T
        return out


@dataclass(frozen=True)
class FixedEffectsAttention(AttentionWeights):
    """Attention weights of a fixed-effects fit (the dummy-variable fit's), with
    :meth:`by_group`; everything else as :class:`attnreg.views.attention.AttentionWeights`.

    Attributes
    ----------
    group_names : tuple of str
        The fixed-effect terms (``("firm", "year")``).
    train_codes : tuple of ndarray of int, each shape (N,)
        The level of each training row in each fixed effect.
    query_codes : tuple of ndarray of int, each shape (J,)
        The level of each query (−1: not in the fit).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"firm": rng.integers(0, 5, 60), "year": rng.integers(0, 4, 60),
    ...                    "x": rng.normal(size=60)})
    >>> df["y"] = 2 * df.x + df.firm + rng.normal(size=60)
    >>> fit = ar.attnreg("y ~ x | firm + year", df)
    >>> att = fit.attention(df.head(2))
    >>> bool(np.allclose(att.weights.to_numpy() @ df.y, fit.predict(df.head(2))))
    True
    >>> split = att.by_group()
    >>> split.columns.tolist()[:5]
    ['prediction', 'weight_sum', 'firm_own', 'firm_others', 'firm_own_abs_share']
    >>> np.round(split[["firm_own", "firm_others"]].to_numpy(), 12) + 0.0  # the dummies reproduced
    array([[1., 0.],
           [1., 0.]])
    """

    group_names: tuple[str, ...] = ()
    train_codes: tuple[IntArray, ...] = field(default=(), repr=False)
    query_codes: tuple[IntArray, ...] = field(default=(), repr=False)

    def by_group(self) -> pd.DataFrame:
        """Each prediction's weight and vote split between the training rows of its own level
        and the others, for every fixed effect, chunk by chunk (nothing J × N is kept).

        The weights on a seen level's own rows sum to exactly 1 and those on the other rows to
        0 (the hat matrix reproduces every dummy column), so how the weight is spread shows in
        the absolute weight and in the votes: the own rows' ω y and the others'.

        Returns
        -------
        DataFrame, shape (J, 2 + 5 K)
            ``prediction`` (Σ ω y) and ``weight_sum`` (Σ ω), then for each fixed effect
            ``<name>_own`` and ``<name>_others`` (Σ ω over the rows with the query's level and
            over the rest), ``<name>_own_abs_share`` (Σ abs(ω) over the own rows over Σ abs(ω)),
            ``<name>_own_vote`` and ``<name>_others_vote`` (Σ ω y over each: they add up to
            the prediction); NaN for a query with a level not in the fit.
        """
        K = len(self.group_names)
        out = np.empty((self.n_queries, 2 + 5 * K))
        for start, stop, w in self.chunks():
            vote = w * self.y_train[None, :]  # (m, N) each row's part of the prediction
            total, pred, mass = w.sum(axis=1), vote.sum(axis=1), np.abs(w).sum(axis=1)
            out[start:stop, :2] = np.column_stack([pred, total])
            for k in range(K):
                mine = self.train_codes[k][None, :] == self.query_codes[k][start:stop, None]
                own = (mine * w).sum(axis=1)  # (m,) rows of the query's level (NaN kept)
                own_vote = (mine * vote).sum(axis=1)
                share = (mine * np.abs(w)).sum(axis=1) / mass
                out[start:stop, 2 + 5 * k:7 + 5 * k] = np.column_stack(
                    [own, total - own, share, own_vote, pred - own_vote])
        names = ["prediction", "weight_sum"] + [
            f"{g}_{part}" for g in self.group_names
            for part in ("own", "others", "own_abs_share", "own_vote", "others_vote")]
        return pd.DataFrame(out, index=self.query_labels, columns=names)


def fixed_effects_attention(fit: FixedEffectsResults, newdata: Any = None, *,
                            chunk_size: int | None = None) -> FixedEffectsAttention:
    """The attention weights of ``fit``'s predictions for ``newdata`` (its own rows by
    default: the hat matrix) over its training rows.

    Parameters
    ----------
    fit : FixedEffectsResults
    newdata : DataFrame or dict, optional
        Query rows with the regressors and the fixed-effect columns.
    chunk_size : int, optional
        Queries per chunk.

    Returns
    -------
    FixedEffectsAttention
    """
    fe = fit.absorbed.fe
    if newdata is None:
        Xt, codes, labels = fit.design.X, list(fe.codes), fit.design.row_labels
    else:
        _, Xt, codes, labels = query_rows(fit, newdata)
    fn = _FixedEffectsWeights(fit, np.asarray(Xt, dtype=np.float64), tuple(codes))
    return FixedEffectsAttention(
        weight_fn=fn, n_queries=int(np.shape(Xt)[0]), query_labels=labels,
        train_labels=fit.design.row_labels, y_train=fit.absorbed.y, kind="linear",
        chunk_size=chunk_size, cluster_source=fit, queries_are_training=newdata is None,
        group_names=fe.names, train_codes=tuple(fe.codes), query_codes=tuple(codes))
