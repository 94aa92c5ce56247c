"""The fixed effects' own leverage: d'(D'WD)⁺d for rows of level codes.

The hat matrix of the dummy-variable regression on [X D] is the sum of the projection on
W^½ D and that on the residualised W^½ X̃ (orthogonal to it), so its diagonal is
h_i = w_i d_i'(D'WD)⁺d_i + h̃_i; the first term is also the variance factor of the fixed
effects' part of a prediction, Var(d₀'α̂) = σ² d₀'(D'WD)⁺d₀. One fixed effect: 1/W_g, the
inverse of the level's weight. Two: by the same theorem, the projection on [D₁ D₂] is that
on D₁ plus that on D₂ residualised on D₁, whose Gram matrix is the Schur complement
S = D₂'WD₂ − B'W₁⁻¹B (B = D₁'WD₂, W₁ the level weights of D₁) of the fixed effect with fewer
levels: d'(D'WD)⁺d = 1/W_a + r'S⁺r with r = e_b − (W₁⁻¹B)[a], so only the smaller fixed
effect's levels (at most :data:`MAX_DENSE_LEVELS`) are decomposed. More: from the
eigendecomposition of the whole G × G matrix D'WD (at most :data:`MAX_DENSE_LEVELS` levels).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.linalg as sla

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import OptionError
from attnreg.fe.demean import FixedEffects

__all__ = ["MAX_DENSE_CELLS", "MAX_DENSE_LEVELS", "level_quadratic", "pinv_psd"]

#: the largest number of levels (all fixed effects together, beyond the first's when there
#: are several) for which the leverage of the fixed effects is computed (a dense G × G
#: eigendecomposition)
MAX_DENSE_LEVELS = 6000
#: the largest (levels of one) × (levels of the other) of two fixed effects for their leverage
#: (a dense matrix of the weighted shares: 400 MB)
MAX_DENSE_CELLS = 50_000_000


def level_quadratic(fe: FixedEffects, weights: FloatArray | None,
                    codes: Sequence[IntArray], *, what: str = "this") -> FloatArray:
    """d'(D'WD)⁺d for each row of ``codes`` (one code array per fixed effect; −1: unseen).

    Parameters
    ----------
    fe : FixedEffects
        The fit's fixed effects (D).
    weights : ndarray, shape (n_obs,), or None
        The fit's prior weights (W).
    codes : sequence of ndarray of int, each shape (m,)
        The level code of each row in each fixed effect.
    what : str
        What needs it, for the error message.

    Returns
    -------
    ndarray, shape (m,)
        NaN where a code is −1.

    Raises
    ------
    OptionError
        Several fixed effects with more than :data:`MAX_DENSE_LEVELS` levels in all.

    Examples
    --------
    >>> fe = FixedEffects.from_columns([[0, 0, 1]])
    >>> level_quadratic(fe, None, [np.array([0, 1])]).tolist()
    [0.5, 1.0]
    """
    w = np.ones(fe.n_obs) if weights is None else np.asarray(weights, dtype=np.float64)
    stacked = np.column_stack([np.asarray(c, dtype=np.int64) for c in codes])
    unseen = (stacked < 0).any(axis=1)
    safe = np.where(stacked < 0, 0, stacked)
    level_weight = np.asarray(fe.dummies.T @ w).ravel()
    if len(fe.codes) == 1:
        out = 1.0 / level_weight[safe[:, 0]]
        return np.where(unseen, np.nan, out)
    if len(fe.codes) == 2:
        return np.where(unseen, np.nan, _two_way(fe, w, level_weight, safe, what))
    G = int(fe.offsets[-1])
    if G > MAX_DENSE_LEVELS:
        raise OptionError(f"{what} needs the leverage of the fixed effects, computed for at "
                          f"most {MAX_DENSE_LEVELS} levels in all, however the fixed effects "
                          f"have {G}; use vcov='classical', 'HC0', 'HC1' or 'cluster'")
    D = fe.dummies
    A = np.asarray((D.T @ (D.multiply(w[:, None]))).todense())  # D'WD, G × G
    pinv = pinv_psd(A)
    idx = safe + fe.offsets[:-1][None, :]  # (m, K) positions among the G levels
    out = np.zeros(stacked.shape[0])
    for k in range(idx.shape[1]):
        for j in range(idx.shape[1]):
            out += pinv[idx[:, k], idx[:, j]]
    return np.where(unseen, np.nan, out)


def pinv_psd(A: FloatArray) -> FloatArray:
    """Pseudo-inverse of a symmetric positive semi-definite matrix (eigenvalues below
    n · eps of the largest are zero)."""
    vals, vecs = sla.eigh(A)
    keep = vals > vals.max(initial=0.0) * A.shape[0] * np.finfo(np.float64).eps
    return np.asarray((vecs[:, keep] / vals[keep]) @ vecs[:, keep].T)


def _two_way(fe: FixedEffects, w: FloatArray, level_weight: FloatArray, codes: IntArray,
             what: str) -> FloatArray:
    """d'(D'WD)⁺d for two fixed effects through the Schur complement of the smaller one."""
    big, small = (0, 1) if fe.n_levels[0] >= fe.n_levels[1] else (1, 0)
    g_big, g_small = fe.n_levels[big], fe.n_levels[small]
    if g_small > MAX_DENSE_LEVELS or g_big * g_small > MAX_DENSE_CELLS:
        raise OptionError(f"{what} needs the leverage of the fixed effects, computed when the "
                          f"smaller of two has at most {MAX_DENSE_LEVELS} levels, however "
                          f"they have {fe.n_levels}; use vcov='classical', 'HC0', 'HC1' or "
                          "'cluster'")
    o = fe.offsets
    w_big = level_weight[o[big]:o[big + 1]]
    w_small = level_weight[o[small]:o[small + 1]]
    B = np.zeros((g_big, g_small))  # D_big' W D_small (dense: g_small columns)
    np.add.at(B, (fe.codes[big], fe.codes[small]), w)
    R = B / w_big[:, None]  # each big level's weighted share in each small level
    S = np.diag(w_small) - B.T @ R
    S_pinv = pinv_psd((S + S.T) / 2.0)
    T = R @ S_pinv  # (g_big, g_small)
    quad = np.einsum("ij,ij->i", T, R)
    a, b = codes[:, big], codes[:, small]
    return np.asarray(1.0 / w_big[a] + S_pinv[b, b] - 2.0 * T[a, b] + quad[a])
