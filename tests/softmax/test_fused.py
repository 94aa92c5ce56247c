"""The fused loss-and-gradient pass of the softmax fitter and its worker pool."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import attnreg as ar
from attnreg.softmax import fit_softmax
from attnreg.softmax.fused import MAX_TASKS, chunk_runner, head_outputs, task_spans
from attnreg.softmax.train import Problem, _Objective, attention_heads, project

CPU = torch.device("cpu")


def _problem(runner, kernel: str, mask: bool, chunk: int, n: int = 230, p: int = 4, heads: int = 3,
             score_dtype: torch.dtype = torch.float64) -> Problem:
    g = torch.Generator().manual_seed(7)
    x = torch.randn(n, p, generator=g, dtype=torch.float64)
    y = torch.randn(n, generator=g, dtype=torch.float64)
    return Problem(x, y, 0.2 * y, 0.8 * y, x[:40], y[:40], 0.2 * y[:40], heads, p, kernel, mask,
                   chunk, score_dtype, runner)


def _params(p: int = 4, heads: int = 3) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(3)
    theta = (0.4 * torch.randn(heads, p, p, generator=g, dtype=torch.float64)).requires_grad_(True)
    logits = torch.randn(heads, generator=g, dtype=torch.float64).requires_grad_(True)
    return theta, logits


@pytest.mark.parametrize("kernel", ["distance", "dot"])
@pytest.mark.parametrize("mask", [True, False])
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("chunk", [1, 17, 500])
def test_fused_gradients_equal_autograd(kernel: str, mask: bool, workers: int, chunk: int) -> None:
    """One fused pass gives autograd's loss and gradients (float64 scores: to rounding)."""
    with chunk_runner(CPU, workers) as runner:
        prob = _problem(runner, kernel, mask, chunk)
        theta, logits = _params()
        obj = _Objective(prob, 0.03, theta, logits)
        ref = obj.loss()
        ref.backward()
        g_theta, g_logits = theta.grad.clone(), logits.grad.clone()
        theta.grad = logits.grad = None
        loss = obj.loss_and_grad()
    assert float(loss) == pytest.approx(float(ref.detach()), rel=1e-13)
    np.testing.assert_allclose(theta.grad, g_theta, rtol=1e-11, atol=1e-13 * float(g_theta.abs().max()))
    np.testing.assert_allclose(logits.grad, g_logits, rtol=1e-11, atol=1e-13 * float(g_logits.abs().max()))


def test_float32_scores_give_the_float64_gradient_to_single_precision() -> None:
    """The default float32 scores: loss and gradient agree with float64 autograd to what
    single precision carries (sums of a few hundred terms of relative error 6e-8)."""
    theta, logits = _params()
    with chunk_runner(CPU, 2) as runner:
        ref_obj = _Objective(_problem(runner, "distance", True, 64), 0.01, theta, logits)
        ref = ref_obj.loss()
        ref.backward()
        g_theta = theta.grad.clone()
        theta.grad = logits.grad = None
        obj = _Objective(_problem(runner, "distance", True, 64, score_dtype=torch.float32), 0.01,
                         theta, logits)
        loss = obj.loss_and_grad()
    assert float(loss) == pytest.approx(float(ref.detach()), rel=1e-5)
    err = float((theta.grad - g_theta).abs().max() / g_theta.abs().max())
    assert 0 < err < 1e-4  # float32 really is used, and holds single precision


@pytest.mark.parametrize("mask", [True, False])
def test_head_outputs_equal_the_autograd_kernel(mask: bool) -> None:
    prob = _problem(None, "distance", mask, 19)
    theta, _ = _params()
    z, bias = project(prob.x_tr, theta.detach(), "distance")
    ref = attention_heads(theta.detach(), prob.x_tr, prob.x_tr, prob.v_tr, kernel="distance",
                          mask_self=mask, chunk=19, score_dtype=torch.float64)
    with chunk_runner(CPU, 2) as runner:
        out = head_outputs(runner, z, z, bias, prob.v_tr, mask_self=mask, chunk=19,
                           score_dtype=torch.float64)
    np.testing.assert_allclose(out, ref, rtol=1e-13, atol=1e-15)


def test_task_spans_cover_the_rows_in_whole_chunks() -> None:
    for n, chunk in [(3400, 185), (100, 185), (1, 1), (1000, 7), (64, 16)]:
        spans = task_spans(n, chunk)
        assert spans[0][0] == 0 and spans[-1][1] == n
        assert all(b == c for (_, b), (c, _) in itertools.pairwise(spans))
        assert all(a % chunk == 0 for a, _ in spans)
        assert len(spans) <= MAX_TASKS
    assert len(task_spans(3400, 185, partial_bytes=200 * 2**20)) == 1  # partial sums capped


def test_fits_are_identical_on_any_number_of_workers() -> None:
    """The task split does not depend on the workers, so neither do the numbers."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 3))
    y = np.sin(2 * x[:, 0]) + x[:, 1] * x[:, 2] + 0.3 * rng.normal(size=600)
    one = fit_softmax(x, y, heads=2, threads=1, max_iter=30)
    two = fit_softmax(x, y, heads=2, threads=2, max_iter=30)
    three = fit_softmax(x, y, heads=2, threads=3, max_iter=30)
    np.testing.assert_array_equal(one.factors, two.factors)
    np.testing.assert_array_equal(one.factors, three.factors)
    assert one.n_evals == two.n_evals


def test_runner_restores_torch_threads_and_honours_the_cap() -> None:
    before = torch.get_num_threads()
    with chunk_runner(CPU, 3) as runner:
        assert torch.get_num_threads() == 1  # each worker runs torch on one thread
        assert runner.workers == 3 and runner.pool is not None
    assert torch.get_num_threads() == before
    with chunk_runner(CPU, 1) as runner:
        assert runner.pool is None
    assert torch.get_num_threads() == before
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(200, 2)), rng.normal(size=200)
    seen: list[int] = []
    ar.set_threads(1)
    try:
        fit_softmax(x, y, heads=1, max_iter=5,
                    progress=lambda rec: seen.append(torch.get_num_threads()))
    finally:
        ar.set_threads(None)
    assert seen and set(seen) == {1}
    assert torch.get_num_threads() == before


def test_runner_threads_are_released_when_the_fit_fails() -> None:
    before = torch.get_num_threads()
    with pytest.raises(RuntimeError, match="boom"), chunk_runner(CPU, 2):
        raise RuntimeError("boom")
    assert torch.get_num_threads() == before
