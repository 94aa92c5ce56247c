"""Attention over each query's k nearest training rows (``keys="top_k"``): the exact search,
the full attention when k covers every key, closed-form gradients with the sets fixed, exact
votes, the leave-one-out mask kept, and the sets refreshed as the metric moves."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import torch

from attnreg.exceptions import ConvergenceWarning, OptionError
from attnreg.softmax import fit_softmax, marginal_effects
from attnreg.softmax import topk as topk_module
from attnreg.softmax.fused import chunk_runner
from attnreg.softmax.topk import Neighbours, nearest, search_map, topk_loss_and_grad
from attnreg.softmax.train import Problem, _Objective, project
from tests.conftest import ATOL_IDENTITY, RTOL_EXACT, RTOL_FD

CPU = torch.device("cpu")
#: the same float64 sums in another order (gathered neighbours vs the one-block exact pass)
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


def _xy(n: int = 300, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3))
    return x, np.sin(2 * x[:, 0]) + x[:, 1] * x[:, 2] + 0.3 * rng.standard_normal(n)


def _brute_force(xq: np.ndarray, xk: np.ndarray, amap: np.ndarray, k: int, exclude_self: bool) -> list[set]:
    d = (((xq[:, None, :] - xk[None, :, :]) @ amap) ** 2).sum(2)  # (J, N), small sizes only
    if exclude_self:
        np.fill_diagonal(d, np.inf)
    return [set(row) for row in np.argsort(d, axis=1, kind="stable")[:, :k]]


@pytest.mark.parametrize("exclude_self", [True, False])
def test_the_search_finds_the_k_nearest_rows_in_the_metric(monkeypatch: pytest.MonkeyPatch,
                                                           exclude_self: bool) -> None:
    """Keys visited in blocks of 37 (the running top-k merged block by block) on two workers."""
    monkeypatch.setattr(topk_module, "SEARCH_BLOCK", 37)
    x, _ = _data(n=150)
    theta, logits = _params()
    amap, omega = search_map(theta.detach(), torch.softmax(logits.detach(), 0))
    np.testing.assert_allclose(amap @ amap.T, omega, rtol=RTOL_EXACT, atol=RTOL_EXACT)
    with chunk_runner(CPU, 2) as runner:
        got = nearest(x, x, amap, 9, exclude_self=exclude_self, runner=runner)
    want = _brute_force(x.numpy(), x.numpy(), amap, 9, exclude_self)
    assert got.shape == (150, 9)
    assert [set(row) for row in got.tolist()] == want
    if exclude_self:
        assert not (got == torch.arange(150).unsqueeze(1)).any()


def _problem(runner, x: torch.Tensor, v: torch.Tensor, kernel: str, mask: bool,
             nbr: torch.Tensor | None) -> Problem:
    target = 1.3 * v
    prob = Problem(x, target, 0 * v, v, x[:30], target[:30], 0 * v[:30], 2, x.shape[1], kernel, mask,
                   23, torch.float64, runner)
    if nbr is not None:  # fixed sets: the validation rows see every training row
        prob.neighbours = Neighbours(nbr.shape[1], mask, tr=nbr,
                                     va=torch.arange(x.shape[0]).expand(30, -1).contiguous())
    return prob


def _grads(prob: Problem) -> tuple[float, torch.Tensor, torch.Tensor, float]:
    theta, logits = _params()
    obj = _Objective(prob, 0.02, theta, logits)
    loss = float(obj.loss_and_grad())
    return loss, theta.grad.clone(), logits.grad.clone(), obj.val_loss()


def _every_other_row(n: int, mask: bool) -> torch.Tensor:
    """Every key (but the row itself with ``mask``), in a shuffled order."""
    rows = torch.arange(n).expand(n, -1)
    if mask:
        rows = rows[~torch.eye(n, dtype=torch.bool)].view(n, n - 1)
    return rows[:, torch.randperm(rows.shape[1], generator=torch.Generator().manual_seed(1))]


@pytest.mark.parametrize("kernel", ["distance", "dot"])
@pytest.mark.parametrize("mask", [True, False])
def test_every_key_a_neighbour_is_the_full_attention(kernel: str, mask: bool) -> None:
    """k = N − 1 (leave-one-out) or N: loss, gradients and validation loss of the exact pass."""
    x, v = _data()
    with chunk_runner(CPU, 2) as runner:
        ref = _grads(_problem(runner, x, v, kernel, mask, None))
        got = _grads(_problem(runner, x, v, kernel, mask, _every_other_row(x.shape[0], mask)))
    assert got[0] == pytest.approx(ref[0], rel=RTOL_SAME_SUMS)
    assert got[3] == pytest.approx(ref[3], rel=RTOL_SAME_SUMS)
    for a, b in [(got[1], ref[1]), (got[2], ref[2])]:
        np.testing.assert_allclose(a, b, rtol=RTOL_SAME_SUMS, atol=RTOL_SAME_SUMS * float(b.abs().max()))


def _reference_loss(theta, logits, x, target, v, nbr, kernel: str):
    """The top-k loss as one dense autograd graph: scores −inf outside each row's set."""
    z, bias = project(x, theta, kernel)
    s = z @ z.transpose(1, 2) + (0 if bias is None else bias.unsqueeze(1))  # (M, N, N)
    keep = torch.zeros(x.shape[0], x.shape[0], dtype=torch.bool).scatter_(1, nbr, True)
    h = torch.softmax(s.masked_fill(~keep, -torch.inf), dim=2) @ v
    return (target - torch.softmax(logits, 0) @ h).square().mean()


@pytest.mark.parametrize("kernel", ["distance", "dot"])
def test_top_k_gradients_equal_autograd_with_the_sets_fixed(kernel: str) -> None:
    x, v = _data()
    theta, logits = _params()
    amap, _ = search_map(theta.detach(), torch.softmax(logits.detach(), 0))
    nbr = nearest(x, x, amap, 12, exclude_self=True)
    ref = _reference_loss(theta, logits, x, 1.3 * v, v, nbr, kernel)
    g_theta, g_logits = torch.autograd.grad(ref, [theta, logits])
    z, bias = project(x, theta, kernel)
    with chunk_runner(CPU, 2) as runner:
        loss, gz, gb, gl = topk_loss_and_grad(runner, z, bias, logits, v, 1.3 * v, nbr, chunk=17,
                                              score_dtype=torch.float64)
    outs, grads = ([z, bias], [gz, gb]) if bias is not None else ([z], [gz])
    got = torch.autograd.grad(outs, [theta], grads)[0]
    assert loss == pytest.approx(float(ref.detach()), rel=RTOL_SAME_SUMS)
    for a, b in [(got, g_theta), (gl, g_logits)]:
        np.testing.assert_allclose(a, b, rtol=RTOL_EXACT, atol=RTOL_SAME_SUMS * float(b.abs().max()))


@pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")
def test_a_fit_with_every_other_row_a_neighbour_equals_the_full_fit() -> None:
    """k = N − 1: every training row attends to every other one, as the full fit; the
    neighbour sets never change, so L-BFGS is never restarted: the same iterates."""
    x, y = _xy()
    kw = {"heads": 2, "max_iter": 30, "score_dtype": "float64", "threads": 1}
    ref = fit_softmax(x, y, **kw)
    got = fit_softmax(x, y, keys="top_k", n_keys=x.shape[0] - 1, **kw)
    assert got.n_neighbours == x.shape[0] - 1 and got.n_evals == ref.n_evals
    # 30 L-BFGS iterations amplify rounding differences of 1e-15 in the gradient
    np.testing.assert_allclose(got.factors, ref.factors, rtol=RTOL_EXACT, atol=RTOL_EXACT)
    assert got.loo_r2 == pytest.approx(ref.loo_r2, rel=RTOL_EXACT)
    assert got.val_r2 == pytest.approx(ref.val_r2, rel=RTOL_EXACT)
    # a new row has N keys: k = N makes its prediction the full one too
    every = fit_softmax(x, y, keys="top_k", n_keys=x.shape[0], **kw)
    np.testing.assert_allclose(every.predict(x[:20] + 0.1), ref.predict(x[:20] + 0.1), rtol=RTOL_EXACT)
    assert every.train_r2 == pytest.approx(ref.train_r2, rel=RTOL_EXACT)


@pytest.fixture(scope="module")
def topk_fit():
    x, y = _xy(400)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = fit_softmax(x, y, heads=2, max_iter=25, keys="top_k", n_keys=15, seed=1)
    return fit, x, y


def test_new_rows_vote_with_their_k_nearest_training_rows(topk_fit) -> None:
    fit, x, _ = topk_fit
    rows = x[:25] + 0.05
    w = fit.weights(rows)
    assert w.shape == (25, 400) and np.all(w >= 0)
    np.testing.assert_allclose(w.sum(1), 1.0, rtol=RTOL_EXACT)
    pred = fit.base(rows) + w @ fit.attended_values
    np.testing.assert_allclose(pred, fit.predict(rows), rtol=RTOL_EXACT, atol=ATOL_IDENTITY)
    amap, _ = search_map(torch.as_tensor(fit.factors), torch.as_tensor(fit.alpha))
    want = _brute_force(fit._standardise(rows), fit.X_train, amap, 15, False)
    assert [set(np.flatnonzero(row)) for row in w] == want
    _, top = fit.top_k(rows, 3)
    np.testing.assert_allclose(top, np.sort(w, axis=1)[:, ::-1][:, :3], rtol=RTOL_EXACT)


def test_training_rows_never_vote_for_themselves(topk_fit) -> None:
    fit, x, y = topk_fit
    w = fit.weights()  # the training rows, each over its 15 nearest other rows
    assert np.all(np.diag(w) == 0) and np.all((w > 0).sum(1) == 15)
    np.testing.assert_allclose(w.sum(1), 1.0, rtol=RTOL_EXACT)
    loo = fit.base(x) + w @ fit.attended_values
    r2 = 1 - np.sum((y - loo) ** 2) / np.sum((y - y.mean()) ** 2)
    assert r2 == pytest.approx(fit.loo_r2, rel=RTOL_EXACT)
    assert 0.3 < fit.loo_r2 < 1  # learns the signal (R² of the truth ≈ 0.85)
    # the fit's width figure: the mean of 1 / Σ w² over these leave-one-out weights
    assert fit.effective_neighbours == pytest.approx(np.mean(1 / (w**2).sum(1)), rel=RTOL_EXACT)
    assert 1 < fit.effective_neighbours < 15


def test_a_top_k_fit_pickles_and_differentiates_its_surface(topk_fit) -> None:
    fit, x, _ = topk_fit
    again = pickle.loads(pickle.dumps(fit))
    np.testing.assert_array_equal(again.predict(x[:50]), fit.predict(x[:50]))
    rows, step = x[:10], 1e-5  # a step this small leaves every neighbour set as it is
    got = marginal_effects(fit, rows, average=False)
    for col in range(x.shape[1]):
        up, down = rows.copy(), rows.copy()
        up[:, col] += step
        down[:, col] -= step
        fd = (fit.predict(up) - fit.predict(down)) / (2 * step)
        np.testing.assert_allclose(got[:, col], fd, rtol=RTOL_FD, atol=RTOL_FD * np.abs(fd).max())


def test_the_sets_are_searched_again_only_when_the_metric_moved() -> None:
    x, _ = _data(n=120)
    theta, logits = _params()
    alpha = torch.softmax(logits.detach(), 0)
    nb = Neighbours(10, True, tol=0.05)
    with chunk_runner(CPU, 1) as runner:
        assert nb.refresh(x, x[:20], theta.detach(), alpha, runner)  # the first search
        assert not nb.refresh(x, x[:20], 1.01 * theta.detach(), alpha, runner)  # moved 2 %
        assert nb.n_searches == 1
        stretched = theta.detach().clone()
        stretched[:, 0] *= 4.0  # the first predictor counts far more: other neighbours
        assert nb.refresh(x, x[:20], stretched, alpha, runner)
    amap, _ = search_map(stretched, alpha)
    assert [set(row) for row in nb.tr.tolist()] == _brute_force(x.numpy(), x.numpy(), amap, 10, True)


@pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")
def test_a_fit_refreshes_its_sets_as_the_metric_is_learned(monkeypatch: pytest.MonkeyPatch) -> None:
    searches: list[int] = []
    refresh = Neighbours.refresh

    def counting(self, *args, **kw):
        moved = refresh(self, *args, **kw)
        searches.append(self.n_searches)
        return moved

    monkeypatch.setattr(Neighbours, "refresh", counting)
    x, y = _xy(300)
    fit_softmax(x, y, heads=2, max_iter=40, keys="top_k", n_keys=20)
    assert max(searches) > 1  # searched again during the run, not only at its start


@pytest.mark.parametrize(("kw", "match"), [
    ({"keys": "top_k", "n_keys": 0}, "n_keys must be an integer >= 1"),
    ({"keys": "nearest"}, "keys must be one of 'full', 'landmarks', 'top_k'"),
])
def test_bad_top_k_options_are_refused(kw: dict, match: str) -> None:
    x, y = _xy(50)
    with pytest.raises(OptionError, match=match):
        fit_softmax(x, y, **kw)


@pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")
def test_the_summary_says_each_query_attends_to_its_nearest_rows() -> None:
    import pandas as pd

    import attnreg as ar

    x, y = _xy(200)
    df = pd.DataFrame(x, columns=["x1", "x2", "x3"]).assign(y=y)
    res = ar.attnreg("y ~ x1 + x2 + x3", df, method="softmax", keys="top_k", n_keys=12, heads=2,
                     max_iter=10)
    assert res.fit.n_neighbours == 12
    text = str(res.summary())
    assert "keys: each query's 12 nearest training rows in the learned metric" in text
    assert f"{res.fit.effective_neighbours:.0f} effective neighbours on average" in text
    band = res.predict(df.iloc[:5], interval="jackknife+", level=0.9)
    assert bool((band.lwr < band.fit).all() and (band.fit < band.upr).all())


@pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")
def test_jackknife_leave_out_predictions_keep_each_querys_neighbours() -> None:
    """value="y" (no base): leaving out a row outside the query's set changes nothing;
    leaving out one inside renormalises each head over the rest of the set."""
    from attnreg.softmax.jackknife import leave_out_predictions

    x, y = _xy(200)
    fit = fit_softmax(x, y, heads=2, max_iter=10, keys="top_k", n_keys=8, value="y")
    rows = x[:6] + 0.05
    z = fit._standardise(rows)
    (_, _, loo), = leave_out_predictions(fit, z, np.zeros((200, 4)))  # (6, 200)
    p = fit.head_weights(rows)  # (M, 6, N), zero outside the sets
    pred = (fit.predict(rows) - fit.y_mean) / fit.y_scale
    for j in range(6):
        inside = np.flatnonzero(p[0, j])
        assert inside.size == 8
        np.testing.assert_allclose(np.delete(loo[j], inside), pred[j], rtol=RTOL_EXACT, atol=ATOL_IDENTITY)
        for i in inside:
            h = (p[:, j] @ fit.values - p[:, j, i] * fit.values[i]) / (1 - p[:, j, i])
            assert loo[j, i] == pytest.approx(fit.alpha @ h, rel=RTOL_EXACT, abs=ATOL_IDENTITY)
