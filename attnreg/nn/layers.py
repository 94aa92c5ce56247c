"""Building blocks shared by the networks: the FFN sublayer, its cheap dropout mask, the ridge.

:class:`FeedForward` is the position-wise sublayer of the Regression Block; :func:`ridge`
sets its warm start.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from attnreg.nn.config import _check

__all__ = ["FeedForward", "dropout_mask", "ridge"]


def dropout_mask(like: Tensor, p: float) -> Tensor:
    """Inverted-dropout multiplier for ``like``: 0, or 1/(1 − p) with probability 1 − p.

    Drawn as 15-bit lanes of random integers, two elements per 32-bit draw (p rounded to a
    multiple of 1/32768: 0.1 becomes 0.100006), and built with float arithmetic only; on
    CPU this is about three times cheaper than ``bernoulli_`` (one draw and conversion per
    element) and boolean masks.

    **Shape**: ``like`` any -> the same.

    Examples
    --------
    >>> mask = dropout_mask(torch.empty(10_000), 0.1)
    >>> sorted({round(v, 4) for v in mask.tolist()})
    [0.0, 1.1111]
    >>> abs(float((mask == 0).float().mean()) - 0.1) < 0.02
    True
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

    Examples
    --------
    >>> ffn = FeedForward(d_model=8, d_ffn=16, dropout=0.1)
    >>> ffn(torch.randn(2, 3, 8)).shape
    torch.Size([2, 3, 8])
    >>> sum(p.numel() for p in ffn.parameters())  # 8·16 + 16 + 16·8 + 8 + LayerNorm 16
    296
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


def ridge(X: Tensor, y: Tensor, alpha: float) -> tuple[Tensor, Tensor]:
    """Ridge with an unpenalised intercept (sklearn's ``Ridge(alpha)``), in float64.

    **Shape**: ``X`` (n, p), ``y`` (n,) -> coef (p,), intercept ().

    Examples
    --------
    >>> X = torch.tensor([[0.0], [1.0], [2.0], [3.0]])
    >>> coef, intercept = ridge(X, 2 * X[:, 0] + 1, alpha=0.0)
    >>> round(float(coef[0]), 6), round(float(intercept), 6)
    (2.0, 1.0)
    """
    X, y = X.to(torch.float64), y.to(torch.float64)
    x_mean, y_mean = X.mean(dim=0), y.mean()
    Xc = X - x_mean  # (n, p)
    gram = Xc.T @ Xc + alpha * torch.eye(X.shape[1], dtype=X.dtype, device=X.device)
    coef = torch.linalg.solve(gram, Xc.T @ (y - y_mean))  # (p,)
    return coef, y_mean - x_mean @ coef
