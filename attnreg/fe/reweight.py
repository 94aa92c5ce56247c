"""Exact residuals on two or more fixed effects for a sequence of weight vectors (IRLS).

A GLM with absorbed fixed effects residualises its working response and regressors on the
fixed effects once per scoring step, each time with new working weights W. Everything in the
exact Schur solve of :mod:`attnreg.fe.solve` that does not depend on W is computed here once:
the pairs of levels that share a row (the sparsity of B = D_big'WD_rest and of D_rest'WD_rest),
the grounded levels (one per connected component, fixest's references). A step then costs a
few weighted sums per row (D'WV scattered from the rows in their order, the weights in the
dummies' entries: rows sorted by the largest fixed effect make its sums sequential, as the
GLM's steps keep them), the Schur complement S = D_rest'WD_rest −
B'W_big⁻¹B, and its factor: dense Cholesky when the rest has at most :data:`DENSE_LEVELS`
levels, sparse LU otherwise. As in :func:`attnreg.fe.demean.demean`, the solve is repeated on
the residual (three passes at most) until every level's weighted residual sum is at the
rounding floor; a factor that is singular to rounding (nested fixed effects), or a residual
short of the floor, is reported so that the caller falls back to the general demeaning.
The floor is each fixed effect's own: 4 eps √(its largest level's rows) times its largest
level sum of |V|. (One floor for all, set by the largest levels, would let the levels of a
few rows keep an error thousands of times their rounding when another fixed effect has
levels of 50,000 rows: the scoring steps' η then stalls at 1e-9.)

The last factor is kept: residuals for weights w within :data:`REUSE_CHANGE` of its weights
w₀ (relative, row by row: an IRLS step near the optimum) refine with it instead of forming S
again. The passes still test the level sums under w, so the residuals are w's to the
rounding floor; only the rate changes: the eigenvalues of (D'W₀D)⁻¹D'WD lie between the
smallest and largest w/w₀, so each pass shrinks the error by at least max|w/w₀ − 1|. After
three passes short of the floor a fresh factor takes over.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from itertools import pairwise

import numpy as np
import scipy.sparse as sp

from attnreg._typing import FloatArray
from attnreg.fe.demean import SCHUR_MAX_LEVELS, FixedEffects
from attnreg.fe.levelgram import DENSE_TABLE
from attnreg.fe.levelpass import BLOCK_BYTES
from attnreg.fe.reweight_factor import Elimination, dense_gram
from attnreg.fe.reweight_pattern import Block, FixedProduct, Pairs, pointers
from attnreg.threads import parallel_map, row_workers, scratch

__all__ = ["DENSE_LEVELS", "Normal", "ReweightedDemeaner"]

try:  # scipy's kernel that adds A X to Y in place (private: D'V by a product without it)
    from scipy.sparse._sparsetools import csc_matvecs as _add_product
except ImportError:  # pragma: no cover - another scipy layout
    _add_product = None

#: the fewest entries of B per thread forming S (fewer: one thread)
BLOCK_ENTRIES = 1 << 17
#: a factor is reused for new weights that differ from its own by at most this (relative)
REUSE_CHANGE = 1e-5
#: rows per block of the sums of |V| (their absolute values in a buffer that stays in cache)
ABS_BLOCK_ROWS = 1 << 14
#: bytes of the columns per block of P'WP: a block and its weighted copy stay in a core's L2
#: cache (1e6 × 6, one thread: 9.7 ms in blocks of 256 KiB, 20 ms in one product)
GRAM_BLOCK_BYTES = 1 << 18
#: the rest's levels up to which S is factored dense (Cholesky; 72 MB at 3,000 levels)
DENSE_LEVELS = 3000
_EPS = float(np.finfo(np.float64).eps)


class ReweightedDemeaner:
    """Residuals on two or more fixed effects, exactly, for any positive weights.

    Parameters
    ----------
    fe : FixedEffects
        At least two fixed effects, all but the largest with at most
        :data:`attnreg.fe.demean.SCHUR_MAX_LEVELS` levels together (:meth:`applies`).

    Examples
    --------
    >>> fe = FixedEffects.from_columns([[0, 0, 1, 1], [0, 1, 0, 1]])
    >>> r, ok = ReweightedDemeaner(fe).residuals(np.array([[1.0], [2.0], [4.0], [7.0]]),
    ...                                          np.ones(4))
    >>> ok, (np.round(r.ravel(), 12) + 0.0).tolist()
    (True, [0.5, -0.5, -0.5, 0.5])
    """

    def __init__(self, fe: FixedEffects) -> None:
        order = [int(k) for k in np.argsort(fe.n_levels, kind="stable")[::-1]]
        self.big, self.n_big = fe.codes[order[0]], fe.n_levels[order[0]]
        sizes = [fe.n_levels[k] for k in order[1:]]
        starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self.rest = np.column_stack([fe.codes[k] + starts[j] for j, k in enumerate(order[1:])])
        self.rest_cols = [np.ascontiguousarray(c) for c in self.rest.T]  # (n_obs,) each
        self.n_small = int(starts[-1])
        # the other fixed effects narrow enough for B's columns of them to be held dense (the
        # smallest come last): their levels from here on
        narrow = [int(starts[j]) for j in range(len(sizes))
                  if all(self.n_big * s <= DENSE_TABLE for s in sizes[j:])]
        self.narrow = narrow[0] if narrow else self.n_small
        m = self.rest.shape[1]
        self.cross = Pairs.of(np.repeat(self.big, m), self.rest.ravel(), self.n_big, self.n_small)
        self.cross_ptr = pointers(self.cross.rows, self.n_big)
        workers = max(1, min(row_workers(), self.cross.rows.size // BLOCK_ENTRIES))
        cuts = np.searchsorted(self.cross_ptr, np.linspace(0, self.cross.rows.size, workers + 1))
        cuts[0], cuts[-1] = 0, self.n_big
        self.blocks = [Block.of(self.cross, self.cross_ptr, int(lo), int(hi), self.n_small,
                                self.narrow) for lo, hi in pairwise(cuts) if hi > lo]
        self.products = [FixedProduct() for _ in self.blocks]  # each block's B'W⁻¹B
        j, k = np.triu_indices(m, 1)
        self.own = Pairs.of(self.rest[:, j].ravel(), self.rest[:, k].ravel(), self.n_small,
                            self.n_small)
        grounded = np.concatenate([  # the components are the fit's (shared with its df)
            fe.first_per_component(order[0], order[1]), starts[1:-1]])
        self.free = np.setdiff1d(np.arange(self.n_small), grounded)
        n_levels = self.n_big + self.n_small  # level order: big, then rest
        n_obs, k = self.big.size, m + 1
        idx = np.int32 if n_obs * k < np.iinfo(np.int32).max else np.int64
        levels = np.empty((n_obs, k), dtype=idx)  # each row's levels, in the order above
        levels[:, 0], levels[:, 1:] = self.big, self.rest
        levels[:, 1:] += self.n_big
        self.entries = levels.ravel()  # D's columns, row-major
        self.indptr = np.arange(0, k * n_obs + 1, k, dtype=idx)  # of any block of D's rows
        self.row_cuts = np.linspace(0, n_obs, max(1, row_workers()) + 1).astype(np.int64)
        self.n_levels = n_levels
        self._weights: tuple[FloatArray, FloatArray] | None = None  # w and D's entries times w
        self._ones: FloatArray | None = None  # (n_obs, 1)
        # the rounding floor of each fixed effect's level sums: its levels' weighted sums
        # of |V| at most, times 4 eps √(its largest level's rows)
        self.starts = np.concatenate([[0], self.n_big + starts]).astype(np.intp)
        counts = np.bincount(self.entries, minlength=n_levels)
        self.floors = 4 * _EPS * np.sqrt(np.maximum.reduceat(counts, self.starts[:-1]))
        self._last: tuple[FloatArray, Elimination] | None = None  # weights and factor of the last

    @staticmethod
    def applies(fe: FixedEffects) -> bool:
        """Whether ``fe`` has two or more fixed effects and a rest small enough to factor."""
        return len(fe.codes) >= 2 and sum(fe.n_levels) - max(fe.n_levels) <= SCHUR_MAX_LEVELS

    def residuals(self, V: FloatArray, w: FloatArray, out: FloatArray | None = None
                  ) -> tuple[FloatArray, bool]:
        """V residualised on the fixed effects by weighted least squares.

        Parameters
        ----------
        V : ndarray, shape (n_obs, n_cols)
        w : ndarray, shape (n_obs,)
            Positive weights.
        out : ndarray, shape (n_obs, n_cols), optional
            C-ordered array for the residuals (not V); default a new one.

        Returns
        -------
        resid : ndarray, shape (n_obs, n_cols)
        exact : bool
            Every level's weighted residual sum reached its rounding floor (False also when
            the grounded Schur complement is singular or a level's weights underflow: then
            ``resid`` is V unchanged).
        """
        factor, fresh = self._near(w), False
        if factor is None:
            factor, fresh = self._factor(w), True
            if factor is None:
                return V, False
        scale = np.maximum.reduceat(self._scatter(self._entries(w), V, absolute=True),
                                    self.starts[:-1], axis=0)
        scale[scale == 0] = 1.0  # (K, c): the largest level sum of |V| per fixed effect
        if out is None:
            r = np.array(V, dtype=np.float64, order="C")  # not V: the caller's
        else:
            r = out
            np.copyto(r, V)
        b = self._sums(r, w)
        for attempt in range(6):
            if attempt == 3:  # a reused factor that fell short: a fresh one, from here on
                factor = None if fresh else self._factor(w)
                if factor is None:
                    return r, False
                fresh = True
            self._subtract_fitted(r, *factor.solve(b[:self.n_big], b[self.n_big:]))
            b = self._sums(r, w)
            if not np.isfinite(b).all():
                return V, False
            if np.all(np.maximum.reduceat(np.abs(b), self.starts[:-1], axis=0) / scale
                      <= self.floors[:, None]):
                return r, True
        return r, False

    def normal_equations(self, P: FloatArray, w: FloatArray) -> Normal | None:
        """The weighted Gram matrix of P residualised on the fixed effects, from the normal
        equations of [P, D] with the levels eliminated (no residuals per row: cheap, and
        accurate to the square of P's condition, as normal equations are).

        Parameters
        ----------
        P : ndarray, shape (n_obs, c)
        w : ndarray, shape (n_obs,)

        Returns
        -------
        Normal or None
            None when the grounded Schur complement is singular.
        """
        factor = self._factor(w)
        if factor is None:
            return None
        b, raw = self._sums_and_gram(P, w)
        half, reduced = factor.reduce(b[:self.n_big], b[self.n_big:])
        gram = raw - half.T @ half
        if factor.free.size:
            part = np.ascontiguousarray(reduced[factor.free])
            gram -= part.T @ factor.solve_free(part)
        return Normal(0.5 * (gram + gram.T), np.diag(raw).copy(), self, factor, b)

    def _sums(self, V: FloatArray, w: FloatArray) -> FloatArray:
        """D'WV, levels in solve order (the largest fixed effect's first), shape (G, c): the
        weights in D's entries (set once per weight vector), no weighted copy of V."""
        return self._scatter(self._entries(w), V)

    def _entries(self, w: FloatArray) -> FloatArray:
        """D's entries times the weights w (each row's weight once per fixed effect), kept
        for the last w (the same array object: the steps do not modify their weights)."""
        if self._weights is None or self._weights[0] is not w:
            k = self.rest.shape[1] + 1
            data = self._weights[1] if self._weights is not None else np.empty(w.size * k)
            data.reshape(w.size, k)[:] = w[:, None]
            self._weights = (w, data)
        return self._weights[1]

    def _add_sums(self, out: FloatArray, data: FloatArray, block: FloatArray, lo: int,
                  hi: int) -> None:
        """out += D[lo:hi]' block, D's rows lo … hi − 1 with entries ``data``; block C order."""
        k, n = self.rest.shape[1] + 1, hi - lo
        indptr, cols = self.indptr[:n + 1], self.entries[k * lo:k * hi]
        if _add_product is not None:  # scipy's kernel: adds in place
            _add_product(self.n_levels, n, block.shape[1], indptr, cols, data, block.ravel(),
                         out.ravel())
            return
        D = sp.csr_matrix((data, cols, indptr), shape=(n, self.n_levels), copy=False)
        out += D.T @ block  # pragma: no cover - another scipy layout

    def _sums_and_gram(self, P: FloatArray, w: FloatArray) -> tuple[FloatArray, FloatArray]:
        """D'WP and P'WP in one pass over P's rows: blocks of :data:`GRAM_BLOCK_BYTES` (each
        block, and its weighted copy, in cache for both), the threads' blocks of rows added
        in order; shapes (G, c) and (c, c)."""
        c = P.shape[1]
        k, data = self.rest.shape[1] + 1, self._entries(w)
        step = max(1, GRAM_BLOCK_BYTES // (8 * c))

        def part(lo0: int, hi0: int) -> tuple[FloatArray, FloatArray]:
            sums, G = np.zeros((self.n_levels, c)), np.zeros((c, c))
            buf, rows = scratch("reweight-gram", (step, c)), scratch("reweight-rows", (step, c))
            for lo in range(lo0, hi0, step):
                hi = min(lo + step, hi0)
                block = P[lo:hi]
                if not block.flags.c_contiguous:  # (X on its own: rows of [z, X])
                    np.copyto(rows[:hi - lo], block)
                    block = rows[:hi - lo]
                self._add_sums(sums, data[k * lo:k * hi], block, lo, hi)
                G += block.T @ np.multiply(block, w[lo:hi, None], out=buf[:hi - lo])
            return sums, G

        parts = parallel_map(lambda b: part(*b), list(pairwise(self.row_cuts.tolist())))
        return (sum((p[0] for p in parts[1:]), parts[0][0]),
                sum((p[1] for p in parts[1:]), parts[0][1]))

    def _scatter(self, data: FloatArray, V: FloatArray, absolute: bool = False) -> FloatArray:
        """D'V (D'|V| with ``absolute``) for D's entries ``data``: each row's values added to
        its levels' sums, the rows read in order (their levels' sums in cache: rows sorted by
        the largest fixed effect make its sums sequential too); blocks of rows on threads,
        each adding into one table of sums; |V| (or the rows of a V not in C order) a block
        of :data:`ABS_BLOCK_ROWS` rows at a time, in a buffer (no copy of V), shape (G, c)."""
        k, c = self.rest.shape[1] + 1, V.shape[1]

        def part(lo0: int, hi0: int) -> FloatArray:
            out = np.zeros((self.n_levels, c))
            whole = not absolute and V.flags.c_contiguous
            step = max(1, hi0 - lo0) if whole else ABS_BLOCK_ROWS
            for lo in range(lo0, hi0, step):
                hi = min(lo + step, hi0)
                block = V[lo:hi]
                if not whole:  # |V|, or V's rows in C order, in a buffer
                    buf = scratch("reweight-abs", (hi - lo, c))
                    if absolute:
                        np.abs(block, out=buf)
                    else:
                        np.copyto(buf, block)
                    block = buf
                self._add_sums(out, data[k * lo:k * hi], block, lo, hi)
            return out

        parts = parallel_map(lambda b: part(*b), list(pairwise(self.row_cuts.tolist())))
        return sum(parts[1:], parts[0])

    def _subtract_fitted(self, r: FloatArray, x_big: FloatArray, x_small: FloatArray) -> None:
        """r −= D x, for level values x in solve order; r shape (n_obs, c), C order.

        In blocks of rows (:data:`attnreg.fe.levelpass.BLOCK_BYTES`), each block's gathered
        level values in a buffer that stays in cache; groups of blocks on threads."""
        n, c = r.shape
        step = max(1, BLOCK_BYTES // (8 * c))
        starts = list(range(0, n, step))
        per = -(-len(starts) // max(1, row_workers()))

        def group(first: int) -> None:
            buf = scratch("reweight-gathered", (step, c))
            for lo in starts[first:first + per]:
                hi = min(lo + step, n)
                block, part = r[lo:hi], buf[:hi - lo]
                block -= np.take(x_big, self.big[lo:hi], axis=0, out=part, mode="clip")
                for col in self.rest_cols:  # one other fixed effect at a time (codes valid)
                    block -= np.take(x_small, col[lo:hi], axis=0, out=part, mode="clip")

        parallel_map(group, range(0, len(starts), per))

    def _factor(self, w: FloatArray) -> Elimination | None:
        """The block elimination for weights w (:meth:`_form`), kept for :meth:`_near`."""
        factor = self._form(w)
        self._last = None if factor is None else (w, factor)
        return factor

    def _near(self, w: FloatArray) -> Elimination | None:
        """The last factor, if its weights are within :data:`REUSE_CHANGE` of w (relative,
        on every row): refining with it gains at least five digits a pass (module
        docstring). Else None."""
        if self._last is None or self._last[0].shape != w.shape:
            return None
        old, factor = self._last
        with np.errstate(divide="ignore", invalid="ignore"):
            change = np.abs(w - old) / old
        return factor if bool(np.all(change <= REUSE_CHANGE)) else None

    def _form(self, w: FloatArray) -> Elimination | None:
        """The block elimination for weights w: S formed and factored on the free levels."""
        m = self.rest.shape[1]
        if self._ones is None:
            self._ones = np.ones((w.size, 1))
        levels = self._scatter(self._entries(w), self._ones)[:, 0]  # D'w: each level's weight
        root, diag = np.sqrt(levels[:self.n_big]), levels[self.n_big:]
        if not (np.isfinite(root).all() and root.min() > 0):  # a level's weights underflowed
            return None
        wm = self._entries(w).reshape(w.size, m + 1)[:, 1:].ravel()  # each (row, other effect)
        scaled = self.cross.sums(wm) / np.repeat(root, np.diff(self.cross_ptr))
        off = self.own.sums(w if m == 2 else np.repeat(w, m * (m - 1) // 2))
        free, dense = self.free, self.free.size <= DENSE_LEVELS

        def block(k: int) -> tuple[tuple[sp.csr_matrix, sp.csr_matrix, int, int], Any]:
            """Block k's matrices and its part of B'W_big⁻¹B (one block per thread)."""
            split = self.blocks[k].split
            head = split.head_end if dense and split is not None else None  # all dense_gram reads
            mats = self.blocks[k].matrices(scaled, self.n_small, head)
            if dense:
                return mats, dense_gram(mats[0], mats[1], self.narrow, self.products[k],
                                         self.blocks[k].split)
            return mats, self.products[k](mats[1], mats[0])

        done = parallel_map(block, range(len(self.blocks)))
        blocks, parts = [d[0] for d in done], [d[1] for d in done]
        gram = sum(parts[1:], parts[0])
        if dense:
            S = np.negative(gram, out=gram)  # the blocks' own arrays: negated in place
            S[np.diag_indices(self.n_small)] += diag
            np.add.at(S, (self.own.rows, self.own.cols), off)
            np.add.at(S, (self.own.cols, self.own.rows), off)
            return Elimination.dense(S[np.ix_(free, free)], (blocks, root), free)
        own = sp.csr_matrix((np.concatenate([diag, off, off]), (
            np.concatenate([np.arange(self.n_small), self.own.rows, self.own.cols]),
            np.concatenate([np.arange(self.n_small), self.own.cols, self.own.rows]))),
            shape=(self.n_small, self.n_small))
        S = sp.csc_matrix((own - gram)[free][:, free])
        return Elimination.sparse(sp.csc_matrix((S + S.T) * 0.5), (blocks, root), free)


@dataclass(frozen=True)
class Normal:
    """The normal equations of [P, D] with the fixed effects' levels eliminated.

    Attributes
    ----------
    gram : ndarray, shape (c, c)
        P̃'WP̃, P̃ the columns of P residualised on the fixed effects.
    norms : ndarray, shape (c,)
        diag(P'WP): the squared weighted norms of P's own columns.
    """

    gram: FloatArray
    norms: FloatArray  # (c,) the squared weighted norms of P's columns, diag(P'WP)
    demeaner: ReweightedDemeaner
    factor: Elimination
    sums: FloatArray  # (G, c) D'WP in solve order

    def effects_fit(self, v: FloatArray) -> FloatArray:
        """D α for α solving D'WD α = D'W P v: the fixed effects' part of the least-squares
        fit of P v, shape (n_obs,)."""
        b = (self.sums @ v)[:, None]
        n_big, d = self.factor.root.size, self.demeaner
        x_big, x_small = self.factor.solve(b[:n_big], b[n_big:])
        fit = x_big[:, 0][d.big]  # one column: gathers of vectors, not of rows
        for col in d.rest_cols:
            fit += x_small[:, 0][col]
        return fit
