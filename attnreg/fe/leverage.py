"""The fixed effects' own leverage: d'(D'WD)⁺d for rows of level codes.

The hat matrix of the dummy-variable regression on [X D] is the sum of the projection on
W^½ D and that on the residualised W^½ X̃ (orthogonal to it), so its diagonal is
h_i = w_i d_i'(D'WD)⁺d_i + h̃_i; the first term is also the variance factor of the fixed
effects' part of a prediction, Var(d₀'α̂) = σ² d₀'(D'WD)⁺d₀. One fixed effect: 1/W_g, the
inverse of the level's weight. Two: by the same theorem, the projection on [D₁ D₂] is that
on D₁ plus that on D₂ residualised on D₁, whose Gram matrix is the Schur complement
S = D₂'WD₂ − B'W₁⁻¹B (B = D₁'WD₂, W₁ the level weights of D₁) of the fixed effect with fewer
levels: d'(D'WD)⁺d = 1/W_a + r'S⁺r with r = e_b − (W₁⁻¹B)[a], computed with one sparse
factorisation of the grounded S (:class:`attnreg.fe.solve.LevelSolver`), one solve per rest
level involved. More: the same with the Schur complement on all but the largest fixed
effect's levels (conjugate gradients on D'WD, one solve per distinct combination of levels,
when nested fixed effects leave it singular). Never a dense G × G matrix.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.fe.demean import FixedEffects
from attnreg.fe.solve import LevelSolver

__all__ = ["level_quadratic"]


def level_quadratic(fe: FixedEffects, weights: FloatArray | None,
                    codes: Sequence[IntArray], *,
                    solver: LevelSolver | None = None) -> FloatArray:
    """d'(D'WD)⁺d for each row of ``codes`` (one code array per fixed effect; −1: unseen).

    Parameters
    ----------
    fe : FixedEffects
        The fit's fixed effects (D).
    weights : ndarray, shape (n_obs,), or None
        The fit's prior weights (W).
    codes : sequence of ndarray of int, each shape (m,)
        The level code of each row in each fixed effect.
    solver : LevelSolver, optional
        A solver of ``fe`` and ``weights`` already built (its factor is reused).

    Returns
    -------
    ndarray, shape (m,)
        NaN where a code is −1.

    Examples
    --------
    >>> fe = FixedEffects.from_columns([[0, 0, 1], [0, 1, 1]])
    >>> np.round(level_quadratic(fe, None, [np.array([0, -1]), np.array([1, 0])]), 12)
    array([ 1., nan])
    """
    solver = LevelSolver(fe, weights) if solver is None else solver
    stacked = np.column_stack([np.asarray(c, dtype=np.int64) for c in codes])
    unseen = (stacked < 0).any(axis=1)
    out = np.full(stacked.shape[0], np.nan)
    if (~unseen).any():
        out[~unseen] = solver.quadratic([stacked[~unseen, k] for k in range(stacked.shape[1])])
    return out
