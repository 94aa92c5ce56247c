"""Exact softmax attention with the keys in blocks too: memory O(N·r + chunk·key_block).

:mod:`attnreg.softmax.kernel` and :mod:`attnreg.softmax.fused` split the queries into chunks
but score each chunk against every key at once, a (M, chunk, N) block: at N = 1e6 that is
hundreds of megabytes per worker. Here each query chunk visits the keys block by block,
flash-attention style, keeping for each query a running maximum and running sums
(the online softmax)::

    m ← max(m, max_i s_ji)          a ← a · exp(m_old − m) + Σ_i exp(s_ji − m) [v_i, 1]

so that h_j = a_j0 / a_j1 and the log-sum-exp lse_j = m_j + log a_j1 are exact (the same
numbers as the one-block pass, to rounding). The backward pass visits the key blocks again
and recomputes the normalised weights p_ji = exp(s_ji − lse_j) (the formulas of
:mod:`attnreg.softmax.kernel`); nothing of size N × N, or chunk × N, is ever held.

:data:`KEY_BLOCK` keys or fewer take the one-block path of :mod:`attnreg.softmax.fused`
(one exponential per pair instead of two); more keys take this one.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from attnreg.softmax.fused import ChunkRunner, task_spans
from attnreg.softmax.kernel import _augment, _spans
from attnreg.softmax.options import KEY_BLOCK

__all__ = ["KEY_BLOCK", "BlockedAttention", "blocked_head_outputs", "blocked_loss_and_grad"]


def _mask_diagonal_(s: torch.Tensor, q0: int, k0: int, value: float) -> None:
    """Set the entries of block ``s`` (M, c, b) whose query row q0 + j is key row k0 + i."""
    off = q0 - k0
    if -s.shape[1] < off < s.shape[2]:
        s.diagonal(offset=off, dim1=1, dim2=2).fill_(value)


def _floor(dtype: torch.dtype) -> float:
    """Shifted scores below this underflow anyway (exp is slow on them): e^-80 / e^-700."""
    return -700.0 if dtype == torch.float64 else -80.0


def online_sums(
    qa: torch.Tensor, ka_t: torch.Tensor, vv: torch.Tensor, q0: int, mask_self: bool,
    key_block: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Running maximum m (M, c) and sums Σ_i exp(s_ji − m_j) vv_i (M, c, w) of one query chunk.

    ``qa`` (M, c, r') are augmented queries whose first row is row ``q0`` of the keys,
    ``ka_t`` (M, r', N) the augmented keys transposed, ``vv`` (N, w) what is summed.
    """
    n_heads, c, _ = qa.shape
    m = qa.new_full((n_heads, c), -math.inf)
    acc = qa.new_zeros((n_heads, c, vv.shape[1]))
    for k0, k1 in _spans(ka_t.shape[2], key_block):
        s = torch.bmm(qa, ka_t[:, :, k0:k1])  # (M, c, b)
        if mask_self:
            _mask_diagonal_(s, q0, k0, -math.inf)
        new = torch.maximum(m, s.amax(dim=2))
        safe = torch.where(torch.isinf(new), torch.zeros_like(new), new)  # all masked so far
        acc.mul_(torch.exp(m - safe).unsqueeze(2))
        s.sub_(safe.unsqueeze(2)).clamp_min_(_floor(s.dtype)).exp_()
        if mask_self:
            _mask_diagonal_(s, q0, k0, 0.0)
        acc.add_(torch.matmul(s, vv[k0:k1]))
        m = new
    return m, acc


def key_pass(
    qa: torch.Tensor, ka_t: torch.Tensor, lse: torch.Tensor, kv: torch.Tensor, zz: torch.Tensor,
    acc: torch.Tensor, q0: int, mask_self: bool, key_block: int,
) -> torch.Tensor:
    """Recompute p = exp(s − lse) block by block: returns Σ_i p_ji kv_mi (M, c, w) and adds
    Σ_j p_ji zz_mj (M, N, w') into ``acc`` in place.

    ``qa`` (M, c, r'), ``ka_t`` (M, r', N), ``lse`` (M, c), ``kv`` (M, N, w), ``zz`` (M, c, w').
    """
    lhs = torch.cat([qa, -lse.unsqueeze(2)], dim=2)  # [q, 1, −lse] · [k, b, 1] = s − lse
    out = qa.new_zeros((*qa.shape[:2], kv.shape[2]))
    for k0, k1 in _spans(ka_t.shape[2], key_block):
        kb = ka_t[:, :, k0:k1]
        rhs = torch.cat([kb, torch.ones_like(kb[:, :1])], dim=1)
        p = torch.bmm(lhs, rhs).clamp_min_(_floor(qa.dtype)).exp_()  # (M, c, b)
        if mask_self:
            _mask_diagonal_(p, q0, k0, 0.0)
        out.baddbmm_(p, kv[:, k0:k1])
        acc[:, k0:k1].baddbmm_(p.transpose(1, 2), zz)
    return out


def _key_side(z_q: torch.Tensor, g: torch.Tensor, h: torch.Tensor, sd: torch.dtype) -> torch.Tensor:
    """[g q, g h q, g, g h] (M, c, 2r + 2): what the keys' gradients sum over the queries."""
    gw = g.unsqueeze(2)
    ghw = (g * h).unsqueeze(2)
    return torch.cat([gw * z_q, ghw * z_q, gw, ghw], dim=2).to(sd)


def _finish(acc: torch.Tensor, values: torch.Tensor, r: int) -> tuple[torch.Tensor, torch.Tensor]:
    """∂/∂k (M, N, r) and ∂/∂b (M, N) from the key-side sums (M, N, 2r + 2)."""
    v = values.view(1, -1, 1)
    dk = v * acc[..., :r] - acc[..., r : 2 * r]
    db = values.view(1, -1) * acc[..., 2 * r] - acc[..., 2 * r + 1]
    return dk, db


class BlockedAttention(torch.autograd.Function):
    """Per-head attention outputs h (M, J), queries and keys in blocks (exact).

    ``apply(q, k, bias, values, mask_self, chunk, key_block, score_dtype)`` with q (M, J, r),
    k (M, N, r), bias (M, N) or None, values (N,) in the parameter dtype; ``values`` gets
    no gradient. With ``mask_self`` the queries are the keys (J = N) and row j never sees
    key j. Memory: O((J + N)·r + M·chunk·key_block).
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any, q: torch.Tensor, k: torch.Tensor, bias: torch.Tensor | None,
        values: torch.Tensor, mask_self: bool, chunk: int, key_block: int,
        score_dtype: torch.dtype,
    ) -> torch.Tensor:
        qa, ka = _augment(q, k, bias, score_dtype)
        ka_t = ka.transpose(1, 2)
        vv = torch.stack([values, torch.ones_like(values)], dim=1).to(score_dtype)
        h = q.new_empty(q.shape[:2])
        lse = q.new_empty(q.shape[:2])
        for a, b in _spans(q.shape[1], chunk):
            m, sums = online_sums(qa[:, a:b], ka_t, vv, a, mask_self, key_block)
            den = sums[..., 1].to(q.dtype)
            h[:, a:b] = sums[..., 0].to(q.dtype) / den
            lse[:, a:b] = m.to(q.dtype) + torch.log(den)
        ctx.save_for_backward(q, k, bias if bias is not None else q.new_empty(0), values, h, lse)
        ctx.has_bias = bias is not None
        ctx.opts = (mask_self, chunk, key_block, score_dtype)
        return h

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx: Any, grad_h: torch.Tensor) -> tuple[torch.Tensor | None, ...]:  # type: ignore[override]
        q, k, bias, values, h, lse = ctx.saved_tensors
        mask_self, chunk, key_block, sd = ctx.opts
        r = k.shape[2]
        qa, ka = _augment(q, k, bias if ctx.has_bias else None, sd)
        ka_t = ka.transpose(1, 2)
        if not ctx.has_bias:  # the augmented rows need the bias slot for [q, 1, −lse]
            qa = torch.cat([qa, torch.ones_like(qa[..., :1])], 2)
            ka_t = torch.cat([ka_t, torch.zeros_like(ka_t[:, :1])], 1)
        kv = torch.cat([k * values.view(1, -1, 1), k], dim=2).to(sd)  # (M, N, 2r)
        acc = torch.zeros((*k.shape[:2], 2 * r + 2), dtype=sd, device=k.device)
        dq = torch.empty_like(q)
        for a, b in _spans(q.shape[1], chunk):
            zz = _key_side(q[:, a:b], grad_h[:, a:b], h[:, a:b], sd)
            big = key_pass(qa[:, a:b], ka_t, lse[:, a:b].to(sd), kv, zz, acc, a, mask_self,
                           key_block).to(q.dtype)
            dq[:, a:b] = grad_h[:, a:b].unsqueeze(2) * (big[..., :r] - h[:, a:b].unsqueeze(2) * big[..., r:])
        dk, db = _finish(acc.to(q.dtype), values, r)
        return dq, dk, (db if ctx.has_bias else None), None, None, None, None, None


def _keys_with_bias(z: torch.Tensor, bias: torch.Tensor | None,
                    sd: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    """Augmented [q, 1] and transposed [k, b] with a bias slot even without a bias."""
    b = bias.detach() if bias is not None else z.new_zeros(z.shape[:2])
    qa, ka = _augment(z.detach(), z.detach(), b, sd)
    return qa, ka.transpose(1, 2)


def blocked_head_outputs(
    runner: ChunkRunner, q: torch.Tensor, k: torch.Tensor, bias: torch.Tensor | None,
    values: torch.Tensor, *, mask_self: bool, chunk: int, key_block: int,
    score_dtype: torch.dtype,
) -> torch.Tensor:
    """Per-head outputs h (M, J) of queries q (M, J, r) over keys k (M, N, r), no gradient.

    As :func:`attnreg.softmax.fused.head_outputs`, with the keys in blocks of ``key_block``.
    """
    with torch.no_grad():
        qa, ka = _augment(q, k, bias, score_dtype)
        ka_t = ka.transpose(1, 2)
        vv = torch.stack([values, torch.ones_like(values)], dim=1).to(score_dtype)
        out = q.new_empty(q.shape[:2])

        def task(a: int, b: int) -> None:
            for s, t in _spans(b - a, chunk):
                _, sums = online_sums(qa[:, a + s : a + t], ka_t, vv, a + s, mask_self, key_block)
                out[:, a + s : a + t] = (sums[..., 0] / sums[..., 1]).to(q.dtype)

        runner.map(task, task_spans(q.shape[1], chunk))
    return out


def blocked_loss_and_grad(
    runner: ChunkRunner, z: torch.Tensor, bias: torch.Tensor | None, logits: torch.Tensor,
    values: torch.Tensor, target: torch.Tensor, *, mask_self: bool, chunk: int,
    key_block: int, score_dtype: torch.dtype,
) -> tuple[float, torch.Tensor, torch.Tensor | None, torch.Tensor]:
    """:func:`attnreg.softmax.fused.loss_and_grad` with the keys in blocks of ``key_block``.

    Each query chunk makes two passes over the key blocks: the online softmax (head outputs,
    log-sum-exp, residuals, ∂loss/∂h), then the recomputed weights for the gradients.
    Same arguments and returns (loss, grad_z (M, N, r), grad_bias (M, N) or None,
    grad_logits (M,)); memory O(N·r + M·chunk·key_block) per worker.
    """
    sd, pd = score_dtype, z.dtype
    n_heads, n, r = z.shape
    zd = z.detach()
    qa, ka_t = _keys_with_bias(zd, bias, sd)
    vv = torch.stack([values, torch.ones_like(values)], dim=1).to(sd)
    kv = torch.cat([zd * values.view(1, -1, 1), zd], dim=2).to(sd)  # (M, N, 2r)
    pi = torch.softmax(logits.detach(), dim=0)
    h_all = zd.new_empty((n_heads, n))
    dq = torch.empty_like(zd)
    spans = task_spans(n, chunk, n_heads * n * (2 * r + 2) * kv.element_size())
    acc_all = runner.partials(len(spans), (n_heads, n, 2 * r + 2), sd, z.device)
    sse_all = zd.new_zeros(len(spans))

    def task(a: int, b: int) -> None:
        index = spans.index((a, b))
        for s, t in _spans(b - a, chunk):
            lo, hi = a + s, a + t
            m, sums = online_sums(qa[:, lo:hi], ka_t, vv, lo, mask_self, key_block)
            den = sums[..., 1].to(pd)
            h = sums[..., 0].to(pd) / den
            h_all[:, lo:hi] = h
            resid = target[lo:hi] - pi @ h
            sse_all[index] += resid @ resid
            g = (-2.0 / n) * pi.unsqueeze(1) * resid.unsqueeze(0)  # ∂loss/∂h (M, c)
            lse = (m.to(pd) + torch.log(den)).to(sd)
            big = key_pass(qa[:, lo:hi], ka_t, lse, kv, _key_side(zd[:, lo:hi], g, h, sd),
                           acc_all[index], lo, mask_self, key_block).to(pd)
            dq[:, lo:hi] = g.unsqueeze(2) * (big[..., :r] - h.unsqueeze(2) * big[..., r:])

    runner.map(task, spans)
    acc = acc_all.sum(0).to(pd) if len(spans) > 1 else acc_all[0].to(pd)
    dk, db = _finish(acc, values, r)
    resid_all = target - pi @ h_all
    d_pi = (-2.0 / n) * (h_all @ resid_all)
    grad_logits = pi * (d_pi - pi @ d_pi)
    return float(sse_all.sum()) / n, dq + dk, (None if bias is None else db), grad_logits
