"""The rows of a GLM with absorbed fixed effects sorted by its largest fixed effect, and back.

The scoring steps run on the rows in the order of the largest fixed effect's levels (its level
sums and gathers then read memory in order); :func:`gathered` puts X in that order, into the
array the steps stack [z, X] in, and :func:`in_rows` puts the fit's per-row arrays back.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.fe.demean import FixedEffects
from attnreg.fe.reweight import ReweightedDemeaner
from attnreg.fe.reweight_pattern import counting_order

if TYPE_CHECKING:
    from attnreg.glm.fe_irls import FeIrlsFit

__all__ = ["by_largest", "gathered", "in_rows"]

#: bytes of rows gathered at a time
GATHER_BYTES = 1 << 20


def by_largest(fe: FixedEffects) -> IntArray | None:
    """The stable order of the rows by the level of the fixed effect with the most levels,
    where the exact solve applies and the rows are not in that order already; else None."""
    if not ReweightedDemeaner.applies(fe):
        return None
    codes = fe.codes[int(np.argmax(fe.n_levels))]
    if bool(np.all(codes[1:] >= codes[:-1])):
        return None
    return counting_order(codes, max(fe.n_levels))


def gathered(X: FloatArray, order: IntArray) -> FloatArray:
    """[·, X[order]], shape (n, 1 + k), C order: X's rows in ``order`` in the last columns of
    the array the steps stack z and X in (:meth:`attnreg.glm.fe_steps.Steps.stacked`);
    gathered a block of rows at a time (no sorted copy of X besides)."""
    out = np.empty((X.shape[0], X.shape[1] + 1))
    _rows_into(out[:, 1:], X, order)
    return out


def _rows_into(out: FloatArray, X: FloatArray, index: IntArray) -> None:
    """out[:] = X[index], shapes (n, k), a megabyte of rows at a time (no copy of X[index]
    besides)."""
    step = max(1, GATHER_BYTES // (8 * max(X.shape[1], 1)))
    for lo in range(0, X.shape[0], step):
        out[lo:lo + step] = X[index[lo:lo + step]]


def in_rows(fit: FeIrlsFit, order: IntArray, stack: FloatArray) -> FeIrlsFit:
    """``fit`` of the rows in ``order``, its per-row arrays back in the rows' own order; X̃
    into the last columns of ``stack`` (the sorted [z, X] the steps are done with: memory
    already in use, not a fresh array), a block of rows at a time."""
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size)

    def back(v: FloatArray) -> FloatArray:  # a gather: twice as fast as the scatter
        return np.take(v, inverse, axis=0)

    Xt = fit.demeaned_x
    if stack.shape == (Xt.shape[0], Xt.shape[1] + 1) and not np.may_share_memory(Xt, stack):
        _rows_into(stack[:, 1:], Xt, inverse)
        Xt = stack[:, 1:]
    else:
        Xt = back(Xt)
    return dataclasses.replace(fit, eta=back(fit.eta), mu=back(fit.mu),
                               working_weights=back(fit.working_weights), demeaned_x=Xt)
