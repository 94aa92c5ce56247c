"""Softmax attention regression: the chunked kernel, the fitter and its views."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

from attnreg.exceptions import ConvergenceWarning, DataError, OptionError
from attnreg.softmax import SoftmaxFit, fit_softmax, marginal_effects
from attnreg.softmax.kernel import ChunkedAttention
from attnreg.softmax.train import FitStep, Problem, _Objective, attention_heads

F64 = torch.float64


def _data(n: int = 120, p: int = 3, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, p)) * np.array([1.0, 10.0, 0.1][:p]) + np.array([0.0, 5.0, -2.0][:p])
    z = (x - x.mean(0)) / x.std(0)
    y = np.sin(2 * z[:, 0]) + 0.5 * z[:, 1] ** 2 + 0.3 * z[:, 2] + 0.2 * rng.normal(size=n)
    return x, y


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    return _data()


@pytest.fixture(scope="module")
def fit(data: tuple[np.ndarray, np.ndarray]) -> SoftmaxFit:
    x, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fit_softmax(x, y, heads=3, max_iter=40, kernel="distance", seed=1)


def _naive_heads(q, k, bias, v, mask):  # type: ignore[no-untyped-def]
    s = torch.einsum("mjr,mir->mji", q, k)
    if bias is not None:
        s = s + bias.unsqueeze(1)
    if mask:
        s = s.masked_fill(torch.eye(k.shape[1], dtype=torch.bool), float("-inf"))
    return torch.softmax(s, dim=2) @ v


# -- the chunked kernel ------------------------------------------------------------------
@pytest.mark.parametrize("mask", [True, False])
@pytest.mark.parametrize("cache", [0, 2**30])
@pytest.mark.parametrize("with_bias", [True, False])
def test_kernel_gradcheck(mask: bool, cache: int, with_bias: bool) -> None:
    gen = torch.Generator().manual_seed(0)
    q = torch.randn(2, 7, 3, dtype=F64, generator=gen, requires_grad=True)
    k = torch.randn(2, 7, 3, dtype=F64, generator=gen, requires_grad=True)
    b = torch.randn(2, 7, dtype=F64, generator=gen, requires_grad=True) if with_bias else None
    v = torch.randn(7, dtype=F64, generator=gen)

    def f(q, k, b):  # type: ignore[no-untyped-def]
        return ChunkedAttention.apply(q, k, b, v, mask, 3, F64, cache)

    assert torch.autograd.gradcheck(f, (q, k, b))
    torch.testing.assert_close(f(q, k, b), _naive_heads(q, k, b, v, mask), rtol=0, atol=1e-14)


@pytest.mark.parametrize("mask", [True, False])
def test_kernel_chunked_equals_unchunked(mask: bool) -> None:
    gen = torch.Generator().manual_seed(1)
    n = 50
    q = (2 * torch.randn(3, n, 4, dtype=F64, generator=gen)).requires_grad_(True)
    b = torch.randn(3, n, dtype=F64, generator=gen).requires_grad_(True)
    v = torch.randn(n, dtype=F64, generator=gen)
    w = torch.randn(3, n, dtype=F64, generator=gen)
    outs = []
    for chunk, cache in ((n, 2**30), (7, 0), (1, 2**30), (13, 0)):
        h = ChunkedAttention.apply(q, q, b, v, mask, chunk, F64, cache)
        gq, gb = torch.autograd.grad((h * w).sum(), (q, b))
        outs.append((h.detach(), gq, gb))
    ref_h = _naive_heads(q, q, b, v, mask)
    ref = torch.autograd.grad((ref_h * w).sum(), (q, b))
    for h, gq, gb in outs:
        torch.testing.assert_close(h, outs[0][0], rtol=0, atol=1e-10)
        torch.testing.assert_close(gq, ref[0], rtol=0, atol=1e-10)
        torch.testing.assert_close(gb, ref[1], rtol=0, atol=1e-10)


def test_kernel_float32_scores_close_to_float64() -> None:
    gen = torch.Generator().manual_seed(2)
    q = torch.randn(2, 200, 3, dtype=F64, generator=gen, requires_grad=True)
    v = torch.randn(200, dtype=F64, generator=gen)
    h64 = ChunkedAttention.apply(q, q, None, v, True, 64, F64, 0)
    h32 = ChunkedAttention.apply(q, q, None, v, True, 64, torch.float32, 0)
    assert h32.dtype == F64
    torch.testing.assert_close(h32, h64, rtol=0, atol=1e-4)
    g64 = torch.autograd.grad(h64.sum(), q)[0]
    g32 = torch.autograd.grad(h32.sum(), q)[0]
    torch.testing.assert_close(g32, g64, rtol=1e-3, atol=1e-3)


def test_masked_prediction_ignores_own_value() -> None:
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(30, 3, dtype=F64, generator=gen)
    theta = torch.randn(2, 3, 3, dtype=F64, generator=gen).tril()
    v = torch.randn(30, dtype=F64, generator=gen)
    kw = {"kernel": "dot", "chunk": 4, "score_dtype": F64}
    for i in (0, 17, 29):
        v2 = v.clone()
        v2[i] += 100.0
        h1 = attention_heads(theta, x, x, v, mask_self=True, **kw)
        h2 = attention_heads(theta, x, x, v2, mask_self=True, **kw)
        assert torch.equal(h1[:, i], h2[:, i])
        h3 = attention_heads(theta, x, x, v2, mask_self=False, **kw)
        assert not torch.equal(h1[:, i], h3[:, i])


@pytest.mark.parametrize("kernel", ["dot", "distance"])
def test_training_loss_gradcheck(kernel: str) -> None:
    gen = torch.Generator().manual_seed(4)
    n, p = 15, 3
    x = torch.randn(n, p, dtype=F64, generator=gen)
    y = torch.randn(n, dtype=F64, generator=gen)
    base = 0.3 * x[:, 0]
    prob = Problem(x, y, base, y - base, x[:4], y[:4], base[:4], 2, 2, kernel, True, 4, F64)
    theta0 = torch.randn(2, p, 2, dtype=F64, generator=gen)
    logits0 = torch.randn(2, dtype=F64, generator=gen)

    def loss(theta: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
        return _Objective(prob, 0.01, theta, logits).loss()

    inputs = (theta0.clone().requires_grad_(True), logits0.clone().requires_grad_(True))
    assert torch.autograd.gradcheck(loss, inputs)


# -- the fitted model's views ---------------------------------------------------------------
def test_weights_convex_and_reproduce_predictions(fit: SoftmaxFit, data) -> None:  # type: ignore[no-untyped-def]
    x, _ = data
    x_new = x[:25] + 0.01
    w = fit.weights(x_new)
    assert w.shape == (25, x.shape[0]) and np.all(w >= 0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    hw = fit.head_weights(x_new)
    np.testing.assert_allclose(np.einsum("m,mjn->jn", fit.alpha, hw), w, atol=1e-14)
    assert np.all(fit.alpha >= 0) and fit.alpha.sum() == pytest.approx(1.0)
    z = (x_new - fit.x_mean) / fit.x_scale
    assert fit.ridge_coef is not None
    base = fit.ridge_coef[0] + z @ fit.ridge_coef[1:]
    expected = fit.y_mean + fit.y_scale * (base + w @ fit.values)
    np.testing.assert_allclose(fit.predict(x_new), expected, rtol=1e-12, atol=1e-12)


def test_training_weights_mask_the_diagonal(fit: SoftmaxFit) -> None:
    w = fit.weights()
    assert np.all(np.diag(w) == 0.0)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-12)
    # the masked (leave-one-out) prediction of row i does not move with y_i
    vals = fit.values.copy()
    vals[5] += 50.0
    assert (w @ vals)[5] == (w @ fit.values)[5]


def test_chunked_views_agree(fit: SoftmaxFit, data) -> None:  # type: ignore[no-untyped-def]
    x, _ = data
    x_new = x[::3] * 1.01
    np.testing.assert_allclose(fit.predict(x_new, chunk_size=7), fit.predict(x_new), rtol=0, atol=1e-10)
    np.testing.assert_allclose(fit.weights(x_new, chunk_size=5), fit.weights(x_new), rtol=0, atol=1e-12)
    np.testing.assert_allclose(fit.weights(None, chunk_size=9), fit.weights(None), rtol=0, atol=1e-12)


def test_top_k_matches_sorted_weights(fit: SoftmaxFit, data) -> None:  # type: ignore[no-untyped-def]
    x, _ = data
    x_new = x[:10] + 0.05
    idx, w = fit.top_k(x_new, 6, chunk_size=3)
    full = fit.weights(x_new)
    order = np.argsort(-full, axis=1, kind="stable")[:, :6]
    np.testing.assert_array_equal(idx, order)
    np.testing.assert_allclose(w, np.take_along_axis(full, order, axis=1), atol=1e-14)
    idx_tr, _ = fit.top_k(None, 3)
    assert not np.any(idx_tr == np.arange(x.shape[0])[:, None])  # self is masked
    with pytest.raises(OptionError, match="k must be"):
        fit.top_k(x_new, 0)


def test_fit_summary_fields(fit: SoftmaxFit, data) -> None:  # type: ignore[no-untyped-def]
    x, _ = data
    n, p = x.shape
    assert fit.factors.shape == (3, p, p) and np.all(np.triu(fit.factors, 1) == 0)
    assert fit.X_train.shape == (n, p) and fit.values.shape == (n,)
    assert fit.train_r2 >= fit.loo_r2 and 0.3 < fit.loo_r2 < 1
    assert fit.history and all(isinstance(h, FitStep) for h in fit.history)
    assert fit.n_evals >= fit.n_iter >= 1


# -- fitting behaviour --------------------------------------------------------------------
def test_seed_reproducible(data) -> None:  # type: ignore[no-untyped-def]
    x, y = data
    kw = {"heads": 2, "max_iter": 10, "patience": 50}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a, b = fit_softmax(x, y, seed=4, **kw), fit_softmax(x, y, seed=4, **kw)
        c = fit_softmax(x, y, seed=5, **kw)
    np.testing.assert_array_equal(a.factors, b.factors)
    np.testing.assert_array_equal(a.predict(x), b.predict(x))
    assert not np.array_equal(a.factors, c.factors)


def test_marginal_effects_on_linear_data() -> None:
    rng = np.random.default_rng(7)
    x = rng.uniform(size=(150, 3)) * np.array([1.0, 20.0, 0.05]) + np.array([3.0, -1.0, 0.0])
    beta = np.array([2.0, -0.25, 40.0])
    y = 1.5 + x @ beta
    fit = fit_softmax(x, y, heads=2, max_iter=20, seed=0)
    np.testing.assert_allclose(marginal_effects(fit, x), beta, rtol=1e-5)
    np.testing.assert_allclose(fit.predict(x[:5]), y[:5], rtol=1e-6)


def test_marginal_effects_match_finite_differences(fit: SoftmaxFit, data) -> None:  # type: ignore[no-untyped-def]
    x, _ = data
    pts = x[:8]
    me = marginal_effects(fit, pts, average=False)
    assert me.shape == pts.shape
    for j in range(x.shape[1]):
        h = 1e-5 * fit.x_scale[j]
        up, dn = pts.copy(), pts.copy()
        up[:, j] += h
        dn[:, j] -= h
        fd = (fit.predict(up) - fit.predict(dn)) / (2 * h)
        np.testing.assert_allclose(me[:, j], fd, rtol=1e-5, atol=1e-6 * np.abs(fd).max())
    np.testing.assert_allclose(marginal_effects(fit, pts), me.mean(axis=0))


def test_paper_mode_value_y_no_mask(data) -> None:  # type: ignore[no-untyped-def]
    x, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        f = fit_softmax(x, y, heads=2, value="y", mask_self=False, max_iter=10)
    assert f.ridge_coef is None
    w = f.weights()
    assert np.all(np.diag(w) > 0)
    np.testing.assert_allclose(f.predict(x), f.y_mean + f.y_scale * (f.weights(x) @ f.values), atol=1e-10)
    np.testing.assert_allclose(f.values, (y - y.mean()) / y.std())


def test_low_rank_auto_lam_and_float32(data) -> None:  # type: ignore[no-untyped-def]
    x, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        f = fit_softmax(x, y, heads=2, rank=2, lam="auto", max_iter=10, dtype="float32")
    assert f.factors.shape == (2, 3, 2) and f.factors[0, 0, 1] == 0.0
    assert len(f.lam_path) == 3 and f.lam in [lam for lam, _ in f.lam_path]
    assert f.lam == min(f.lam_path, key=lambda t: t[1])[0]


def test_warm_start_does_not_lose_validation_fit(fit: SoftmaxFit, data) -> None:  # type: ignore[no-untyped-def]
    x, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        f2 = fit_softmax(x, y, heads=3, max_iter=10, kernel="distance", seed=1, warm_start=fit)
    assert f2.val_r2 >= fit.val_r2 - 1e-12


def test_refit_threads_and_auto_device(data) -> None:  # type: ignore[no-untyped-def]
    x, y = data
    before = torch.get_num_threads()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        kept = fit_softmax(x, y, heads=2, max_iter=10, seed=2)
        refit = fit_softmax(x, y, heads=2, max_iter=10, seed=2, refit=True, threads=1, device="auto")
    assert torch.get_num_threads() == before
    assert refit.device == "cpu" and refit.n_evals > kept.n_evals
    assert refit.val_r2 == kept.val_r2  # the same selection, then a re-run on all rows
    assert not np.array_equal(refit.factors, kept.factors)
    assert np.all(np.isfinite(refit.predict(x)))


def test_convergence_warning_names_iterations(data) -> None:  # type: ignore[no-untyped-def]
    x, y = data
    with pytest.warns(ConvergenceWarning, match=r"all \d+ L-BFGS iterations"):
        f = fit_softmax(x, y, heads=2, max_iter=3, patience=100, tol=0.0)
    assert not f.converged


def test_progress_line_and_callback(data, capsys) -> None:  # type: ignore[no-untyped-def]
    x, y = data
    seen: list[FitStep] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit_softmax(x, y, heads=1, max_iter=5, progress=seen.append)
        fit_softmax(x, y, heads=1, max_iter=5, progress=True)
    assert seen and seen[0].step == 0
    err = capsys.readouterr().err
    assert "\r" in err and err.endswith("\n") and err.count("\n") == 1


# -- errors -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("kwargs", "pattern"),
    [
        ({"heads": 0}, "heads must be an integer >= 1"),
        ({"value": "resid"}, "value must be one of 'ridge', 'y'"),
        ({"kernel": "rbf"}, "kernel must be one of 'dot', 'distance'"),
        ({"lam": "big"}, "lam must be a non-negative number or 'auto'"),
        ({"lam": -1.0}, "lam must be a number"),
        ({"val_frac": 0.9}, "val_frac must be a number in"),
        ({"device": "tpu"}, "device must be one of 'cpu', 'cuda', 'auto'"),
        ({"dtype": "float16"}, "dtype must be one of 'float64', 'float32'"),
        ({"score_dtype": "half"}, "score_dtype must be one of"),
        ({"rank": 4}, "rank must be at most"),
        ({"chunk_size": 0}, "chunk_size must be an integer >= 1 or None"),
        ({"mask_self": "yes"}, "mask_self must be True or False"),
    ],
)
def test_bad_options(data, kwargs, pattern) -> None:  # type: ignore[no-untyped-def]
    x, y = data
    with pytest.raises(OptionError, match=pattern):
        fit_softmax(x, y, **kwargs)


def test_bad_data() -> None:
    x, y = _data(n=40)
    x_nan = x.copy()
    x_nan[3, 1] = np.nan
    with pytest.raises(DataError, match="non-finite"):
        fit_softmax(x_nan, y)
    with pytest.raises(DataError, match="y has 39 values"):
        fit_softmax(x, y[:-1])
    with pytest.raises(DataError, match="too few rows"):
        fit_softmax(x[:6], y[:6])
    with pytest.raises(DataError, match="too few rows"):
        fit_softmax(x[:12], y[:12], heads=20)


def test_predict_checks_columns(fit: SoftmaxFit) -> None:
    with pytest.raises(DataError, match="columns"):
        fit.predict(np.zeros((2, 4)))
