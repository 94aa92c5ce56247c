"""Memory-bounded multi-head softmax attention with a chunked forward and backward pass.

The N×N score matrix of softmax attention regression is never held whole: the queries are
processed in chunks of rows, and the backward pass either reuses the chunk's exponentials
(when they fit a memory budget) or recomputes them chunk by chunk, flash-attention style.

Notation, for head m, query j and key i::

    s_mji = q_mj · k_mi + b_mi          (b = key bias, zero for the dot-product kernel)
    p_mji = softmax_i(s_mji)            (diagonal set to -inf when queries are the keys)
    h_mj  = Σ_i p_mji v_i               (the head's output)

Gradients, with g_mj = ∂loss/∂h_mj and ∂h_mj/∂s_mji = p_mji (v_i − h_mj)::

    ∂/∂q_mj = g_mj Σ_i p_mji (v_i − h_mj) k_mi
    ∂/∂k_mi = Σ_j g_mj p_mji (v_i − h_mj) q_mj
    ∂/∂b_mi = Σ_j g_mj p_mji (v_i − h_mj)

All three are small matrix products with the (chunk × N) weight block, so the backward pass
never makes an elementwise sweep over the N×N matrix besides the exponential itself.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import torch

#: bytes of exponentials the forward pass may keep for the backward pass (else: recompute).
#: Off by default: recomputing each chunk into one reused, cache-sized buffer measured as
#: fast as keeping the exponentials (N = 3,400, 5 heads), and memory stays O(M·chunk·N).
CACHE_BYTES = 0


def _spans(n: int, chunk: int) -> Iterator[tuple[int, int]]:
    for start in range(0, n, chunk):
        yield start, min(n, start + chunk)


def _set_diagonal_(block: torch.Tensor, start: int, value: float) -> None:
    """Set entry (j, start + j) of every head's (c × N) block to ``value``, in place."""
    n = block.shape[1]
    block.diagonal(offset=start, dim1=1, dim2=2)[:, :n] = value


def _augment(
    q: torch.Tensor, k: torch.Tensor, bias: torch.Tensor | None, sd: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    """Queries and keys in the score dtype with the key bias folded in: [q, 1] · [k, b]."""
    if bias is None:
        return q.detach().to(sd), k.detach().to(sd)
    ones = torch.ones((*q.shape[:2], 1), dtype=sd, device=q.device)
    keys = torch.cat([k.detach(), bias.detach().unsqueeze(2)], 2).to(sd)
    return torch.cat([q.detach().to(sd), ones], 2), keys


def _exp_(s: torch.Tensor, start: int, mask_self: bool) -> torch.Tensor:
    """exp of max-shifted scores, in place, with the masked diagonal set to exactly zero.

    Shifted scores are floored first: exp is an order of magnitude slower on arguments that
    underflow, and the floor (e^-80 in float32, e^-700 in float64) changes no sum that matters.
    """
    floor = -80.0 if s.dtype in (torch.float32, torch.float16, torch.bfloat16) else -700.0
    s.clamp_min_(floor).exp_()
    if mask_self:
        _set_diagonal_(s, start, 0.0)
    return s


def _block(buf: torch.Tensor | None, qa: torch.Tensor, ka_t: torch.Tensor) -> torch.Tensor:
    """qa @ ka_t, written into the reusable buffer ``buf`` (M, chunk, N) when given.

    Reusing one cache-sized buffer avoids allocating (and first-touching) fresh memory
    for every chunk.
    """
    if buf is None:
        return torch.bmm(qa, ka_t)
    out = buf[:, : qa.shape[1]]
    if not out.is_contiguous():  # the last, short chunk
        return torch.bmm(qa, ka_t)
    return torch.bmm(qa, ka_t, out=out)


def _forward_block(
    qa: torch.Tensor, ka_t: torch.Tensor, vv: torch.Tensor, start: int, mask_self: bool,
    buf: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One query chunk: unnormalised weights e (M, c, N), row maxima (M, c) and [Σ e v, Σ e] (M, c, 2).

    ``qa`` (M, c, r') and ``ka_t`` (M, r', N) are the augmented queries and transposed keys.
    """
    e = _block(buf, qa, ka_t)
    if mask_self:
        _set_diagonal_(e, start, -math.inf)
    rowmax = e.amax(dim=2, keepdim=True)
    _exp_(e.sub_(rowmax), start, mask_self)
    return e, rowmax.squeeze(2), torch.matmul(e, vv)


class ChunkedAttention(torch.autograd.Function):
    """Per-head softmax-attention outputs h (M, J) with a chunked, memory-bounded backward.

    ``apply(q, k, bias, values, mask_self, chunk, score_dtype, cache_bytes)``

    q (M, J, r), k (M, N, r), bias (M, N) or None, values (N,) are in the parameter dtype
    (float64 by default); scores and exponentials are computed in ``score_dtype``; the
    outputs h, the log-sum-exp and all gradients are returned in the parameter dtype.
    ``values`` receives no gradient. With ``mask_self`` the queries must be the keys
    (J = N): query j never sees key j. The exponentials are kept for the backward pass when
    they take at most ``cache_bytes``, else recomputed chunk by chunk.
    """

    @staticmethod
    def forward(  # type: ignore[override]
        ctx: Any,
        q: torch.Tensor,
        k: torch.Tensor,
        bias: torch.Tensor | None,
        values: torch.Tensor,
        mask_self: bool,
        chunk: int,
        score_dtype: torch.dtype,
        cache_bytes: int,
    ) -> torch.Tensor:
        n_heads, n_q, _ = q.shape
        sd, pd = score_dtype, q.dtype
        qa, ka = _augment(q, k, bias, sd)
        ka_t = ka.transpose(1, 2)
        vv = torch.stack([values, torch.ones_like(values)], dim=1).to(sd)
        cache = n_heads * n_q * k.shape[1] * vv.element_size() <= cache_bytes
        nd = qa.new_empty((n_heads, n_q, 2))
        rowmax = qa.new_empty((n_heads, n_q))
        blocks: list[torch.Tensor] = []
        buf = None if cache else qa.new_empty((n_heads, min(chunk, n_q), k.shape[1]))
        for a, b in _spans(n_q, chunk):
            e, rowmax[:, a:b], nd[:, a:b] = _forward_block(qa[:, a:b], ka_t, vv, a, mask_self, buf)
            if cache:
                blocks.append(e)
        den = nd[..., 1].to(pd)
        h = nd[..., 0].to(pd) / den
        lse = rowmax.to(pd) + torch.log(den)
        ctx.save_for_backward(q, k, bias if bias is not None else q.new_empty(0), values, h, lse, den)
        ctx.has_bias = bias is not None
        ctx.mask_self, ctx.chunk, ctx.sd = mask_self, chunk, sd
        ctx.blocks = blocks if cache else None
        return h

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(  # type: ignore[override]
        ctx: Any, grad_h: torch.Tensor
    ) -> tuple[torch.Tensor | None, ...]:
        q, k, bias, values, h, lse, den = ctx.saved_tensors
        bias = bias if ctx.has_bias else None
        dq, dk, db = _backward(
            q, k, bias, values, h, lse, den, grad_h, ctx.mask_self, ctx.chunk, ctx.sd, ctx.blocks
        )
        return dq, dk, (db if ctx.has_bias else None), None, None, None, None, None


def _backward(
    q: torch.Tensor,
    k: torch.Tensor,
    bias: torch.Tensor | None,
    values: torch.Tensor,
    h: torch.Tensor,
    lse: torch.Tensor,
    den: torch.Tensor,
    grad_h: torch.Tensor,
    mask_self: bool,
    chunk: int,
    sd: torch.dtype,
    blocks: list[torch.Tensor] | None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Chunked gradients with respect to q (M, J, r), k (M, N, r) and the key bias (M, N).

    Cached blocks are unnormalised (divide by ``den``); recomputed blocks are normalised
    directly: the shift by the log-sum-exp is folded into the product, with queries
    [q, 1, −lse] and keys [k, b, 1].
    """
    n_heads, n_k, r = k.shape
    pd = q.dtype
    kv = torch.cat([k * values.view(1, -1, 1), k], dim=2).to(sd)  # (M, N, 2r)
    gw = grad_h if blocks is None else grad_h / den  # folds 1/den of cached blocks into g
    ghw = (gw * h).unsqueeze(2)
    z = torch.cat([gw.unsqueeze(2) * q, ghw * q, gw.unsqueeze(2), ghw], dim=2).to(sd)
    if blocks is None:
        b0 = bias if bias is not None else k.new_zeros((n_heads, n_k))
        ka_t = torch.cat([k, b0.unsqueeze(2), torch.ones_like(b0).unsqueeze(2)], 2).to(sd).transpose(1, 2)
        qa = torch.cat([q, torch.ones_like(lse).unsqueeze(2), -lse.unsqueeze(2)], 2).to(sd)
    big_a = torch.empty((n_heads, q.shape[1], 2 * r), dtype=sd, device=q.device)
    buf = None if blocks is not None else kv.new_empty((n_heads, min(chunk, q.shape[1]), n_k))
    acc_sd = torch.zeros((n_heads, n_k, 2 * r + 2), dtype=sd, device=q.device)
    for idx, (a, b) in enumerate(_spans(q.shape[1], chunk)):
        e = blocks[idx] if blocks is not None else _exp_(_block(buf, qa[:, a:b], ka_t), a, mask_self)
        big_a[:, a:b] = torch.bmm(e, kv)  # Σ_i e v_i k_i, Σ_i e k_i
        acc_sd.baddbmm_(e.transpose(1, 2), z[:, a:b])  # Σ_j e_ji z_j, summed inside the product
    acc = acc_sd.to(pd)
    big = big_a.to(pd)
    if blocks is not None:
        big = big / den.unsqueeze(2)
    dq = grad_h.unsqueeze(2) * (big[..., :r] - h.unsqueeze(2) * big[..., r:])
    v = values.view(1, -1, 1)
    dk = v * acc[..., :r] - acc[..., r : 2 * r]
    db = values.view(1, -1) * acc[..., 2 * r] - acc[..., 2 * r + 1]
    return dq, dk, db


def iter_weight_blocks(
    q: torch.Tensor,
    k: torch.Tensor,
    bias: torch.Tensor | None,
    mask_self: bool,
    chunk: int,
) -> Iterator[tuple[int, int, torch.Tensor]]:
    """Yield ``(start, stop, p)`` with p the normalised per-head weights (M, c, N), no grad.

    Parameters
    ----------
    q : Tensor, (M, J, r)
    k : Tensor, (M, N, r)
    bias : Tensor (M, N) or None
    mask_self : bool
        Queries are the keys; exclude each row's own key.
    chunk : int
        Query rows per block.
    """
    with torch.no_grad():
        qa, ka = _augment(q, k, bias, q.dtype)
        ka_t = ka.transpose(1, 2)
        for a, b in _spans(q.shape[1], chunk):
            p = torch.bmm(qa[:, a:b], ka_t)
            if mask_self:
                _set_diagonal_(p, a, -math.inf)
            yield a, b, torch.softmax(p, dim=2)
