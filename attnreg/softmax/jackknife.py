"""Jackknife+ prediction intervals of softmax attention regression, with the metric held fixed.

Jackknife+ (Barber, Candès, Ramdas & Tibshirani 2021, *Ann. Statist.* 49(1)) needs, for
every training row i, the model fitted without row i: its prediction ŷ₋ᵢ(x) at a new row
and its residual Rᵢ = |yᵢ − ŷ₋ᵢ(xᵢ)|. The interval at level 1 − α is

    [ q⁻_α{ ŷ₋ᵢ(x) − Rᵢ },  q⁺_α{ ŷ₋ᵢ(x) + Rᵢ } ]

with q⁺ the ⌈(1 − α)(n + 1)⌉-th smallest of the n values and q⁻ the ⌊α(n + 1)⌋-th smallest
(±∞ when that rank falls outside 1..n).

**What "without row i" means here.** Per head m the prediction is a softmax average
h_m(x) = Σ_j p_mj(x) v_j. Removing key i renormalises the head's weights over j ≠ i, so

    h_m⁽⁻ⁱ⁾(x) = (Σ_{j≠i} p_mj v_j) / (1 − p_mi) = (h_m(x) − p_mi v_i) / (1 − p_mi),

and only then are the heads mixed: ŷ₋ᵢ = b₋ᵢ(x) + Σ_m α_m h_m⁽⁻ⁱ⁾(x). (Renormalising the
*combined* weights w = Σ α_m p_m instead, (Σ_{j≠i} w_j v_j)/(1 − w_i), is a different
number unless M = 1; the per-head form is the one the leave-one-out training of the fit
uses.) With ``value="ridge"`` the ridge base is also refitted without row i, exactly, by
Sherman–Morrison: β₋ᵢ = β + δᵢ, δᵢ = −A⁻¹x̃ᵢ eᵢ / (1 − hᵢ), A = X̃'X̃ + λI, so
b₋ᵢ(x) = b(x) + x̃'δᵢ and the attended residuals become v_j − x̃_j'δᵢ.

**Held fixed (fitted with row i):** the metric factors L_m and the mixture α (learned on
the train part of the validation split, which contains row i for most i, or on all rows
with ``refit=True``), the penalty, stopping point and restart chosen on the validation part,
the ridge penalty (chosen by leave-one-out on all rows) and the standardisation (means and
standard deviations of all rows), and for a top-k fit (``keys="top_k"``) each query's
neighbour set, found with every row present (leaving row i out drops it from the set rather
than letting the next nearest row in). A full jackknife+ would refit all of them n times. The interval is
therefore "jackknife+ with the metric held fixed": its finite-sample guarantee (coverage
≥ 1 − 2α) holds only if refitting the metric would not change it; the residuals Rᵢ are
leave-one-out in the values and the ridge base, but not in Ω.

Numerics: for the key with the largest score in a head, 1 − p_mi may be tiny; its
leave-out average is recomputed directly from the other keys (shifted by their own maximum),
so no difference of nearly equal sums is formed.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import torch

from attnreg._typing import FloatArray
from attnreg.softmax.options import choose_chunk

__all__ = ["INTERVALS", "JackknifePlus", "interval_frame", "jackknife_plus", "leave_out_predictions",
           "ridge_loo_shifts", "training_residuals"]

#: the ``interval`` choices of :meth:`attnreg.softmax.SoftmaxResults.predict`
INTERVALS = ("none", "jackknife+")


def ridge_loo_shifts(fit: Any) -> FloatArray:
    """δᵢ = β₋ᵢ − β of the ridge base (intercept first), standardised scale, shape (N, P + 1).

    Zeros for ``value="y"`` (no base). Exact (Sherman–Morrison), by one solve with A.
    """
    z = np.asarray(fit.X_train, dtype=np.float64)
    n, p = z.shape
    if fit.ridge_coef is None:
        return np.zeros((n, p + 1))
    xt = np.column_stack([np.ones(n), z])
    a = xt.T @ xt + fit.ridge_penalty * np.eye(p + 1)
    g = np.linalg.solve(a, xt.T)  # (P+1, N): A⁻¹ x̃_i by column
    hat = np.einsum("ij,ji->i", xt, g)
    return -(g * (np.asarray(fit.values) / (1.0 - hat))[None, :]).T


def _top_exact(s: torch.Tensor, top: torch.Tensor, v: torch.Tensor, xt: torch.Tensor,
               delta: torch.Tensor) -> torch.Tensor:
    """Per head and query, the leave-out average without the top key, computed directly.

    s (M, c, N) scores; top (M, c) argmax; returns (M, c): h⁽⁻ᵗᵒᵖ⁾ − (Σ p̃ x̃)'δ_top.
    """
    s2 = s.scatter(2, top.unsqueeze(2), -math.inf)
    e2 = torch.exp(s2 - s2.amax(dim=2, keepdim=True))
    den = e2.sum(dim=2)
    h = (e2 @ v) / den
    sx = (e2 @ xt) / den.unsqueeze(2)  # (M, c, P+1)
    return h - (sx * delta[top]).sum(dim=2)


def leave_out_predictions(fit: Any, zq: FloatArray, delta: FloatArray,
                          chunk_size: int | None = None) -> Iterator[tuple[int, int, FloatArray]]:
    """Yield ``(start, stop, L)`` with L[j, i] = ŷ₋ᵢ(x_j) on the standardised scale, (c, N).

    Parameters
    ----------
    fit : SoftmaxFit
    zq : (J, P) standardised query rows (every key is visible: no self-masking).
    delta : (N, P + 1) ridge leave-one-out shifts (:func:`ridge_loo_shifts`).
    chunk_size : query rows per block (None: automatic).
    """
    factors, alpha, keys, values = fit._tensors()
    dev = keys.device
    v = values
    xt = torch.cat([torch.ones((keys.shape[0], 1), dtype=keys.dtype, device=dev), keys], 1)
    d = torch.as_tensor(delta, device=dev)
    xd = (xt * d).sum(dim=1)  # x̃_i'δ_i, (N,)
    zk, bias = fit.row_keys(factors)  # a landmark fit: each row scored at its centre
    q_all = torch.as_tensor(zq, device=dev)
    chunk = choose_chunk(chunk_size, fit.n_heads, zq.shape[0], keys.shape[0], 8 * 8)  # ~8 blocks
    with torch.no_grad():
        for a in range(0, zq.shape[0], chunk):
            q = q_all[a : a + chunk]
            s = torch.matmul(torch.matmul(q.unsqueeze(0), factors), zk.transpose(1, 2))
            if bias is not None:
                s = s + bias.unsqueeze(1)
            allowed = fit.key_mask(q)  # a top-k fit: the query's neighbours, held fixed
            if allowed is not None:
                s = s.masked_fill(~allowed.unsqueeze(0), -math.inf)
            mx, top = s.max(dim=2)
            e = torch.exp(s - mx.unsqueeze(2))  # (M, c, N)
            den = e.sum(dim=2, keepdim=True) - e  # Σ_{j≠i} e_j ≥ e_top = 1 for i ≠ top
            num = (e @ v).unsqueeze(2) - e * v
            corr = (e @ xt) @ d.T - e * xd  # Σ_{j≠i} e_j x̃_j'δ_i
            att = (num - corr) / den
            att.scatter_(2, top.unsqueeze(2), _top_exact(s, top, v, xt, d).unsqueeze(2))
            base = (torch.as_tensor(fit._base(zq[a : a + chunk]), device=dev).unsqueeze(1)
                    + torch.cat([torch.ones_like(q[:, :1]), q], 1) @ d.T)
            yield a, a + q.shape[0], (base + torch.einsum("m,mcn->cn", alpha, att)).cpu().numpy()


def training_residuals(fit: Any, chunk_size: int | None = None) -> FloatArray:
    """Rᵢ = |yᵢ − ŷ₋ᵢ(xᵢ)| on the original scale, shape (N,)."""
    z = np.asarray(fit.X_train, dtype=np.float64)
    delta = ridge_loo_shifts(fit)
    ys = np.asarray(fit.values) + fit._base(z)
    loo = np.empty(z.shape[0])
    for a, b, block in leave_out_predictions(fit, z, delta, chunk_size):
        loo[a:b] = block[np.arange(b - a), np.arange(a, b)]
    return fit.y_scale * np.abs(ys - loo)


@dataclass(frozen=True)
class JackknifePlus:
    """What jackknife+ intervals (metric held fixed) of one softmax fit need; build with :meth:`of`.

    Attributes
    ----------
    fit : SoftmaxFit
    delta : (N, P + 1) ridge leave-one-out shifts (:func:`ridge_loo_shifts`).
    resid : (N,) leave-one-out residuals Rᵢ, original scale (:func:`training_residuals`).
    chunk_size : query rows per block (None: automatic).
    """

    fit: Any = field(repr=False)
    delta: FloatArray = field(repr=False)
    resid: FloatArray = field(repr=False)
    chunk_size: int | None = None

    @classmethod
    def of(cls, fit: Any, chunk_size: int | None = None) -> JackknifePlus:
        """The shifts and residuals of ``fit`` (one pass over the N × N training weights)."""
        return cls(fit, ridge_loo_shifts(fit), training_residuals(fit, chunk_size), chunk_size)

    def bounds(self, X_new: FloatArray, level: float) -> tuple[FloatArray, FloatArray]:
        """Lower and upper bounds (J,) on the original scale for rows ``X_new`` (J, P)."""
        fit = self.fit
        n = self.resid.shape[0]
        alpha = 1.0 - level
        k_hi = math.ceil((1.0 - alpha) * (n + 1) - 1e-9)  # guard 0.9 * 101 = 90.9000001
        k_lo = math.floor(alpha * (n + 1) + 1e-9)
        z = fit._standardise(X_new)
        lwr = np.full(z.shape[0], -np.inf)
        upr = np.full(z.shape[0], np.inf)
        for a, b, block in leave_out_predictions(fit, z, self.delta, self.chunk_size):
            pred = fit.y_mean + fit.y_scale * block  # (c, N), original scale
            if k_hi <= n:
                upr[a:b] = np.partition(pred + self.resid, k_hi - 1, axis=1)[:, k_hi - 1]
            if k_lo >= 1:
                lwr[a:b] = np.partition(pred - self.resid, k_lo - 1, axis=1)[:, k_lo - 1]
        return lwr, upr


def jackknife_plus(fit: Any, X_new: FloatArray, level: float,
                   chunk_size: int | None = None) -> tuple[FloatArray, FloatArray]:
    """Jackknife+ bounds (metric held fixed) of a :class:`SoftmaxFit` at rows ``X_new`` (J, P).

    Returns
    -------
    lwr, upr : (J,) on the original scale; ±inf when n is too small for ``level``
        (⌈level·(n + 1)⌉ > n).
    """
    return JackknifePlus.of(fit, chunk_size).bounds(X_new, level)


def interval_frame(res: Any, newdata: Any, level: float) -> pd.DataFrame:
    """``fit``, ``lwr``, ``upr`` of :meth:`SoftmaxResults.predict` with ``interval="jackknife+"``.

    Rows of ``newdata`` with missing values give NaN throughout; ``newdata=None`` treats
    the training rows as new rows (every key visible, as for a future response there).
    """
    X, labels = res._query(newdata)
    ok = np.isfinite(X).all(axis=1)
    out = np.full((X.shape[0], 3), np.nan)
    if ok.any():
        rows = X if ok.all() else X[ok]
        out[ok, 0] = res.fit.predict(rows)
        out[ok, 1], out[ok, 2] = res._jackknife.bounds(rows, level)
    return pd.DataFrame(out, index=labels, columns=["fit", "lwr", "upr"])
