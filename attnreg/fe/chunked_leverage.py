"""The fixed effects' own leverage of a chunked fit, per combination of levels.

The hat value of row i of the dummy-variable regression is h_i = h̃_i + w_i d_i'(D'WD)⁺d_i
(:mod:`attnreg.fe.leverage`): h̃_i that of the residualised design, which every pass over the
chunks computes from the fit's factors, and the fixed effects' part, which depends on the row
only through its combination c of levels (d_i = d_c) and its weight. D'WD = Σ_c d_c d_c' W_c
(W_c = Σ_{i∈c} w_i) is the Gram matrix of the combinations of pass A's table weighted by W_c,
so q_c = d_c'(D'WD)⁺d_c is computed once per combination, by the in-memory fit's exact solver
(:class:`attnreg.fe.solve.LevelSolver`) on that table, for any number of fixed effects: no
pass over the rows needs the others. A row of a level with a single row has h_i = 1 (NaN in
:func:`combination_leverage`, as :class:`~attnreg.large.columns.ChunkDesign` reads it).

Examples
--------
>>> import numpy as np
>>> from attnreg.fe.demean import FixedEffects
>>> fe = FixedEffects.from_columns([[0, 0, 1], [0, 1, 1]])  # three combinations
>>> np.round(combination_leverage(fe, np.array([2.0, 1.0, 1.0]), np.array([2, 1, 1])), 12)
array([0.5, 1. , nan])
"""

from __future__ import annotations

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.fe.demean import FixedEffects
from attnreg.fe.solve import LevelSolver

__all__ = ["combination_leverage", "single_level_combinations"]


def single_level_combinations(fe: FixedEffects, counts: IntArray) -> FloatArray:
    """Whether each combination has a level, in some fixed effect, with a single row.

    Parameters
    ----------
    fe : FixedEffects
        The fixed effects over the combinations (codes per combination).
    counts : ndarray of int, shape (n_combinations,)
        Rows of each combination.

    Returns
    -------
    ndarray of bool, shape (n_combinations,)
    """
    n = np.asarray(counts, dtype=np.float64)
    single = np.zeros(n.size, dtype=bool)
    for code, g in zip(fe.codes, fe.n_levels, strict=True):
        single |= np.bincount(code, weights=n, minlength=g)[code] == 1
    return single


def combination_leverage(fe: FixedEffects, weights: FloatArray, counts: IntArray, *,
                         solver: LevelSolver | None = None) -> FloatArray:
    """q_c = d_c'(D'WD)⁺d_c of each combination of levels (module notes).

    Parameters
    ----------
    fe : FixedEffects
        The fixed effects over the combinations in the fit (codes per combination).
    weights : ndarray, shape (n_combinations,)
        Σ w of each combination's rows (their count without weights).
    counts : ndarray of int, shape (n_combinations,)
        Rows of each combination.
    solver : LevelSolver, optional
        The solver of ``fe`` and ``weights`` already built.

    Returns
    -------
    ndarray, shape (n_combinations,)
        A row's leverage on the fixed effects is its weight times q_c; NaN where a level of
        the combination has a single row (its hat value is exactly 1).
    """
    solver = LevelSolver(fe, weights) if solver is None else solver
    q = np.asarray(solver.quadratic(fe.codes), dtype=np.float64)
    return np.where(single_level_combinations(fe, counts), np.nan, q)
