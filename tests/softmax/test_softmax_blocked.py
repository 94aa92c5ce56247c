"""The key-blocked exact attention (online softmax): the same numbers as the one-block kernel,
in memory bounded by chunk × key_block."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest
import torch

from attnreg.softmax import fit_softmax, marginal_effects
from attnreg.softmax.flash import BlockedAttention, blocked_head_outputs
from attnreg.softmax.fused import chunk_runner, head_outputs
from attnreg.softmax.kernel import ChunkedAttention
from attnreg.softmax.train import Problem, _Objective
from tests.conftest import RTOL_EXACT

CPU = torch.device("cpu")
#: two float64 evaluations of the same sums in a different order (online vs one-block softmax)
RTOL_BLOCKED = 1e-12


def _inputs(n: int = 61, heads: int = 3, r: int = 4, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(heads, n, r, generator=g, dtype=torch.float64)
    bias = torch.randn(heads, n, generator=g, dtype=torch.float64)
    values = torch.randn(n, generator=g, dtype=torch.float64)
    weights = torch.randn(heads, n, generator=g, dtype=torch.float64)
    return q, bias, values, weights


@pytest.mark.parametrize("mask", [True, False])
@pytest.mark.parametrize("with_bias", [True, False])
@pytest.mark.parametrize(("chunk", "key_block"), [(7, 9), (61, 1), (5, 61), (13, 200)])
def test_blocked_attention_equals_the_one_block_kernel(mask: bool, with_bias: bool, chunk: int,
                                                       key_block: int) -> None:
    q, bias, values, w = _inputs()
    outs = []
    for blocked in (False, True):
        qq = q.clone().requires_grad_(True)
        bb = bias.clone().requires_grad_(True) if with_bias else None
        if blocked:
            h = BlockedAttention.apply(qq, qq, bb, values, mask, chunk, key_block, torch.float64)
        else:
            h = ChunkedAttention.apply(qq, qq, bb, values, mask, 61, torch.float64, 0)
        grads = torch.autograd.grad((h * w).sum(), [qq] + ([bb] if bb is not None else []))
        outs.append((h.detach(), *grads))
    for ref, got in zip(*outs, strict=True):
        np.testing.assert_allclose(got, ref, rtol=RTOL_BLOCKED, atol=RTOL_BLOCKED * float(ref.abs().max()))


@pytest.mark.parametrize("mask", [True, False])
def test_blocked_attention_passes_gradcheck(mask: bool) -> None:
    """Finite differences of the blocked forward against its recomputing backward."""
    g = torch.Generator().manual_seed(1)
    q = torch.randn(2, 7, 3, generator=g, dtype=torch.float64, requires_grad=True)
    k = torch.randn(2, 7, 3, generator=g, dtype=torch.float64, requires_grad=True)
    bias = torch.randn(2, 7, generator=g, dtype=torch.float64, requires_grad=True)
    values = torch.randn(7, generator=g, dtype=torch.float64)
    fn = lambda q_, k_, b_: BlockedAttention.apply(q_, k_, b_, values, mask, 3, 2, torch.float64)  # noqa: E731
    assert torch.autograd.gradcheck(fn, (q, k, bias))


def _problem(runner, kernel: str, mask: bool, key_block: int, n: int = 230, p: int = 4,
             heads: int = 3) -> Problem:
    g = torch.Generator().manual_seed(7)
    x = torch.randn(n, p, generator=g, dtype=torch.float64)
    y = torch.randn(n, generator=g, dtype=torch.float64)
    return Problem(x, y, 0.2 * y, 0.8 * y, x[:40], y[:40], 0.2 * y[:40], heads, p, kernel, mask,
                   17, torch.float64, runner, key_block=key_block)


def _params(p: int = 4, heads: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(3)
    theta = (0.4 * torch.randn(heads, p, p, generator=g, dtype=torch.float64)).requires_grad_(True)
    logits = torch.randn(heads, generator=g, dtype=torch.float64).requires_grad_(True)
    return theta, logits


def _loss_and_grads(prob: Problem) -> tuple[float, torch.Tensor, torch.Tensor, float]:
    theta, logits = _params()
    obj = _Objective(prob, 0.03, theta, logits)
    loss = float(obj.loss_and_grad())
    return loss, theta.grad.clone(), logits.grad.clone(), obj.val_loss()


@pytest.mark.parametrize("kernel", ["distance", "dot"])
@pytest.mark.parametrize("mask", [True, False])
@pytest.mark.parametrize("workers", [1, 2])
def test_blocked_fused_pass_equals_the_one_block_pass(kernel: str, mask: bool, workers: int) -> None:
    """The fitter's loss, gradients and validation loss with the keys in blocks of 50."""
    with chunk_runner(CPU, workers) as runner:
        ref = _loss_and_grads(_problem(runner, kernel, mask, key_block=10_000))
        got = _loss_and_grads(_problem(runner, kernel, mask, key_block=50))
    assert got[0] == pytest.approx(ref[0], rel=RTOL_BLOCKED)
    assert got[3] == pytest.approx(ref[3], rel=RTOL_BLOCKED)
    for a, b in [(got[1], ref[1]), (got[2], ref[2])]:
        np.testing.assert_allclose(a, b, rtol=RTOL_BLOCKED, atol=RTOL_BLOCKED * float(b.abs().max()))


def test_blocked_head_outputs_equal_the_one_block_outputs() -> None:
    q, bias, values, _ = _inputs(n=90)
    with chunk_runner(CPU, 2) as runner:
        ref = head_outputs(runner, q, q, bias, values, mask_self=True, chunk=90, score_dtype=torch.float64)
        got = blocked_head_outputs(runner, q, q, bias, values, mask_self=True, chunk=11,
                                   key_block=16, score_dtype=torch.float64)
    np.testing.assert_allclose(got, ref, rtol=RTOL_BLOCKED)


def test_no_score_block_is_larger_than_chunk_by_key_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every product the blocked pass forms is at most heads × chunk × key_block entries."""
    largest = [0]
    bmm = torch.bmm

    def recording(a: torch.Tensor, b: torch.Tensor, **kw):
        out = bmm(a, b, **kw)
        largest[0] = max(largest[0], out.numel())
        return out

    monkeypatch.setattr(torch, "bmm", recording)
    with chunk_runner(CPU, 1) as runner:
        _loss_and_grads(_problem(runner, "distance", True, key_block=32, n=400))
    assert 0 < largest[0] <= 3 * 17 * 32  # heads × chunk × key_block (N × N would be 480,000)


def _data(n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 3))
    return x, np.sin(2 * x[:, 0]) + x[:, 1] * x[:, 2] + 0.3 * rng.normal(size=n)


@pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")
def test_a_fit_with_its_keys_in_blocks_equals_the_one_block_fit() -> None:
    x, y = _data()
    kw = {"heads": 2, "max_iter": 30, "score_dtype": "float64", "threads": 1}
    ref = fit_softmax(x, y, **kw)
    got = fit_softmax(x, y, key_block=37, **kw)
    assert got.n_evals == ref.n_evals
    # 30 L-BFGS iterations amplify rounding differences of 1e-15 in the gradient
    np.testing.assert_allclose(got.factors, ref.factors, rtol=RTOL_EXACT, atol=RTOL_EXACT)
    np.testing.assert_allclose(got.predict(x[:20]), ref.predict(x[:20]), rtol=RTOL_EXACT)
    assert got.loo_r2 == pytest.approx(ref.loo_r2, rel=RTOL_EXACT)
    assert pickle.loads(pickle.dumps(got)).key_block == 37



@pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")
def test_marginal_effects_with_the_keys_in_blocks_equal_the_one_block_ones() -> None:
    x, y = _data()
    fit = fit_softmax(x, y, heads=2, max_iter=10, threads=1)
    blocked = dataclasses.replace(fit, key_block=29)
    np.testing.assert_allclose(marginal_effects(blocked, x[:40], average=False),
                               marginal_effects(fit, x[:40], average=False), rtol=RTOL_BLOCKED,
                               atol=RTOL_BLOCKED)
    np.testing.assert_allclose(blocked.predict(x[:40]), fit.predict(x[:40]), rtol=RTOL_BLOCKED)
