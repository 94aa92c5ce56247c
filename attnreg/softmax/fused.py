"""The training loss of softmax attention regression and its gradient in one chunked pass.

The penalised leave-one-out loss is a sum over query rows: row j's residual
y_j − base_j − Σ_m π_m h_mj needs only row j's head outputs, and so does ∂loss/∂h_mj. So
each chunk of query rows computes its exponentials once, turns them into head outputs, then
residuals, then at once into its share of the gradients (the formulas of
:mod:`attnreg.softmax.kernel`), while the chunk's weights are still in cache. An
autograd forward and backward pass would compute every exponential twice.

Parallel work. On the CPU the chunks are tasks of a small pool of Python threads, each
running torch on one intra-op thread (torch releases the GIL inside its kernels). Workers
take the next chunk when they finish one, so a core taken by another process slows the fit
in proportion instead of stalling it: a spin-waiting OpenMP team splits the work statically
and waits for its slowest thread at every operation, which on two cores with one busy made
the same fit five times slower. :class:`ChunkRunner` owns the pool and torch's thread
setting, restored on exit.
"""

from __future__ import annotations

import itertools
import math
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

import torch

from attnreg.softmax.kernel import _augment, _block, _exp_, _forward_block, _set_diagonal_, _spans

__all__ = ["ChunkRunner", "chunk_runner", "head_outputs", "loss_and_grad", "task_spans"]

T = TypeVar("T")

#: at most this many tasks per pass, and their key-side partial sums in at most this many bytes
MAX_TASKS = 16
PARTIAL_BYTES = 256 * 2**20


def task_spans(n: int, chunk: int, partial_bytes: int = 0) -> list[tuple[int, int]]:
    """Row ranges of the tasks of one pass: whole chunks, as even as possible.

    The split depends only on the sizes, never on the number of workers, so a fit gives the
    same numbers on any number of threads. ``partial_bytes`` is what one task's partial sum
    takes; the tasks are fewer when :data:`PARTIAL_BYTES` would not hold them all.
    """
    n_chunks = max(1, -(-n // max(1, chunk)))
    cap = PARTIAL_BYTES // partial_bytes if partial_bytes > 0 else MAX_TASKS
    n_tasks = max(1, min(MAX_TASKS, n_chunks, cap))
    bounds = [min(n, (i * n_chunks // n_tasks) * chunk) for i in range(n_tasks + 1)]
    bounds[-1] = n
    return [(a, b) for a, b in itertools.pairwise(bounds) if b > a]


@dataclass(frozen=True)
class ChunkRunner:
    """Runs the tasks of a pass: inline (one worker, or CUDA) or on a thread pool.

    It also keeps each worker's scratch blocks and a pass's partial sums from one pass to
    the next, so a fit touches fresh memory once rather than at every loss evaluation.
    """

    pool: ThreadPoolExecutor | None
    workers: int
    _local: threading.local = field(default_factory=threading.local, repr=False)
    _partials: dict[tuple[Any, ...], torch.Tensor] = field(default_factory=dict, repr=False)

    def scratch(self, like: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
        """This worker's reusable block of at least ``shape`` (contents undefined)."""
        key = (like.dtype, like.device, shape[0], shape[2])
        cache = self._local.__dict__.setdefault("blocks", {})
        buf = cache.get(key)
        if buf is None or buf.shape[1] < shape[1]:
            buf = cache[key] = like.new_empty(shape)
        return buf

    def partials(self, n_tasks: int, shape: tuple[int, ...], dtype: torch.dtype,
                 device: torch.device) -> torch.Tensor:
        """Zeroed partial sums (n_tasks, *shape), the same memory on every pass."""
        key = (n_tasks, *shape, dtype, device)
        out = self._partials.get(key)
        if out is None:
            self._partials.clear()
            out = self._partials[key] = torch.zeros((n_tasks, *shape), dtype=dtype, device=device)
        else:
            out.zero_()
        return out

    def map(self, fn: Callable[[int, int], T], spans: list[tuple[int, int]]) -> list[T]:
        """``[fn(start, stop) for (start, stop) in spans]``, the tasks spread over the workers."""
        if self.pool is None or len(spans) == 1:
            return [fn(a, b) for a, b in spans]
        return list(self.pool.map(lambda ab: fn(*ab), spans))


def _cpu_workers(threads: int | None) -> int:
    if threads is not None:
        return threads
    try:
        free = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        free = os.cpu_count() or 1
    return max(1, min(torch.get_num_threads(), free))


@contextmanager
def chunk_runner(device: torch.device, threads: int | None) -> Iterator[ChunkRunner]:
    """A :class:`ChunkRunner` for ``device``, with at most ``threads`` workers on the CPU.

    On the CPU, torch runs on one intra-op thread inside the context (restored after) and
    the workers are ``threads``, else torch's own thread count (its default: the cores).
    """
    if device.type != "cpu":
        yield ChunkRunner(None, 1)
        return
    workers = _cpu_workers(threads)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    pool = ThreadPoolExecutor(workers, thread_name_prefix="attnreg") if workers > 1 else None
    try:
        yield ChunkRunner(pool, workers)
    finally:
        if pool is not None:
            pool.shutdown(wait=True)
        torch.set_num_threads(before)


def head_outputs(
    runner: ChunkRunner, q: torch.Tensor, k: torch.Tensor, bias: torch.Tensor | None,
    values: torch.Tensor, *, mask_self: bool, chunk: int, score_dtype: torch.dtype,
) -> torch.Tensor:
    """Per-head attention outputs h (M, J) of queries ``q`` (M, J, r) over keys ``k`` (M, N, r).

    No gradient. ``bias`` (M, N) is the key bias (distance kernel) or None; with
    ``mask_self`` the queries are the keys and row j never sees key j.
    """
    with torch.no_grad():
        qa, ka = _augment(q, k, bias, score_dtype)
        ka_t = ka.transpose(1, 2)
        vv = torch.stack([values, torch.ones_like(values)], dim=1).to(score_dtype)
        n_heads, n_q = q.shape[:2]
        out = q.new_empty((n_heads, n_q))

        def task(a: int, b: int) -> None:
            buf = runner.scratch(qa, (n_heads, min(chunk, b - a), k.shape[1]))
            for s, t in _spans(b - a, chunk):
                _, _, nd = _forward_block(qa[:, a + s : a + t], ka_t, vv, a + s, mask_self, buf)
                out[:, a + s : a + t] = (nd[..., 0] / nd[..., 1]).to(q.dtype)

        runner.map(task, task_spans(n_q, chunk))
    return out


def _weights(qa: torch.Tensor, ka_t: torch.Tensor, start: int, mask_self: bool,
             buf: torch.Tensor) -> torch.Tensor:
    """Unnormalised softmax weights exp(s − max) of one query chunk (M, c, N), in ``buf``."""
    e = _block(buf, qa, ka_t)
    if mask_self:
        _set_diagonal_(e, start, -math.inf)
    return _exp_(e.sub_(e.amax(dim=2, keepdim=True)), start, mask_self)


def loss_and_grad(
    runner: ChunkRunner, z: torch.Tensor, bias: torch.Tensor | None, logits: torch.Tensor,
    values: torch.Tensor, target: torch.Tensor, *, mask_self: bool, chunk: int,
    score_dtype: torch.dtype,
) -> tuple[float, torch.Tensor, torch.Tensor | None, torch.Tensor]:
    """Mean squared error of the training rows' attention outputs and its gradients, in one pass.

    The queries are the keys: every training row attends to the training rows (to every
    other one with ``mask_self``: the leave-one-out loss).

    Parameters
    ----------
    runner : ChunkRunner
    z : Tensor, (M, N, r)
        Projected training rows x L_m per head (parameter dtype; no graph is used).
    bias : Tensor, (M, N) or None
        Key bias −½‖x L_m‖² of the distance kernel, None for the dot-product kernel.
    logits : Tensor, (M,)
        Logits of the mixture weights π = softmax(logits).
    values : Tensor, (N,)
        The attended values.
    target : Tensor, (N,)
        What the attention output should match (response minus base).
    mask_self : bool
        Row j never attends to itself.
    chunk : int
        Query rows per block.
    score_dtype : torch.dtype
        Dtype of the scores and exponentials.

    Returns
    -------
    loss : float
        mean_j (target_j − Σ_m π_m h_mj)².
    grad_z : Tensor, (M, N, r)
        ∂loss/∂z, the query and the key roles together.
    grad_bias : Tensor, (M, N) or None
    grad_logits : Tensor, (M,)
    """
    sd, pd = score_dtype, z.dtype
    n_heads, n, r = z.shape
    zd, bd = z.detach(), None if bias is None else bias.detach()
    qa, ka = _augment(zd, zd, bd, sd)
    ka_t = ka.transpose(1, 2)
    # one product with the weights gives [Σ e v, Σ e, Σ e v k, Σ e k]
    kv = torch.cat([values.view(1, -1, 1).expand(n_heads, n, 1), torch.ones_like(zd[..., :1]),
                    zd * values.view(1, -1, 1), zd], dim=2).to(sd)  # (M, N, 2r + 2)
    pi = torch.softmax(logits.detach(), dim=0)
    h_all = zd.new_empty((n_heads, n))
    dq = torch.empty_like(zd)

    spans = task_spans(n, chunk, n_heads * n * (2 * r + 2) * kv.element_size())
    acc_all = runner.partials(len(spans), (n_heads, n, 2 * r + 2), sd, z.device)
    sse_all = zd.new_zeros(len(spans))

    def task(a: int, b: int) -> None:
        index = spans.index((a, b))
        acc = acc_all[index]
        buf = runner.scratch(qa, (n_heads, min(chunk, b - a), n))
        sse = zd.new_zeros(())
        for s, t in _spans(b - a, chunk):
            lo, hi = a + s, a + t
            e = _weights(qa[:, lo:hi], ka_t, lo, mask_self, buf)
            sums = torch.bmm(e, kv).to(pd)  # (M, c, 2r + 2)
            den = sums[..., 1]
            h = sums[..., 0] / den  # (M, c)
            h_all[:, lo:hi] = h
            resid = target[lo:hi] - pi @ h
            sse += resid @ resid
            g = (-2.0 / n) * pi.unsqueeze(1) * resid.unsqueeze(0)  # ∂loss/∂h (M, c)
            gw = (g / den).unsqueeze(2)
            ghw = gw * h.unsqueeze(2)
            big = sums[..., 2:]  # Σ_i e v_i k_i, Σ_i e k_i (unnormalised)
            dq[:, lo:hi] = gw * (big[..., :r] - h.unsqueeze(2) * big[..., r:])
            q = zd[:, lo:hi]
            zz = torch.cat([gw * q, ghw * q, gw, ghw], dim=2).to(sd)
            acc.baddbmm_(e.transpose(1, 2), zz)
        sse_all[index] = sse

    runner.map(task, spans)
    acc_pd = acc_all.sum(0).to(pd) if len(spans) > 1 else acc_all[0].to(pd)
    v = values.view(1, -1, 1)
    grad_z = dq + v * acc_pd[..., :r] - acc_pd[..., r : 2 * r]
    grad_bias = None if bias is None else values.view(1, -1) * acc_pd[..., 2 * r] - acc_pd[..., 2 * r + 1]
    loss = float(sse_all.sum()) / n
    # ∂loss/∂π_m = Σ_j g_j h_mj with g_j = −2 resid_j / n; through the softmax to the logits
    resid_all = target - pi @ h_all
    d_pi = (-2.0 / n) * (h_all @ resid_all)
    grad_logits = pi * (d_pi - pi @ d_pi)
    return loss, grad_z, grad_bias, grad_logits

