"""The fixed effects themselves: connected components, redundant levels and fixest's
normalisation of the estimated effects.

Only differences of fixed effects are identified when there are several: adding t to every
level of the first fixed effect and subtracting it from every level of another leaves D α
unchanged (within each connected component of the levels' graph, for the second). fixest
reports one solution, with a reference level set to zero in each fixed effect after the first
(one per connected component for the second); :func:`normalise` gives that solution, and
:func:`redundant_levels` counts the references, the parameters the fixed effects do not add to
the model's degrees of freedom.
"""

from __future__ import annotations

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.fe.demean import FixedEffects

__all__ = ["components", "normalise", "redundant_levels"]


def components(fe: FixedEffects) -> tuple[int, IntArray]:
    """Connected components of the first two fixed effects' levels (levels joined by rows).

    Returns
    -------
    n_components : int
    labels : ndarray of int, shape (n_levels[1],)
        The component of each level of the second fixed effect.

    Examples
    --------
    >>> fe = FixedEffects.from_columns([[0, 0, 1, 2, 2], [0, 1, 1, 2, 2]])
    >>> components(fe)[0]
    2
    """
    if len(fe.codes) < 2:
        raise ValueError("components need two fixed effects")
    n, labels = fe.pair_components(0, 1)
    return n, labels[fe.n_levels[0]:]


def redundant_levels(fe: FixedEffects) -> int:
    """Levels the fixed effects do not add as parameters: the connected components of the
    first two (exact), plus one for each further fixed effect (fixest's default, exact for
    fixed effects that do not share information beyond a common constant); 0 for one.

    Examples
    --------
    >>> redundant_levels(FixedEffects.from_columns([[0, 0, 1, 2, 2], [0, 1, 1, 2, 2]]))
    2
    """
    if len(fe.codes) < 2:
        return 0
    return components(fe)[0] + len(fe.codes) - 2


def normalise(fe: FixedEffects, effects: FloatArray) -> FloatArray:
    """The effects with fixest's references: in every fixed effect after the first, its first
    level (by code) is zero, per connected component for the second; the first absorbs the
    difference, so that D α is unchanged.

    Parameters
    ----------
    fe : FixedEffects
    effects : ndarray, shape (n_levels_total,) or (n_levels_total, n_cols)
        Any solution, e.g. :attr:`attnreg.fe.demean.Demeaned.effects`.

    Returns
    -------
    ndarray, same shape as ``effects``
    """
    a = np.array(effects, dtype=np.float64, copy=True)
    flat = a.ndim == 1
    a = a[:, None] if flat else a
    if len(fe.codes) >= 2:
        o = fe.offsets
        first, second = a[o[0]:o[1]], a[o[1]:o[2]]
        _, labels = components(fe)
        ref = np.full(labels.max() + 1, -1)
        ref[labels[::-1]] = np.arange(labels.size)[::-1]  # the first level of each component
        shift = second[ref[labels]]  # (G2, n_cols): each level's component reference
        second -= shift
        comp_of_first = np.full(fe.n_levels[0], -1)
        comp_of_first[fe.codes[0]] = labels[fe.codes[1]]
        first += shift[ref][comp_of_first]  # each first-FE level: its component's shift
        for k in range(2, len(fe.codes)):
            block = a[o[k]:o[k + 1]]
            t = block[0].copy()
            block -= t
            first += t
    return a[:, 0] if flat else a
