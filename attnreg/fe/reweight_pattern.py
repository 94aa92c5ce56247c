"""The weight-free pattern of the reweighted exact demeaning (:mod:`attnreg.fe.reweight`):
distinct pairs of levels and CSR pointers, by counting sorts.

Built once per fit, so its cost is paid once, but at a million rows a comparison sort of
the row keys (``np.unique``, ``np.lexsort``) costs as much as two scoring steps. Every order
here is a stable counting sort (numpy's radix sort on 16-bit keys, scipy's CSR → CSC
conversion, one pass and stable, on wider ones), or a sort of keys already in order but for
a few entries per row (rows sorted by the largest fixed effect, as a GLM's scoring steps
keep them). Linear in the rows and the levels, but for that short sort; the result is the
same as the comparison sort's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from attnreg._typing import IntArray

__all__ = ["Block", "FixedProduct", "Pairs", "Split", "counting_order", "pointers"]

#: keys below this are sorted by numpy's radix sort (16-bit keys)
RADIX_KEYS = 1 << 16
#: pairs of levels are counted in a table of all pairs up to this many cells (32 MB)
TABLE_CELLS = 1 << 22
#: a sparse product is sized by a cheap upper bound on its entries up to this many (48 MB)
BOUND_CELLS = 1 << 22


def counting_order(keys: IntArray, n_keys: int) -> IntArray:
    """The stable order that sorts ``keys`` (each in 0 … n_keys − 1), in O(N + n_keys).

    Examples
    --------
    >>> counting_order(np.array([2, 0, 2, 1, 0]), 3).tolist()
    [1, 4, 3, 0, 2]
    """
    n = keys.size
    if n_keys <= RADIX_KEYS:
        return np.argsort(keys.astype(np.uint16), kind="stable")
    rows = sp.csr_matrix((np.arange(n, dtype=np.int64), keys, np.arange(n + 1)),
                         shape=(n, n_keys))  # one entry per row, at its key
    return np.asarray(rows.tocsc().data, dtype=np.intp)  # column by column, rows in order


def pointers(rows: IntArray, n_rows: int) -> IntArray:
    """CSR row pointers of entries sorted by ``rows``, shape (n_rows + 1,)."""
    return np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n_rows))]).astype(np.int64)


@dataclass(frozen=True)
class Pairs:
    """The distinct (row key, column key) pairs among N·m entries, and each entry's pair."""

    rows: IntArray  # (n_pairs,) sorted by row, then column
    cols: IntArray  # (n_pairs,)
    entry: IntArray  # (n_entries,) the pair of each entry

    @classmethod
    def of(cls, rows: IntArray, cols: IntArray, n_rows: int, n_cols: int) -> Pairs:
        """The pairs of ``rows`` (< n_rows) and ``cols`` (< n_cols), as ``np.unique`` of
        row · n_cols + col with its inverse would give them: counted in a table of all
        pairs when it has at most :data:`TABLE_CELLS` cells; else, with ``rows`` sorted
        (the entries of rows in the order of the largest fixed effect), by one sort of the
        keys, which are in order but for the few entries of each row; else by two counting
        sorts."""
        if n_rows * n_cols <= TABLE_CELLS:
            keys = rows.astype(np.int64) * n_cols + cols
            present = np.bincount(keys, minlength=n_rows * n_cols) > 0
            found = np.flatnonzero(present)
            ids = np.cumsum(present) - 1
            return cls(found // n_cols, found % n_cols, ids[keys].astype(np.intp))
        if rows.size and bool(np.all(rows[1:] >= rows[:-1])):
            return cls._of_sorted(rows, cols, n_cols)
        order = counting_order(cols, n_cols)
        order = order[counting_order(rows[order], n_rows)]  # by row, then column
        r, c = rows[order], cols[order]
        new = np.ones(r.size, dtype=bool)
        new[1:] = (r[1:] != r[:-1]) | (c[1:] != c[:-1])
        entry = np.empty(r.size, dtype=np.intp)
        entry[order] = np.cumsum(new) - 1
        return cls(r[new], c[new], entry)

    @classmethod
    def _of_sorted(cls, rows: IntArray, cols: IntArray, n_cols: int) -> Pairs:
        """The pairs of sorted ``rows`` and ``cols``: one sort of the keys row · n_cols + col,
        which are in order but for the few entries of each row (equal keys are one pair, so
        the sort need not be stable)."""
        keys = rows.astype(np.int64) * n_cols + cols
        shift = max(1, int(keys.size - 1).bit_length())
        if (int(rows[-1]) + 1) * n_cols < 1 << (62 - shift):
            # each entry's place in the keys' low bits: a sort of values, not an argsort (15
            # against 34 ms at 2e6 entries); equal keys stay next to each other either way
            packed = np.sort((keys << shift) | np.arange(keys.size))
            order, ordered = packed & ((1 << shift) - 1), packed >> shift
        else:  # pragma: no cover - more than 2**62 (pair, entry) codes
            order = np.argsort(keys)
            ordered = keys[order]
        new = np.empty(keys.size, dtype=bool)
        new[0] = True
        np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
        entry = np.empty(keys.size, dtype=np.intp)
        entry[order] = np.cumsum(new) - 1
        first = order[new]  # an entry of each pair (no integer division by n_cols)
        return cls(rows[first], cols[first], entry)

    def sums(self, w: np.ndarray) -> np.ndarray:
        """The weights summed per pair, shape (n_pairs,)."""
        return np.asarray(np.bincount(self.entry, weights=w, minlength=self.rows.size),
                          dtype=np.float64)


@dataclass(frozen=True)
class Block:
    """The entries of B for big levels lo … hi − 1, and how they lie in B' (the pattern of a
    block of rows of W_big^-1/2 B and of its transpose, fixed across weights). The index
    arrays are held in scipy's index type, so that no step converts them again."""

    lo: int
    hi: int
    start: int  # the block's first entry among B's (row-sorted) entries
    end: int
    ptr: IntArray  # (hi − lo + 1,) CSR pointers of the block's rows
    cols: IntArray  # the block's entries' columns
    t_order: IntArray  # the block's entries in the order of its transpose
    t_rows: IntArray  # their big levels, from 0 at lo
    t_ptr: IntArray  # (n_small + 1,) CSR pointers of the transpose
    split: Split | None = None  # where the entries lie in the wide and the narrow columns

    @classmethod
    def of(cls, cross: Pairs, ptr: IntArray, lo: int, hi: int, n_small: int,
           narrow: int | None = None) -> Block:
        """Block of big levels lo … hi − 1; its columns from ``narrow`` on are held dense
        (:class:`Split`; None: none are)."""
        start, end = int(ptr[lo]), int(ptr[hi])
        rows, cols = cross.rows[start:end] - lo, cross.cols[start:end]
        # by column, then row: the rows are ascending, so scipy's CSR -> CSC pass (stable, in
        # one sweep) orders the block's own pattern (15 against 8 ms at 1.6e6 entries)
        order = np.asarray(sp.csr_matrix(
            (np.arange(end - start, dtype=np.int64), cols, ptr[lo:hi + 1] - start),
            shape=(hi - lo, n_small)).tocsc().data, dtype=np.intp)
        idx = _index_type(end - start, max(hi - lo, n_small))
        t_ptr: IntArray = pointers(cols, n_small).astype(idx)
        split = None
        if narrow is not None and narrow < n_small:
            wide = np.flatnonzero(cols < narrow)
            tail = np.flatnonzero(cols >= narrow)
            split = Split(wide, cols[wide].astype(idx), pointers(rows[wide], hi - lo).astype(idx),
                          tail, rows[tail] * (n_small - narrow) + cols[tail] - narrow,
                          int(t_ptr[narrow]))
        return cls(lo, hi, start, end, (ptr[lo:hi + 1] - start).astype(idx), cols.astype(idx),
                   order, rows[order].astype(idx), t_ptr, split)

    def matrices(self, data: np.ndarray, n_small: int, upto: int | None = None
                 ) -> tuple[sp.csr_matrix, sp.csr_matrix, int, int]:
        """The block of rows with entries ``data`` (all of B's), its transpose, lo and hi.

        ``upto``: only the transpose's first ``upto`` entries (its first rows: those of the
        wide columns, :attr:`Split.head_end`), the other rows left empty; None: all."""
        part = data[self.start:self.end]
        rows = sp.csr_matrix((part, self.cols, self.ptr), shape=(self.hi - self.lo, n_small))
        order, ptr = self.t_order, self.t_ptr
        if upto is not None:
            order, ptr = order[:upto], np.minimum(ptr, upto)
        trans = sp.csr_matrix((part[order], self.t_rows[:order.size], ptr),
                              shape=(n_small, self.hi - self.lo))
        return rows, trans, self.lo, self.hi


@dataclass(frozen=True)
class Split:
    """A block's entries in its wide columns (below ``narrow``: a sparse matrix) and in its
    narrow ones (a dense table), found once instead of slicing the columns at every step."""

    wide: IntArray  # the block's entries in the wide columns
    wide_cols: IntArray  # their columns
    wide_ptr: IntArray  # (hi − lo + 1,) their CSR pointers
    tail: IntArray  # the block's entries in the narrow columns
    tail_cells: IntArray  # their cells in the flat (hi − lo) × (n_small − narrow) table
    head_end: int  # the transpose's entries in the wide columns' rows (its first ones)


def _index_type(nnz: int, dim: int) -> type:
    """scipy's index type for a sparse matrix of ``nnz`` entries and dimension ``dim``."""
    return np.int32 if max(nnz, dim) < np.iinfo(np.int32).max else np.int64


class FixedProduct:
    """A @ B for CSR matrices whose patterns stay the same from call to call (only the
    values change, as B'W⁻¹B's with the IRLS weights): the product is sized once, by a cheap
    upper bound where it is small (:func:`_bound`), else by scipy's symbolic pass (which
    costs half as much as the product itself). scipy's own product where its kernels are
    not at hand."""

    def __init__(self) -> None:
        self.nnz: int | None = None

    def __call__(self, A: sp.csr_matrix, B: sp.csr_matrix) -> sp.csr_matrix:
        """The product, shape (A.shape[0], B.shape[1])."""
        if _kernels is None or len({A.indices.dtype, A.indptr.dtype, B.indices.dtype,
                                    B.indptr.dtype}) != 1:
            return sp.csr_matrix(A @ B)
        matmat, maxnnz = _kernels
        m, n = A.shape[0], B.shape[1]
        if self.nnz is None:
            self.nnz = _bound(A, B)
            if self.nnz is None:
                self.nnz = int(maxnnz(m, n, A.indptr, A.indices, B.indptr, B.indices))
        idx = A.indices.dtype
        indptr, indices = np.empty(m + 1, dtype=idx), np.empty(self.nnz, dtype=idx)
        data = np.empty(self.nnz)
        matmat(m, n, A.indptr, A.indices, A.data, B.indptr, B.indices, B.data, indptr,
               indices, data)
        end = int(indptr[-1])  # entries that summed to exactly 0 are left out
        return sp.csr_matrix((data[:end], indices[:end], indptr), shape=(m, n))

    def add_into(self, out: np.ndarray, A: sp.csr_matrix, B: sp.csr_matrix) -> None:
        """out[:m, :n] += A @ B for a C-ordered ``out`` (m, n the product's shape): the
        product's entries added where they go, no dense copy of it."""
        P = self(A, B)
        m, n = P.shape
        if _todense is None or not out.flags.c_contiguous or P.indices.dtype != P.indptr.dtype:
            out[:m, :n] += P.toarray()  # pragma: no cover - another scipy layout
            return
        _todense(m, out.shape[1], P.indptr, P.indices, P.data, out.ravel())


def _bound(A: sp.csr_matrix, B: sp.csr_matrix) -> int | None:
    """An upper bound on the entries of A @ B without the symbolic pass: the dense size, or
    the products of A's column and B's row counts; None when it exceeds
    :data:`BOUND_CELLS` (then the symbolic pass sizes the product exactly)."""
    dense = A.shape[0] * B.shape[1]
    pairs = int(np.dot(np.bincount(A.indices, minlength=A.shape[1]).astype(np.int64),
                       np.diff(B.indptr).astype(np.int64)))
    bound = min(dense, pairs)
    return bound if bound <= BOUND_CELLS else None


try:  # scipy's product kernels (private; the product falls back to A @ B without them)
    from scipy.sparse._sparsetools import csr_matmat as _matmat
    from scipy.sparse._sparsetools import csr_matmat_maxnnz as _maxnnz
    _kernels: tuple[Any, Any] | None = (_matmat, _maxnnz)
except ImportError:  # pragma: no cover - another scipy layout
    _kernels = None
try:  # scipy's kernel that adds a CSR matrix into a dense array of any row length (private)
    from scipy.sparse._sparsetools import csr_todense as _todense
except ImportError:  # pragma: no cover - another scipy layout
    _todense = None
