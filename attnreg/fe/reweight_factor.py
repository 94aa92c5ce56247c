"""The block elimination of the fixed effects' levels for one weight vector (IRLS steps).

With the levels of the largest fixed effect first and W_big their (diagonal) weights, the
normal equations D'WD x = b are solved by eliminating the big levels: the Schur complement
S = D_rest'WD_rest − B'W_big⁻¹B (B = D_big'WD_rest) is factored on the rest's free levels
(grounded ones fixed at 0), dense or sparse (:class:`attnreg.fe.reweight.ReweightedDemeaner`
forms it; :func:`dense_gram` is each block's part of B'W_big⁻¹B when S is dense).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from attnreg._typing import FloatArray, IntArray
from attnreg.fe.levelgram import DenseCholesky
from attnreg.fe.reweight_pattern import FixedProduct, Split
from attnreg.fe.solve import SINGULAR_PIVOT

__all__ = ["Blocks", "Elimination", "dense_gram"]


def dense_gram(rows: sp.csr_matrix, trans: sp.csr_matrix, narrow: int,
                product: FixedProduct, split: Split | None) -> FloatArray:
    """Bs'Bs for a block of rows of Bs (and its transpose), dense, shape (n_small, n_small).

    The columns from ``narrow`` on (the small fixed effects) are held dense: their products
    are sparse times dense and a dense product, so the cost does not grow with the square of
    a big level's entries in them. ``split`` (the block's) says where its entries lie.
    """
    n = rows.shape[1]
    if narrow >= n or split is None:
        return np.asarray(product(trans, rows).toarray())
    out = np.zeros((n, n))
    tail = np.zeros((rows.shape[0], n - narrow))  # (block, n_narrow)
    tail.ravel()[split.tail_cells] = rows.data[split.tail]
    if narrow:
        end = split.head_end  # the wide columns' transpose: its first rows, no copy
        head = sp.csr_matrix((trans.data[:end], trans.indices[:end], trans.indptr[:narrow + 1]),
                             shape=(narrow, rows.shape[0]))
        wide = sp.csr_matrix((rows.data[split.wide], split.wide_cols, split.wide_ptr),
                             shape=(rows.shape[0], narrow))
        product.add_into(out, head, wide)
        out[:narrow, narrow:] = np.asarray(wide.T @ tail)
        out[narrow:, :narrow] = out[:narrow, narrow:].T
    out[narrow:, narrow:] = tail.T @ tail
    return out


Blocks = tuple[list[tuple[sp.csr_matrix, sp.csr_matrix, int, int]], FloatArray]


@dataclass(frozen=True)
class Elimination:
    """The block elimination with S factored on the free rest levels: with Bs = W_big^-1/2 B,
    the big levels are x_big = W_big^-1/2 (W_big^-1/2 b_big − Bs x_small), and S x_small =
    b_small − Bs'(W_big^-1/2 b_big)."""

    solve_free: Callable[[FloatArray], FloatArray]  # (n_free, c) -> (n_free, c)
    blocks: list[tuple[sp.csr_matrix, sp.csr_matrix, int, int]]  # of Bs, Bs' (rows lo … hi)
    root: FloatArray  # (n_big,) square roots of the big levels' weights
    free: IntArray

    @classmethod
    def dense(cls, S: FloatArray, blocks: Blocks, free: IntArray) -> Elimination | None:
        if not free.size:
            return cls(lambda b: b, *blocks, free)
        factor = DenseCholesky.of(S)  # S is a copy (the free levels'): overwritten
        if factor is None or factor.pivots.min() <= SINGULAR_PIVOT * factor.pivots.max():
            return None
        return cls(factor.solve, *blocks, free)

    @classmethod
    def sparse(cls, S: sp.csc_matrix, blocks: Blocks, free: IntArray) -> Elimination | None:
        lu = spla.splu(S, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                       options={"SymmetricMode": True})
        pivots = np.abs(lu.U.diagonal())
        if pivots.min() <= SINGULAR_PIVOT * pivots.max():
            return None
        return cls(lu.solve, *blocks, free)

    def reduce(self, b_big: FloatArray, b_small: FloatArray) -> tuple[FloatArray, FloatArray]:
        """W_big^-1/2 b_big, and the right-hand side b_small − B'W_big^-1 b_big of S."""
        half = b_big / self.root[:, None]
        crossed = [np.asarray(rows.T @ half[lo:hi]) for rows, _, lo, hi in self.blocks]
        return half, b_small - sum(crossed[1:], crossed[0])

    def solve(self, b_big: FloatArray, b_small: FloatArray) -> tuple[FloatArray, FloatArray]:
        """A solution of the normal equations (grounded levels 0); shapes (n, c)."""
        half, rhs = self.reduce(b_big, b_small)
        x_small = np.zeros_like(b_small)
        if self.free.size:
            x_small[self.free] = self.solve_free(np.ascontiguousarray(rhs[self.free]))
        fitted = np.vstack([np.asarray(rows @ x_small) for rows, _, _, _ in self.blocks])
        return (half - fitted) / self.root[:, None], x_small
