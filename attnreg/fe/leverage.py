"""The fixed effects' own leverage: d'(D'WD)⁺d for rows of level codes.

The hat matrix of the dummy-variable regression on [X D] is the sum of the projection on
W^½ D and that on the residualised W^½ X̃ (orthogonal to it), so its diagonal is
h_i = w_i d_i'(D'WD)⁺d_i + h̃_i; the first term is also the variance factor of the fixed
effects' part of a prediction, Var(d₀'α̂) = σ² d₀'(D'WD)⁺d₀. One fixed effect: 1/W_g, the
inverse of the level's weight. Several: from the eigendecomposition of the G × G matrix D'WD
(dense, so at most :data:`MAX_DENSE_LEVELS` levels in all).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.linalg as sla

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import OptionError
from attnreg.fe.demean import FixedEffects

__all__ = ["MAX_DENSE_LEVELS", "level_quadratic"]

#: the largest number of levels (all fixed effects together, beyond the first's when there
#: are several) for which the leverage of the fixed effects is computed (a dense G × G
#: eigendecomposition)
MAX_DENSE_LEVELS = 6000


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
    G = int(fe.offsets[-1])
    if G > MAX_DENSE_LEVELS:
        raise OptionError(f"{what} needs the leverage of the fixed effects, computed for at "
                          f"most {MAX_DENSE_LEVELS} levels in all, however the fixed effects "
                          f"have {G}; use vcov='classical', 'HC0', 'HC1' or 'cluster'")
    D = fe.dummies
    A = np.asarray((D.T @ (D.multiply(w[:, None]))).todense())  # D'WD, G × G
    vals, vecs = sla.eigh(A)
    keep = vals > vals.max() * G * np.finfo(np.float64).eps
    pinv = (vecs[:, keep] / vals[keep]) @ vecs[:, keep].T
    idx = safe + fe.offsets[:-1][None, :]  # (m, K) positions among the G levels
    out = np.zeros(stacked.shape[0])
    for k in range(idx.shape[1]):
        for j in range(idx.shape[1]):
            out += pinv[idx[:, k], idx[:, j]]
    return np.where(unseen, np.nan, out)
