"""The extended-precision gradient of the chunked OLS refinement, one chunk at a time.

Each refinement step (:func:`attnreg.large.refine.refine`) is one pass computing
g = Aᵀ W (y − A c) in ``np.longdouble``; a chunk's :class:`GradientPart` holds its share and
parts merge by addition (on dask workers, in a tree).

Examples
--------
>>> import numpy as np
>>> a = GradientPart(np.ones(2, dtype=np.longdouble), 3)
>>> b = a.merge(a)
>>> b.q.astype(float).tolist(), b.n_obs
([2.0, 2.0], 6)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray, IntArray
from attnreg.large.accumulate import chunk_design
from attnreg.large.spec import ChunkSpec

__all__ = ["GradientPart", "centred_gradient_part", "gradient_part"]


@dataclass(frozen=True)
class GradientPart:
    """Σ Aᵀ (√w y − A c) over some rows, in extended precision (A = √w [1, X_kept])."""

    q: Any  # ndarray of np.longdouble, shape (len(cols),)
    n_obs: int = 0

    def merge(self, other: GradientPart) -> GradientPart:
        """The sum over both parts' rows."""
        return GradientPart(self.q + other.q, self.n_obs + other.n_obs)


def centred_gradient_part(spec: ChunkSpec, cols: IntArray, coef: FloatArray,
                          center: FloatArray, frame: pd.DataFrame) -> GradientPart:
    """:func:`gradient_part` in the centred coordinates, the frame last (for ``map_reduce``)."""
    return gradient_part(spec, cols, coef, frame, center)


def gradient_part(spec: ChunkSpec, cols: IntArray, coef: FloatArray,
                  frame: pd.DataFrame, center: FloatArray | None = None) -> GradientPart:
    """One chunk's Aᵀ W r with r = y − X c formed in ``np.longdouble``.

    With ``center`` (the fit's column means) the gradient is taken in the centred
    coordinates [1, X − x̄] (r itself uses the uncentred design): its entries are then of
    the size of the centred columns, not of their offsets.

    Parameters
    ----------
    spec : ChunkSpec
    cols : ndarray of int
        Design columns in the refinement (the intercept, then the kept columns).
    coef : ndarray, shape (len(cols),)
        Current coefficients of those columns.
    frame : DataFrame
        A chunk (as for :func:`~attnreg.large.passes.second_pass`).

    Returns
    -------
    GradientPart
    """
    chunk = chunk_design(spec, frame)
    if chunk.n_obs == 0:
        return GradientPart(np.zeros(cols.size, dtype=np.longdouble), 0)
    A = chunk.X[:, cols].astype(np.longdouble)
    y = chunk.y.astype(np.longdouble)
    r = y - np.dot(A, coef.astype(np.longdouble))
    if chunk.weights is not None:
        r = r * chunk.weights.astype(np.longdouble)  # Aᵀ W r with A the unweighted columns
    if center is not None:
        A = A - center[cols].astype(np.longdouble)  # the intercept's centre is 0: stays 1
    return GradientPart(np.dot(r, A), chunk.n_obs)
