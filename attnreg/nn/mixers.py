"""The token mixers: the regression mixer ``LayerNorm(e + W·PCA(φ(e)))`` and softmax attention.

Both map tokens (B, P, d) -> (B, P, d) and sit where attention sits in a transformer block.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnreg.nn.config import PcaSolver, _check
from attnreg.nn.features import (
    pair_index,
    pair_products,
    phi_covariance,
    poly_features,
    split_parts,
    top_eigenvectors,
)

__all__ = ["RegressionMixer", "SoftmaxMixer"]


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

    Examples
    --------
    >>> mixer = RegressionMixer(n_tokens=3, d_model=4, poly=True, n_components=10)
    >>> e = torch.randn(20, 3, 4)
    >>> mixer.fit_pca(e)
    >>> mixer(e).shape, mixer.d_phi  # φ has 2·4 + 4·6 = 32 columns
    (torch.Size([20, 3, 4]), 32)
    >>> mixer.naive = True; slow = mixer.mix(e); mixer.naive = False
    >>> torch.allclose(mixer.mix(e), slow, atol=1e-5)
    True
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
        tok, glob = split_parts(e, self.poly)
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


class SoftmaxMixer(nn.Module):
    """``z = LayerNorm(e + MHA(e, e, e))``: multi-head softmax attention (ablation A4).

    **Shape**: (B, P, d) -> (B, P, d).

    Examples
    --------
    >>> SoftmaxMixer(d_model=8, n_heads=2, dropout=0.0)(torch.randn(2, 3, 8)).shape
    torch.Size([2, 3, 8])
    """

    def __init__(self, *, d_model: int, n_heads: int, dropout: float) -> None:
        super().__init__()
        self.attention = nn.MultiheadAttention(d_model, n_heads, dropout=dropout, batch_first=True)
        self.norm = nn.LayerNorm(d_model)

    def forward(self, e: Tensor) -> Tensor:
        """(B, P, d) -> (B, P, d)."""
        return self.norm(e + self.attention(e, e, e, need_weights=False)[0])
