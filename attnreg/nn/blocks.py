"""The two networks: the Regression Block and the FT-Transformer baseline.

Both are configured by :mod:`attnreg.nn.config` (the paper's ablations A0–A7 and "trimmed"
are entries of :data:`~attnreg.nn.config.VARIANTS`); the regression mixer and the φ map
are in :mod:`attnreg.nn.mixers` and :mod:`attnreg.nn.features`, the FFN sublayer and the
ridge warm start in :mod:`attnreg.nn.layers`. Parameter counts at P=8 match the paper's.
"""

from __future__ import annotations

from typing import cast

import torch
from torch import Tensor, nn

from attnreg.nn.config import BlockConfig, FTTConfig, _check
from attnreg.nn.features import pair_index
from attnreg.nn.layers import FeedForward, ridge
from attnreg.nn.mixers import RegressionMixer, SoftmaxMixer

__all__ = ["FTTransformer", "RegressionBlock", "build_model", "count_parameters"]


class RegressionBlock(nn.Module):
    """The Regression Block network: shared tokenizer, regression mixer(s), FFN, mean-pool.

    Tokens ``e_s = w·x_s + b + pos_s`` (one shared ``Linear(1, d)``, a learned per-feature
    embedding initialised N(0, 0.02²)); ``z = LayerNorm(e + W·PCA(φ(e)))``;
    ``z' = LayerNorm(z + FFN(z))``; mean over tokens; ``Linear(d, 1)``. Call
    :meth:`initialize` on the training rows before training: it fits the frozen PCA(s) on
    the initial embeddings and sets the ridge warm start.

    Parameters
    ----------
    n_features : int
        Number of inputs P.
    config : BlockConfig
    n_train : int, optional
        Training rows the PCA will see; caps K at ``min(K, dim φ, rows·P)``, as the paper.

    **Shape**: ``x`` (B, P) -> (B,).

    Examples
    --------
    >>> net = RegressionBlock(n_features=8)
    >>> sum(p.numel() for p in net.parameters() if p.requires_grad)
    30401
    >>> net(torch.zeros(5, 8)).shape
    torch.Size([5])
    """

    def __init__(self, *, n_features: int, config: BlockConfig | None = None,
                 n_train: int | None = None) -> None:
        super().__init__()
        config = BlockConfig() if config is None else config
        _check(isinstance(n_features, int) and n_features > 0,
               f"n_features must be a positive integer, however: {n_features=}")
        _check(n_train is None or n_train > 0, f"n_train must be positive, however: {n_train=}")
        self.config, self.n_features = config, n_features
        d = config.d_model
        k = config.pca_components
        if k is not None and n_train is not None:
            k = min(k, min(n_train, config.max_pca_rows) * n_features)
        self.tokenizer = nn.Linear(1, d)
        self.feature_embedding = nn.Parameter(torch.randn(n_features, d) * 0.02)
        self.blocks = nn.ModuleList()
        for _ in range(config.n_blocks):
            block = nn.ModuleList()
            for _ in range(config.n_mixers):
                if config.mixer == "regression":
                    block.append(RegressionMixer(n_tokens=n_features, d_model=d, poly=config.poly,
                                                 n_components=k, naive=config.naive,
                                                 pca_solver=config.pca_solver))
                else:
                    block.append(SoftmaxMixer(d_model=d, n_heads=config.n_heads, dropout=config.dropout))
            if config.ffn:
                block.append(FeedForward(d_model=d, d_ffn=config.d_ffn or 2 * d, dropout=config.dropout))
            self.blocks.append(block)
        self.final_norm = nn.LayerNorm(d) if config.final_norm else nn.Identity()
        self.head = nn.Linear(d, 1)

    @property
    def naive(self) -> bool:
        """Whether the regression mixers use the reference (P-copies) projection."""
        return any(m.naive for m in self.modules() if isinstance(m, RegressionMixer))

    @naive.setter
    def naive(self, value: bool) -> None:
        for m in self.modules():
            if isinstance(m, RegressionMixer):
                m.naive = bool(value)

    def tokenize(self, x: Tensor) -> Tensor:
        """(B, P) -> (B, P, d)."""
        _check(x.ndim == 2 and x.shape[1] == self.n_features,
               f"x must have shape (batch, {self.n_features}), however: {tuple(x.shape)=}")
        return self.tokenizer(x[..., None]) + self.feature_embedding  # (B, P, d)

    def encode(self, x: Tensor) -> Tensor:
        """Token representations after the last block, (B, P) -> (B, P, d)."""
        h = self.tokenize(x)
        first = self.layers()[0][1]
        for _, layer in self.layers():
            if layer is first and isinstance(layer, RegressionMixer) and not layer.naive:
                # the first mixer sees the tokens themselves: affine in x (see mix_affine)
                c = self.tokenizer.bias + self.feature_embedding  # (P, d)
                h = layer.norm(h + layer.mix_affine(x, self.tokenizer.weight[:, 0], c))
            else:
                h = layer(h)
        return self.final_norm(h)

    def layers(self) -> list[tuple[int, nn.Module]]:
        """(block index, sublayer) in order: the mixers of block 0, its FFN, block 1, …"""
        return [(b, layer) for b, block in enumerate(self.blocks)
                for layer in cast(nn.ModuleList, block)]

    def forward(self, x: Tensor) -> Tensor:
        """(B, P) -> (B,)."""
        return self.head(self.encode(x).mean(dim=1)).squeeze(-1)

    @torch.no_grad()
    def initialize(self, x: Tensor, y: Tensor | None = None) -> None:
        """Fit the frozen PCA of every regression mixer and set the ridge warm start.

        Each mixer's PCA is fitted on φ of its input under the initial weights (the first
        mixer: the initial embeddings) for the first ``max_pca_rows`` rows. With
        ``warm_start`` and ``y`` given, a ridge of y on the token-mean PCA scores of the
        first mixer (first ``max_ridge_rows`` rows) sets W's channel 0 (bias 0) and the head
        (weight e_1, bias the ridge intercept).

        **Shape**: ``x`` (n, P), ``y`` (n,).
        """
        was_training = self.training
        self.eval()
        h = self.tokenize(x[: self.config.max_pca_rows])
        for _, layer in self.layers():
            if isinstance(layer, RegressionMixer):
                layer.fit_pca(h)
            h = layer(h)
        first = self.layers()[0][1]
        if self.config.warm_start and y is not None and isinstance(first, RegressionMixer):
            rows = self.config.max_ridge_rows
            coef, intercept = ridge(first.pooled_features(self.tokenize(x[:rows])), y[:rows],
                                    self.config.ridge_alpha)
            first.linear.weight[0] = coef
            first.linear.bias.zero_()
            self.head.weight.zero_()
            self.head.weight[0, 0] = 1.0
            self.head.bias.fill_(intercept)
        self.train(was_training)


class FTTransformer(nn.Module):
    """The paper's FT-Transformer baseline: per-feature tokenizers, [CLS], post-norm encoder.

    Each input gets its own ``Linear(1, d)``; a learned [CLS] token (N(0, 0.02²)) is
    prepended; ``n_blocks`` post-norm ``nn.TransformerEncoderLayer`` (GELU, batch-first)
    as one ``nn.TransformerEncoder`` (which copies the first layer, so the layers start
    equal, as in the paper's code); LayerNorm of the [CLS] output; ``Linear(d, 1)``.
    With ``poly_inputs`` the inputs are ``[x, x_i·x_j (i ≤ j)]`` standardised by buffers
    that :meth:`initialize` fits on the training rows.

    **Shape**: ``x`` (B, P) -> (B,).

    Examples
    --------
    >>> sum(p.numel() for p in FTTransformer(n_features=8).parameters())
    101697
    """

    input_mean: Tensor  # (n_in,) buffer, with poly_inputs
    input_scale: Tensor  # (n_in,) buffer, with poly_inputs

    def __init__(self, *, n_features: int, config: FTTConfig | None = None) -> None:
        super().__init__()
        config = FTTConfig() if config is None else config
        _check(isinstance(n_features, int) and n_features > 0,
               f"n_features must be a positive integer, however: {n_features=}")
        self.config, self.n_features = config, n_features
        n_in = n_features + n_features * (n_features + 1) // 2 if config.poly_inputs else n_features
        d = config.d_model
        # registered first, as in the paper's code: the parameters' order is that of its
        # initialisation draws and of its gradient-norm clipping
        self.tokenizers = nn.ModuleList([nn.Linear(1, d) for _ in range(n_in)])
        self.cls = nn.Parameter(torch.randn(1, 1, d) * 0.02)
        layer = nn.TransformerEncoderLayer(d_model=d, nhead=config.n_heads, dim_feedforward=config.d_ffn,
                                           dropout=config.dropout, activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=config.n_blocks, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 1)
        if config.poly_inputs:
            self.register_buffer("input_mean", torch.zeros(n_in))
            self.register_buffer("input_scale", torch.ones(n_in))

    def expand(self, x: Tensor) -> Tensor:
        """The model's inputs: x, or its standardised degree-2 expansion. (B, P) -> (B, n_in)."""
        _check(x.ndim == 2 and x.shape[1] == self.n_features,
               f"x must have shape (batch, {self.n_features}), however: {tuple(x.shape)=}")
        if not self.config.poly_inputs:
            return x
        i, j = pair_index(self.n_features, x.device)
        z = torch.cat([x, x[:, i] * x[:, j]], dim=1)  # sklearn PolynomialFeatures(2) order
        return (z - self.input_mean) / self.input_scale

    def forward(self, x: Tensor) -> Tensor:
        """(B, P) -> (B,)."""
        z = self.expand(x)  # (B, n_in)
        tokens = torch.stack([t(z[:, i:i + 1]) for i, t in enumerate(self.tokenizers)], dim=1)  # (B, n_in, d)
        h = torch.cat([self.cls.expand(z.shape[0], -1, -1), tokens], dim=1)  # (B, 1 + n_in, d)
        h = self.encoder(h)
        return self.head(self.norm(h[:, 0])).squeeze(-1)

    @torch.no_grad()
    def initialize(self, x: Tensor, y: Tensor | None = None) -> None:
        """Fit the standardisation of the polynomial inputs (no-op without ``poly_inputs``)."""
        if not self.config.poly_inputs:
            return
        self.input_mean.zero_()
        self.input_scale.fill_(1.0)
        z = self.expand(x).double()
        scale = z.std(dim=0, unbiased=False)
        self.input_mean.copy_(z.mean(dim=0))
        self.input_scale.copy_(torch.where(scale > 0, scale, torch.ones_like(scale)))


def build_model(config: BlockConfig | FTTConfig, n_features: int,
                n_train: int | None = None) -> RegressionBlock | FTTransformer:
    """The network a configuration describes.

    Examples
    --------
    >>> from attnreg.nn.config import VARIANTS
    >>> type(build_model(VARIANTS["A0"], 8)).__name__, type(build_model(VARIANTS["A2"], 8)).__name__
    ('FTTransformer', 'RegressionBlock')
    """
    if isinstance(config, FTTConfig):
        return FTTransformer(n_features=n_features, config=config)
    return RegressionBlock(n_features=n_features, config=config, n_train=n_train)


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters (frozen PCA and scaling buffers excluded).

    Examples
    --------
    >>> from attnreg.nn.config import VARIANTS
    >>> count_parameters(build_model(VARIANTS["A6"], 8)), count_parameters(build_model(VARIANTS["A7"], 9))
    (89921, 101377)
    """
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
