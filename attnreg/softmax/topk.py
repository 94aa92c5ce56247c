"""Attention over each query's k nearest training rows in the learned metric (``keys="top_k"``).

Each query j attends only to its neighbour set N(j): the ``k`` training rows nearest to it in
the metric learned so far, Ω = Σ_m α_m L_m L_m' (the α-weighted sum of the heads' squared
distances, :func:`~attnreg.softmax.landmarks.metric_map`); one set serves every head::

    h_m(x_j) = Σ_{i ∈ N(j)} softmax_i(s_m(x_j, x_i)) v_i

A training row of a leave-one-out fit is never in its own set (its k nearest *other* rows),
so the mask is the full fit's. With k at least the number of keys it is the full attention.

What is approximated: the keys outside N(j) get weight zero instead of their (small, for a
narrow learned kernel) softmax weight, and N(j) is found in the combined metric, not per
head. The sets are found by an exact search (all pairs, keys in blocks: memory
O(rows · block), never N × N) and held fixed between refreshes: the fitter re-searches them
when Ω has moved by more than :data:`REFRESH_TOL` (relative, Frobenius) since the last search,
checked every outer step (5 L-BFGS iterations); the gradient treats them as fixed. L-BFGS
keeps its curvature history across a refresh (see ``RESET_ON_REFRESH`` in
:mod:`attnreg.softmax.train`).

Cost per loss evaluation O(N·k·M·r) (a gather of each chunk's neighbours), memory
O(N·(P + k) + M·chunk·k·r); a search costs O(N²·P) time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import torch

from attnreg._typing import FloatArray
from attnreg.softmax.fused import ChunkRunner, task_spans
from attnreg.softmax.kernel import _spans
from attnreg.softmax.landmarks import metric_map
from attnreg.softmax.options import N_TOP_K

__all__ = ["N_TOP_K", "REFRESH_TOL", "Neighbours", "effective_neighbours", "nearest",
           "search_map", "topk_heads", "topk_loss_and_grad", "topk_outputs", "topk_row_weights"]

#: re-search the neighbours when Ω moved by more than this, relative (Frobenius norm)
REFRESH_TOL = 0.05
#: keys per block of the neighbour search, and bytes of one (rows × block) distance block
SEARCH_BLOCK = 8192
_SEARCH_BYTES = 8 * 2**20


def search_map(factors: torch.Tensor, alpha: torch.Tensor) -> tuple[FloatArray, FloatArray]:
    """A (P, P) map A with A A' = Ω = Σ_m α_m L_m L_m', and Ω: distances after A are the
    learned ones, in P dimensions rather than M·r."""
    a = metric_map(factors, alpha)
    omega = a @ a.T
    lam, u = np.linalg.eigh(omega)
    return u * np.sqrt(np.clip(lam, 0.0, None)), omega


def nearest(xq: torch.Tensor, xk: torch.Tensor, amap: FloatArray, k: int, *, exclude_self: bool,
            runner: ChunkRunner | None = None) -> torch.Tensor:
    """Indices (J, k') of the k' = min(k, keys available) nearest keys of each query, exact.

    Parameters
    ----------
    xq : Tensor, (J, P)
        Queries (standardised). xk : Tensor, (N, P) the keys.
    amap : ndarray, (P, D)
        Distances are ‖(x − x') A‖² (:func:`search_map`).
    exclude_self : bool
        The queries are the keys (J = N) and row j is not its own neighbour.
    """
    a = torch.as_tensor(amap, dtype=xk.dtype, device=xk.device)
    yq, yk = xq @ a, xk @ a
    k2 = (yk * yk).sum(1)
    n = xk.shape[0]
    kk = max(1, min(int(k), n - 1 if exclude_self else n))
    rows = max(1, _SEARCH_BYTES // (8 * (min(n, SEARCH_BLOCK) + kk)))
    out = torch.empty((xq.shape[0], kk), dtype=torch.int64, device=xk.device)

    def task(lo: int, hi: int) -> None:
        for s, t in _spans(hi - lo, rows):
            a0, a1 = lo + s, lo + t
            best_d = yq.new_empty((a1 - a0, 0))
            best_i = out.new_empty((a1 - a0, 0))
            for k0, k1 in _spans(n, SEARCH_BLOCK):
                d = torch.addmm(k2[k0:k1], yq[a0:a1], yk[k0:k1].T, alpha=-2.0)  # ‖k‖² − 2 q·k
                if exclude_self and -d.shape[0] < a0 - k0 < d.shape[1]:
                    d.diagonal(offset=a0 - k0).fill_(torch.inf)
                # the block's own k nearest first, then merged with the running ones: the
                # concatenations stay (rows × 2k), not (rows × block)
                d, ids = torch.topk(d, min(kk, d.shape[1]), dim=1, largest=False, sorted=False)
                d, ids = torch.cat([best_d, d], 1), torch.cat([best_i, ids + k0], 1)
                best_d, pos = torch.topk(d, min(kk, d.shape[1]), dim=1, largest=False, sorted=False)
                best_i = ids.gather(1, pos)
            out[a0:a1] = best_i

    spans = task_spans(xq.shape[0], rows)
    if runner is None:
        for lo, hi in spans:
            task(lo, hi)
    else:
        runner.map(task, spans)
    return out


@dataclass
class Neighbours:
    """Neighbour sets of the fitter's train and validation rows (mutable scratch).

    ``refresh`` re-searches them when Ω moved by more than ``tol`` since the last search;
    the sets count as changed only when some row's set did. Shapes: ``tr`` (n, k), ``va`` (n_va, k').
    """

    k: int
    mask_self: bool
    tol: float = REFRESH_TOL
    tr: torch.Tensor | None = None
    va: torch.Tensor | None = None
    omega: FloatArray | None = None
    n_searches: int = 0

    def refresh(self, x_tr: torch.Tensor, x_va: torch.Tensor, factors: torch.Tensor,
                alpha: torch.Tensor, runner: ChunkRunner) -> bool:
        """Search again if the metric moved (or never searched); True when it did."""
        amap, omega = search_map(factors, alpha)
        if self.omega is not None:
            scale = max(float(np.linalg.norm(self.omega)), 1e-300)
            moved = float(np.linalg.norm(omega - self.omega)) / scale
            if moved <= self.tol:
                return False
        tr = nearest(x_tr, x_tr, amap, self.k, exclude_self=self.mask_self, runner=runner)
        va = nearest(x_va, x_tr, amap, self.k, exclude_self=False, runner=runner)
        self.omega, self.n_searches = omega, self.n_searches + 1
        if _same_sets(self.tr, tr) and _same_sets(self.va, va):
            return False  # the objective is unchanged (and so are its sums' order)
        self.tr, self.va = tr, va
        return True


def _same_sets(old: torch.Tensor | None, new: torch.Tensor) -> bool:
    """Whether every row of ``old`` holds the same indices as ``new`` (in any order)."""
    if old is None or old.shape != new.shape:
        return False
    return bool(torch.equal(old.sort(dim=1).values, new.sort(dim=1).values))


def _gather(zq: torch.Tensor, ka: torch.Tensor, idx: torch.Tensor,
            sd: torch.dtype) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """[q, 1] (M, c, r + 1), the neighbours' [k, b] (M, c, k, r + 1) and their weights p (M, c, k)."""
    qa = torch.cat([zq, torch.ones_like(zq[..., :1])], dim=2).to(sd)
    kg = ka[:, idx]  # (M, c, k, r + 1)
    s = torch.matmul(kg, qa.unsqueeze(3)).squeeze(3)  # (M, c, k)
    return qa, kg, torch.softmax(s, dim=2)


def _key_table(zk: torch.Tensor, bias: torch.Tensor | None, sd: torch.dtype) -> torch.Tensor:
    """[k, b] (M, N, r + 1), b = 0 for the dot kernel."""
    b = bias.detach() if bias is not None else zk.new_zeros(zk.shape[:2])
    return torch.cat([zk.detach(), b.unsqueeze(2)], dim=2).to(sd)


def topk_outputs(runner: ChunkRunner, zq: torch.Tensor, zk: torch.Tensor, bias: torch.Tensor | None,
                 values: torch.Tensor, nbr: torch.Tensor, *, chunk: int,
                 score_dtype: torch.dtype = torch.float64) -> torch.Tensor:
    """Per-head outputs (M, J) of queries ``zq`` (M, J, r) over their neighbours ``nbr`` (J, k)
    among the keys ``zk`` (M, N, r) with bias (M, N) or None; no gradient."""
    out = zq.new_empty(zq.shape[:2])
    with torch.no_grad():
        ka = _key_table(zk, bias, score_dtype)

        def task(a: int, b: int) -> None:
            for s, t in _spans(b - a, chunk):
                idx = nbr[a + s : a + t]
                _, _, p = _gather(zq[:, a + s : a + t].detach(), ka, idx, score_dtype)
                out[:, a + s : a + t] = (p.to(zq.dtype) * values[idx]).sum(2)

        runner.map(task, task_spans(zq.shape[1], chunk))
    return out


def effective_neighbours(runner: ChunkRunner, zq: torch.Tensor, zk: torch.Tensor,
                         bias: torch.Tensor | None, alpha: torch.Tensor, nbr: torch.Tensor, *,
                         chunk: int) -> torch.Tensor:
    """1 / Σ_i w_ji² (J,) of each query's combined weights w = Σ_m α_m p_m over its set
    ``nbr`` (J, k): k for uniform weights, 1 for one row taking all."""
    out = zq.new_empty(zq.shape[1])
    with torch.no_grad():
        ka = _key_table(zk, bias, zq.dtype)

        def task(a: int, b: int) -> None:
            for s, t in _spans(b - a, chunk):
                _, _, p = _gather(zq[:, a + s : a + t].detach(), ka, nbr[a + s : a + t], zq.dtype)
                out[a + s : a + t] = 1.0 / torch.einsum("m,mck->ck", alpha, p).square().sum(1)

        runner.map(task, task_spans(zq.shape[1], chunk))
    return out


def topk_heads(zq: torch.Tensor, zk: torch.Tensor, bias: torch.Tensor | None, values: torch.Tensor,
               nbr: torch.Tensor) -> torch.Tensor:
    """Per-head outputs (M, J) as one autograd graph, differentiable in ``zq`` (the neighbour
    sets held fixed); memory O(M·J·k·r): for small query blocks."""
    kg = zk[:, nbr]  # (M, J, k, r)
    s = torch.matmul(kg, zq.unsqueeze(3)).squeeze(3)
    if bias is not None:
        s = s + bias[:, nbr]
    return (torch.softmax(s, dim=2) * values[nbr]).sum(2)


def topk_loss_and_grad(
    runner: ChunkRunner, z: torch.Tensor, bias: torch.Tensor | None, logits: torch.Tensor,
    values: torch.Tensor, target: torch.Tensor, nbr: torch.Tensor, *, chunk: int,
    score_dtype: torch.dtype,
) -> tuple[float, torch.Tensor, torch.Tensor | None, torch.Tensor]:
    """Mean squared error of the training rows attending to their neighbours, and its gradients.

    With ds_ji = g_j p_ji (v_i − h_j) for i ∈ N(j) (g = ∂loss/∂h): ∂/∂q_j = Σ_i ds_ji k_i,
    ∂/∂k_i = Σ_j ds_ji q_j and ∂/∂b_i = Σ_j ds_ji (scattered to the keys by ``index_add``),
    the neighbour sets held fixed. Arguments and returns as
    :func:`attnreg.softmax.fused.loss_and_grad`, plus ``nbr`` (N, k), the neighbours of each
    training row (itself excluded for the leave-one-out loss).
    """
    sd, pd = score_dtype, z.dtype
    n_heads, n, r = z.shape
    zd = z.detach()
    ka = _key_table(zd, bias, sd)
    pi = torch.softmax(logits.detach(), dim=0)
    h_all = zd.new_empty((n_heads, n))
    dq = torch.empty_like(zd)
    spans = task_spans(n, chunk, n_heads * n * (r + 1) * ka.element_size())
    acc_all = runner.partials(len(spans), (n, n_heads, r + 1), sd, z.device)  # rows first: one
    # index_add of whole (M, r + 1) rows is several times faster than M of (r + 1) entries
    sse_all = zd.new_zeros(len(spans))

    def task(a: int, b: int) -> None:
        index = spans.index((a, b))
        for s, t in _spans(b - a, chunk):
            rows, idx = slice(a + s, a + t), nbr[a + s : a + t]
            qa, kg, p = _gather(zd[:, rows], ka, idx, sd)
            vg = values[idx]  # (c, k)
            h = (p.to(pd) * vg).sum(2)  # (M, c)
            h_all[:, rows] = h
            resid = target[rows] - pi @ h
            sse_all[index] += resid @ resid
            g = (-2.0 / n) * pi.unsqueeze(1) * resid.unsqueeze(0)  # ∂loss/∂h (M, c)
            ds = (g.unsqueeze(2) * p.to(pd) * (vg.unsqueeze(0) - h.unsqueeze(2))).to(sd)
            dq[:, rows] = torch.matmul(ds.unsqueeze(2), kg).squeeze(2)[..., :r].to(pd)
            side = torch.empty((t - s, idx.shape[1], n_heads, r + 1), dtype=sd, device=z.device)
            torch.mul(ds.permute(1, 2, 0).unsqueeze(3), qa.transpose(0, 1).unsqueeze(1), out=side)
            acc_all[index].index_add_(0, idx.reshape(-1), side.view(-1, n_heads, r + 1))  # [ds q, ds]

    runner.map(task, spans)
    acc = (acc_all.sum(0) if len(spans) > 1 else acc_all[0]).to(pd).transpose(0, 1)  # (M, N, r + 1)
    resid_all = target - pi @ h_all
    d_pi = (-2.0 / n) * (h_all @ resid_all)
    grad_logits = pi * (d_pi - pi @ d_pi)
    return (float(sse_all.sum()) / n, dq + acc[..., :r], None if bias is None else acc[..., r],
            grad_logits)


def topk_row_weights(zq: torch.Tensor, zk: torch.Tensor, bias: torch.Tensor | None,
                     nbr: torch.Tensor, *, chunk: int) -> Iterator[tuple[int, int, torch.Tensor]]:
    """Yield ``(start, stop, p)``: per-head weights over every training row (M, c, N), zero
    outside each query's neighbours ``nbr`` (J, k): the exact vote of the fit."""
    with torch.no_grad():
        ka = _key_table(zk, bias, zq.dtype)
        for a, b in _spans(zq.shape[1], chunk):
            idx = nbr[a:b]
            _, _, p = _gather(zq[:, a:b], ka, idx, zq.dtype)
            w = zq.new_zeros((zq.shape[0], b - a, zk.shape[1]))
            yield a, b, w.scatter_(2, idx.unsqueeze(0).expand(zq.shape[0], -1, -1), p)
