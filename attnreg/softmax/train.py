"""Optimisation internals of softmax attention regression (L-BFGS, early stopping, init).

Everything here works on the standardised scale with torch tensors; the public entry
point, argument checking and the result class live in :mod:`attnreg.softmax`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from attnreg.softmax.flash import KEY_BLOCK, BlockedAttention, blocked_head_outputs, blocked_loss_and_grad
from attnreg.softmax.fused import ChunkRunner, head_outputs, loss_and_grad
from attnreg.softmax.kernel import CACHE_BYTES, ChunkedAttention
from attnreg.softmax.lbfgs import lbfgs, lbfgs_iters
from attnreg.softmax.landmarks import LandmarkSet, landmark_keys, landmark_loss_and_grad, landmark_outputs
from attnreg.softmax.topk import Neighbours, topk_loss_and_grad, topk_outputs


#: start L-BFGS afresh when the neighbour sets of a top-k fit change (the objective changed)?
#: No: keeping the curvature history fitted better (Concrete, split 1042, four seeds: test R²
#: 0.8445 kept against 0.8385 restarted, full attention 0.8499): restarts fall back to short
#: gradient steps, and early stopping then ends the run at a less fitted state
RESET_ON_REFRESH = False


@dataclass(frozen=True)
class FitStep:
    """One outer optimisation step (a batch of L-BFGS iterations followed by a validation check).

    Attributes
    ----------
    lam : float
        Penalty of the run.
    restart : int
        Restart index (0-based) within that penalty.
    step : int
        Outer step index (0-based).
    n_iter, n_evals : int
        Cumulative L-BFGS iterations and loss evaluations of the run.
    train_loss : float
        Penalised leave-one-out training loss (MSE + penalty) on the standardised scale.
    val_loss : float
        Validation mean squared error on the standardised scale.
    """

    lam: float
    restart: int
    step: int
    n_iter: int
    n_evals: int
    train_loss: float
    val_loss: float


@dataclass
class Problem:
    """Standardised tensors of one train-part / validation-part problem (mutable scratch).

    Shapes: ``x_tr`` (n, P), ``y_tr``/``base_tr``/``v_tr`` (n,), ``x_va`` (n_va, P),
    ``y_va``/``base_va`` (n_va,).
    """

    x_tr: torch.Tensor
    y_tr: torch.Tensor
    base_tr: torch.Tensor
    v_tr: torch.Tensor
    x_va: torch.Tensor
    y_va: torch.Tensor
    base_va: torch.Tensor
    heads: int
    rank: int
    kernel: str
    mask_self: bool
    chunk: int
    score_dtype: torch.dtype
    runner: ChunkRunner = field(default_factory=lambda: ChunkRunner(None, 1))
    key_block: int = KEY_BLOCK
    landmarks: LandmarkSet | None = None
    neighbours: Neighbours | None = None
    tril: torch.Tensor = field(init=False)

    def __post_init__(self) -> None:
        p = self.x_tr.shape[1]
        self.tril = torch.ones(p, self.rank, dtype=self.x_tr.dtype, device=self.x_tr.device).tril()


@dataclass(frozen=True)
class RunResult:
    """Best state of one optimisation run (restored at the best validation loss)."""

    lam: float
    restart: int
    theta: torch.Tensor  # (M, P, r), masked lower-triangular factors
    logits: torch.Tensor  # (M,), softmax logits of the mixture weights
    val_loss: float
    train_loss: float
    best_step: int
    best_iter: int  # L-BFGS iterations at the best state
    n_iter: int
    n_evals: int
    converged: bool
    history: tuple[FitStep, ...]


def project(x: torch.Tensor, theta: torch.Tensor, kernel: str) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Projections x L_m (M, n, r) and, for the distance kernel, the key bias −½‖x L_m‖² (M, n)."""
    z = torch.matmul(x.unsqueeze(0), theta)
    bias = -0.5 * (z * z).sum(dim=2) if kernel == "distance" else None
    return z, bias


def attention_heads(
    theta: torch.Tensor,
    x_q: torch.Tensor,
    x_k: torch.Tensor,
    values: torch.Tensor,
    *,
    kernel: str,
    mask_self: bool,
    chunk: int,
    score_dtype: torch.dtype,
    cache_bytes: int = CACHE_BYTES,
    key_block: int = KEY_BLOCK,
) -> torch.Tensor:
    """Per-head attention outputs (M, J) of queries ``x_q`` over keys ``x_k`` (differentiable).

    More than ``key_block`` keys: the keys are visited in blocks (:mod:`attnreg.softmax.flash`).
    """
    zk, bias = project(x_k, theta, kernel)
    zq = zk if x_q is x_k else torch.matmul(x_q.unsqueeze(0), theta)
    if x_k.shape[0] > key_block:
        return BlockedAttention.apply(zq, zk, bias, values, mask_self, chunk, key_block, score_dtype)
    return ChunkedAttention.apply(zq, zk, bias, values, mask_self, chunk, score_dtype, cache_bytes)


def outputs(
    runner: ChunkRunner, q: torch.Tensor, k: torch.Tensor, bias: torch.Tensor | None,
    values: torch.Tensor, *, mask_self: bool, chunk: int, score_dtype: torch.dtype,
    key_block: int = KEY_BLOCK,
) -> torch.Tensor:
    """Per-head outputs (M, J), no gradient: one key block up to ``key_block`` keys, else blocked."""
    if k.shape[1] > key_block:
        return blocked_head_outputs(runner, q, k, bias, values, mask_self=mask_self, chunk=chunk,
                                    key_block=key_block, score_dtype=score_dtype)
    return head_outputs(runner, q, k, bias, values, mask_self=mask_self, chunk=chunk,
                        score_dtype=score_dtype)


def combine(logits: torch.Tensor, heads_out: torch.Tensor) -> torch.Tensor:
    """Convex combination Σ_m softmax(logits)_m · h_m of per-head outputs (M, J) → (J,)."""
    return torch.softmax(logits, dim=0) @ heads_out


def init_factors(
    x: torch.Tensor, ridge: float, heads: int, rank: int, noise: float, gen: torch.Generator
) -> torch.Tensor:
    """Warm start √n·chol((X'X + ridge·I)⁻¹) per head, plus seeded Gaussian noise.

    The noise standard deviation is ``noise`` times the mean absolute diagonal of the
    factor; only the lower-triangular (lower-trapezoidal for rank < P) entries move.

    Returns
    -------
    Tensor, (M, P, r)
    """
    n, p = x.shape
    gram = x.T @ x + ridge * torch.eye(p, dtype=x.dtype, device=x.device)
    chol = torch.linalg.cholesky(torch.linalg.inv(gram)) * math.sqrt(n)
    base = chol[:, :rank]
    scale = float(chol.diagonal().abs().mean())
    eps = torch.randn((heads, p, rank), generator=gen, dtype=x.dtype, device="cpu").to(x.device)
    tril = torch.ones(p, rank, dtype=x.dtype, device=x.device).tril()
    return (base.unsqueeze(0) + noise * scale * eps) * tril


class _Objective:
    """Penalised leave-one-out loss with a one-entry memo (L-BFGS re-evaluates its start)."""

    def __init__(self, prob: Problem, lam: float, theta: torch.Tensor, logits: torch.Tensor) -> None:
        self.prob, self.lam = prob, lam
        self.theta, self.logits = theta, logits
        self.n_evals = 0
        self._key: torch.Tensor | None = None
        self._memo: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None

    def _flat(self) -> torch.Tensor:
        return torch.cat([self.theta.detach().reshape(-1), self.logits.detach()])

    def __call__(self) -> torch.Tensor:
        key = self._flat()
        if self._key is not None and self._memo is not None and torch.equal(key, self._key):
            loss, g_theta, g_logits = self._memo
            self.theta.grad, self.logits.grad = g_theta.clone(), g_logits.clone()
            return loss
        self.theta.grad = self.logits.grad = None
        loss = self.loss_and_grad()
        self.n_evals += 1
        assert self.theta.grad is not None and self.logits.grad is not None
        self.theta.grad = self.theta.grad.contiguous()
        self._key, self._memo = key, (loss, self.theta.grad.clone(), self.logits.grad.clone())
        return loss

    def loss_and_grad(self) -> torch.Tensor:
        """The loss, with the gradients left in ``theta.grad`` and ``logits.grad``.

        The attention part comes from one fused chunked pass
        (:func:`~attnreg.softmax.fused.loss_and_grad`); autograd carries its gradient
        through the projections and adds the penalty's.
        """
        pr = self.prob
        factors = self.theta * pr.tril
        if pr.landmarks is not None:
            return self._landmark_loss_and_grad(factors)
        z, bias = project(pr.x_tr, factors, pr.kernel)
        kw = {"mask_self": pr.mask_self, "chunk": pr.chunk, "score_dtype": pr.score_dtype}
        if pr.neighbours is not None:  # each row's k nearest keys (attnreg.softmax.topk)
            assert pr.neighbours.tr is not None
            mse, g_z, g_bias, g_logits = topk_loss_and_grad(
                pr.runner, z, bias, self.logits, pr.v_tr, pr.y_tr - pr.base_tr, pr.neighbours.tr,
                chunk=pr.chunk, score_dtype=pr.score_dtype)
        elif z.shape[1] > pr.key_block:
            mse, g_z, g_bias, g_logits = blocked_loss_and_grad(
                pr.runner, z, bias, self.logits, pr.v_tr, pr.y_tr - pr.base_tr,
                key_block=pr.key_block, **kw,  # type: ignore[arg-type]
            )
        else:
            mse, g_z, g_bias, g_logits = loss_and_grad(
                pr.runner, z, bias, self.logits, pr.v_tr, pr.y_tr - pr.base_tr, **kw,  # type: ignore[arg-type]
            )
        penalty = self.lam * factors.square().sum()
        outputs = [z, penalty] + ([] if bias is None else [bias])
        grads = [g_z, torch.ones_like(penalty)] + ([] if g_bias is None else [g_bias])
        torch.autograd.backward(outputs, grads)
        self.logits.grad = g_logits
        return torch.tensor(mse, dtype=penalty.dtype) + penalty.detach().cpu()

    def _landmark_loss_and_grad(self, factors: torch.Tensor) -> torch.Tensor:
        """The loss over landmark keys (:mod:`attnreg.softmax.landmarks`), gradients left as above."""
        pr = self.prob
        assert pr.landmarks is not None
        zq = torch.matmul(pr.x_tr.unsqueeze(0), factors)
        zk, kb = landmark_keys(pr.landmarks, factors, pr.kernel)
        mse, g_q, g_k, g_kb, g_logits = landmark_loss_and_grad(
            pr.runner, zq, zk, kb, self.logits, pr.landmarks, pr.y_tr - pr.base_tr,
            mask_self=pr.mask_self, chunk=pr.chunk, score_dtype=pr.score_dtype,
        )
        penalty = self.lam * factors.square().sum()
        outs, grads = [zq, zk, penalty], [g_q, g_k, torch.ones_like(penalty)]
        if kb.requires_grad:  # the distance kernel's −½‖c L‖²
            outs, grads = [*outs, kb], [*grads, g_kb]
        torch.autograd.backward(outs, grads)
        self.logits.grad = g_logits
        return torch.tensor(mse, dtype=penalty.dtype) + penalty.detach().cpu()

    def refresh(self) -> bool:
        """Re-search the neighbour sets of a top-k problem if the metric moved; True when it did
        (the objective changed: the memo is dropped)."""
        pr = self.prob
        if pr.neighbours is None:
            return False
        with torch.no_grad():
            moved = pr.neighbours.refresh(pr.x_tr, pr.x_va, self.theta * pr.tril,
                                          torch.softmax(self.logits, dim=0), pr.runner)
        if moved:
            self._key = self._memo = None
        return moved

    def loss(self) -> torch.Tensor:
        """The loss as one autograd graph (the reference for :meth:`loss_and_grad`)."""
        pr = self.prob
        factors = self.theta * pr.tril
        heads_out = attention_heads(
            factors, pr.x_tr, pr.x_tr, pr.v_tr, kernel=pr.kernel, mask_self=pr.mask_self,
            chunk=pr.chunk, score_dtype=pr.score_dtype,
        )
        resid = pr.y_tr - pr.base_tr - combine(self.logits, heads_out)
        return resid.square().mean() + self.lam * factors.square().sum()

    def val_loss(self) -> float:
        pr = self.prob
        with torch.no_grad():
            factors = self.theta * pr.tril
            zq = torch.matmul(pr.x_va.unsqueeze(0), factors)
            if pr.landmarks is not None:
                zk, kb = landmark_keys(pr.landmarks, factors, pr.kernel)
                heads_out = landmark_outputs(pr.runner, zq, zk, kb, pr.landmarks, chunk=pr.chunk,
                                             score_dtype=pr.score_dtype)
            elif pr.neighbours is not None:
                assert pr.neighbours.va is not None
                zk, bias = project(pr.x_tr, factors, pr.kernel)
                heads_out = topk_outputs(pr.runner, zq, zk, bias, pr.v_tr, pr.neighbours.va,
                                         chunk=pr.chunk, score_dtype=pr.score_dtype)
            else:
                zk, bias = project(pr.x_tr, factors, pr.kernel)
                heads_out = outputs(pr.runner, zq, zk, bias, pr.v_tr, mask_self=False, chunk=pr.chunk,
                                    score_dtype=pr.score_dtype, key_block=pr.key_block)
            resid = pr.y_va - pr.base_va - combine(self.logits, heads_out)
        return float(resid.square().mean())


@dataclass(frozen=True)
class Schedule:
    """Optimisation budget: total L-BFGS iterations, iterations per validation check, patience."""

    max_iter: int
    inner: int
    patience: int
    tol: float


def _start(
    prob: Problem, theta0: torch.Tensor, logits0: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor]:
    theta = theta0.clone().requires_grad_(True)
    if logits0 is None:
        logits0 = torch.zeros(prob.heads, dtype=theta0.dtype, device=theta0.device)
    return theta, logits0.clone().requires_grad_(True)


def _step(opt: torch.optim.LBFGS, obj: _Objective) -> tuple[int, float]:
    """One ``opt.step``: (iterations done, loss at the current parameters)."""
    before = lbfgs_iters(opt)
    loss = float(opt.step(obj))
    if obj._key is not None and obj._memo is not None and torch.equal(obj._flat(), obj._key):
        loss = float(obj._memo[0])  # the last evaluation is at the accepted point
    return lbfgs_iters(opt) - before, loss


def train_run(
    prob: Problem,
    lam: float,
    theta0: torch.Tensor,
    sched: Schedule,
    *,
    restart: int,
    report: Callable[[FitStep], None] | None,
    logits0: torch.Tensor | None = None,
) -> RunResult:
    """Fit one (penalty, restart) pair; early-stop on validation loss, restore the best state."""
    theta, logits = _start(prob, theta0, logits0)
    obj = _Objective(prob, lam, theta, logits)
    obj.refresh()
    opt = lbfgs(theta, logits, sched.inner)
    best = (obj.val_loss(), -1, theta.detach().clone(), logits.detach().clone(), math.inf, 0)
    history: list[FitStep] = []
    n_iter, bad, converged = 0, 0, False
    while n_iter < sched.max_iter:
        done, train_loss = _step(opt, obj)
        n_iter += max(done, 1)
        if not math.isfinite(train_loss):
            converged = True  # diverged: keep the best finite state found so far
            break
        if obj.refresh() and RESET_ON_REFRESH:  # new neighbour sets: a new objective
            opt = lbfgs(theta, logits, sched.inner)
        rec = FitStep(lam, restart, len(history), n_iter, obj.n_evals, train_loss, obj.val_loss())
        history.append(rec)
        if report is not None:
            report(rec)
        if rec.val_loss < best[0] - sched.tol * abs(best[0]):
            state = (theta.detach().clone(), logits.detach().clone())
            best = (rec.val_loss, rec.step, *state, train_loss, n_iter)
            bad = 0
        else:
            bad += 1
        if bad >= sched.patience or done < sched.inner:
            converged = True  # early stopping, or L-BFGS met its own tolerance
            break
    val, step, th, lg, tl, it = best
    return RunResult(lam, restart, th, lg, val, tl, step, it, n_iter, obj.n_evals, converged, tuple(history))


def refit_run(
    prob: Problem, lam: float, theta0: torch.Tensor, logits0: torch.Tensor | None, n_iter: int,
    inner: int,
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Run exactly ``n_iter`` L-BFGS iterations on ``prob`` (no validation); (theta, logits, evals)."""
    theta, logits = _start(prob, theta0, logits0)
    obj = _Objective(prob, lam, theta, logits)
    obj.refresh()
    opt = lbfgs(theta, logits, inner)
    done_total = 0
    while done_total < n_iter:
        opt.param_groups[0]["max_iter"] = min(inner, n_iter - done_total)
        done, loss = _step(opt, obj)
        done_total += max(done, 1)
        if done == 0 or not math.isfinite(loss):
            break
        if obj.refresh() and RESET_ON_REFRESH:
            opt = lbfgs(theta, logits, inner)
    return theta.detach(), logits.detach(), obj.n_evals
