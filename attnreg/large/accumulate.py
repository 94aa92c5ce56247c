"""Pass 2 of a chunked fit: the R factor of every chunk's rows, merged exactly.

:class:`RFactor` is the triangular factor of the weighted, centred design and response.
:meth:`RFactor.from_columns` computes one chunk's factor from its column pieces
(:func:`attnreg.large.columns.chunk_columns`): the design is never assembled; each leaf of
rows is written, shifted and weighted, into a small buffer under the R of the rows before it
and QR-factorised there (LAPACK geqrt), segment by segment on the worker threads. The
chunk's factors are merged in row order (:meth:`RFactor.merge`).

Centring. The in-memory fit centres the columns on their weighted means before its QR, so
that an offset (a column of years, 1e6 + noise) costs no digits. Over chunks the means are
not known in advance. Each segment of rows is therefore shifted by a vector c near its
means (the column means of its first leaf) and factorised with the intercept column √w:

    [√w | √w (X − c)]  =  Q R,   R = [[√Σw, √Σw (x̄ − c)ᵀ], [0, R̃]]

where R̃ is the R of the columns centred on their exact weighted means x̄ (R̃ᵀR̃ = ZᵀZ −
r₀₁ᵀr₀₁), to rounding of the size of the shifted columns, not of their offsets. Two factors
with shifts c_a and c_b are merged around a common c: since X − c = (X − c_a) + 1 (c_a − c)ᵀ,
each factor's first row gains √Σw (c_a − c) — a change of the size of the difference of the
shifts — and the stacked factors are re-triangularised by a Householder QR (the TSQR combine
step). So the final R's trailing block is the R of the design centred on its exact weighted
means: the same accuracy as centring first. (Accumulating the uncentred [1 | X] instead
would lose log10(|mean| / sd) digits per column, and a pass for the means would cost a read
of the data.) Without an intercept nothing is shifted, as in memory. The column sums are
kept as the shifted sums plus Σw c, in extended precision, so the means are those of the
data to rounding of their own size.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from attnreg.large.sources import as_source
>>> from attnreg.large.spec import learn_spec
>>> from attnreg.large.accumulate import RFactor, chunk_design
>>> rng = np.random.default_rng(0)
>>> df = pd.DataFrame({"x": 1e6 + rng.normal(size=50)})
>>> df["y"] = 2 * df.x + rng.normal(size=50)
>>> src = as_source(df, chunk_rows=20)
>>> spec = learn_spec("y ~ x", src)
>>> parts = [RFactor.from_chunk(chunk_design(spec, f), spec) for f in src.frames(["x", "y"])]
>>> total = parts[0].merge(parts[1]).merge(parts[2])
>>> total.n_obs, total.n_coef
(50, 2)
>>> R = total.centred_r()            # R of [x − x̄ | y − ȳ]
>>> xc = df.x - df.x.mean()
>>> bool(np.isclose(abs(R[0, 0]), np.sqrt(xc @ xc), rtol=1e-12))
True
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg as sla

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.large.columns import ChunkColumns, ChunkDesign, Piece, chunk_columns, chunk_design
from attnreg.large.spec import ChunkSpec

__all__ = ["ChunkDesign", "Incomplete", "RFactor", "chunk_columns", "chunk_design"]


@dataclass(frozen=True)
class RFactor:
    """R of the weighted, centred [X | y] of some rows, mergeable with others (TSQR).

    Attributes
    ----------
    R : ndarray, shape (p + 1, p + 1) or (p, p)
        Upper triangular. With an intercept: the R of [√w | √w (X_c − c) | √w (y − c_y)]
        (p = n_coef: the intercept column is replaced by √w and the centring is stored in
        :attr:`center`); without one, the R of [√w X | √w y] (p = n_coef + 1 columns).
    center : ndarray, shape (n_coef + 1,)
        The weighted means the columns (intercept excluded) and the response were centred on
        (zeros without an intercept; the intercept's own entry is 0).
    n_obs : int
        Rows in the fit.
    sum_w : float
        Σ w (``n_obs`` without weights).
    intercept : bool
    weighted : bool
    n_dropped, n_excluded, n_zero_weight, n_read : int
        Row counts (missing values, ``subset``, weight zero, rows read).
    sum_log_w : float
        Σ log w (the log-likelihood of a weighted fit).
    sums : ndarray, shape (n_coef + 1,)
        Σ w [X | y] per column, added over the chunks (the means are ``sums / sum_w``, as the
        in-memory fit's; see :meth:`means`).
    """

    R: FloatArray
    center: FloatArray
    n_obs: int
    sum_w: float
    intercept: bool
    weighted: bool
    n_dropped: int = 0
    n_excluded: int = 0
    n_zero_weight: int = 0
    n_read: int = 0
    sum_log_w: float = 0.0
    sums: FloatArray | None = field(default=None, repr=False)

    @property
    def n_coef(self) -> int:
        """Number of design columns (the intercept included)."""
        return int(self.center.size - 1)

    @classmethod
    def empty(cls, n_coef: int, intercept: bool, weighted: bool) -> RFactor:
        """The factor of no rows (the neutral element of :meth:`merge`)."""
        k = n_coef + 1
        return cls(R=np.zeros((k, k)), center=np.zeros(k), n_obs=0, sum_w=0.0,
                   intercept=intercept, weighted=weighted, sums=_extended(np.zeros(k)))

    @classmethod
    def from_chunk(cls, chunk: ChunkDesign, spec: ChunkSpec | None = None, *,
                   intercept: bool | None = None) -> RFactor:
        """The factor of one chunk's assembled design (:meth:`from_columns` on its X).

        Parameters
        ----------
        chunk : ChunkDesign
        spec : ChunkSpec, optional
            Says whether the design has an intercept (column 0); or give ``intercept``.
        intercept : bool, optional

        Returns
        -------
        RFactor
        """
        has_int = spec.intercept if spec is not None else bool(intercept)
        p = chunk.X.shape[1]
        columns = ChunkColumns(pieces=(Piece(0, p, chunk.X, raw=False),) if p else (),
                               n_coef=p, y=chunk.y, weights=chunk.weights, take=None,
                               index=chunk.labels, names=[str(j) for j in range(p)],
                               n_dropped=chunk.n_dropped, n_excluded=chunk.n_excluded,
                               n_zero_weight=chunk.n_zero_weight, n_read=chunk.n_read)
        return cls.from_columns(columns, has_int)

    @classmethod
    def from_columns(cls, chunk: ChunkColumns, intercept: bool, *,
                     workers: int | None = None) -> RFactor:
        """The factor of one chunk's rows, its design assembled a leaf of rows at a time.

        The kept rows are cut into segments of :data:`SEGMENT_ROWS` rows (fixed by the shape,
        not by the number of threads); each segment's factor is computed by a worker thread
        (:func:`attnreg.threads.parallel_map`: the QR releases the GIL) and the segments are
        merged in row order, so the factor is the same on any number of threads. Within a
        segment every leaf of rows is written, shifted and weighted, under the R of the rows
        before it and QR-factorised in place (LAPACK geqrt): nothing of the chunk's size is
        formed, and each value is read once. See the module notes for the shift.

        Parameters
        ----------
        chunk : ChunkColumns
        intercept : bool
            Whether design column 0 is the intercept.
        workers : int, optional
            Threads (default :func:`attnreg.threads.row_workers`).

        Returns
        -------
        RFactor

        Raises
        ------
        DataError
            A non-finite value (its column and row named).
        """
        from attnreg.threads import narrow_blas, parallel_map

        n, p = chunk.n_obs, chunk.n_coef
        weighted = chunk.weights is not None
        counts: dict[str, Any] = {"n_dropped": chunk.n_dropped, "n_excluded": chunk.n_excluded,
                                  "n_zero_weight": chunk.n_zero_weight, "n_read": chunk.n_read}
        if n == 0:
            return cls(R=np.zeros((p + 1, p + 1)), center=np.zeros(p + 1), n_obs=0, sum_w=0.0,
                       intercept=intercept, weighted=weighted, sums=_extended(np.zeros(p + 1)),
                       **counts)
        spans = [(lo, min(lo + SEGMENT_ROWS, n)) for lo in range(0, n, SEGMENT_ROWS)]
        with narrow_blas(p + 1):  # the threads are the segments', not BLAS's (attnreg.threads)
            parts = parallel_map(lambda span: _segment_factor(chunk, intercept, span), spans,
                                 workers)
        total: RFactor | None = None
        for R, center, dsums, sum_w, rows in parts:
            part = cls(R=_positive_diagonal(R), center=center, n_obs=rows, sum_w=sum_w,
                       intercept=intercept, weighted=weighted,
                       sums=dsums + _extended(center) * sum_w)
            total = part if total is None else total.merge(part)
        assert total is not None
        slw = float(np.log(chunk.weights).sum()) if chunk.weights is not None else 0.0
        return dataclasses.replace(total, sum_log_w=slw, **counts)

    def merge(self, other: RFactor) -> RFactor:
        """The factor of the rows of both (the TSQR combine step; associative, any order).

        Parameters
        ----------
        other : RFactor
            Of the same design (same columns, intercept and weighting).

        Returns
        -------
        RFactor
        """
        if other.R.shape != self.R.shape or other.intercept != self.intercept:
            raise OptionError(f"cannot merge R factors of different designs (shapes "
                              f"{self.R.shape} and {other.R.shape})")
        counts: dict[str, Any] = {"n_dropped": self.n_dropped + other.n_dropped,
                  "n_excluded": self.n_excluded + other.n_excluded,
                  "n_zero_weight": self.n_zero_weight + other.n_zero_weight,
                  "n_read": self.n_read + other.n_read,
                  "sum_log_w": self.sum_log_w + other.sum_log_w}
        weighted = self.weighted or other.weighted
        if other.n_obs == 0 or self.n_obs == 0:
            base = other if self.n_obs == 0 else self
            return RFactor(R=base.R, center=base.center, n_obs=base.n_obs, sum_w=base.sum_w,
                           intercept=self.intercept, weighted=weighted, sums=base.sums, **counts)
        sum_w = self.sum_w + other.sum_w
        Ra, Rb = self.R.copy(), other.R.copy()
        if self.intercept:
            # pooled mean, as the difference added to one side (exact when both are equal)
            center = self.center + (other.center - self.center) * (other.sum_w / sum_w)
            center[0] = 0.0
            Ra[0, 1:] += np.sqrt(self.sum_w) * (self.center - center)[1:]
            Rb[0, 1:] += np.sqrt(other.sum_w) * (other.center - center)[1:]
        else:
            center = self.center
        R = sla.qr(np.vstack([Ra, Rb]), mode="r", check_finite=False)[0][: Ra.shape[0]]
        sums = None if self.sums is None or other.sums is None else self.sums + other.sums
        return RFactor(R=_positive_diagonal(np.triu(R)), center=center,
                       n_obs=self.n_obs + other.n_obs, sum_w=sum_w, intercept=self.intercept,
                       weighted=weighted, sums=sums, **counts)

    def centred_r(self) -> FloatArray:
        """R of the centred, weighted [X | y] without the intercept column, shape (k+1, k+1).

        What :func:`attnreg.linear.tallqr.streaming_r` gives in memory (k = non-intercept
        columns). With R = [[r00, r01], [0, R11]] the R of [√w | √w (X − c)], R11ᵀR11 =
        ZᵀZ − r01ᵀr01 is the cross-product of the columns centred on their exact weighted
        means whatever the shift c: R11 is that R.
        """
        return self.R[1:, 1:] if self.intercept else self.R

    def means(self) -> FloatArray:
        """Weighted means of the columns (intercept excluded: 0) and the response, shape
        (n_coef + 1,) (zeros without an intercept).

        ``sums / sum_w``: the column sums added over the chunks, divided once, which is what
        the in-memory fit computes (one weighted sum per column). Not ``c + r01 / r00``: in
        exact arithmetic the same number, but the computed r01 carries the
        re-triangularisations' rounding, of the size of the centred columns' norms
        (ε ‖√w (x − x̄)‖), and the chunks' refined means carry rounding of the size of the
        columns' spread; on an ill-conditioned design a mean off by ε·sd moves the
        intercept's standard error by about cond(Z)² ε sd |v'x̄| / (1/Σw + x̄'Ωx̄)
        (v the near-null direction): two digits on ``benchmarks/large_accuracy.py``'s design.
        """
        if not self.intercept or self.n_obs == 0:
            return np.zeros_like(self.center)
        out = self.center.copy() if self.sums is None else np.asarray(
            self.sums / self.sum_w, dtype=np.float64)
        out[0] = 0.0
        return out

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_rfactor, (self.R, self.center, self.n_obs, self.sum_w, self.intercept,
                           self.weighted, self.n_dropped, self.n_excluded, self.n_zero_weight,
                           self.n_read, self.sum_log_w, self.sums))


class Incomplete(Exception):
    """A chunk built with ``assume_complete`` has a non-finite value (perhaps a missing one)."""


#: rows per task of :meth:`RFactor.from_columns` (a worker thread's share of a chunk)
SEGMENT_ROWS = 1 << 16
#: narrow designs: leaves of about this many bytes (at most NARROW_LEAF_ROWS rows), so that
#: the per-leaf work in Python is small next to the factorisation (k + 1 = 21 columns on
#: 2e7 rows: 2.4 s with leaves of 2048 rows, 1.4 s with 8192, one thread)
LEAF_BYTES = 3 << 19
NARROW_LEAF_ROWS = 8192


def _extended(values: FloatArray) -> Any:
    """``values`` in extended precision (``np.longdouble``: float64 where it has no more)."""
    return np.asarray(values, dtype=np.longdouble)


def _segment_factor(chunk: ChunkColumns, intercept: bool,
                    span: tuple[int, int]) -> tuple[FloatArray, FloatArray, Any, float, int]:
    """(R, shift, Σ w (row − shift) in extended precision, Σ w, rows) of rows ``span``.

    The streaming QR of :func:`attnreg.linear.tallqr.streaming_r`, with the design's leaves
    filled from the chunk's column pieces. With an intercept the columns are
    [√w | √w (X − c) | √w (y − c_y)], c the first leaf's (unweighted) column means: any shift
    near the means keeps the centred columns' digits (the module notes), and the leaf is in
    cache when c is taken. Non-finite values are found from the leaf's column sums (a NaN
    or an infinity makes a sum non-finite) and then named by :meth:`ChunkColumns.check_rows`.
    """
    from attnreg.linear.lapack import geqrt, workspace
    from attnreg.linear.tallqr import leaf_rows as _leaf_rows, qr_block
    from attnreg.threads import scratch

    lo0, hi0 = span
    p = chunk.n_coef
    k1 = p + 1
    m = max(_leaf_rows(k1), min(NARROW_LEAF_ROWS, LEAF_BYTES // (8 * k1)))
    nb = qr_block(k1)
    t, work = workspace(k1, nb)
    R = np.zeros((k1, k1), order="F")
    c = np.zeros(k1)
    dsums = _extended(np.zeros(k1))
    sum_w = 0.0
    w = chunk.weights
    for lo in range(lo0, hi0, m):
        hi = min(lo + m, hi0)
        buf = scratch("leaf", (k1 + hi - lo, k1), order="F")  # this thread's, reused
        buf[:k1] = R
        leaf = buf[k1:]
        chunk.fill(leaf[:, :p], lo, hi)
        leaf[:, p] = chunk.y[lo:hi]
        if intercept:
            if lo == lo0:
                with np.errstate(all="ignore"):
                    c = leaf.mean(axis=0)
                c[0] = 0.0
                c[~np.isfinite(c)] = 0.0
            leaf[:, 1:] -= c[1:]
        with np.errstate(all="ignore"):
            sums = leaf.sum(axis=0) if w is None else w[lo:hi] @ leaf
        if not np.isfinite(sums).all():
            raw = np.empty((hi - lo, k1))
            chunk.fill(raw[:, :p], lo, hi)
            raw[:, p] = chunk.y[lo:hi]
            if not chunk.complete and not np.isfinite(raw).all():
                raise Incomplete  # missing values were not looked for: build it again
            chunk.check_rows(raw, lo)  # names the value; an overflowing sum goes on
        dsums += sums
        if w is None:
            sum_w += hi - lo
        else:
            sum_w += float(w[lo:hi].sum())
            leaf *= np.sqrt(w[lo:hi])[:, None]
        geqrt(buf, nb, t, work)
        R = np.triu(buf[:k1]).copy(order="F")  # its own copy: the buffer is reused
    return R, c, dsums, sum_w, hi0 - lo0


def _rfactor(*args: Any) -> RFactor:
    return RFactor(*args)


def _positive_diagonal(R: FloatArray) -> FloatArray:
    """R with rows multiplied by ±1 so that its diagonal is non-negative (a canonical form)."""
    sign = np.where(np.diag(R) < 0, -1.0, 1.0)
    return np.asarray(R * sign[:, None])
