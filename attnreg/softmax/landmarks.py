"""Attention over landmark keys: N training rows summarised by L ≪ N centres (``keys="landmarks"``).

The training rows are grouped into L clusters in the standardised predictor space (k-means by
Lloyd's iterations from a seeded sample of rows, or the sample itself with
``landmark_method="sample"``), fixed while L-BFGS runs. Then, ``landmark_refresh`` times, the
rows are re-clustered in the metric just learned (the α-weighted sum of the heads' squared
distances, :func:`metric_map`) and the fit continues from where it stopped: clusters tight
in the directions the metric stretches are what the approximation needs.
 Cluster l has n_l rows, centre c_l (their mean) and value v̄_l (the mean
of their values). A query attends to the centres, each weighted by its size::

    s_ml(x*) = score_m(x*, c_l) + log n_l          h_m(x*) = Σ_l softmax_l(s_ml) v̄_l

which is exact when every row of a cluster sits at its centre: n_l identical rows carry
n_l times the weight of one, with their mean value. So with every row its own landmark
(L = N distinct rows) it is the full attention, and the error shrinks as L grows (the
within-cluster spread falls). The leave-one-out rule is kept honestly: training row j
removes itself from its own cluster (size n − 1, value (n v̄ − v_j) / (n − 1); the cluster
vanishes when j was alone in it), the centre staying where it is.

Cost per loss evaluation O(N·L·M·r), memory O(N·P + M·chunk·L): one pass per query chunk
gives the outputs, the residuals and the gradients (closed forms, as in
:mod:`attnreg.softmax.fused`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from attnreg._typing import FloatArray, IntArray
from attnreg.softmax.fused import ChunkRunner, task_spans
from attnreg.softmax.kernel import _spans
from attnreg.softmax.options import LANDMARK_METHODS

__all__ = ["LANDMARK_METHODS", "LLOYD_ITERATIONS", "LandmarkSet", "Landmarks", "build_landmarks",
           "landmark_keys", "landmark_loss_and_grad", "landmark_outputs", "landmark_row_weights",
           "metric_map"]

#: Lloyd iterations of ``landmark_method="kmeans"`` (fewer when the assignment stops changing)
LLOYD_ITERATIONS = 10
#: k-means runs on at most this many rows per centre (a seeded sample), then every row is
#: assigned to its nearest centre once
KMEANS_ROWS_PER_CENTER = 32
_ASSIGN_BLOCK = 4 * 2**20  # bytes of one (rows × centres) distance block


@dataclass(frozen=True)
class Landmarks:
    """Landmark keys of a fit, on the standardised scale.

    Attributes
    ----------
    centers : ndarray, shape (L, P)
        Cluster centres (means of their rows).
    values : ndarray, shape (L,)
        Mean value of each cluster's rows.
    counts : ndarray, shape (L,)
        Rows per cluster (all positive; they sum to N).
    assign : ndarray of int, shape (N,)
        The cluster of each training row.
    """

    centers: FloatArray
    values: FloatArray
    counts: FloatArray
    assign: IntArray

    def tensors(self, row_values: FloatArray, device: torch.device,
                dtype: torch.dtype = torch.float64) -> LandmarkSet:
        """The torch form used by the fitter, with the training rows' own ``row_values`` (N,)."""
        t = lambda a: torch.as_tensor(np.ascontiguousarray(a), dtype=dtype, device=device)  # noqa: E731
        n = self.counts
        own = self.counts[self.assign]  # (N,) size of each row's cluster
        alone = own <= 1
        # leave-one-out: log((n − 1) / n) added to the own score, and the value correction
        shift = np.where(alone, -np.inf, np.log(np.maximum(own - 1.0, 1.0)) - np.log(own))
        loo = (own * self.values[self.assign] - row_values) / np.where(alone, 1.0, own - 1.0)
        dv = np.where(alone, 0.0, loo - self.values[self.assign])
        return LandmarkSet(
            centers=t(self.centers), log_counts=t(np.log(n)), values=t(self.values),
            assign=torch.as_tensor(self.assign, dtype=torch.int64, device=device),
            own_shift=t(shift), own_dv=t(dv),
        )


@dataclass(frozen=True)
class LandmarkSet:
    """Torch tensors of :class:`Landmarks` for the fitter: centres (L, P), log sizes (L,),
    mean values (L,); for each training row its cluster (N,), the leave-one-out score shift
    log((n − 1) / n) (N,) and value correction (N,)."""

    centers: torch.Tensor
    log_counts: torch.Tensor
    values: torch.Tensor
    assign: torch.Tensor
    own_shift: torch.Tensor
    own_dv: torch.Tensor


def _nearest(x: torch.Tensor, centers: torch.Tensor) -> torch.Tensor:
    """Index of the nearest centre of every row (N,), in blocks of rows."""
    c2 = (centers * centers).sum(1)
    rows = max(1, _ASSIGN_BLOCK // max(1, 8 * centers.shape[0]))
    out = torch.empty(x.shape[0], dtype=torch.int64, device=x.device)
    for a, b in _spans(x.shape[0], rows):
        out[a:b] = torch.addmm(c2, x[a:b], centers.T, alpha=-2.0).argmin(dim=1)  # ‖x − c‖² − ‖x‖²
    return out


def _means(x: torch.Tensor, assign: torch.Tensor, n_clusters: int) -> tuple[torch.Tensor, torch.Tensor]:
    counts = torch.zeros(n_clusters, dtype=x.dtype, device=x.device).index_add_(
        0, assign, torch.ones_like(x[:, 0]))
    sums = torch.zeros((n_clusters, x.shape[1]), dtype=x.dtype, device=x.device).index_add_(0, assign, x)
    return sums / counts.clamp_min(1.0).unsqueeze(1), counts


def _lloyd(x: torch.Tensor, centers: torch.Tensor) -> torch.Tensor:
    """Up to :data:`LLOYD_ITERATIONS` Lloyd iterations on rows ``x`` from ``centers`` (L, P)."""
    assign = _nearest(x, centers)
    for _ in range(LLOYD_ITERATIONS):
        means, counts = _means(x, assign, centers.shape[0])
        centers = torch.where((counts > 0).unsqueeze(1), means, centers)
        new = _nearest(x, centers)
        if torch.equal(new, assign):
            break
        assign = new
    return centers


def metric_map(factors: torch.Tensor, alpha: torch.Tensor) -> FloatArray:
    """(P, M·r) map [√α_1 L_1, …, √α_M L_M] of factors (M, P, r) and weights (M,): squared
    distances after it are the α-weighted sum of the heads' learned squared distances (what
    :func:`build_landmarks` clusters in)."""
    f = factors.detach().to(torch.float64).cpu().numpy()
    a = alpha.detach().to(torch.float64).cpu().numpy()
    return np.concatenate([np.sqrt(w) * m for w, m in zip(a, f, strict=True)], axis=1)


def build_landmarks(x: FloatArray, values: FloatArray, n_landmarks: int, method: str,
                    seed: int, metric: FloatArray | None = None) -> Landmarks:
    """Group the rows of ``x`` (N, P) into at most ``n_landmarks`` clusters; see the module.

    ``metric`` (P, D): cluster the rows of ``x @ metric`` instead (the learned metric of
    :func:`metric_map`); the centres are still the means of the rows of ``x``.

    The initial centres are a seeded sample of rows (``method="sample"`` stops there: each
    row goes to its nearest sampled row); ``"kmeans"`` then runs up to
    :data:`LLOYD_ITERATIONS` Lloyd iterations on a seeded sample of
    :data:`KMEANS_ROWS_PER_CENTER` rows per centre (all rows when N is smaller). Every row
    then joins its nearest centre, and the centres become their rows' means. Empty
    clusters are dropped.
    """
    xs = torch.as_tensor(np.ascontiguousarray(x, dtype=np.float64))
    xt = xs if metric is None else xs @ torch.as_tensor(np.asarray(metric, dtype=np.float64))
    n = xt.shape[0]
    size = min(int(n_landmarks), n)
    state = np.random.SeedSequence([seed, 29]).generate_state(1)[0]
    perm = np.random.default_rng(int(state)).permutation(n)
    centers = xt[torch.as_tensor(np.sort(perm[:size]))]
    if method == "kmeans":
        sub = xt[torch.as_tensor(np.sort(perm[: KMEANS_ROWS_PER_CENTER * size]))]
        centers = _lloyd(sub, centers)
    used, assign = torch.unique(_nearest(xt, centers), return_inverse=True)  # drop empty ones
    means, counts = _means(xs, assign, used.shape[0])
    vals = torch.zeros(used.shape[0], dtype=xt.dtype).index_add_(
        0, assign, torch.as_tensor(np.asarray(values, dtype=np.float64))) / counts
    return Landmarks(means.numpy(), vals.numpy(), counts.numpy(), assign.numpy())


def landmark_keys(lm: LandmarkSet, factors: torch.Tensor,
                  kernel: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Projected centres (M, L, r) and key terms (M, L): log n, and −½‖c L‖² for the distance
    kernel (differentiable in ``factors``)."""
    zk = torch.matmul(lm.centers.unsqueeze(0), factors)
    kb = lm.log_counts.unsqueeze(0).expand(zk.shape[0], -1)
    if kernel == "distance":
        kb = kb - 0.5 * (zk * zk).sum(dim=2)
    return zk, kb


@dataclass(frozen=True)
class _Block:
    """Normalised effective weights p (M, c, L) of a query chunk, its head outputs h (M, c)
    and, for training rows, the own cluster's index (M, c, 1) and value correction (c,)."""

    p: torch.Tensor
    h: torch.Tensor
    idx: torch.Tensor | None
    du: torch.Tensor | None


def _exp_scores(qa: torch.Tensor, ka_t: torch.Tensor, lm: LandmarkSet,
                rows: slice | None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Unnormalised weights exp(s − max) (M, c, L) of augmented queries ``qa`` (M, c, r + 1)
    over the landmarks ``ka_t`` (M, r + 1, L), and the own clusters' index (M, c, 1) or None.

    ``rows``: the queries are these training rows; each leaves its own cluster (its weight
    there scaled by (n − 1) / n; the value correction is the caller's).
    """
    s = torch.bmm(qa, ka_t)  # (M, c, L)
    e = s.sub_(s.amax(dim=2, keepdim=True)).exp_()
    if rows is None:
        return e, None
    idx = lm.assign[rows].view(1, -1, 1).expand(qa.shape[0], -1, 1)
    keep = torch.exp(lm.own_shift[rows]).to(e.dtype).view(1, -1, 1)
    return e.scatter_(2, idx, e.gather(2, idx) * keep), idx


def _block(qa: torch.Tensor, ka_t: torch.Tensor, lm: LandmarkSet, rows: slice | None) -> _Block:
    """Normalised effective weights and head outputs of one query chunk (see :func:`_exp_scores`)."""
    e, idx = _exp_scores(qa, ka_t, lm, rows)
    e.div_(e.sum(dim=2, keepdim=True))
    vals = lm.values.to(e.dtype)
    if idx is None:
        return _Block(e, e @ vals, None, None)
    du = lm.own_dv[rows].to(e.dtype)
    return _Block(e, e @ vals + e.gather(2, idx).squeeze(2) * du, idx, du)


def _augmented(zq: torch.Tensor, zk: torch.Tensor, kb: torch.Tensor,
               sd: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """[q, 1] (M, J, r + 1) and [k, kb]ᵀ (M, r + 1, L) in the score dtype."""
    qa = torch.cat([zq.detach(), torch.ones_like(zq[..., :1])], dim=2).to(sd)
    ka_t = torch.cat([zk.detach(), kb.detach().unsqueeze(2)], dim=2).to(sd).transpose(1, 2)
    return qa, ka_t


def landmark_outputs(
    runner: ChunkRunner, zq: torch.Tensor, zk: torch.Tensor, kb: torch.Tensor, lm: LandmarkSet,
    *, chunk: int, training: bool = False, score_dtype: torch.dtype = torch.float64,
) -> torch.Tensor:
    """Per-head outputs (M, J) of projected queries ``zq`` (M, J, r) over the landmarks, no grad.

    ``zk``, ``kb`` from :func:`landmark_keys`; ``training``: the queries are the training
    rows in order (leave-one-out).
    """
    out = zq.new_empty(zq.shape[:2])
    with torch.no_grad():
        qa, ka_t = _augmented(zq, zk, kb, score_dtype)

        def task(a: int, b: int) -> None:
            for s, t in _spans(b - a, chunk):
                rows = slice(a + s, a + t)
                out[:, rows] = _block(qa[:, rows], ka_t, lm, rows if training else None).h.to(zq.dtype)

        runner.map(task, task_spans(zq.shape[1], chunk))
    return out


def _loss_chunk(
    qa: torch.Tensor, ka_t: torch.Tensor, kv: torch.Tensor, zq: torch.Tensor, zk: torch.Tensor,
    lm: LandmarkSet, target: torch.Tensor, pi: torch.Tensor, rows: slice, mask_self: bool,
    acc: torch.Tensor, n: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One query chunk of :func:`landmark_loss_and_grad`: head outputs (M, c), ∂loss/∂q (M, c, r)
    and the squared residuals' sum; the keys' sums (M, L, 2r + 2) are added into ``acc``."""
    sd, pd, r = acc.dtype, zq.dtype, zq.shape[2]
    e, idx = _exp_scores(qa[:, rows], ka_t, lm, rows if mask_self else None)
    sums = torch.bmm(e, kv).to(pd)  # (M, c, 2r + 2)
    own = None if idx is None else e.gather(2, idx).squeeze(2).to(pd) * lm.own_dv[rows]
    h = (sums[..., 0] if own is None else sums[..., 0] + own) / sums[..., 1]
    resid = target[rows] - pi @ h
    gw = (-2.0 / n) * pi.unsqueeze(1) * resid.unsqueeze(0) / sums[..., 1]  # ∂loss/∂h / den
    big = sums[..., 2:]
    dq = gw.unsqueeze(2) * (big[..., :r] - h.unsqueeze(2) * big[..., r:])
    q = zq[:, rows]
    zz = torch.cat([gw.unsqueeze(2) * q, (gw * h).unsqueeze(2) * q, gw.unsqueeze(2),
                    (gw * h).unsqueeze(2)], dim=2).to(sd)
    acc.baddbmm_(e.transpose(1, 2), zz)
    if idx is not None and own is not None:  # the own cluster's value correction
        w = (gw * own).unsqueeze(2)  # (M, c, 1)
        dq += w * torch.gather(zk, 1, idx.expand(-1, -1, r))
        fix = torch.cat([torch.zeros_like(q), -w * q, torch.zeros_like(w), -w], dim=2)
        acc.index_add_(1, idx[0, :, 0], fix.to(sd))
    return h, dq, resid @ resid


def landmark_loss_and_grad(
    runner: ChunkRunner, zq: torch.Tensor, zk: torch.Tensor, kb: torch.Tensor,
    logits: torch.Tensor, lm: LandmarkSet, target: torch.Tensor, *, mask_self: bool, chunk: int,
    score_dtype: torch.dtype,
) -> tuple[float, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Mean squared error of the training rows attending to the landmarks, and its gradients.

    With p the effective weights and u the effective values (the own cluster's corrected),
    ∂h_j/∂s_jl = p_jl (u_jl − h_j), so ∂/∂q_j = g_j Σ_l p_jl (u_jl − h_j) k_l,
    ∂/∂k_l = Σ_j g_j p_jl (u_jl − h_j) q_j and ∂/∂kb_l = Σ_j g_j p_jl (u_jl − h_j): as in
    :mod:`attnreg.softmax.fused`, two products of each chunk's exponentials give them all,
    plus a correction at the own cluster of each row.

    Parameters
    ----------
    zq : Tensor, (M, N, r)
        Projected training rows (the queries).
    zk, kb : Tensor, (M, L, r) and (M, L)
        Projected centres and key terms (:func:`landmark_keys`).
    logits : Tensor, (M,)
    lm : LandmarkSet
    target : Tensor, (N,)
    mask_self : bool
        Leave-one-out: each row leaves its own cluster.

    Returns
    -------
    loss : float
    grad_zq, grad_zk, grad_kb, grad_logits : Tensors shaped as zq, zk, kb, logits.
    """
    sd, pd = score_dtype, zq.dtype
    n_heads, n, r = zq.shape
    qa, ka_t = _augmented(zq, zk, kb, sd)
    zkd, vals = zk.detach(), lm.values.view(1, -1, 1).to(pd)
    # one product with the weights gives [Σ e v̄, Σ e, Σ e v̄ k, Σ e k]
    kv = torch.cat([vals.expand(n_heads, -1, 1), torch.ones_like(zkd[..., :1]), zkd * vals, zkd],
                   dim=2).to(sd)  # (M, L, 2r + 2)
    pi = torch.softmax(logits.detach(), dim=0)
    h_all = zq.new_empty((n_heads, n))
    dq = torch.empty_like(zq)
    spans = task_spans(n, chunk)
    acc_all = runner.partials(len(spans), (n_heads, zk.shape[1], 2 * r + 2), sd, zq.device)
    sse_all = zq.new_zeros(len(spans))

    def task(a: int, b: int) -> None:
        index = spans.index((a, b))
        for s, t in _spans(b - a, chunk):
            rows = slice(a + s, a + t)
            h_all[:, rows], dq[:, rows], sse = _loss_chunk(
                qa, ka_t, kv, zq.detach(), zkd, lm, target, pi, rows, mask_self, acc_all[index], n)
            sse_all[index] += sse

    runner.map(task, spans)
    acc = (acc_all.sum(0) if len(spans) > 1 else acc_all[0]).to(pd)
    v = lm.values.to(pd)
    dk = v.view(1, -1, 1) * acc[..., :r] - acc[..., r : 2 * r]
    dkb = v.view(1, -1) * acc[..., 2 * r] - acc[..., 2 * r + 1]
    resid_all = target - pi @ h_all
    d_pi = (-2.0 / n) * (h_all @ resid_all)
    grad_logits = pi * (d_pi - pi @ d_pi)
    return float(sse_all.sum()) / n, dq, dk, dkb, grad_logits


def landmark_row_weights(
    zq: torch.Tensor, zk: torch.Tensor, kb: torch.Tensor, lm: LandmarkSet, *, mask_self: bool,
    chunk: int,
) -> Iterator[tuple[int, int, torch.Tensor]]:
    """Yield ``(start, stop, w)``: each landmark's weight shared equally by its rows (M, c, N).

    w_ji = p_j,l(i) / n_l(i), so Σ_i w_ji v_i = Σ_l p_jl v̄_l: the prediction is an exact vote
    of the training rows. ``mask_self``: the queries are the training rows and row j's own
    weight is removed and the rest renormalised, which is the leave-one-out attention of
    the fit (its cluster one row smaller, with the other rows' values).
    """
    share = torch.exp(-lm.log_counts[lm.assign]).to(zq.dtype)  # 1 / n_l(i), (N,)
    with torch.no_grad():
        qa, ka_t = _augmented(zq, zk, kb, zq.dtype)
        for a, b in _spans(zq.shape[1], chunk):
            w = _block(qa[:, a:b], ka_t, lm, None).p[:, :, lm.assign] * share  # (M, c, N)
            if mask_self:
                w.diagonal(offset=a, dim1=1, dim2=2).fill_(0.0)
                w.div_(w.sum(dim=2, keepdim=True))
            yield a, b, w
