"""The passes after the R factor: residuals, hat values and covariance meats, chunk by chunk.

A pass is a :class:`PassPlan` (what the fit knows: coefficients, the spectrum's factors, the
covariance asked for), a function of one chunk returning a mergeable partial result, and the
partials' ``merge``: :func:`second_pass` / :class:`~attnreg.large.meat.MeatPart` for residual
statistics and the covariance meats (:func:`attnreg.large.gradient.gradient_part` /
``GradientPart`` for the extended-precision refinement of OLS). The local engine folds the
partials over the chunks in row order; a distributed engine may compute them on workers and
merge them in a tree (partials of neighbouring row ranges merge, earlier first: the HAC meat
needs the order).

Per chunk, with Z = √w (X_kept − x̄) / d the centred, weighted, scaled columns and the SVD
R_z = U_R S Vᵀ of their R factor, the chunk's rows of the left singular vectors are
U = Z V S⁻¹ (= Z R_z⁻¹ U_R, no inverse formed), the hat values h_i = w_i/Σw + Σ_k f_k U_ik²
and the scores s_i = v_i [√w_i/Σw, U_i] (v the weighted residuals, divided by √(1 − h) for
HC2 and by 1 − h for HC3; h includes a chunk's ``leverage`` on what its design does not
carry, e.g. absorbed fixed effects). A pass accumulates what a covariance's
:class:`~attnreg.inference.vcov.scorestats.ScoreNeeds` asks for (the covariance itself, the middle
matrix from these sums, is the registry's: :mod:`attnreg.large.covariance`):

- the cross-products Σ s_i s_iᵀ, accumulated per chunk, or with Bartlett lags
  Σ_l k_l (Γ_l + Γ_lᵀ) in row order: a partial keeps its first and last ``maxlags``
  scores, so the lagged products across a chunk boundary are formed when partials merge;
- score sums per value of key columns (per cluster, per intersection of the dimensions,
  per period), so a cluster spanning chunks is summed across them.

Residual quantiles: the weighted residuals of the rows whose label hash is below
2⁶⁴ · :data:`RESERVOIR_SIZE` / n are kept (a uniform sample of about that many rows, each
row in or out whatever the chunking, so partials merge by concatenation), with the exact
minimum and maximum: every residual whenever the fit has at most that many rows.

Examples
--------
>>> import numpy as np
>>> a = MeatPart.empty(3)
>>> a.merge(MeatPart.empty(3)).n_obs
0
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg._progress import Progress
from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import DataError
from attnreg.formula.builder import check_finite
from attnreg.large.accumulate import ChunkDesign, Incomplete, chunk_columns
from attnreg.large.columns import ChunkColumns
from attnreg.large.meat import MeatPart, bartlett_lagged
from attnreg.linear.tallqr import column_span
from attnreg.inference.vcov.scorestats import residual_scale
from attnreg.large.source_base import ChunkSource
from attnreg.large.spec import ChunkSpec

__all__ = ["RESERVOIR_SIZE", "MeatPart", "PassPlan", "chunk_scores", "frames_of", "pass_plan",
           "run_pass", "second_pass"]

#: Residuals kept for the summary's quantiles (exact up to this many rows).
RESERVOIR_SIZE = 200_000
#: Rows of a chunk reduced at a time by the residual pass (a task of a worker thread).
BLOCK_ROWS = 1 << 14


@dataclass(frozen=True)
class PassPlan:
    """What a pass over the chunks needs of a fit (small: n_coef² numbers).

    Attributes
    ----------
    spec : ChunkSpec
    coef : ndarray, shape (n_coef,)
        Coefficients, aliased ones 0.
    kept : ndarray of int, shape (m,)
        Design columns of the spectrum.
    center : ndarray, shape (n_coef,)
        Weighted column means x̄ (0 without an intercept).
    scale : ndarray, shape (m,)
        Column scales d of the kept columns.
    G : ndarray, shape (m, rank)
        V S⁻¹: U = Z G with Z = √w (X_kept − x̄) / d.
    f : ndarray, shape (rank,)
        Filter factors.
    sum_w : float
    intercept : bool
    kind : str
        What the pass is for, in words (its progress label: ``"none"`` for residual
        statistics only, else the covariance's name).
    maxlags : int
        Bartlett lags of the cross-products.
    groups : tuple of tuple of str
        The key columns of each intersection whose score sums are wanted (one-way
        clustering: one; Driscoll–Kraay: the time column).
    residuals : {"plain", "HC2", "HC3"}
        The residuals of the scores (:data:`attnreg.inference.vcov.scorestats.RESIDUAL_SCALES`).
    cross : bool
        Whether the (lagged) cross-products of the scores are accumulated.
    sample_below : int
        Rows whose label hash is at most this are kept for the residual quantiles
        (2⁶⁴ − 1: every row).
    """

    spec: ChunkSpec = field(repr=False)
    coef: FloatArray
    kept: IntArray
    center: FloatArray
    scale: FloatArray
    G: FloatArray
    f: FloatArray
    sum_w: float
    intercept: bool
    kind: str = "none"
    maxlags: int = 0
    groups: tuple[tuple[str, ...], ...] = ()
    sample_below: int = 2**64 - 1
    residuals: str = "plain"
    cross: bool = False

    @property
    def scores(self) -> bool:
        """Whether the pass forms the scores (for cross-products or group sums)."""
        return self.cross or bool(self.groups)

    @property
    def width(self) -> int:
        """1 + rank: the length of a score."""
        return 1 + int(self.G.shape[1])

    @cached_property
    def scaled_g(self) -> FloatArray:
        """G / d (rows divided by the column scales): U = √w (X_kept − x̄) (G / d)."""
        return np.asarray(self.G / self.scale[:, None])

    def read_columns(self) -> list[str]:
        """Source columns a pass reads (formula, weights, cluster ids)."""
        extra = tuple(dict.fromkeys(c for g in self.groups for c in g))
        return self.spec.read_columns(extra)


def _label_hash(labels: pd.Index) -> Any:
    return pd.util.hash_array(np.asarray(labels, dtype=object) if labels.dtype == object
                              else np.asarray(labels))


def chunk_scores(plan: PassPlan, chunk: ChunkDesign, basis: bool = True,
                 ) -> tuple[FloatArray, FloatArray, FloatArray | None]:
    """Weighted residuals, hat values and (with ``basis``) the rows [√w/Σw, U] of one chunk.

    Returns
    -------
    resid_w : ndarray, shape (m,)
    hat : ndarray, shape (m,)
    basis : ndarray, shape (m, 1 + rank), or None without ``basis``
        This thread's scratch (:func:`attnreg.threads.scratch`): valid until the thread's
        next call, so use it (or copy it) before.
    """
    from attnreg.threads import scratch

    X, y = chunk.X, chunk.y
    m = X.shape[0]
    sqrt_w = None if chunk.weights is None else np.sqrt(chunk.weights)
    e = y - X @ plan.coef
    rw = e if sqrt_w is None else e * sqrt_w
    span = column_span(plan.kept)
    k, r = plan.kept.size, plan.G.shape[1]
    # Z = √w (X_kept − x̄) and U = Z (G / d) in this thread's scratch (no fresh pages per block)
    Z = scratch("Z", (m, k), order="F")
    np.subtract(X[:, span[0]:span[1]] if span is not None else X[:, plan.kept],
                plan.center[plan.kept], out=Z)
    if sqrt_w is not None:
        Z *= sqrt_w[:, None]
    U = scratch("U", (m, r), order="F")
    np.matmul(Z, plan.scaled_g, out=U)
    if plan.f.size and np.all(plan.f == 1.0):
        hat = np.einsum("ij,ij->i", U, U)
    else:
        sq = scratch("U2", (m, r), order="F")
        np.multiply(U, U, out=sq)
        hat = sq @ plan.f
    if plan.intercept:
        hat += (chunk.weights if chunk.weights is not None else 1.0) / plan.sum_w
    if chunk.leverage is not None:  # absorbed fixed effects' own part (NaN: exactly 1)
        hat = np.where(np.isnan(chunk.leverage), 1.0, hat + chunk.leverage)
    if not basis:
        return rw, hat, None
    out = scratch("basis", (m, plan.width))
    if plan.intercept:
        out[:, 0] = (sqrt_w if sqrt_w is not None else 1.0) / plan.sum_w
    else:
        out[:, 0] = 0.0
    out[:, 1:] = U
    return rw, hat, out


def second_pass(plan: PassPlan, frame: pd.DataFrame) -> MeatPart:
    """One chunk's partial: residual statistics, hat values and the covariance meat.

    The chunk's design is assembled and reduced a block of :data:`BLOCK_ROWS` rows at a time
    (cache-sized temporaries), the blocks spread over the worker threads
    (:func:`attnreg.threads.parallel_map`) and merged in row order.

    Parameters
    ----------
    plan : PassPlan
    frame : DataFrame
        A chunk from :meth:`ChunkSource.frames` (columns :meth:`PassPlan.read_columns`,
        ``uses=plan.spec.uses``).

    Returns
    -------
    MeatPart
        Merge the chunks' parts in row order with :meth:`MeatPart.merge`.
    """

    try:
        return _blocks_part(plan, frame, chunk_columns(plan.spec, frame, assume_complete=True))
    except Incomplete:  # a NaN: build the chunk again, its missing rows dropped
        return _blocks_part(plan, frame, chunk_columns(plan.spec, frame))


def _blocks_part(plan: PassPlan, frame: pd.DataFrame, cols: ChunkColumns) -> MeatPart:
    from attnreg.threads import narrow_blas, parallel_map

    m = cols.n_obs
    spans = [(lo, min(lo + BLOCK_ROWS, m)) for lo in range(0, m, BLOCK_ROWS)]
    with narrow_blas(cols.n_coef):
        parts = parallel_map(lambda span: _block_part(plan, frame, cols, span), spans)
    total = MeatPart.empty(plan.width, plan.maxlags)
    for part in parts:
        total = total.merge(part)
    return total


def _block_part(plan: PassPlan, frame: pd.DataFrame, cols: ChunkColumns,
                span: tuple[int, int]) -> MeatPart:
    """The partial of the kept rows ``span`` of one chunk."""
    lo, hi = span
    from attnreg.threads import scratch

    X = scratch("X", (hi - lo, cols.n_coef), order="F")  # filled a column at a time
    cols.fill(X, lo, hi)
    y = cols.y[lo:hi]
    if not cols.complete and not (np.isfinite(X).all() and np.isfinite(y).all()):
        raise Incomplete
    rows = np.arange(lo, hi, dtype=np.int64) if cols.take is None else cols.take[lo:hi]
    chunk = ChunkDesign(X=X, y=y, weights=None if cols.weights is None else cols.weights[lo:hi],
                        rows=rows, labels=cols.index[rows] if cols.take is not None
                        else cols.index[lo:hi],
                        leverage=None if cols.leverage is None else cols.leverage[lo:hi])
    check_finite(X, cols.names, chunk.labels, "data")
    check_finite(y[:, None], [cols.response_name], chunk.labels, "data")
    return _chunk_part(plan, frame, chunk)


def _chunk_part(plan: PassPlan, frame: pd.DataFrame, chunk: ChunkDesign) -> MeatPart:
    """The partial of the rows of ``chunk`` (``frame``: for the cluster columns)."""
    width = plan.width
    if chunk.n_obs == 0:
        return MeatPart.empty(width, plan.maxlags)
    rw, hat, basis = chunk_scores(plan, chunk, basis=plan.scores)
    if plan.sample_below >= 2**64 - 1:
        sample = rw.copy()
    else:
        sample = rw[_label_hash(chunk.labels) <= np.uint64(plan.sample_below)]
    i = int(np.argmax(hat))
    part = MeatPart(n_obs=chunk.n_obs, rss=float(rw @ rw), resid_min=float(rw.min()),
                    resid_max=float(rw.max()), sample=(sample,), hat_max=float(hat[i]),
                    hat_max_label=chunk.labels[i], meat=np.zeros((width, width)),
                    head=np.zeros((0, width)), tail=np.zeros((0, width)), maxlags=plan.maxlags)
    if not plan.scores:
        return part
    assert basis is not None
    v = residual_scale(plan.residuals, rw, hat)
    if plan.cross and not plan.maxlags and not plan.groups:
        scores = np.multiply(basis, v[:, None], out=basis)
        return replace(part, meat=scores.T @ scores)
    scores = basis * v[:, None]  # a copy: the scratch basis is reused
    if plan.cross:
        L = plan.maxlags
        part = replace(part, meat=bartlett_lagged(scores, L), head=scores[:L].copy(),
                       tail=scores[max(0, scores.shape[0] - L):].copy())
    if not plan.groups:
        return part
    # score sums per key
    sums = []
    for cols in plan.groups:
        keys_frame = {}
        for c in cols:
            values = frame[c].to_numpy()[chunk.rows]
            if pd.isna(values).any():
                j = int(np.argmax(pd.isna(values)))
                raise DataError(f"cluster column {c!r} is missing at row {chunk.labels[j]!r}")
            keys_frame[c] = values
        df = pd.DataFrame(scores, columns=range(width))
        df.index = pd.MultiIndex.from_arrays(list(keys_frame.values()), names=list(cols)) \
            if len(cols) > 1 else pd.Index(next(iter(keys_frame.values())), name=cols[0])
        sums.append(df.groupby(level=list(range(len(cols))), sort=False).sum())
    return replace(part, sums=tuple(sums))


def frames_of(source: ChunkSource, spec: ChunkSpec, columns: list[str], label: str,
              progress: bool) -> Iterator[Any]:
    """The chunks of ``source`` with the spec's input rules, progress reported on stderr."""
    total = source.n_rows or spec.n_rows_seen
    done = 0
    with Progress(total, label, progress) as bar:
        for frame in source.frames(columns, uses=spec.uses):
            done += frame.shape[0]
            bar.update(done)
            yield frame


def pass_plan(res: Any, kind: str = "none", maxlags: int = 0,
              groups: tuple[tuple[str, ...], ...] = (), *, residuals: str = "plain",
              cross: bool | None = None) -> PassPlan:
    """The :class:`PassPlan` of a chunked fit (see :mod:`passes`).

    ``kind`` labels the pass (``"none"``: residual statistics only); what it accumulates is
    given by a covariance's :class:`~attnreg.inference.vcov.scorestats.ScoreNeeds`
    (:func:`attnreg.large.covariance.chunked_vcov`): the scores' ``residuals``, their
    (``maxlags``-lagged) cross-products when ``cross`` (default: a labelled pass without
    ``groups``) and their sums per value of the ``groups`` columns.
    """
    cross = (kind != "none" and not groups) if cross is None else cross
    sp = res.spectrum
    coef = np.where(np.isnan(res.filtered.coef), 0.0, res.filtered.coef)
    G = sp.V / sp.s if sp.rank else np.zeros((sp.kept.size, 0))
    n = int(res.nobs)
    below = 2**64 - 1 if n <= RESERVOIR_SIZE else (2**64 * RESERVOIR_SIZE) // n
    return PassPlan(spec=res.spec, coef=coef, kept=sp.kept, center=sp.center,
                    scale=sp.scale[sp.kept], G=G, f=res.filtered.f, sum_w=sp.sum_w,
                    intercept=sp.intercept is not None, kind=kind, maxlags=maxlags,
                    groups=groups, sample_below=int(below), residuals=residuals, cross=cross)


def run_pass(plan: PassPlan, source: ChunkSource, *, progress: bool = False) -> MeatPart:
    """:func:`second_pass` over every chunk of ``source``, merged in row order.

    A source with a ``map_reduce`` method (a dask frame's
    :class:`~attnreg.large.dask.DistributedSource`) computes the chunks' partials where the
    rows are (its workers) and merges them in a tree; only the merged partial (P × P numbers
    or per-cluster sums) reaches the caller.
    """
    label = f"attnreg pass ({plan.kind if plan.kind != 'none' else 'residuals'})"
    if hasattr(source, "map_reduce"):
        return source.map_reduce(second_pass, (plan,), columns=plan.read_columns(),  # type: ignore[no-any-return]
                                 uses=plan.spec.uses, label=label)
    total = MeatPart.empty(plan.width, plan.maxlags)
    for frame in frames_of(source, plan.spec, plan.read_columns(), f"{label}: rows",
                           progress):
        total = total.merge(second_pass(plan, frame))
    return total
