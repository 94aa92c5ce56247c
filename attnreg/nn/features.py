"""The degree-2 cross-feature map φ of the Regression Block and its frozen PCA.

φ(e)_s = [e_s, e_s⊙e_s − 1, {e_i⊙e_j}_{i≤j}] for tokens e (B, P, d): a per-token part and a
global part shared by the P tokens of a row. :func:`phi_covariance` and
:func:`top_eigenvectors` fit the PCA that :class:`~attnreg.nn.mixers.RegressionMixer` freezes.
"""

from __future__ import annotations

import torch
from torch import Tensor

from attnreg.nn.config import PcaSolver

__all__ = ["pair_index", "pair_products", "phi_covariance", "poly_features", "split_parts",
           "top_eigenvectors"]


def pair_index(n_tokens: int, device: torch.device | None = None) -> tuple[Tensor, Tensor]:
    """Index pairs (i, j), i ≤ j, in row-major order: (0,0), (0,1), …, (P−1,P−1).

    Examples
    --------
    >>> i, j = pair_index(3)
    >>> list(zip(i.tolist(), j.tolist()))
    [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]
    """
    ij = torch.triu_indices(n_tokens, n_tokens, device=device)  # (2, P(P+1)/2)
    return ij[0], ij[1]


def poly_features(e: Tensor) -> Tensor:
    """The degree-2 cross-feature map φ, materialised (the reference implementation).

    **Shape**: ``e`` (B, P, d) -> (B, P, 2d + d·P(P+1)/2). Token s gets
    ``[e_s, e_s⊙e_s − 1, {e_i⊙e_j}_{i≤j}]``; the last block is the same for every token.

    Examples
    --------
    >>> e = torch.randn(2, 3, 4)  # B=2 rows, P=3 tokens, d=4
    >>> poly_features(e).shape  # 2·4 + 4·3·4/2 = 32
    torch.Size([2, 3, 32])
    """
    n, p, _ = e.shape
    i, j = pair_index(p, e.device)
    g = (e[:, i] * e[:, j]).flatten(1)  # (B, d·P(P+1)/2)
    return torch.cat([e, e * e - 1.0, g[:, None, :].expand(n, p, -1)], dim=-1)


def pair_products(e: Tensor) -> Tensor:
    """All products e_i⊙e_j, i ≤ j, row-major: (B, P, d) -> (B, P(P+1)/2·d).

    Built from P broadcast products of slices, cheaper forward and backward than gathering
    both factors with an index (as :func:`poly_features` does).

    Examples
    --------
    >>> e = torch.randn(2, 3, 4)
    >>> torch.allclose(pair_products(e), poly_features(e)[:, 0, 8:])
    True
    """
    p = e.shape[1]
    return torch.cat([e[:, i:i + 1] * e[:, i:] for i in range(p)], dim=1).flatten(1)


def split_parts(e: Tensor, poly: bool) -> tuple[Tensor, Tensor | None]:
    """The per-token part of φ, (B, P, 2d) or (B, P, d), and its global part (B, G) or None.

    Examples
    --------
    >>> tok, glob = split_parts(torch.randn(2, 3, 4), poly=True)
    >>> tok.shape, glob.shape
    (torch.Size([2, 3, 8]), torch.Size([2, 24]))
    """
    if not poly:
        return e, None
    return torch.cat([e, e * e - 1.0], dim=-1), pair_products(e)


def phi_covariance(e: Tensor, *, poly: bool, naive: bool = False) -> tuple[Tensor, Tensor]:
    """Mean and covariance of φ over all n·P tokens, in the dtype of ``e``.

    The fast path assembles the covariance blockwise: the global part of φ is shared by
    the P tokens of a row, so its block is one product over rows instead of over tokens.
    ``naive=True`` materialises the (n·P, D) sample matrix, as the paper's code.

    **Shape**: ``e`` (n, P, d) -> mean (D,), covariance (D, D).

    Examples
    --------
    >>> e = torch.randn(50, 3, 4, dtype=torch.float64)
    >>> mean, cov = phi_covariance(e, poly=True)
    >>> mean.shape, cov.shape
    (torch.Size([32]), torch.Size([32, 32]))
    >>> torch.allclose(cov, phi_covariance(e, poly=True, naive=True)[1])
    True
    """
    n, p, _ = e.shape
    if naive:
        phi = (poly_features(e) if poly else e).reshape(n * p, -1)  # (nP, D)
        mean = phi.mean(dim=0)
        phi = phi - mean
        return mean, phi.T @ phi / max(n * p - 1, 1)
    tok, glob = split_parts(e, poly)  # (n, P, D_tok), (n, G)
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

    Examples
    --------
    >>> cov = torch.diag(torch.tensor([1.0, 5.0, 3.0], dtype=torch.float64))
    >>> top_eigenvectors(cov, 2, "exact")
    tensor([[0., 1., 0.],
            [0., 0., 1.]], dtype=torch.float64)
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
