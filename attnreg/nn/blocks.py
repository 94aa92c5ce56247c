"""The Regression Block network and the FT-Transformer baseline, with their configurations.

The paper's ablations (A0–A7, "trimmed") are configurations of these two modules, listed in
:data:`VARIANTS`; parameter counts at P=8 match the paper's table.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal, cast

import torch
from torch import Tensor, nn

Mixer = Literal["regression", "softmax"]
PcaSolver = Literal["randomized", "exact"]


def _check(ok: bool, message: str) -> None:
    if not ok:
        from attnreg.exceptions import OptionError

        raise OptionError(message)


def _check_fields(config: object, positive: tuple[str, ...], optional: tuple[str, ...] = (),
                  flags: tuple[str, ...] = ()) -> None:
    """Positive integers, positive integers or None, and booleans among a config's fields."""
    for name in positive + optional:
        value = getattr(config, name)
        ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
        _check(ok or (name in optional and value is None),
               f"{name} must be a positive integer{' or None' if name in optional else ''}, "
               f"however: {name}={value!r}")
    for name in flags:
        value = getattr(config, name)
        _check(isinstance(value, bool), f"{name} must be True or False, however: {name}={value!r}")
    dropout = config.dropout  # type: ignore[attr-defined]
    _check(0.0 <= dropout < 1.0, f"dropout must be in [0, 1), however: dropout={dropout!r}")


@dataclass(frozen=True)
class BlockConfig:
    """Configuration of a :class:`RegressionBlock` network (defaults: the paper's RB).

    Attributes
    ----------
    d_model : int
        Token width d.
    n_blocks : int
        Blocks stacked (A6: 3). A block is ``n_mixers`` mixers, then the FFN sublayer.
    n_mixers : int
        Mixer sublayers per block (trimmed: 2).
    ffn : bool
        Whether each block ends with the position-wise FFN sublayer.
    d_ffn : int or None
        FFN hidden width; None means 2·d_model.
    mixer : {"regression", "softmax"}
        The token mixer: ``z = LayerNorm(e + W·PCA(φ(e)))`` or multi-head softmax attention (A4).
    poly : bool
        Degree-2 cross-feature map φ; False projects the raw tokens (A2).
    pca_components : int or None
        Frozen PCA size K (capped at the dimension of φ); None puts W on the full φ (A3).
    pca_solver : {"randomized", "exact"}
        Leading eigenvectors of φ's covariance by randomized subspace iteration (as the
        paper's PCA) or by a full eigendecomposition.
    n_heads : int
        Heads of the softmax mixer.
    dropout : float
        Dropout of the FFN (and of the softmax mixer's attention weights).
    warm_start : bool
        Ridge warm start of the first regression mixer's channel 0 and of the head
        (ignored by softmax mixers, which have no regression readout).
    ridge_alpha : float
        Penalty of the warm-start ridge.
    final_norm : bool
        A LayerNorm after the last block. The paper's stacked variant A6 has one: its count
        (89,921 at P=8, 89,985 at P=9) is three RB blocks plus one LayerNorm(d).
    max_pca_rows, max_ridge_rows : int
        Training rows used to fit the PCA (every token a sample) and the warm-start ridge.
    naive : bool
        Reference implementation, as the paper's code: build φ with P copies of its global
        part, project each copy, and fit the PCA on the materialised (rows·P, D) matrix.
        Same outputs as the default (to rounding), about five times slower to train.
    """

    d_model: int = 64
    n_blocks: int = 1
    n_mixers: int = 1
    ffn: bool = True
    d_ffn: int | None = None
    mixer: Mixer = "regression"
    poly: bool = True
    pca_components: int | None = 200
    pca_solver: PcaSolver = "randomized"
    n_heads: int = 4
    dropout: float = 0.1
    warm_start: bool = True
    ridge_alpha: float = 1.0
    final_norm: bool = False
    max_pca_rows: int = 5000
    max_ridge_rows: int = 20000
    naive: bool = False

    def __post_init__(self) -> None:
        _check_fields(self, ("d_model", "n_blocks", "n_mixers", "n_heads", "max_pca_rows", "max_ridge_rows"),
                      ("d_ffn", "pca_components"), ("ffn", "poly", "warm_start", "final_norm", "naive"))
        _check(self.pca_solver in ("randomized", "exact"),
               f"pca_solver must be 'randomized' or 'exact', however: pca_solver={self.pca_solver!r}")
        _check(self.mixer in ("regression", "softmax"),
               f"mixer must be 'regression' or 'softmax', however: mixer={self.mixer!r}")
        _check(self.ridge_alpha >= 0,
               f"ridge_alpha must be non-negative, however: ridge_alpha={self.ridge_alpha!r}")
        _check(self.mixer != "softmax" or self.d_model % self.n_heads == 0,
               f"d_model must be a multiple of n_heads, however: d_model={self.d_model}, "
               f"n_heads={self.n_heads}")


@dataclass(frozen=True)
class FTTConfig:
    """Configuration of an :class:`FTTransformer` (defaults: the paper's baseline A0).

    Attributes
    ----------
    d_model, n_blocks, n_heads, d_ffn : int
        Token width, encoder layers, attention heads, FFN width (A5: 36, 3, 4, 72).
    dropout : float
        Dropout of every encoder layer.
    poly_inputs : bool
        Feed the degree-2 polynomial expansion ``[x, x_i·x_j (i ≤ j)]`` of the inputs,
        re-standardised on the training rows, instead of x (A1).
    """

    d_model: int = 64
    n_blocks: int = 3
    n_heads: int = 4
    d_ffn: int = 128
    dropout: float = 0.1
    poly_inputs: bool = False

    def __post_init__(self) -> None:
        _check_fields(self, ("d_model", "n_blocks", "n_heads", "d_ffn"), flags=("poly_inputs",))
        _check(self.d_model % self.n_heads == 0,
               f"d_model must be a multiple of n_heads, however: d_model={self.d_model}, "
               f"n_heads={self.n_heads}")


#: The paper's configurations by name (App. E); trainable parameters at P=8 in the comments.
VARIANTS: dict[str, BlockConfig | FTTConfig] = {
    "A0": FTTConfig(),  # 101,697: FT-Transformer baseline
    "A1": FTTConfig(poly_inputs=True),  # 106,305: FT-T on degree-2 polynomial inputs
    "A2": BlockConfig(poly=False),  # 21,697: no polynomial map (PCA of the raw tokens)
    "A3": BlockConfig(pca_components=None),  # 173,249: no PCA (W on the full φ)
    "A4": BlockConfig(mixer="softmax", warm_start=False),  # 34,177: softmax MHA in the RB skeleton
    "A5": FTTConfig(d_model=36, d_ffn=72),  # 33,013: FT-T shrunk to the RB budget
    "A6": BlockConfig(n_blocks=3, final_norm=True),  # 89,921: RB stacked to 3 blocks
    "A7": BlockConfig(d_model=128, pca_components=260),  # 101,249: RB widened to the FT-T budget
    "RB": BlockConfig(),  # 30,401: the Regression Block
    "trimmed": BlockConfig(n_mixers=2, ffn=False, pca_components=50),  # 7,489
}


def config_fields(config: type[BlockConfig] | type[FTTConfig]) -> list[str]:
    """Names of a configuration class's fields."""
    return [f.name for f in fields(config)]


def pair_index(n_tokens: int, device: torch.device | None = None) -> tuple[Tensor, Tensor]:
    """Index pairs (i, j), i ≤ j, in row-major order: (0,0), (0,1), …, (P−1,P−1)."""
    ij = torch.triu_indices(n_tokens, n_tokens, device=device)  # (2, P(P+1)/2)
    return ij[0], ij[1]


def poly_features(e: Tensor) -> Tensor:
    """The degree-2 cross-feature map φ, materialised (the reference implementation).

    **Shape**: ``e`` (B, P, d) -> (B, P, 2d + d·P(P+1)/2). Token s gets
    ``[e_s, e_s⊙e_s − 1, {e_i⊙e_j}_{i≤j}]``; the last block is the same for every token.
    """
    n, p, _ = e.shape
    i, j = pair_index(p, e.device)
    g = (e[:, i] * e[:, j]).flatten(1)  # (B, d·P(P+1)/2)
    return torch.cat([e, e * e - 1.0, g[:, None, :].expand(n, p, -1)], dim=-1)


def pair_products(e: Tensor) -> Tensor:
    """All products e_i⊙e_j, i ≤ j, row-major: (B, P, d) -> (B, P(P+1)/2·d).

    Built from P broadcast products of slices, cheaper forward and backward than gathering
    both factors with an index (as :func:`poly_features` does).
    """
    p = e.shape[1]
    return torch.cat([e[:, i:i + 1] * e[:, i:] for i in range(p)], dim=1).flatten(1)


def _split_parts(e: Tensor, poly: bool) -> tuple[Tensor, Tensor | None]:
    """The per-token part of φ, (B, P, 2d) or (B, P, d), and its global part (B, G) or None."""
    if not poly:
        return e, None
    return torch.cat([e, e * e - 1.0], dim=-1), pair_products(e)


class RegressionMixer(nn.Module):
    """``z = LayerNorm(e + W·PCA(φ(e)))``: the attention sublayer replaced by a regression.

    φ is the degree-2 map of :func:`poly_features` (or the identity with ``poly=False``);
    the PCA (buffers ``pca_mean`` (D,) and ``pca_components`` C (K, D)) is fitted once by
    :meth:`fit_pca` and frozen; W is ``linear`` (K -> d, or D -> d without PCA).

    Three equal ways to compute ``W·PCA(φ(e))``:

    - ``naive=True``: materialise φ with P copies of its global part and project each copy,
      as the paper's code;
    - :meth:`mix`: φ's global part is the same for every token and PCA and W are linear,
      so it is projected once per row, through W·C, and added to each token's projection;
    - :meth:`mix_affine`, which :class:`RegressionBlock` uses for its first mixer: when the
      tokens are affine in the inputs, everything but a few (B, P, d) element-wise terms
      and one (B, P(P+1)/2 + P) x (·, d) product is computed once per call.

    **Shape**: (B, P, d) -> (B, P, d).
    """

    pca_mean: Tensor  # (D,) buffer
    pca_components: Tensor  # (K, D) buffer

    def __init__(self, *, n_tokens: int, d_model: int, poly: bool, n_components: int | None,
                 naive: bool = False, pca_solver: PcaSolver = "randomized") -> None:
        super().__init__()
        _check(n_tokens > 0, f"n_tokens must be positive, however: {n_tokens=}")
        _check(d_model > 0, f"d_model must be positive, however: {d_model=}")
        _check(pca_solver in ("randomized", "exact"),
               f"pca_solver must be 'randomized' or 'exact', however: {pca_solver=}")
        self.n_tokens, self.d_model, self.poly, self.naive = n_tokens, d_model, poly, naive
        self.pca_solver = pca_solver
        self.d_token = 2 * d_model if poly else d_model  # per-token block of φ
        self.d_phi = self.d_token + (d_model * n_tokens * (n_tokens + 1) // 2 if poly else 0)
        self.n_components = None if n_components is None else min(n_components, self.d_phi)
        if self.n_components is not None:
            self.register_buffer("pca_mean", torch.zeros(self.d_phi))
            self.register_buffer("pca_components", torch.eye(self.n_components, self.d_phi))
        self.linear = nn.Linear(self.d_phi if self.n_components is None else self.n_components, d_model)
        self.norm = nn.LayerNorm(d_model)

    def _effective_map(self) -> tuple[Tensor, Tensor]:
        """(W·C, b − W·C·μ): the map φ -> W·PCA(φ) as one affine map, (d, D) and (d,)."""
        if self.n_components is None:
            return self.linear.weight, self.linear.bias
        weight = self.linear.weight @ self.pca_components  # (d, D)
        return weight, self.linear.bias - weight @ self.pca_mean

    def mix(self, e: Tensor) -> Tensor:
        """``W·PCA(φ(e))``, (B, P, d) -> (B, P, d)."""
        if self.naive:
            phi = poly_features(e) if self.poly else e  # (B, P, D)
            if self.n_components is not None:
                phi = (phi - self.pca_mean) @ self.pca_components.T  # (B, P, K)
            return self.linear(phi)
        weight, bias = self._effective_map()
        d = self.d_model
        if not self.poly:
            return torch.addmm(bias, e.flatten(0, 1), weight.T).view(e.shape)
        # per token: [e_s, e_s² − 1] -> two products (no concatenation), bias absorbs the −1
        bias = bias - weight[:, d:2 * d].sum(dim=1)
        out = e @ weight[:, :d].T + (e * e) @ weight[:, d:2 * d].T  # (B, P, d)
        glob = torch.addmm(bias, pair_products(e), weight[:, 2 * d:].T)  # (B, d): once per row
        return out + glob[:, None, :]

    def forward(self, e: Tensor) -> Tensor:
        """(B, P, d) -> (B, P, d)."""
        return self.norm(e + self.mix(e))

    def mix_affine(self, x: Tensor, w: Tensor, c: Tensor) -> Tensor:
        """``W·PCA(φ(e))`` for tokens affine in the inputs, ``e_s = x_s·w + c_s``.

        The Regression Block's tokens are of this form (w the shared ``Linear(1, d)``
        weight, c_s its bias plus the feature embedding), so φ is a degree-2 polynomial in x
        with vector coefficients, e.g. ``e_i⊙e_j = x_i x_j w² + x_i w⊙c_j + x_j w⊙c_i +
        c_i⊙c_j``. Each coefficient goes through C and W once per call (:meth:`_affine_terms`);
        what is left per row is the P(P+1)/2 + P monomials of x times a (·, d) matrix and
        three (B, P, d) element-wise terms. Equal to :meth:`mix` of the tokens (to rounding).

        **Shape**: ``x`` (B, P), ``w`` (d,), ``c`` (P, d) -> (B, P, d).
        """
        alpha, beta, gamma, glob_coef, const = self._affine_terms(w, c)
        out = x[..., None] * alpha + gamma  # (B, P, d)
        if beta is None or glob_coef is None:  # no polynomial map: φ = e
            return out + const
        i, j = pair_index(x.shape[1], x.device)
        monomials = torch.cat([x[:, i] * x[:, j], x], dim=1)  # (B, P(P+1)/2 + P)
        glob = torch.addmm(const, monomials, glob_coef)  # (B, d): once per row
        return out + (x * x)[..., None] * beta + glob[:, None, :]

    def _affine_terms(self, w: Tensor, c: Tensor) -> tuple[Tensor, Tensor | None, Tensor,
                                                           Tensor | None, Tensor]:
        """Coefficients of ``W·PCA(φ(x·w + c))`` on x_s, x_s², 1 (per token) and on the
        monomials [x_i x_j (i ≤ j), x_i] and 1 (shared by the tokens).

        **Shape**: ``w`` (d,), ``c`` (P, d) -> alpha (P, d) or (d,), beta (d,) or None,
        gamma (P, d), glob_coef (P(P+1)/2 + P, d) or None, const (d,).
        """
        d = self.d_model
        proj = self.linear.weight if self.n_components is None else self.pca_components  # (m, D)
        const = (torch.zeros_like(proj[:, 0]) if self.n_components is None
                 else -(proj @ self.pca_mean))  # (m,)
        beta = glob_coef = None
        if not self.poly:  # φ_s = e_s = x_s·w + c_s
            alpha, gamma = proj @ w, c @ proj.T  # (m,), (P, m)
        else:  # φ_s = [e_s, e_s² − 1, {e_i⊙e_j}]
            pa, pb = proj[:, :d], proj[:, d:2 * d]  # (m, d) each
            alpha = pa @ w + 2 * (w * c) @ pb.T  # (P, m): coefficient of x_s
            beta = pb @ (w * w)  # (m,): of x_s²
            gamma = c @ pa.T + (c * c - 1.0) @ pb.T  # (P, m)
            i, j = pair_index(c.shape[0], c.device)
            pg = proj[:, 2 * d:].unflatten(1, (i.numel(), d)).transpose(0, 1)  # (pairs, m, d) view
            vecs = torch.stack([(w * w).expand(i.numel(), d), w * c[j], w * c[i], c[i] * c[j]], dim=2)
            terms = torch.bmm(pg, vecs)  # (pairs, m, 4): each pair block of C times each vector
            lin = torch.zeros(c.shape[0], proj.shape[0], dtype=proj.dtype, device=proj.device)
            lin = lin.index_add(0, i, terms[:, :, 1]).index_add(0, j, terms[:, :, 2])  # (P, m)
            glob_coef = torch.cat([terms[:, :, 0], lin])  # (pairs + P, m): of x_i x_j, then x_i
            const = const + terms[:, :, 3].sum(dim=0)
        if self.n_components is None:
            return alpha, beta, gamma, glob_coef, const + self.linear.bias
        weight = self.linear.weight  # (d, K): every coefficient so far is a vector in PCA space
        return (alpha @ weight.T, None if beta is None else beta @ weight.T, gamma @ weight.T,
                None if glob_coef is None else glob_coef @ weight.T, self.linear.bias + const @ weight.T)

    def pooled_features(self, e: Tensor) -> Tensor:
        """Token-mean of W's input (PCA scores, or φ without PCA): (B, P, d) -> (B, K or D)."""
        tok, glob = _split_parts(e, self.poly)
        phi = tok.mean(dim=1) if glob is None else torch.cat([tok.mean(dim=1), glob], dim=1)
        if self.n_components is None:
            return phi
        return (phi - self.pca_mean) @ self.pca_components.T  # PCA is linear: mean commutes

    @torch.no_grad()
    def fit_pca(self, e: Tensor) -> None:
        """Fit the frozen PCA on φ(e), every token of every row a sample. ``e``: (n, P, d).

        The covariance is accumulated in the model's dtype and its top K eigenvectors are
        found in float64; each is signed so that its largest entry is positive (sklearn's
        convention for ``components_``).
        """
        if self.n_components is not None:
            mean, cov = phi_covariance(e, poly=self.poly, naive=self.naive)  # in the model's dtype
            self.pca_mean.copy_(mean)
            comps = top_eigenvectors(cov.double(), self.n_components, self.pca_solver)  # float64
            self.pca_components.copy_(comps)


def phi_covariance(e: Tensor, *, poly: bool, naive: bool = False) -> tuple[Tensor, Tensor]:
    """Mean and covariance of φ over all n·P tokens, in the dtype of ``e``.

    The fast path assembles the covariance blockwise: the global part of φ is shared by
    the P tokens of a row, so its block is one product over rows instead of over tokens.
    ``naive=True`` materialises the (n·P, D) sample matrix, as the paper's code.

    **Shape**: ``e`` (n, P, d) -> mean (D,), covariance (D, D).
    """
    n, p, _ = e.shape
    if naive:
        phi = (poly_features(e) if poly else e).reshape(n * p, -1)  # (nP, D)
        mean = phi.mean(dim=0)
        phi = phi - mean
        return mean, phi.T @ phi / max(n * p - 1, 1)
    tok, glob = _split_parts(e, poly)  # (n, P, D_tok), (n, G)
    mean_tok = tok.mean(dim=(0, 1))
    tok_c = tok - mean_tok
    flat = tok_c.reshape(n * p, -1)  # (nP, D_tok)
    if glob is None:
        return mean_tok, flat.T @ flat / max(n * p - 1, 1)
    d_tok = tok.shape[-1]
    d_phi = d_tok + glob.shape[1]
    mean_glob = glob.mean(dim=0)
    glob_c = glob - mean_glob  # (n, G)
    cov = torch.empty(d_phi, d_phi, dtype=e.dtype, device=e.device)
    cov[:d_tok, :d_tok] = flat.T @ flat
    cross = tok_c.sum(dim=1).T @ glob_c  # (D_tok, G)
    cov[:d_tok, d_tok:] = cross
    cov[d_tok:, :d_tok] = cross.T
    cov[d_tok:, d_tok:] = p * (glob_c.T @ glob_c)
    return torch.cat([mean_tok, mean_glob]), cov / max(n * p - 1, 1)


def top_eigenvectors(cov: Tensor, k: int, solver: PcaSolver = "randomized", *, n_oversamples: int = 10,
                     n_iter: int = 7) -> Tensor:
    """The k leading eigenvectors of a symmetric PSD matrix as rows, sign-normalised.

    ``"exact"``: a full ``eigh``. ``"randomized"``: subspace iteration from a Gaussian start
    of k + ``n_oversamples`` columns (torch's global generator), ``n_iter`` products with
    ``cov`` re-orthonormalised by QR, then Rayleigh–Ritz (Halko, Martinsson and Tropp's
    randomized range finder, the algorithm of the PCA solver the paper's code used); about
    ten times cheaper at D = 2,432, K = 200. Each row's largest entry is made positive
    (sklearn's convention for ``components_``).

    **Shape**: ``cov`` (D, D) -> (k, D), by decreasing eigenvalue.
    """
    size = min(k + n_oversamples, cov.shape[0])
    if solver == "exact" or size == cov.shape[0]:
        basis = None
        _, vecs = torch.linalg.eigh(cov)  # ascending eigenvalues
    else:
        basis = torch.randn(cov.shape[0], size, dtype=cov.dtype, device=cov.device)  # (D, k + p)
        for _ in range(n_iter):
            basis = torch.linalg.qr(cov @ basis).Q
        _, vecs = torch.linalg.eigh(basis.T @ cov @ basis)  # (k + p, k + p)
        vecs = basis @ vecs  # (D, k + p)
    comps = vecs[:, -k:].flip(1).T.contiguous()  # (k, D)
    pivot = comps.abs().argmax(dim=1)
    return comps * torch.sign(comps[torch.arange(k, device=comps.device), pivot])[:, None]


class SoftmaxMixer(nn.Module):
    """``z = LayerNorm(e + MHA(e, e, e))``: multi-head softmax attention (ablation A4).

    **Shape**: (B, P, d) -> (B, P, d).
    """

    def __init__(self, *, d_model: int, n_heads: int, dropout: float) -> None:
        super().__init__()
        self.attention = nn.MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, e: Tensor) -> Tensor:
        """(B, P, d) -> (B, P, d)."""
        return self.norm(e + self.attention(e, e, e, need_weights=False)[0])


def dropout_mask(like: Tensor, p: float) -> Tensor:
    """Inverted-dropout multiplier for ``like``: 0, or 1/(1 − p) with probability 1 − p.

    Drawn as 15-bit lanes of random integers, two elements per 32-bit draw (p rounded to a
    multiple of 1/32768: 0.1 becomes 0.100006), and built with float arithmetic only; on
    CPU this is about three times cheaper than ``bernoulli_`` (one draw and conversion per
    element) and boolean masks.

    **Shape**: ``like`` any -> the same.
    """
    threshold = round(p * 32768)
    n = like.numel()
    exact = like.dtype if like.dtype in (torch.float32, torch.float64) else torch.float32
    bits = torch.empty((n + 1) // 2, dtype=torch.int32, device=like.device).random_()  # 31 random bits
    lanes = bits.view(torch.int16)[:n].view(like.shape).bitwise_and(0x7FFF).to(exact)  # U{0..32767}
    # lane − threshold + 1 is an integer: clamped to [0, 1] it is 1 exactly when lane >= threshold
    mask = lanes.sub_(threshold - 1).clamp_(0.0, 1.0).mul_(32768 / (32768 - threshold))
    return mask.to(like.dtype)


class FeedForward(nn.Module):
    """Post-LN FFN sublayer ``LayerNorm(z + FFN(z))``: Linear(d, d_ffn), ReLU, dropout,
    Linear(d_ffn, d), dropout.

    Dropout multiplies by :func:`dropout_mask` (the FFN's elementwise work was most of a
    training step's cost on CPU).

    **Shape**: (B, P, d) -> (B, P, d).
    """

    def __init__(self, *, d_model: int, d_ffn: int, dropout: float) -> None:
        super().__init__()
        _check(0.0 <= dropout < 1.0, f"dropout must be in [0, 1), however: {dropout=}")
        self.linear1 = nn.Linear(d_model, d_ffn)
        self.linear2 = nn.Linear(d_ffn, d_model)
        self.norm = nn.LayerNorm(d_model)
        self.dropout = dropout

    def forward(self, z: Tensor) -> Tensor:
        """(B, P, d) -> (B, P, d)."""
        h = self.linear1(z)  # (B, P, d_ffn)
        if self.training and self.dropout > 0:
            h = self.linear2(torch.relu(h) * dropout_mask(h, self.dropout))
            h = h * dropout_mask(h, self.dropout)
        else:
            h = self.linear2(torch.relu(h))
        return self.norm(z + h)

    def extra_repr(self) -> str:
        return f"dropout={self.dropout}"


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


def ridge(X: Tensor, y: Tensor, alpha: float) -> tuple[Tensor, Tensor]:
    """Ridge with an unpenalised intercept (sklearn's ``Ridge(alpha)``), in float64.

    **Shape**: ``X`` (n, p), ``y`` (n,) -> coef (p,), intercept ().
    """
    X, y = X.to(torch.float64), y.to(torch.float64)
    x_mean, y_mean = X.mean(dim=0), y.mean()
    Xc = X - x_mean  # (n, p)
    gram = Xc.T @ Xc + alpha * torch.eye(X.shape[1], dtype=X.dtype, device=X.device)
    coef = torch.linalg.solve(gram, Xc.T @ (y - y_mean))  # (p,)
    return coef, y_mean - x_mean @ coef


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
        # P separate Linear(1, d), stored as one (n_in, d) weight and bias with their init U(-1, 1)
        self.tokenizer_weight = nn.Parameter(torch.rand(n_in, d) * 2 - 1)
        self.tokenizer_bias = nn.Parameter(torch.rand(n_in, d) * 2 - 1)
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
        tokens = z[..., None] * self.tokenizer_weight + self.tokenizer_bias  # (B, n_in, d)
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
    """The network a configuration describes."""
    if isinstance(config, FTTConfig):
        return FTTransformer(n_features=n_features, config=config)
    return RegressionBlock(n_features=n_features, config=config, n_train=n_train)


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters (frozen PCA and scaling buffers excluded)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)

