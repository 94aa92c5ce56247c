"""The attention view of a chunked fit, streamed: top contributors and diagnostics, never J×N.

For a handful of query rows x*_j, the weight of training row i in the prediction for query j
is (OLS and WLS; :mod:`attnreg.views.attention`)

    ω_ji = w_i (1/Σw + (x*_j − x̄)' Ω (x_i − x̄)),    Ω = (Z'Z)⁻¹,  Z = √w (X − x̄)

(the 1/Σw term only with an intercept). Ω is never formed: q_j = Ω (x*_j − x̄) comes from
two triangular solves with the R factor of Z (R'R = Z'Z), and each chunk's weights are
one product (X_c − x̄) q, of shape (rows of the chunk, J). For ridge and PCR,
Ω = D⁻¹ V diag(f / s²) V' D⁻¹ from the spectrum of the scaled R (f the filter); so also
for OLS when columns are aliased.

One pass over the chunks (a local :class:`~attnreg.large.source_base.ChunkSource`, or the
partitions of a dask frame on their workers, merged in a tree) keeps per query the ``k``
weights largest in |ω| (or in ω) with their rows' labels and responses, and the sums that
give the diagnostics: the prediction Σ ω y, the weight sum, the negative mass, Σ ω²
(the leverage), Kish's effective neighbours and the entropy of |ω| / Σ|ω|
(H = log A − Σ|ω| log|ω| / A with A = Σ|ω|). ``self_weight`` is the query's own leverage
1/Σw + (x* − x̄)' q: the weight a training row puts on itself per unit of its prior weight.

Examples
--------
>>> import numpy as np, pandas as pd
>>> import attnreg as ar
>>> from attnreg.large.fit import fit_chunked
>>> from attnreg.large.dask_attention import streamed_attention
>>> rng = np.random.default_rng(0)
>>> df = pd.DataFrame({"x": rng.normal(size=500), "g": rng.choice(["a", "b"], 500)})
>>> df["y"] = 1 + df.x + (df.g == "b") + rng.normal(size=500)
>>> fit = fit_chunked("y ~ x + C(g)", df, chunk_rows=128)
>>> att = streamed_attention(fit, df.iloc[[3, 7]])
>>> top = att.top_k(5)
>>> mem = ar.attnreg("y ~ x + C(g)", df).attention(df.iloc[[3, 7]]).top_k(5)
>>> top["train_label"].tolist() == mem["train_label"].tolist()
True
>>> bool(np.allclose(top["weight"], mem["weight"], rtol=1e-10))
True
>>> float(round(att.diagnostics["weight_sum"].iloc[0], 10))
1.0
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd
import scipy.linalg as sla

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError

__all__ = ["AttentionPart", "AttentionPlan", "StreamedAttention", "attention_part",
           "streamed_attention"]

DIAGNOSTICS = ["prediction", "weight_sum", "negative_mass", "leverage", "effective_neighbours",
               "entropy", "self_weight"]


@dataclasses.dataclass(frozen=True)
class AttentionPlan:
    """What a chunk needs to compute its weights for the queries (small: n_coef × J).

    Attributes
    ----------
    spec : ChunkSpec
    kept : ndarray of int, shape (m,)
    center : ndarray, shape (m,)
        x̄ of the kept columns.
    Q : ndarray, shape (m, J)
        Ω (x*_j − x̄) per query.
    base : float
        1/Σw with an intercept, else 0.
    k : int
        Contributors kept per query.
    by : {"abs", "weight"}
    """

    spec: Any = dataclasses.field(repr=False)
    kept: Any
    center: FloatArray
    Q: FloatArray
    base: float
    k: int
    by: str = "abs"


@dataclasses.dataclass(frozen=True)
class AttentionPart:
    """The mergeable summary of some chunks' weights for J queries.

    Attributes
    ----------
    sums : ndarray, shape (J, 6)
        Σ ω y, Σ ω, Σ min(ω, 0), Σ ω², Σ |ω|, Σ |ω| log |ω|.
    labels : ndarray of object, shape (J, ≤ k)
    weights, y : ndarray, shape (J, ≤ k)
        The top contributors so far (unsorted).
    """

    sums: FloatArray
    labels: Any
    weights: FloatArray
    y: FloatArray
    k: int
    by: str

    def merge(self, other: AttentionPart) -> AttentionPart:
        """The summary of both parts' rows."""
        labels = np.concatenate([self.labels, other.labels], axis=1)
        weights = np.concatenate([self.weights, other.weights], axis=1)
        y = np.concatenate([self.y, other.y], axis=1)
        idx = _top(weights, self.k, self.by)
        return AttentionPart(self.sums + other.sums, np.take_along_axis(labels, idx, axis=1),
                             np.take_along_axis(weights, idx, axis=1),
                             np.take_along_axis(y, idx, axis=1), self.k, self.by)


def _top(w: FloatArray, k: int, by: str) -> Any:
    """Positions of the k largest entries per row (by |w| or w), sorted, ties by position."""
    key = np.abs(w) if by == "abs" else w
    order = np.argsort(-key, axis=1, kind="stable")
    return order[:, :k]


def attention_part(plan: AttentionPlan, frame: pd.DataFrame) -> AttentionPart:
    """One chunk's weights for the queries, summarised (runs on a worker for dask).

    Parameters
    ----------
    plan : AttentionPlan
    frame : DataFrame
        A chunk (columns :meth:`ChunkSpec.read_columns`, input rules applied).

    Returns
    -------
    AttentionPart
    """
    from attnreg.large.accumulate import chunk_design

    chunk = chunk_design(plan.spec, frame)
    J = plan.Q.shape[1]
    if chunk.n_obs == 0:
        return AttentionPart(np.zeros((J, 6)), np.empty((J, 0), dtype=object), np.zeros((J, 0)),
                             np.zeros((J, 0)), plan.k, plan.by)
    W = (chunk.X[:, plan.kept] - plan.center) @ plan.Q + plan.base  # (n, J)
    if chunk.weights is not None:
        W *= chunk.weights[:, None]
    W = np.ascontiguousarray(W.T)  # (J, n)
    a = np.abs(W)
    with np.errstate(divide="ignore", invalid="ignore"):
        alog = np.where(a > 0, a * np.log(a), 0.0)
    sums = np.column_stack([W @ chunk.y, W.sum(axis=1), np.minimum(W, 0).sum(axis=1),
                            np.einsum("ij,ij->i", W, W), a.sum(axis=1), alog.sum(axis=1)])
    idx = _top(W, plan.k, plan.by)
    labels = np.asarray(chunk.labels, dtype=object)[idx]
    return AttentionPart(sums, labels, np.take_along_axis(W, idx, axis=1), chunk.y[idx],
                         plan.k, plan.by)


def _query_directions(fit: Any, Xq: FloatArray) -> tuple[FloatArray, FloatArray, float]:
    """(Ω (x* − x̄) per query, shape (m, J); the queries' own leverage; 1/Σw or 0)."""
    sp = fit.spectrum
    kept = sp.kept
    U = (Xq[:, kept] - sp.center[kept]).T  # (m, J)
    base = 1.0 / sp.sum_w if sp.intercept is not None else 0.0
    ols = bool(np.all(fit.filtered.f == 1.0)) and not sp.aliased.size
    if ols:
        R = fit.factor.centred_r()[: kept.size, : kept.size]
        Q = sla.solve_triangular(R, sla.solve_triangular(R, U, trans="T"))
    else:
        d = sp.scale[kept]
        Q = (sp.V @ ((fit.filtered.f / sp.s**2)[:, None] * (sp.V.T @ (U / d[:, None])))) \
            / d[:, None]
    own = base + np.einsum("ij,ij->j", U, Q)
    return Q, own, base


@dataclasses.dataclass(frozen=True)
class StreamedAttention:
    """Attention weights of a few queries over all training rows, summarised in one pass.

    Attributes
    ----------
    fit : ChunkedResults
    query_labels : pandas.Index
    plan : AttentionPlan
        Built for the largest ``k`` asked so far (a smaller ``k`` reuses the pass).
    own : ndarray, shape (J,)
        The queries' own leverage (``self_weight``).
    source : ChunkSource
        Where the training rows are read (a dask source merges on its workers).
    """

    fit: Any = dataclasses.field(repr=False)
    query_labels: pd.Index
    plan: AttentionPlan = dataclasses.field(repr=False)
    own: FloatArray = dataclasses.field(repr=False)
    source: Any = dataclasses.field(repr=False)
    _cache: dict[tuple[int, str], AttentionPart] = dataclasses.field(
        default_factory=dict, repr=False, compare=False)

    def _part(self, k: int, by: str) -> AttentionPart:
        for (kk, b), part in self._cache.items():
            if b == by and kk >= k:
                return part
        plan = dataclasses.replace(self.plan, k=k, by=by)
        spec = plan.spec
        if hasattr(self.source, "map_reduce"):
            part = self.source.map_reduce(attention_part, (plan,), columns=spec.read_columns(),
                                          uses=spec.uses, label="attnreg attention pass")
        else:
            found: AttentionPart | None = None
            for frame in self.source.frames(spec.read_columns(), uses=spec.uses):
                p = attention_part(plan, frame)
                found = p if found is None else found.merge(p)
            if found is None:
                raise OptionError("the fit's source has no rows to attend to")
            part = found
        self._cache[(k, by)] = part
        return part

    def top_k(self, k: int = 10, *, by: str = "abs") -> pd.DataFrame:
        """The ``k`` largest weights of every query (one pass over the chunks).

        Parameters
        ----------
        k : int
        by : {"abs", "weight"}
            Rank by |ω| (default) or by signed ω.

        Returns
        -------
        DataFrame
            Long format, as :meth:`attnreg.views.attention.AttentionWeights.top_k`: ``query``,
            ``rank``, ``train_label``, ``weight``, ``y``, ``contribution`` (ω y).
        """
        if by not in ("abs", "weight"):
            raise OptionError(f"by must be 'abs' or 'weight', however: {by=}")
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
            raise OptionError(f"k must be a positive integer, however: k={k!r}")
        part = self._part(int(k), by)
        k = min(int(k), part.weights.shape[1])
        idx = _top(part.weights, k, by)
        w = np.take_along_axis(part.weights, idx, axis=1)
        y = np.take_along_axis(part.y, idx, axis=1)
        J = len(self.query_labels)
        return pd.DataFrame({
            "query": np.repeat(np.asarray(self.query_labels, dtype=object), k),
            "rank": np.tile(np.arange(1, k + 1), J),
            "train_label": np.take_along_axis(part.labels, idx, axis=1).ravel(),
            "weight": w.ravel(), "y": y.ravel(), "contribution": (w * y).ravel()})

    @property
    def diagnostics(self) -> pd.DataFrame:
        """Per query: ``prediction``, ``weight_sum``, ``negative_mass``, ``leverage`` (Σ ω²),
        ``effective_neighbours``, ``entropy`` (as :class:`attnreg.views.attention.AttentionWeights`)
        and ``self_weight`` (the query's own leverage)."""
        part = self._part(self.plan.k, self.plan.by)
        pred, total, neg, sq, A, alog = part.sums.T
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = np.log(A) - alog / A
            eff = total**2 / sq
        return pd.DataFrame(np.column_stack([pred, total, neg, sq, eff, ent, self.own]),
                            index=self.query_labels, columns=DIAGNOSTICS)


def streamed_attention(fit: Any, newdata: pd.DataFrame, *, k: int = 10,
                       source: Any = None) -> StreamedAttention:
    """The attention view of a chunked (or dask) fit for a few query rows.

    Parameters
    ----------
    fit : ChunkedResults
    newdata : DataFrame
        The queries (J rows; a few — each pass computes J weights per training row).
    k : int
        Contributors kept per query by the pass (``top_k`` with a larger k reads again).
    source : ChunkSource, optional
        The training rows (default: the fit's own source).

    Returns
    -------
    StreamedAttention
    """
    if not isinstance(newdata, pd.DataFrame):
        raise OptionError(f"newdata must be a pandas DataFrame of query rows, however: "
                          f"type(newdata) is {type(newdata).__name__}")
    src = fit.source if source is None else source
    if src is None:
        raise OptionError("the attention view reads the training rows again, but this fit "
                          "does not keep its source: pass source=")
    Xq = fit._design_of(newdata)
    Q, own, base = _query_directions(fit, Xq)
    sp = fit.spectrum
    plan = AttentionPlan(spec=fit.spec, kept=sp.kept, center=sp.center[sp.kept], Q=Q,
                         base=base, k=int(k))
    return StreamedAttention(fit=fit, query_labels=newdata.index, plan=plan, own=own, source=src)
