"""Tall-skinny Householder QR of the centred, weighted design (the engine of ``spectral``).

Two forms: :func:`streaming_r` keeps only R (the reflectors of each leaf of rows are thrown
away, memory independent of n_obs), :class:`TallQR` keeps them so that U = Q U_R can be
formed exactly over its own buffer. Both factorise leaves of about ``QR_LEAF_ROWS`` rows in
cache with LAPACK's compact-WY ``geqrt``; only Householder transformations are used, so the
reduction is backward stable like a plain Householder QR.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import scipy.linalg as sla

from attnreg._typing import FloatArray, IntArray
from attnreg.linear.lapack import geqrt, workspace
from attnreg.scaling import binary_exponents, row_block


def column_span(cols: IntArray) -> tuple[int, int] | None:
    """``(start, stop)`` when ``cols`` are consecutive columns (read as a slice), else None."""
    k = cols.size
    if k and np.array_equal(cols, np.arange(cols[0], cols[0] + k)):
        return int(cols[0]), int(cols[0]) + k
    return None


def take_columns(X: FloatArray, rows: Any, cols: IntArray,
                 span: tuple[int, int] | None) -> FloatArray:
    """``X[rows][:, cols]`` (rows: a slice or positions); a view for a slice of a span."""
    return X[rows, span[0]:span[1]] if span is not None else X[rows].take(cols, axis=1)


def fill_columns(dest: FloatArray, X: FloatArray, lo: int, hi: int, cols: IntArray,
                 span: tuple[int, int] | None) -> None:
    """``dest[:] = X[lo:hi][:, cols]`` for a Fortran-ordered ``dest``, in blocks of rows.

    Copying a C-ordered block into a Fortran-ordered one transposes it; numpy does that
    element by element through the whole block, so the copy goes :data:`TRANSPOSE_ROWS` rows
    at a time, whose source stays in cache (1e5 × 101: 29 ms in one go, 10–13 ms in blocks).
    """
    if span is None:  # positions: a gathered copy, transposed on the way
        dest[...] = X[lo:hi].take(cols, axis=1)
        return
    step = TRANSPOSE_ROWS if not X.flags.f_contiguous else hi - lo
    for a in range(lo, hi, max(step, 1)):
        b = min(a + step, hi)
        dest[a - lo:b - lo] = X[a:b, span[0]:span[1]]


#: rows per block of :func:`fill_columns`'s transposing copy
TRANSPOSE_ROWS = 512


def streaming_r(X: FloatArray, y: FloatArray, cols: IntArray, center: FloatArray,
                sqrt_w: FloatArray | None, y_center: float,
                col_mult: FloatArray | None = None,
                lows: tuple[FloatArray | None, float] = (None, 0.0)) -> FloatArray:
    """R of the QR of [sqrt(w)(X[:, cols] − x̄) | sqrt(w)(y − ȳ)], shape (k+1, k+1), upper.

    Sequential tall-skinny QR within each segment of rows: each leaf of rows is written under
    the R of the rows before it, in a small Fortran-ordered buffer, and QR-factorised in place
    (LAPACK geqrt); the reflectors are not kept. The segments (:func:`segments`: fixed by the
    shape, never by the number of threads) are factorised in parallel by
    :func:`attnreg.threads.parallel_map` (the factorisation releases the GIL) and their R
    factors stacked and re-factorised in row order, so the result is the same bit for bit
    on any number of threads. The last column of R holds Q'ỹ and, on the diagonal, the norm
    of the part of ỹ outside the column space. ``col_mult`` (shape (k,), powers of two, so
    exact) multiplies the centred columns first, for designs whose scale would overflow.
    ``lows`` (the rest of x̄, shape (p,) or None, and of ȳ) is subtracted after x̄ and ȳ:
    the means to twice float64's precision (:mod:`attnreg.linear.centring`).
    """
    from attnreg.threads import parallel_map

    n = X.shape[0]
    k1 = cols.size + 1
    parts = segments(n, cols.size)
    c_lo = None if lows[0] is None else lows[0][cols]
    job = _LeafJob(X, y, cols, center[cols], column_span(cols), sqrt_w, y_center, col_mult,
                   c_lo, float(lows[1]))
    factors = parallel_map(job.segment_r, parts)
    R = factors[0]
    if len(factors) > 1:
        buf = np.zeros((2 * k1, k1), order="F")
        t, work = workspace(k1, QR_NB)
        for Rs in factors[1:]:
            buf[:k1], buf[k1:] = R, Rs
            geqrt(buf, QR_NB, t, work)
            R = np.triu(buf[:k1])
    return np.asarray(R)


def segments(n: int, k: int) -> list[tuple[int, int]]:
    """The row ranges :func:`streaming_r` factorises separately: ``SEGMENT_LEAVES`` leaves each.

    They depend on the shape only, so a fit gives the same numbers on any number of threads;
    designs of at most one segment are factorised exactly as one sequential stream.
    """
    step = SEGMENT_LEAVES * stream_rows(k)
    return [(lo, min(lo + step, n)) for lo in range(0, max(n, 1), step)]


@dataclass(frozen=True)
class _LeafJob:
    """What every segment of :func:`streaming_r` reads (the arrays are shared, not copied)."""

    X: FloatArray
    y: FloatArray
    cols: IntArray
    c: FloatArray
    span: tuple[int, int] | None
    sqrt_w: FloatArray | None
    y_center: float
    col_mult: FloatArray | None
    c_lo: FloatArray | None = None
    y_lo: float = 0.0

    def segment_r(self, bounds: tuple[int, int]) -> FloatArray:
        """R (k+1, k+1) of the rows ``bounds`` of the centred, weighted [X | y]."""
        lo0, hi0 = bounds
        k = self.cols.size
        k1 = k + 1
        nb = qr_block(k1)
        t, work = workspace(k1, nb)
        buf = np.zeros((0, k1), order="F")
        R = np.zeros((k1, k1), order="F")
        centred = bool(np.any(self.c))
        for lo, hi in stream_leaves(lo0, hi0, k):
            rows = hi - lo
            if buf.shape[0] != k1 + rows:
                buf = np.zeros((k1 + rows, k1), order="F")
            buf[:k1] = R
            leaf = buf[k1:]
            fill_columns(leaf[:, :k], self.X, lo, hi, self.cols, self.span)
            if centred:
                leaf[:, :k] -= self.c
            if self.c_lo is not None:
                leaf[:, :k] -= self.c_lo
            if self.col_mult is not None:
                leaf[:, :k] *= self.col_mult
            leaf[:, k] = self.y[lo:hi]
            leaf[:, k] -= self.y_center
            leaf[:, k] -= self.y_lo
            if self.sqrt_w is not None:
                leaf *= self.sqrt_w[lo:hi, None]
            geqrt(buf, nb, t, work)
            R = np.triu(buf[:k1]).copy(order="F")  # its own copy: the buffer is reused
        return R


#: leaves of rows per segment of :func:`streaming_r` (a task of one worker thread)
SEGMENT_LEAVES = 8


#: rows per leaf of the tall-skinny QR (a leaf's Householder panel stays in cache)
QR_LEAF_ROWS = 2048
#: block size of LAPACK's compact-WY QR (geqrt) inside a leaf
QR_NB = 32
#: geqrt's block size for leaves of at most 32 columns (one thread, 1 MiB leaves: 21
#: columns 0.33 ms with nb 8 against 0.43 ms unblocked, 11 columns 0.25 against 0.30; 8
#: is within 3 % of the best from 3 to 101 columns but for 6 columns, 4's 0.19 to 0.24 ms)
NARROW_NB = 8


def qr_block(k: int) -> int:
    """geqrt's block size for leaves of ``k`` columns."""
    return max(1, min(QR_NB if k > 32 else NARROW_NB, k))

#: bytes of a leaf of :func:`streaming_r` for narrow designs (:func:`stream_leaves`;
#: measured on two cores, 2 MiB of L2 each: 768 KiB–1.5 MiB within 10 % of each other from
#: 5 to 200 columns, 1 MiB the best compromise)
STREAM_LEAF_BYTES = 1 << 20


class TallQR:
    """Tall-skinny Householder QR of the centred, weighted columns ``cols`` of ``X``.

    ``col_mult`` (powers of two) optionally multiplies the centred columns, exactly;
    ``center_lo`` (shape (p,)) is subtracted after ``center`` (the rest of the means).

    The rows are cut into leaves of about ``QR_LEAF_ROWS`` rows (at least 4 × the number of
    columns). Each leaf is written, centred and weighted, straight into its slot of one flat
    buffer and QR-factorised there (LAPACK geqrt, in place); the leaves' R factors are stacked
    and factorised the same way (recursively), giving R. Q is never formed on its own:
    :meth:`q_times` applies the Householder reflectors to a small matrix and writes the
    product, leaf by leaf, over the reflectors, so ``U = Q Ur`` ends up C-ordered in the same
    buffer. The reduction is made of Householder transformations only, so it is backward
    stable like a plain Householder QR, and much faster for tall matrices because each leaf's
    panel factorisation runs in cache.
    """

    k: int
    R: FloatArray  # (k, k) upper triangular
    top: TallQR | None  # the factorisation of the stacked R factors of the leaves
    leaves: list[tuple[FloatArray, FloatArray]]  # (Householder vectors, T) of each leaf
    buffer: FloatArray  # bottom level only: the leaves' storage, then U
    bounds: list[tuple[int, int]]  # bottom level only: the leaves' rows

    def __init__(self, X: FloatArray | None, cols: IntArray, center: FloatArray | None,
                 sqrt_w: FloatArray | None, *, blocks: list[FloatArray] | None = None,
                 col_mult: FloatArray | None = None,
                 center_lo: FloatArray | None = None) -> None:
        if blocks is None:
            assert X is not None and center is not None
            self.k = cols.size
            n_blocks = self._plan_leaves(X.shape[0], self.k)
            source: Iterable[FloatArray] = self._fill_leaves(X, cols, center, sqrt_w, col_mult,
                                                             center_lo)
        else:
            self.k, n_blocks, source = blocks[0].shape[1], len(blocks), blocks
        geqrt, self._gemqrt = _qr_lapack()
        self.leaves = []
        # the leaves' R factors go straight into the blocks of the next level (no extra copies)
        group = max(1, leaf_rows(self.k) // self.k)
        n_up = -(-n_blocks // group)
        upper = [np.zeros((self.k * min(group, n_blocks - i * group), self.k), order="F")
                 for i in range(n_up)] if n_blocks > 1 else []
        R = np.zeros((0, self.k))
        for i, block in enumerate(source):  # each leaf is factorised right after it is filled
            nb = max(1, min(QR_NB, *block.shape))
            v, t, info = geqrt(nb, block, overwrite_a=True)
            if info != 0:
                raise np.linalg.LinAlgError(f"QR factorisation failed (LAPACK info={info})")
            self.leaves.append((v, t))
            if upper:
                g, j = divmod(i, group)
                upper[g][j * self.k:(j + 1) * self.k] = np.triu(v[: self.k])
            else:
                R = np.triu(v[: min(v.shape[0], self.k)])
        self.top = None
        if upper:
            self.top = TallQR(None, cols, None, None, blocks=upper)
            self.R = self.top.R
        else:
            self.R = R

    @classmethod
    def empty(cls, n: int) -> TallQR:
        obj = cls.__new__(cls)
        obj.k, obj.leaves, obj.top, obj.R = 0, [], None, np.zeros((0, 0))
        obj.buffer, obj.bounds = np.zeros(0), [(0, n)]
        return obj

    def _plan_leaves(self, n: int, k: int) -> int:
        n_leaves = max(1, n // leaf_rows(k))
        edges = np.linspace(0, n, n_leaves + 1).round().astype(np.int64)
        self.bounds = list(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))
        self.buffer = np.empty(n * k)
        return n_leaves

    def _fill_leaves(self, X: FloatArray, cols: IntArray, center: FloatArray,
                     sqrt_w: FloatArray | None,
                     col_mult: FloatArray | None,
                     center_lo: FloatArray | None = None) -> Iterator[FloatArray]:
        """Write each leaf (centred, weighted columns, times ``col_mult``) into its slot; yields it."""
        k = cols.size
        c = center[cols]
        c_lo = None if center_lo is None else center_lo[cols]
        span = column_span(cols)
        for lo, hi in self.bounds:
            leaf = self.buffer[lo * k:hi * k].reshape(k, hi - lo).T  # Fortran-ordered view
            fill_columns(leaf, X, lo, hi, cols, span)
            leaf -= c  # (copy, then subtract in place: a transposing subtract is twice as slow)
            if c_lo is not None:
                leaf -= c_lo
            if col_mult is not None:
                leaf *= col_mult
            if sqrt_w is not None:
                leaf *= sqrt_w[lo:hi, None]
            yield leaf

    def _parts(self, M: FloatArray) -> Iterator[FloatArray]:
        """The (k, r) pieces of Q_top M that each leaf's reflectors act on, leaf by leaf.

        They are produced lazily, one block of the level above at a time, so the full stack
        (one k-row piece per leaf) is never held.
        """
        if self.top is None:
            yield M
            return
        k = self.k
        for block in self.top._products(M):
            for j in range(block.shape[0] // k):
                yield block[j * k:(j + 1) * k]

    def _products(self, M: FloatArray) -> Iterator[FloatArray]:
        """Q M leaf by leaf (M has k rows): one (leaf rows, r) array per leaf."""
        for i, part in enumerate(self._parts(M)):
            yield self._leaf_times(i, part)

    def _leaf_times(self, i: int, M: FloatArray) -> FloatArray:
        v, t = self.leaves[i]
        out = np.zeros((v.shape[0], M.shape[1]), order="F")
        out[: M.shape[0]] = M[: v.shape[0]]
        out, info = self._gemqrt(v, t, out, overwrite_c=True)
        if info != 0:
            raise np.linalg.LinAlgError(f"applying Q failed (LAPACK info={info})")
        return out

    def q_times(self, M: FloatArray) -> FloatArray:
        """Q M for a square (k, k) ``M``, written C-ordered over this factorisation's buffer.

        The factorisation is consumed: afterwards the buffer holds the product.
        """
        n, k = self.bounds[-1][1], self.k
        U = self.buffer[: n * k].reshape(n, k)
        for (lo, hi), block in zip(self.bounds, self._products(M), strict=True):
            U[lo:hi] = block  # the leaf's reflectors, stored there, are no longer needed
        self.leaves, self.top = [], None
        return U


def leaf_rows(k: int) -> int:
    """Rows of one leaf of the tall QR for ``k`` columns."""
    return max(QR_LEAF_ROWS, 4 * k)


def stream_rows(k: int) -> int:
    """The most rows of one leaf of :func:`streaming_r` for ``k`` columns (segments are
    :data:`SEGMENT_LEAVES` of them)."""
    return max(leaf_rows(k), STREAM_LEAF_BYTES // (8 * (k + 1)))


def stream_leaves(lo: int, hi: int, k: int) -> list[tuple[int, int]]:
    """The leaves of rows ``lo:hi`` (one segment) in :func:`streaming_r`, for ``k`` columns.

    Equal leaves of at most :func:`stream_rows` rows: a leaf costs a dozen numpy calls
    besides its factorisation, which hold the GIL, so narrow designs take leaves of about
    ``STREAM_LEAF_BYTES`` (1e6 × 20, BLAS on one thread per worker, two cores: 98 ms in
    leaves of 2,048 rows, 52 ms in leaves of 1 MiB, 6,241 rows), and a segment is never left
    with a sliver.
    """
    return equal_parts(lo, hi, stream_rows(k))


def equal_parts(lo: int, hi: int, most: int) -> list[tuple[int, int]]:
    """``lo:hi`` cut into the fewest equal ranges of at most ``most`` rows (sizes differ by
    one at most)."""
    count = max(1, -(-(hi - lo) // max(most, 1)))
    edges = np.linspace(lo, hi, count + 1).round().astype(np.int64).tolist()
    return list(pairwise(edges))


@functools.cache
def _qr_lapack() -> tuple[Any, Any]:
    """LAPACK's double-precision geqrt and gemqrt (looked up once)."""
    return tuple(sla.get_lapack_funcs(("geqrt", "gemqrt"), (np.zeros((1, 1)),)))  # type: ignore[return-value]


def column_exponents(X: FloatArray, cols: IntArray, center: FloatArray,
                      sqrt_w: FloatArray | None) -> IntArray:
    """Binary exponents of max_i |sqrt(w_i)(X_ij − x̄_j)| over ``cols``, one block of rows at a time."""
    big = np.zeros(cols.size)
    span = column_span(cols)
    n = X.shape[0]
    step = row_block(cols.size)
    for lo in range(0, n, step):
        hi = min(lo + step, n)
        B = take_columns(X, slice(lo, hi), cols, span) - center[cols]
        if sqrt_w is not None:
            B *= sqrt_w[lo:hi, None]
        np.maximum(big, np.abs(B).max(axis=0), out=big)
    return binary_exponents(big)


def multipliers(e: IntArray) -> FloatArray | None:
    """2^-e for the pre-scaled QR (None when no column needs it)."""
    return np.ldexp(1.0, -e) if e.any() else None
