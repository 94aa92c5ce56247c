"""The Regression Block, the FT-Transformer baseline, the shared training loop and the formula
front end: parameter counts, fast == naive, reproducibility, early stopping, errors."""

from __future__ import annotations

import dataclasses
import doctest
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

import attnreg.nn.blocks  # noqa: E402
import attnreg.nn.config  # noqa: E402
import attnreg.nn.features  # noqa: E402
import attnreg.nn.layers  # noqa: E402
import attnreg.nn.mixers  # noqa: E402
import attnreg.nn.results  # noqa: E402
import attnreg.nn.train  # noqa: E402
from attnreg.exceptions import ConvergenceWarning, DataError, OptionError  # noqa: E402
from attnreg.nn import (  # noqa: E402
    VARIANTS,
    BlockConfig,
    FTTConfig,
    FTTransformer,
    RegressionBlock,
    build_model,
    count_parameters,
    fit_network,
    fit_network_formula,
    train_model,
)
from attnreg.nn.features import phi_covariance, poly_features, top_eigenvectors  # noqa: E402
from attnreg.nn.layers import dropout_mask, ridge  # noqa: E402
from attnreg.nn.mixers import RegressionMixer  # noqa: E402
from tests.conftest import RTOL_EXACT  # noqa: E402

RTOL_TORCH32 = 1e-4  # float32 forward passes computed in two algebraically equal ways
SMALL = {"d_model": 16, "pca_components": 24}  # a Regression Block small enough for unit tests

# most fits here are a few epochs long on purpose
pytestmark = pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _data(n: int = 300, p: int = 4, seed: int = 0, noise: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X[:, 0] * X[:, 1] + np.sin(X[:, -1]) + noise * rng.normal(size=n)
    return X, y


# ------------------------------------------------------------------ parameter counts

PAPER_COUNTS = {"A0": 101_697, "A1": 106_305, "A2": 21_697, "A3": 173_249, "A4": 34_177,
                "A5": 33_013, "A6": 89_921, "A7": 101_249, "RB": 30_401, "trimmed": 7_489}


@pytest.mark.parametrize("name", list(PAPER_COUNTS))
def test_parameter_counts_match_the_paper(name):
    assert count_parameters(build_model(VARIANTS[name], 8)) == PAPER_COUNTS[name]


@pytest.mark.parametrize(("name", "count"), [("A6", 89_985), ("A7", 101_377)])
def test_parameter_counts_at_nine_features(name, count):
    assert count_parameters(build_model(VARIANTS[name], 9)) == count


@pytest.mark.parametrize(("ffn", "n_mixers", "k", "count"), [
    (True, 1, 100, 24_001), (True, 1, 50, 20_801), (True, 1, 25, 19_201),
    (False, 2, 200, 26_689), (False, 2, 100, 13_889), (False, 2, 25, 4_289)])
def test_parameter_counts_of_the_pca_ladder(ffn, n_mixers, k, count):
    config = BlockConfig(ffn=ffn, n_mixers=n_mixers, pca_components=k)
    assert count_parameters(RegressionBlock(n_features=8, config=config)) == count


def test_pca_buffers_are_not_trainable():
    net = RegressionBlock(n_features=8)
    buffers = dict(net.named_buffers())
    assert buffers["blocks.0.0.pca_components"].shape == (200, 2432)
    assert buffers["blocks.0.0.pca_mean"].shape == (2432,)
    assert sum(p.numel() for p in net.parameters()) == 30_401


# ------------------------------------------------------------------ fast == naive


@pytest.mark.parametrize("name", ["RB", "A2", "A3", "A6", "A7", "trimmed"])
def test_fast_forward_equals_naive_forward(name):
    torch.manual_seed(0)
    X, y = _data(120, 5)
    x, t = torch.as_tensor(X), torch.as_tensor(y)
    net = build_model(VARIANTS[name], 5).double()
    net.initialize(x, t)
    net.eval()
    with torch.no_grad():
        fast = net(x)
        net.naive = True
        naive = net(x)
    torch.testing.assert_close(fast, naive, rtol=RTOL_EXACT, atol=RTOL_EXACT)


def test_fast_gradients_equal_naive_gradients():
    torch.manual_seed(1)
    X, y = _data(64, 4)
    x, t = torch.as_tensor(X), torch.as_tensor(y)
    net = RegressionBlock(n_features=4, config=BlockConfig(n_mixers=2, **SMALL)).double()
    net.initialize(x, t)
    net.eval()  # no dropout: both passes see the same network
    grads = []
    for naive in (False, True):
        net.naive = naive
        net.zero_grad()
        torch.mean((net(x) - t) ** 2).backward()
        grads.append([p.grad.clone() for p in net.parameters()])
    for fast, naive in zip(*grads, strict=True):
        torch.testing.assert_close(fast, naive, rtol=RTOL_EXACT, atol=RTOL_EXACT)


def test_general_mixer_path_equals_naive_on_arbitrary_tokens():
    torch.manual_seed(2)
    mixer = RegressionMixer(n_tokens=5, d_model=6, poly=True, n_components=30).double()
    e = torch.randn(50, 5, 6, dtype=torch.float64)
    mixer.fit_pca(e)
    e2 = torch.randn(7, 5, 6, dtype=torch.float64)
    fast = mixer.mix(e2)
    mixer.naive = True
    torch.testing.assert_close(fast, mixer.mix(e2), rtol=RTOL_EXACT, atol=RTOL_EXACT)


def test_affine_path_equals_general_path():
    torch.manual_seed(3)
    mixer = RegressionMixer(n_tokens=4, d_model=6, poly=True, n_components=20).double()
    x = torch.randn(30, 4, dtype=torch.float64)
    w, c = torch.randn(6, dtype=torch.float64), torch.randn(4, 6, dtype=torch.float64)
    e = x[..., None] * w + c
    mixer.fit_pca(e)
    torch.testing.assert_close(mixer.mix_affine(x, w, c), mixer.mix(e), rtol=RTOL_EXACT, atol=RTOL_EXACT)


def test_fast_equals_naive_in_float32():
    torch.manual_seed(0)
    X, y = _data(200, 6)
    x, t = torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32)
    net = RegressionBlock(n_features=6)
    net.initialize(x, t)
    net.eval()
    with torch.no_grad():
        fast = net(x)
        net.naive = True
        naive = net(x)
    torch.testing.assert_close(fast, naive, rtol=RTOL_TORCH32, atol=RTOL_TORCH32)


def test_structured_covariance_equals_covariance_of_the_materialised_phi():
    e = torch.randn(40, 4, 5, dtype=torch.float64)
    mean, cov = phi_covariance(e, poly=True)
    phi = poly_features(e).reshape(160, -1).numpy()
    np.testing.assert_allclose(mean.numpy(), phi.mean(axis=0), rtol=RTOL_EXACT, atol=RTOL_EXACT)
    np.testing.assert_allclose(cov.numpy(), np.cov(phi, rowvar=False), rtol=RTOL_EXACT, atol=RTOL_EXACT)


def test_pca_matches_sklearn():
    from sklearn.decomposition import PCA

    torch.manual_seed(4)
    mixer = RegressionMixer(n_tokens=3, d_model=4, poly=True, n_components=5,
                            pca_solver="exact").double()
    e = torch.randn(200, 3, 4, dtype=torch.float64) * torch.linspace(0.5, 2.0, 4, dtype=torch.float64)
    mixer.fit_pca(e)
    ref = PCA(5, svd_solver="full").fit(poly_features(e).reshape(600, -1).numpy())
    np.testing.assert_allclose(mixer.pca_mean.numpy(), ref.mean_, rtol=RTOL_EXACT, atol=RTOL_EXACT)
    np.testing.assert_allclose(mixer.pca_components.numpy(), ref.components_, atol=1e-8)


def test_randomized_eigenvectors_match_exact_on_a_decaying_spectrum():
    gen = torch.Generator().manual_seed(5)
    q, _ = torch.linalg.qr(torch.randn(300, 300, generator=gen, dtype=torch.float64))
    cov = q @ torch.diag(0.7 ** torch.arange(300, dtype=torch.float64)) @ q.T
    torch.manual_seed(6)
    exact, approx = top_eigenvectors(cov, 20, "exact"), top_eigenvectors(cov, 20, "randomized")
    torch.testing.assert_close(approx[:10], exact[:10], rtol=0, atol=1e-8)


def test_ridge_matches_sklearn():
    from sklearn.linear_model import Ridge

    X, y = _data(80, 6)
    coef, intercept = ridge(torch.as_tensor(X), torch.as_tensor(y), 1.0)
    ref = Ridge(alpha=1.0).fit(X, y)
    np.testing.assert_allclose(coef.numpy(), ref.coef_, rtol=RTOL_EXACT)
    assert float(intercept) == pytest.approx(ref.intercept_, rel=RTOL_EXACT)


def test_warm_start_sets_channel_zero_and_the_head():
    X, y = _data(150, 4)
    x, t = torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32)
    torch.manual_seed(0)
    net = RegressionBlock(n_features=4, config=BlockConfig(**SMALL))
    net.initialize(x, t)
    mixer = net.blocks[0][0]
    coef, intercept = ridge(mixer.pooled_features(net.tokenize(x)).detach(), t, 1.0)
    torch.testing.assert_close(mixer.linear.weight[0].detach(), coef.float())
    assert torch.all(mixer.linear.bias == 0)
    assert net.head.weight[0, 0] == 1 and torch.all(net.head.weight[0, 1:] == 0)
    assert float(net.head.bias.detach()) == pytest.approx(float(intercept), rel=RTOL_TORCH32)


# ------------------------------------------------------------------ shapes and modules


def test_shapes():
    x = torch.randn(7, 5)
    rb = RegressionBlock(n_features=5, config=BlockConfig(**SMALL))
    assert rb(x).shape == (7,)
    assert rb.encode(x).shape == (7, 5, 16)
    assert poly_features(rb.tokenize(x)).shape == (7, 5, 2 * 16 + 16 * 15)
    ftt = FTTransformer(n_features=5, config=FTTConfig(d_model=8, n_blocks=1, n_heads=2, d_ffn=16))
    assert ftt(x).shape == (7,)
    softmax = RegressionBlock(n_features=5, config=BlockConfig(mixer="softmax", d_model=8, n_heads=2))
    assert softmax(x).shape == (7,)


def test_ftt_polynomial_inputs_are_standardised_on_the_training_rows():
    X, _ = _data(100, 3)
    ftt = FTTransformer(n_features=3, config=FTTConfig(poly_inputs=True, d_model=8, n_heads=2))
    x = torch.as_tensor(X, dtype=torch.float32)
    ftt.initialize(x)
    z = ftt.expand(x)
    assert z.shape == (100, 3 + 6)
    torch.testing.assert_close(z.mean(dim=0), torch.zeros(9), atol=1e-5, rtol=0)
    torch.testing.assert_close(z.std(dim=0, unbiased=False), torch.ones(9), atol=1e-4, rtol=0)


def test_dropout_mask_rate_and_scale():
    torch.manual_seed(0)
    mask = dropout_mask(torch.empty(400, 500), 0.1)
    assert mask.unique().tolist() == pytest.approx([0.0, 32768 / (32768 - 3277)])
    assert abs(float((mask == 0).float().mean()) - 0.1) < 0.005  # 200k draws: sd 0.0007
    net = RegressionBlock(n_features=3, config=BlockConfig(**SMALL)).eval()
    x = torch.randn(4, 3)
    torch.testing.assert_close(net(x), net(x))  # evaluation mode: no dropout


# ------------------------------------------------------------------ training


def test_tiny_fit_beats_the_mean_and_is_reproducible():
    X, y = _data(400, 4)
    X_test, y_test = _data(200, 4, seed=1)
    state = torch.get_rng_state()
    fits = [fit_network(X, y, config=BlockConfig(**SMALL), seed=3, max_epochs=60) for _ in range(2)]
    assert torch.equal(state, torch.get_rng_state())  # the global generator is left alone
    pred = fits[0].predict(X_test)
    r2 = 1 - np.sum((y_test - pred) ** 2) / np.sum((y_test - y_test.mean()) ** 2)
    assert r2 > 0.5  # y = x1·x2 + sin(x3) + noise; the mean scores 0
    np.testing.assert_array_equal(pred, fits[1].predict(X_test))
    assert fits[0].history.val_loss == fits[1].history.val_loss
    other = fit_network(X, y, config=BlockConfig(**SMALL), seed=4, max_epochs=5)
    assert other.history.val_loss != fits[0].history.val_loss[:5]


def test_ftt_fit_runs_with_warmup_cosine_schedule():
    X, y = _data(200, 3)
    fit = fit_network(X, y, config=FTTConfig(d_model=8, n_blocks=1, n_heads=2, d_ffn=16),
                      max_epochs=20, patience=30)
    lr = fit.history.lr
    assert fit.options["optimizer"] == "adamw"
    assert lr[0] == 0 and lr[1] == pytest.approx(max(lr) / 2)  # 2 warm-up epochs from 0 (as LambdaLR)
    assert lr[2] == max(lr) and lr[-1] < max(lr)  # then cosine decay


def _textbook_fit(make_net, z, t, seed, *, epochs, batch_size, optimizer, lr_factor=None,
                  clip=True, patience=10):
    """A textbook PyTorch loop as the paper's code writes it: seed torch and numpy, build the
    network, hold out np.random.permutation's first 15 %, DataLoader shuffling, per-epoch
    LambdaLR, MSE, optional clipping at 1, early stopping and best-state restore."""
    from torch import nn
    from torch.utils.data import DataLoader, TensorDataset

    torch.manual_seed(seed)
    np.random.seed(seed)
    net = make_net()
    n_val = int(0.15 * len(z))
    idx = np.random.permutation(len(z))
    loader = DataLoader(TensorDataset(z[idx[n_val:]], t[idx[n_val:]]), batch_size=batch_size, shuffle=True)
    opt = optimizer(net.parameters())
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_factor or (lambda e: 1.0))
    losses, best, waited = [], None, 0
    for _ in range(epochs):
        net.train()
        for xb, yb in loader:
            loss = nn.functional.mse_loss(net(xb), yb)
            opt.zero_grad()
            loss.backward()
            if clip:
                nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
        sched.step()
        net.eval()
        with torch.no_grad():
            losses.append(nn.functional.mse_loss(net(z[idx[:n_val]]), t[idx[:n_val]]).item())
        waited = waited + 1 if best is not None and losses[-1] >= min(losses[:-1]) else 0
        if waited == 0:
            best = {k: v.clone() for k, v in net.state_dict().items()}
        if waited >= patience:
            break
    net.load_state_dict(best)
    net.eval()
    return net, losses


def _textbook_ftt(p, d=64):
    """PAPER.md §2.3: P separate Linear(1, d), [CLS] ~ N(0, 0.02²), 3 post-norm encoder layers."""
    from torch import nn

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.ModuleList([nn.Linear(1, d) for _ in range(p)])
            self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
            layer = nn.TransformerEncoderLayer(d, 4, dim_feedforward=128, dropout=0.1,
                                               activation="gelu", batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, 3, enable_nested_tensor=False)
            self.norm, self.head = nn.LayerNorm(d), nn.Linear(d, 1)

        def forward(self, x):
            tokens = torch.stack([emb(x[:, i:i + 1]) for i, emb in enumerate(self.emb)], dim=1)
            h = torch.cat([self.cls.expand(len(x), -1, -1), tokens], dim=1)
            return self.head(self.norm(self.encoder(h)[:, 0])).squeeze(-1)

    return Net()


def test_ftt_fit_equals_the_textbook_dataloader_loop():
    # Same seed, same draws in the same order: the validation rows, the initial weights, each
    # epoch's batches and the dropout masks agree, so the trained weights are equal bit for bit.
    X, y = _data(150, 3)
    fit = fit_network(X, y, config=FTTConfig(), seed=7, max_epochs=8, warmup_fraction=0.25,
                      batch_size=32, patience=20)
    state = torch.get_rng_state()
    z = torch.as_tensor((X - X.mean(0)) / X.std(0), dtype=torch.float32)
    t = torch.as_tensor((y - y.mean()) / y.std(), dtype=torch.float32)
    warm_cosine = lambda e: e / 2 if e < 2 else 0.5 * (1 + np.cos(np.pi * (e - 2) / 6))  # noqa: E731
    net, losses = _textbook_fit(lambda: _textbook_ftt(3), z, t, 7, epochs=8, batch_size=32,
                                optimizer=lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=1e-4),
                                lr_factor=warm_cosine, patience=20)
    torch.set_rng_state(state)
    assert fit.history.val_loss == losses
    assert fit.val_rows.tolist() == np.random.RandomState(7).permutation(150)[:22].tolist()
    ours, theirs = list(fit.model.parameters()), list(net.parameters())
    assert all(torch.equal(a, b) for a, b in zip(ours, theirs, strict=True))


def test_table1_mlp_equals_the_textbook_dataloader_loop():
    from torch import nn

    from attnreg.bench.methods import get_method

    X, y = _data(120, 3)
    z, t = torch.as_tensor(X, dtype=torch.float32), torch.as_tensor(y, dtype=torch.float32)

    def mlp():
        return nn.Sequential(nn.Linear(3, 200), nn.ReLU(), nn.Dropout(0.2), nn.Linear(200, 200), nn.ReLU(),
                             nn.Dropout(0.2), nn.Linear(200, 200), nn.ReLU(), nn.Dropout(0.2),
                             nn.Linear(200, 1), nn.Flatten(0))

    ours = get_method("mlp")(X, y, X[:10], seed=5)
    state = torch.get_rng_state()
    net, losses = _textbook_fit(mlp, z, t, 5, epochs=1000, batch_size=64, clip=False, patience=20,
                                optimizer=lambda p: torch.optim.Adam(p, lr=1e-3))
    torch.set_rng_state(state)
    assert 20 < len(losses) < 1000  # it stopped early
    with torch.no_grad():
        np.testing.assert_array_equal(ours, net(z[:10]).double().numpy())


def test_early_stopping_restores_the_best_state():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    x = torch.as_tensor(rng.normal(size=(64, 3)), dtype=torch.float32)
    y = torch.as_tensor(rng.normal(size=64), dtype=torch.float32)  # pure noise: overfits early
    x_val = torch.as_tensor(rng.normal(size=(32, 3)), dtype=torch.float32)
    y_val = torch.as_tensor(rng.normal(size=32), dtype=torch.float32)
    net = RegressionBlock(n_features=3, config=BlockConfig(**SMALL))
    net.initialize(x, y)
    seen = []
    hist = train_model(net, x, y, x_val, y_val, lr=1e-2, batch_size=16, max_epochs=200, patience=5,
                       progress=seen.append)
    assert hist.stopped_early and hist.n_epochs == hist.best_epoch + 5
    assert [r.epoch for r in seen] == list(range(1, hist.n_epochs + 1))
    with torch.no_grad():
        val = float(torch.mean((net(x_val) - y_val) ** 2))
    assert val == pytest.approx(min(hist.val_loss), rel=1e-6)
    assert hist.best_val_loss == min(hist.val_loss) and not net.training


@pytest.mark.filterwarnings("error::attnreg.exceptions.ConvergenceWarning")
def test_warns_when_still_improving_at_max_epochs():
    with pytest.warns(ConvergenceWarning, match=r"validation loss was still falling at max_epochs=2"):
        fit_network(*_data(200, 3), config=BlockConfig(**SMALL), max_epochs=2)


def test_progress_line_goes_to_stderr(capsys):
    X, y = _data(100, 3)
    fit_network(X, y, config=BlockConfig(**SMALL), max_epochs=3, progress=True)
    err = capsys.readouterr()
    assert "training: 3/200" not in err.err and "training:" in err.err and err.out == ""


# ------------------------------------------------------------------ formula front end


@pytest.fixture(scope="module")
def network_fit():
    rng = np.random.default_rng(7)
    n = 300
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "g": rng.choice(["a", "b", "c"], size=n)},
                      index=[f"r{i}" for i in range(n)])
    df["y"] = 2 + df.x1 * df.x2 + (df.g == "b") + 0.1 * rng.normal(size=n)
    df.loc["r5", "x2"] = np.nan
    torch.set_num_threads(1)
    return df, fit_network_formula("y ~ x1 + x2 + C(g)", df, max_epochs=40, **SMALL)


def test_formula_fit_results(network_fit):
    df, res = network_fit
    assert res.names == ["C(g)[T.b]", "C(g)[T.c]", "x1", "x2"]
    assert res.nobs == 299 and res.n_params == count_parameters(res.fit.model)
    assert res.fit.fit_rows.size + res.fit.val_rows.size == 299
    assert list(res.history.columns) == ["train_loss", "val_loss", "lr", "best"]
    assert res.history["best"].sum() == 1
    assert 0.5 < res.r_squared <= 1 and res.val_r2 > 0.3
    pred = res.predict(df.iloc[:8])
    assert np.isnan(pred["r5"]) and np.isfinite(pred.drop("r5")).all()
    np.testing.assert_allclose(pred.drop("r5"), res.fitted.loc[pred.drop("r5").index], rtol=1e-6)
    assert "x1" in repr(res) or "y ~" in repr(res)


def test_permutation_importance_ranks_the_signal(network_fit):
    df, res = network_fit
    imp = res.permutation_importance(n_repeats=3)
    assert list(imp.index) == res.names and list(imp.columns) == ["importance", "std"]
    assert imp.loc["x1", "importance"] > imp.loc["C(g)[T.c]", "importance"]
    on_new = res.permutation_importance(df.iloc[:100], n_repeats=2, seed=1)
    assert on_new.shape == (4, 2)
    pd.testing.assert_frame_equal(on_new, res.permutation_importance(df.iloc[:100], n_repeats=2, seed=1))


def test_summary_has_no_standard_errors(network_fit):
    _, res = network_fit
    text = str(res.summary())
    assert "Permutation importance" in text and "No standard errors" in text
    assert "Std. Error" not in text and "trainable parameters" in text
    assert "best epoch" in text and "validation" in text


def test_formula_ftt_variant():
    X, y = _data(150, 2)
    df = pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "y": y})
    res = fit_network_formula("y ~ a + b", df, method="ftt", variant="A5", n_blocks=1, max_epochs=3)
    assert isinstance(res.fit.config, FTTConfig) and res.fit.config.d_model == 36
    assert "FT-Transformer [A5]" in str(res.summary())


# ------------------------------------------------------------------ errors


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"d_model": 0}, r"d_model must be a positive integer, however: d_model=0"),
    ({"n_mixers": 1.5}, r"n_mixers must be a positive integer, however: n_mixers=1.5"),
    ({"pca_components": -3}, r"pca_components must be a positive integer or None, however"),
    ({"mixer": "lstm"}, r"mixer must be 'regression' or 'softmax', however: mixer='lstm'"),
    ({"dropout": 1.0}, r"dropout must be in \[0, 1\), however: dropout=1.0"),
    ({"pca_solver": "arpack"}, r"pca_solver must be 'randomized' or 'exact'"),
    ({"mixer": "softmax", "d_model": 30}, r"d_model must be a multiple of n_heads"),
])
def test_block_config_errors(kwargs, match):
    with pytest.raises(OptionError, match=match):
        BlockConfig(**kwargs)


def test_module_errors():
    with pytest.raises(OptionError, match=r"d_model must be a multiple of n_heads"):
        FTTConfig(d_model=30)
    with pytest.raises(OptionError, match=r"n_features must be a positive integer, however: n_features=0"):
        RegressionBlock(n_features=0)
    with pytest.raises(OptionError, match=r"x must have shape \(batch, 4\)"):
        RegressionBlock(n_features=4, config=BlockConfig(**SMALL))(torch.zeros(2, 3))


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"lr": -1.0}, r"lr must be positive, however: lr=-1.0"),
    ({"batch_size": 0}, r"batch_size must be a positive integer, however: batch_size=0"),
    ({"optimizer": "sgd"}, r"optimizer must be 'adam' or 'adamw', however: optimizer='sgd'"),
    ({"schedule": "step"}, r"schedule must be 'none' or 'warmup_cosine'"),
    ({"dtype": "float16"}, r"dtype must be 'float32' or 'float64'"),
    ({"val_fraction": 1.5}, r"val_fraction must be in \(0, 1\)"),
    ({"device": "tpu"}, r"device must be 'cpu', 'cuda' or 'auto', however: device='tpu'"),
    ({"epochs": 3}, r"unknown option\(s\): epochs; valid:"),
    ({"progress": "yes"}, r"progress must be True, False or a callable"),
    ({"seed": -1}, r"seed must be an integer in \[0, 2\*\*32\), however: seed=-1"),
])
def test_fit_option_errors(kwargs, match):
    X, y = _data(50, 2)
    with pytest.raises(OptionError, match=match):
        fit_network(X, y, **kwargs)


@pytest.mark.skipif(torch.cuda.is_available(), reason="CUDA is available here")
def test_cuda_request_without_cuda():
    with pytest.raises(OptionError, match=r"CUDA is not available; use 'cpu' or 'auto'"):
        fit_network(*_data(50, 2), device="cuda")


def test_data_errors():
    X, y = _data(50, 2)
    with pytest.raises(DataError, match=r"X and y must be finite"):
        fit_network(np.where(X > 2, np.inf, X), y)
    with pytest.raises(DataError, match=r"too few rows"):
        fit_network(X[:3], y[:3], config=BlockConfig(**SMALL))


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"method": "mlp"}, r"method must be 'block' or 'ftt', however: method='mlp'"),
    ({"variant": "A9"}, r"variant must be one of 'A0', .*however: variant='A9'"),
    ({"variant": "A0"}, r"variant 'A0' is a FTTConfig; use method='ftt'"),
    ({"variant": "RB", "config": BlockConfig()}, r"give either variant or config, not both"),
    ({"weights": "x1"}, r"weights are not supported by method 'block'"),
    ({"d_model": -1}, r"d_model must be a positive integer, however: d_model=-1"),
    ({"heads": 4}, r"unknown option\(s\): heads"),
])
def test_formula_errors(kwargs, match):
    df = pd.DataFrame({"x1": [1.0, 2.0, 3.0], "y": [1.0, 2.0, 4.0]})
    with pytest.raises(OptionError, match=match):
        fit_network_formula("y ~ x1", df, **kwargs)


def test_permutation_importance_errors(network_fit):
    _, res = network_fit
    with pytest.raises(OptionError, match=r"n_repeats must be a positive integer, however: n_repeats=0"):
        res.permutation_importance(n_repeats=0)


def test_intercept_only_formula_is_refused():
    df = pd.DataFrame({"x1": np.arange(20.0), "y": np.arange(20.0)})
    with pytest.raises(DataError, match=r"method 'block' needs at least one predictor"):
        fit_network_formula("y ~ 1", df)


def test_variants_are_configurations_not_copies():
    for name, config in VARIANTS.items():
        assert isinstance(config, (BlockConfig, FTTConfig)), name
        assert dataclasses.is_dataclass(config)


@pytest.mark.parametrize("module", [attnreg.nn.blocks, attnreg.nn.config, attnreg.nn.features,
                                    attnreg.nn.layers, attnreg.nn.mixers, attnreg.nn.results,
                                    attnreg.nn.train], ids=lambda m: m.__name__)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def test_import_attnreg_does_not_import_torch():
    code = "import sys, attnreg; assert 'torch' not in sys.modules, 'torch imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_formula_dispatch_block() -> None:
    """attnreg(..., method="block") reaches the network front end."""
    import numpy as np
    import pandas as pd

    import attnreg as ar

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"a": rng.normal(size=300), "b": rng.normal(size=300)})
    df["y"] = df.a * df.b + 0.1 * rng.normal(size=300)
    fit = ar.attnreg("y ~ a + b", df, method="block", seed=0, max_epochs=5)
    assert fit.predict(df.head(4)).shape == (4,)
    assert "No standard errors" in str(fit.summary()) or "standard errors" in str(fit.summary())
    with pytest.raises(ar.exceptions.OptionError, match="do not apply to method 'block'"):
        ar.attnreg("y ~ a + b", df, method="block", lam=1.0)
