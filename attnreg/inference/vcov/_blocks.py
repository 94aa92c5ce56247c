"""Pieces shared by the cluster-robust covariances (:mod:`attnreg.inference.vcov.cluster`) and CR2's
adjustment (:mod:`attnreg.inference.vcov.cr2`): block sizes, group indicators, the intercept's scores."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sps

from attnreg._typing import FloatArray, IntArray

if TYPE_CHECKING:
    from attnreg.linear.spectral import Spectrum

__all__ = ["BLOCK_NUMBERS", "indicator", "scores_c"]

#: Rows per block of the score products (about 2**22 numbers per block).
BLOCK_NUMBERS = 1 << 22


def scores_c(sp: Spectrum) -> FloatArray:
    """The intercept's score direction of each row, sqrt(w_i) / Σ w (zeros without one)."""
    return sp.sqrt_w / sp.sum_w if sp.intercept is not None else np.zeros(sp.n_obs)


def indicator(codes: IntArray, n_groups: int, values: FloatArray) -> Any:
    """The sparse (n_groups × len(codes)) matrix with ``values`` at (codes[i], i)."""
    return sps.csr_matrix((values, (codes, np.arange(codes.size))), shape=(n_groups, codes.size))
