"""Attention over landmark keys (``keys="landmarks"``): exact with every row a landmark, closer
to the full attention as the landmarks grow, leave-one-out kept, gradients in closed form."""

from __future__ import annotations

import itertools
import pickle
import warnings

import numpy as np
import pytest
import torch

from attnreg.exceptions import ConvergenceWarning, OptionError
from attnreg.softmax import fit_softmax, marginal_effects
from attnreg.softmax.fused import chunk_runner, head_outputs
from attnreg.softmax.jackknife import training_residuals
from attnreg.softmax.landmarks import (
    Landmarks,
    build_landmarks,
    landmark_keys,
    landmark_loss_and_grad,
    landmark_outputs,
    metric_map,
)
from attnreg.softmax.train import Problem, _Objective, project
from tests.conftest import RTOL_EXACT, RTOL_FD

CPU = torch.device("cpu")
#: the same float64 sums in another order (landmark pass vs one-block exact pass)
RTOL_SAME_SUMS = 1e-12


def _data(n: int = 200, p: int = 3, seed: int = 5) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, p, generator=g, dtype=torch.float64)
    signal = torch.sin(2 * x[:, 0]) + x[:, 1] * x[:, -1]
    return x, signal + 0.3 * torch.randn(n, generator=g, dtype=torch.float64)


def _params(p: int = 3, heads: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(3)
    theta = (0.6 * torch.randn(heads, p, p, generator=g, dtype=torch.float64)).requires_grad_(True)
    logits = torch.randn(heads, generator=g, dtype=torch.float64).requires_grad_(True)
    return theta, logits


def _problem(runner, x: torch.Tensor, v: torch.Tensor, kernel: str, mask: bool,
             lm: Landmarks | None) -> Problem:
    target = 1.3 * v
    lms = None if lm is None else lm.tensors(v.numpy(), CPU)
    return Problem(x, target, 0 * v, v, x[:30], target[:30], 0 * v[:30], 2, x.shape[1], kernel, mask,
                   23, torch.float64, runner, landmarks=lms)


def _grads(prob: Problem) -> tuple[float, torch.Tensor, torch.Tensor, float]:
    theta, logits = _params()
    obj = _Objective(prob, 0.02, theta, logits)
    loss = float(obj.loss_and_grad())
    return loss, theta.grad.clone(), logits.grad.clone(), obj.val_loss()


@pytest.mark.parametrize("kernel", ["distance", "dot"])
@pytest.mark.parametrize("mask", [True, False])
def test_every_row_a_landmark_is_the_full_attention(kernel: str, mask: bool) -> None:
    """L = N distinct rows: loss, gradients and validation loss of the exact fused pass."""
    x, v = _data()
    lm = build_landmarks(x.numpy(), v.numpy(), x.shape[0], "kmeans", 0)
    assert lm.centers.shape[0] == x.shape[0] and np.all(lm.counts == 1)
    with chunk_runner(CPU, 2) as runner:
        ref = _grads(_problem(runner, x, v, kernel, mask, None))
        got = _grads(_problem(runner, x, v, kernel, mask, lm))
    assert got[0] == pytest.approx(ref[0], rel=RTOL_SAME_SUMS)
    assert got[3] == pytest.approx(ref[3], rel=RTOL_SAME_SUMS)
    for a, b in [(got[1], ref[1]), (got[2], ref[2])]:
        np.testing.assert_allclose(a, b, rtol=RTOL_SAME_SUMS, atol=RTOL_SAME_SUMS * float(b.abs().max()))


def _reference_loss(theta, logits, x, v, target, lm: Landmarks, kernel: str, mask: bool):
    """The landmark loss written as sums over rows at their centres (autograd, dense N × L):
    h_j = (Σ_l e_jl n_l v̄_l − [mask] e_j,a(j) v_j) / (Σ_l e_jl n_l − [mask] e_j,a(j))."""
    c = torch.as_tensor(lm.centers)
    zq, zk = x @ theta, c @ theta  # (M, N, r), (M, L, r)
    s = zq @ zk.transpose(1, 2)
    if kernel == "distance":
        s = s - 0.5 * (zk * zk).sum(2).unsqueeze(1)
    e = torch.exp(s)
    n_l, vbar = torch.as_tensor(lm.counts), torch.as_tensor(lm.values)
    num, den = e @ (n_l * vbar), e @ n_l
    if mask:
        own = e[:, torch.arange(x.shape[0]), torch.as_tensor(lm.assign)]
        num, den = num - own * v, den - own
    resid = target - torch.softmax(logits, 0) @ (num / den)
    return resid.square().mean()


@pytest.mark.parametrize("kernel", ["distance", "dot"])
@pytest.mark.parametrize("mask", [True, False])
def test_landmark_gradients_equal_autograd_of_the_row_sums(kernel: str, mask: bool) -> None:
    x, v = _data()
    lm = build_landmarks(x.numpy(), v.numpy(), 17, "kmeans", 0)
    assert lm.counts.sum() == x.shape[0] and lm.counts.min() >= 1
    theta, logits = _params()
    ref = _reference_loss(theta, logits, x, v, 1.3 * v, lm, kernel, mask)
    g_theta, g_logits = torch.autograd.grad(ref, [theta, logits])
    lms = lm.tensors(v.numpy(), CPU)
    zq = torch.matmul(x.unsqueeze(0), theta)
    zk, kb = landmark_keys(lms, theta, kernel)
    with chunk_runner(CPU, 2) as runner:
        loss, gq, gk, gkb, gl = landmark_loss_and_grad(
            runner, zq, zk, kb, logits, lms, 1.3 * v, mask_self=mask, chunk=31,
            score_dtype=torch.float64)
    outs, grads = ([zq, zk, kb], [gq, gk, gkb]) if kernel == "distance" else ([zq, zk], [gq, gk])
    got = torch.autograd.grad(outs, [theta], grads)[0]
    assert loss == pytest.approx(float(ref.detach()), rel=RTOL_SAME_SUMS)
    np.testing.assert_allclose(got, g_theta, rtol=1e-10, atol=RTOL_SAME_SUMS * float(g_theta.abs().max()))
    np.testing.assert_allclose(gl, g_logits, rtol=1e-10, atol=RTOL_SAME_SUMS * float(g_logits.abs().max()))


def _relative_errors(sizes: list[int], method: str) -> list[float]:
    """RMS error of the landmark head outputs over the exact ones, relative to their RMS."""
    x, v = _data(n=512, p=2, seed=11)
    theta = torch.tensor([[[1.5, 0.0], [0.4, 1.1]]], dtype=torch.float64)
    g = torch.Generator().manual_seed(2)
    xq = torch.randn(300, 2, generator=g, dtype=torch.float64)
    zq = torch.matmul(xq.unsqueeze(0), theta)
    zk, bias = project(x, theta, "distance")
    out = []
    with chunk_runner(CPU, 1) as runner:
        exact = head_outputs(runner, zq, zk, bias, v, mask_self=False, chunk=50, score_dtype=torch.float64)
        for size in sizes:
            lm = build_landmarks(x.numpy(), v.numpy(), size, method, 0).tensors(v.numpy(), CPU)
            lk, kb = landmark_keys(lm, theta, "distance")
            approx = landmark_outputs(runner, zq, lk, kb, lm, chunk=64)
            out.append(float((approx - exact).square().mean().sqrt() / exact.square().mean().sqrt()))
    return out


@pytest.mark.parametrize("method", ["kmeans", "sample"])
def test_the_error_falls_as_the_landmarks_grow(method: str) -> None:
    errors = _relative_errors([8, 32, 128, 512], method)
    assert all(a > b for a, b in itertools.pairwise(errors)), errors
    assert errors[-1] < RTOL_SAME_SUMS  # every row a landmark: the exact attention
    assert errors[0] > 0.01  # eight landmarks really are an approximation


def test_kmeans_landmarks_beat_sampled_ones() -> None:
    kmeans, sample = _relative_errors([32, 128], "kmeans"), _relative_errors([32, 128], "sample")
    assert kmeans[0] < sample[0] and kmeans[1] < sample[1]


def test_identical_rows_share_one_landmark_exactly() -> None:
    """n identical rows are one landmark of size n with their mean value: no approximation."""
    x, v = _data(n=60)
    x2, v2 = torch.cat([x, x[:20]]), torch.cat([v, -v[:20]])
    lm = build_landmarks(x2.numpy(), v2.numpy(), 80, "kmeans", 0)
    assert lm.centers.shape[0] == 60 and lm.counts.max() == 2
    theta = _params()[0].detach()
    zq = torch.matmul(x2.unsqueeze(0), theta)
    zk, bias = project(x2, theta, "distance")
    lms = lm.tensors(v2.numpy(), CPU)
    lk, kb = landmark_keys(lms, theta, "distance")
    with chunk_runner(CPU, 1) as runner:
        for mask in (False, True):
            exact = head_outputs(runner, zq, zk, bias, v2, mask_self=mask, chunk=80,
                                 score_dtype=torch.float64)
            got = landmark_outputs(runner, zq, lk, kb, lms, chunk=13, training=mask)
            np.testing.assert_allclose(got, exact, rtol=RTOL_SAME_SUMS, atol=RTOL_SAME_SUMS)


def _xy(n: int = 300) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(n, 3))
    return x, np.sin(2 * x[:, 0]) + x[:, 1] * x[:, 2] + 0.3 * rng.normal(size=n)


@pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")
def test_a_fit_with_every_row_a_landmark_equals_the_full_fit() -> None:
    x, y = _xy()
    kw = {"heads": 2, "max_iter": 30, "score_dtype": "float64", "threads": 1}
    ref = fit_softmax(x, y, **kw)
    got = fit_softmax(x, y, keys="landmarks", n_keys=10_000, landmark_refresh=0, **kw)
    assert got.landmarks is not None and got.landmarks.centers.shape[0] == x.shape[0]
    assert got.n_evals == ref.n_evals
    # 30 L-BFGS iterations amplify rounding differences of 1e-15 in the gradient
    np.testing.assert_allclose(got.factors, ref.factors, rtol=RTOL_EXACT, atol=RTOL_EXACT)
    np.testing.assert_allclose(got.predict(x[:20]), ref.predict(x[:20]), rtol=RTOL_EXACT)
    assert got.loo_r2 == pytest.approx(ref.loo_r2, rel=RTOL_EXACT)
    assert got.train_r2 == pytest.approx(ref.train_r2, rel=RTOL_EXACT)


def test_a_landmark_fit_predicts_from_its_landmarks_and_pickles() -> None:
    x, y = _xy(600)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = fit_softmax(x, y, heads=2, max_iter=20, keys="landmarks", n_keys=40)
    lm = fit.landmarks
    assert lm is not None and lm.centers.shape == (40, 3) and lm.counts.sum() == 600
    # the landmarks are built on every training row, with the values of the final fit
    np.testing.assert_allclose(np.bincount(lm.assign, weights=fit.values) / lm.counts, lm.values,
                               rtol=RTOL_EXACT, atol=RTOL_EXACT)
    again = pickle.loads(pickle.dumps(fit))
    np.testing.assert_array_equal(again.predict(x[:50]), fit.predict(x[:50]))
    assert 0.3 < fit.loo_r2 < 1  # learns the signal (R² of the truth ≈ 0.85)


@pytest.mark.parametrize(("kw", "match"), [
    ({"keys": "nearest"}, "keys must be one of 'full', 'landmarks'"),
    ({"n_keys": 1}, "n_keys must be an integer >= 2"),
    ({"landmark_method": "random"}, "landmark_method must be one of 'kmeans', 'sample'"),
    ({"key_block": 0}, "key_block must be an integer >= 1"),
    ({"landmark_refresh": -1}, "landmark_refresh must be an integer >= 0"),
])
def test_bad_key_options_are_refused(kw: dict, match: str) -> None:
    x, y = _xy(50)
    with pytest.raises(OptionError, match=match):
        fit_softmax(x, y, **kw)


@pytest.fixture(scope="module")
def landmark_fit():
    x, y = _xy(400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = fit_softmax(x, y, heads=2, max_iter=15, keys="landmarks", n_keys=30)
    return fit, x, y


def test_landmark_weights_are_exact_votes_of_the_training_rows(landmark_fit) -> None:
    """Each landmark's weight shared by its rows: weights @ values is the prediction."""
    fit, x, _ = landmark_fit
    w = fit.weights(x[:25])
    assert w.shape == (25, 400) and np.all(w >= 0)
    np.testing.assert_allclose(w.sum(1), 1.0, rtol=RTOL_EXACT)
    pred = fit.base(x[:25]) + w @ fit.attended_values
    np.testing.assert_allclose(pred, fit.predict(x[:25]), rtol=RTOL_EXACT)
    _, top = fit.top_k(x[:25], 3)
    np.testing.assert_allclose(top, np.sort(w, axis=1)[:, ::-1][:, :3], rtol=RTOL_EXACT)


def test_landmark_training_weights_give_the_leave_one_out_fit(landmark_fit) -> None:
    fit, x, y = landmark_fit
    w = fit.weights()  # the training rows, each without itself
    assert np.all(np.diag(w) == 0)
    loo = fit.base(x) + w @ fit.attended_values
    r2 = 1 - np.sum((y - loo) ** 2) / np.sum((y - y.mean()) ** 2)
    assert r2 == pytest.approx(fit.loo_r2, rel=RTOL_EXACT)


def test_landmark_marginal_effects_equal_finite_differences(landmark_fit) -> None:
    fit, x, _ = landmark_fit
    rows, step = x[:10], 1e-5
    got = marginal_effects(fit, rows, average=False)
    for col in range(x.shape[1]):
        up, down = rows.copy(), rows.copy()
        up[:, col] += step
        down[:, col] -= step
        fd = (fit.predict(up) - fit.predict(down)) / (2 * step)
        np.testing.assert_allclose(got[:, col], fd, rtol=RTOL_FD, atol=RTOL_FD * np.abs(fd).max())


@pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")
def test_jackknife_residuals_of_a_landmark_fit_are_its_leave_one_out_residuals() -> None:
    """No ridge base (value="y"): jackknife+'s Rᵢ are the landmark fit's own leave-one-out
    residuals, whose R² is loo_r2 (each row scored at its centre, leaving its cluster)."""
    x, y = _xy(300)
    fit = fit_softmax(x, y, heads=2, max_iter=10, keys="landmarks", n_keys=25, value="y")
    resid = training_residuals(fit)
    r2 = 1 - np.sum(resid**2) / np.sum((y - y.mean()) ** 2)
    assert r2 == pytest.approx(fit.loo_r2, rel=RTOL_EXACT)


def test_the_landmark_pass_forms_no_block_wider_than_the_landmarks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loss, gradient and validation: every product is at most heads × chunk × L entries."""
    x, v = _data(n=400)
    lm = build_landmarks(x.numpy(), v.numpy(), 20, "kmeans", 0)
    largest = [0]
    bmm = torch.bmm

    def recording(a: torch.Tensor, b: torch.Tensor, **kw):
        out = bmm(a, b, **kw)
        largest[0] = max(largest[0], out.numel())
        return out

    monkeypatch.setattr(torch, "bmm", recording)
    with chunk_runner(CPU, 1) as runner:
        _grads(_problem(runner, x, v, "distance", True, lm))
    assert 0 < largest[0] <= 2 * 23 * 20  # heads × chunk × L (N × L would be 16,000)


def _friedman(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two relevant predictors among six: clusters in the raw space waste themselves on noise."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, size=(n, 6))
    return x, np.sin(3 * x[:, 0]) + x[:, 1] ** 2 + 0.1 * rng.normal(size=n)


@pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")
def test_landmarks_refreshed_in_the_learned_metric() -> None:
    x, y = _friedman(1500, 0)
    x_new, y_new = _friedman(1000, 1)
    kw = {"heads": 2, "max_iter": 60, "keys": "landmarks", "n_keys": 40}
    fixed = fit_softmax(x, y, landmark_refresh=0, **kw)
    fresh = fit_softmax(x, y, **kw)
    # the final landmarks are the rows clustered in the final learned metric
    lm = fresh.landmarks
    metric = metric_map(torch.as_tensor(fresh.factors), torch.as_tensor(fresh.alpha))
    again = build_landmarks(fresh.X_train, fresh.values, 40, "kmeans", fresh.seed, metric)
    np.testing.assert_array_equal(again.assign, lm.assign)
    np.testing.assert_allclose(again.centers, lm.centers, rtol=RTOL_EXACT, atol=RTOL_EXACT)
    r2 = [1 - np.mean((y_new - f.predict(x_new)) ** 2) / np.var(y_new) for f in (fixed, fresh)]
    assert r2[1] > r2[0] + 0.02, r2  # tighter clusters where the metric looks
    assert fresh.n_evals > fixed.n_evals  # the refreshed fit continued


def test_the_summary_says_the_keys_were_landmarks() -> None:
    import pandas as pd

    import attnreg as ar

    x, y = _xy(400)
    df = pd.DataFrame(x, columns=["a", "b", "c"]).assign(y=y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = ar.attnreg("y ~ a + b + c", df, method="softmax", heads=1, max_iter=10,
                         keys="landmarks", n_keys=30)
        full = ar.attnreg("y ~ a + b + c", df, method="softmax", heads=1, max_iter=10)
    summary = fit.summary()
    assert "  keys: 30 landmarks (cluster centres of the training rows;" in str(summary)
    assert "landmarks" not in str(full.summary())
    assert "30 landmarks" in summary.to_markdown()  # the figures' table
