"""One chunk's design as column pieces: assembled a block of rows at a time, or all at once.

:func:`chunk_columns` evaluates the formula on one chunk with the spec of pass 1 (patsy's
design infos: the same columns, levels and transform statistics as in memory), drops and
counts the rows with missing values, applies ``subset`` and the weights, and returns a
:class:`ChunkColumns`: where each design column comes from (a column of the data, a
constant, or a block patsy built for a factor or an interaction), which rows are kept, the
response and the weights. Nothing of the size of the design is formed:
:meth:`ChunkColumns.fill` writes any block of rows into a caller's buffer (the leaves of the
streaming QR of :mod:`attnreg.large.accumulate`, which stay in cache), and
:meth:`ChunkColumns.design` assembles the whole :class:`ChunkDesign` for the passes that
want it.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from attnreg.large.sources import as_source
>>> from attnreg.large.spec import learn_spec
>>> from attnreg.large.columns import chunk_columns
>>> df = pd.DataFrame({"y": [1.0, 2, 3, 4], "x": [1.0, np.nan, 3, 5], "g": list("abab")})
>>> spec = learn_spec("y ~ x + C(g)", as_source(df))
>>> cols = chunk_columns(spec, df)
>>> cols.n_obs, cols.n_dropped, cols.rows.tolist()
(3, 1, [0, 2, 3])
>>> block = np.zeros((2, 3))
>>> cols.fill(block, 1, 3)      # design rows 1 and 2 of the kept rows: data rows 2 and 3
>>> block.tolist()
[[1.0, 0.0, 3.0], [1.0, 1.0, 5.0]]
>>> cols.design().X.shape
(3, 3)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import patsy

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import DataError
from attnreg.large.spec import ChunkSpec

__all__ = ["ChunkColumns", "ChunkDesign", "Piece", "chunk_columns", "chunk_design"]


@dataclass(frozen=True)
class ChunkDesign:
    """One chunk's rows of the design.

    Attributes
    ----------
    X : ndarray, shape (m, n_coef)
        Design rows (C-contiguous float64), rows of weight zero left out.
    y : ndarray, shape (m,)
    weights : ndarray, shape (m,) or None
    rows : ndarray of int, shape (m,)
        Positions of these rows within the chunk's frame.
    labels : pandas.Index
        Their row labels (global row numbers for files, arrow and polars).
    n_dropped : int
        Rows dropped for missing values (formula variables or weights).
    n_excluded : int
        Rows excluded by ``subset``.
    n_zero_weight : int
        Rows of weight zero (left out of the fit, as R's ``lm``).
    n_read : int
        Rows of the chunk.
    leverage : ndarray, shape (m,), or None
        Each row's leverage on what the design does not carry (absorbed fixed effects),
        added to the design's own hat value; NaN: a row the absorbed part fits exactly
        (hat value 1). None: nothing absorbed.
    """

    X: FloatArray
    y: FloatArray
    weights: FloatArray | None
    rows: IntArray
    labels: pd.Index = field(repr=False)
    n_dropped: int = 0
    n_excluded: int = 0
    n_zero_weight: int = 0
    n_read: int = 0
    leverage: FloatArray | None = field(default=None, repr=False)

    @property
    def n_obs(self) -> int:
        """Rows of the chunk in the fit."""
        return int(self.X.shape[0])


@dataclass(frozen=True)
class Piece:
    """Design columns ``start:stop`` from ``value`` (None: the constant 1).

    ``value`` has one row per row of the chunk (``raw``: indexed by the kept rows' positions)
    or one row per kept row (built by patsy for the kept rows only).
    """

    start: int
    stop: int
    value: Any
    raw: bool


@dataclass(frozen=True)
class ChunkColumns:
    """One chunk's design, kept as the pieces it is assembled from (see the module notes).

    Attributes
    ----------
    n_coef : int
        Design columns.
    y : ndarray, shape (m,)
        The response of the kept rows.
    weights : ndarray, shape (m,) or None
    take : ndarray of int, shape (m,), or None
        Positions of the kept rows within the chunk (None: every row is kept).
    index : pandas.Index
        The chunk's row labels (all rows; :attr:`labels` are the kept ones).
    names : list of str
        Design column names (for messages).
    response_name : str
    n_dropped, n_excluded, n_zero_weight, n_read : int
        As :class:`ChunkDesign`.
    complete : bool
        Whether rows with missing values were looked for and dropped (False: built with
        ``assume_complete``; a NaN is then found only when the rows are assembled).
    leverage : ndarray, shape (m,), or None
        As :class:`ChunkDesign`, for the kept rows.
    """

    pieces: tuple[Piece, ...] = field(repr=False)
    n_coef: int
    y: FloatArray = field(repr=False)
    weights: FloatArray | None = field(repr=False)
    take: IntArray | None = field(repr=False)
    index: pd.Index = field(repr=False)
    names: list[str] = field(repr=False)
    response_name: str = ""
    n_dropped: int = 0
    n_excluded: int = 0
    n_zero_weight: int = 0
    n_read: int = 0
    complete: bool = True
    leverage: FloatArray | None = field(default=None, repr=False)

    @property
    def n_obs(self) -> int:
        """Rows of the chunk in the fit."""
        return int(self.y.shape[0])

    @property
    def rows(self) -> IntArray:
        """Positions of the kept rows within the chunk."""
        return np.arange(self.n_obs, dtype=np.int64) if self.take is None else self.take

    @property
    def labels(self) -> pd.Index:
        """Row labels of the kept rows."""
        return self.index if self.take is None else self.index[self.take]

    def fill(self, dest: FloatArray, lo: int, hi: int) -> None:
        """Write design rows ``lo:hi`` (of the kept rows) into ``dest`` (hi − lo, n_coef).

        ``dest`` may be any layout (a Fortran-ordered leaf is filled column by column, each
        a contiguous copy).
        """
        take = None if self.take is None else self.take[lo:hi]
        for piece in self.pieces:
            out = dest[:, piece.start:piece.stop]
            if piece.value is None:
                out[...] = 1.0
            elif piece.raw and take is not None:
                out[...] = piece.value[take]
            else:
                out[...] = piece.value[lo:hi]

    def design(self) -> ChunkDesign:
        """The whole design of the kept rows (C-ordered), every value checked finite.

        Raises
        ------
        DataError
            A non-finite value, its column and row named.
        """
        from attnreg.formula.builder import check_finite

        X = np.empty((self.n_obs, self.n_coef))
        self.fill(X, 0, self.n_obs)
        labels = self.labels
        check_finite(X, self.names, labels, "data")
        check_finite(self.y[:, None], [self.response_name], labels, "data")
        return ChunkDesign(X=X, y=self.y, weights=self.weights, rows=self.rows, labels=labels,
                           n_dropped=self.n_dropped, n_excluded=self.n_excluded,
                           n_zero_weight=self.n_zero_weight, n_read=self.n_read,
                           leverage=self.leverage)

    def check_rows(self, block: FloatArray, lo: int) -> None:
        """DataError naming the first non-finite value of ``block`` (design rows ``lo:``, the
        response as its last column), if there is one."""
        from attnreg.formula.builder import check_finite

        labels = self.labels[lo:lo + block.shape[0]]
        check_finite(np.ascontiguousarray(block[:, :self.n_coef]), self.names, labels, "data")
        check_finite(np.ascontiguousarray(block[:, self.n_coef:]), [self.response_name], labels,
                     "data")


def _evaluate(spec: ChunkSpec, frame: pd.DataFrame,
              find_na: bool = True) -> tuple[dict[Any, Any], Any]:
    """Every factor's values on the chunk (numeric: 2-d arrays, views of the data's columns
    where possible; categorical: 1-d codes) and the mask of rows without NA (None: all;
    ``find_na=False``: float factors are not searched)."""
    from attnreg.formula.builder import eval_factor

    na = patsy.NAAction("drop")
    n = frame.shape[0]
    values: dict[Any, Any] = {}
    good: Any = None
    for info in (spec.y_info, spec.x_info):
        for factor_info in info.factor_infos.values():
            if factor_info in values:
                continue
            value, is_na, _ = eval_factor(factor_info, frame, na, find_na=find_na)
            if value.shape[0] != n:
                raise patsy.PatsyError(f"factor {factor_info.factor.name()} gave {value.shape[0]} "
                                       f"rows for a chunk of {n}", factor_info.factor)
            values[factor_info] = value
            if is_na is not None and is_na.any():
                good = ~is_na if good is None else good & ~is_na
    return values, good


def _pieces(info: Any, values: dict[Any, Any], take: IntArray | None,
            n_kept: int) -> tuple[Piece, ...]:
    """Where each design column of ``info`` comes from (patsy's ``_build_design_matrix``,
    plain numeric columns referenced rather than copied)."""
    from attnreg.formula.builder import merge_adjacent_columns, column_sources
    from attnreg.formula.factors import build_subterm

    by_factor = {fi.factor: values[fi] for fi in info.factor_infos.values()}
    plain: list[tuple[int, int, Any]] = []
    built: list[Piece] = []
    for start, stop, value, subterm in column_sources(info, by_factor):
        if subterm is None:
            plain.append((start, stop, value))
            continue
        # categorical or interaction: patsy's products (vectorised), for the kept rows only
        sub = {f: by_factor[f] if take is None else by_factor[f][take] for f in subterm.factors}
        out = np.empty((n_kept, stop - start))
        build_subterm(subterm, info.factor_infos, sub, out)
        built.append(Piece(start, stop, out, raw=False))
    merged = [Piece(a, b, v, raw=v is not None) for a, b, v in merge_adjacent_columns(plain)]
    return tuple(sorted([*merged, *built], key=lambda p: p.start))


def _response(spec: ChunkSpec, values: dict[Any, Any], take: IntArray | None,
              m: int) -> FloatArray:
    """The response of the kept rows (a view of the data's column when it is one, float64)."""
    (piece,) = _pieces(spec.y_info, values, take, m)
    if piece.raw and take is None and piece.value.dtype == np.float64:
        return np.asarray(piece.value[:, 0])
    y = np.empty((m, 1))
    ChunkColumns(pieces=(piece,), n_coef=1, y=y[:, 0], weights=None, take=take,
                 index=pd.RangeIndex(0), names=[]).fill(y, 0, m)
    return y[:, 0]


def chunk_columns(spec: ChunkSpec, frame: pd.DataFrame, *,
                  assume_complete: bool = False) -> ChunkColumns:
    """One chunk's design with the spec of pass 1, as column pieces (nothing assembled).

    Parameters
    ----------
    spec : ChunkSpec
    frame : DataFrame
        A chunk from :meth:`ChunkSource.frames` with ``uses=spec.uses`` (input rules applied)
        and the columns of :meth:`ChunkSpec.read_columns`.
    assume_complete : bool
        Do not search the float variables for NaN (a pass over each): the caller checks
        every assembled value (:attr:`ChunkColumns.complete` is then False) and, on finding
        a non-finite one, builds the chunk again with the search (missing rows dropped).

    Returns
    -------
    ChunkColumns

    Raises
    ------
    DataError
        Negative or non-finite weights, missing values with ``na_action="raise"`` (the first
        row named). Non-finite design values are found when the rows are assembled
        (:meth:`ChunkColumns.design`, :meth:`ChunkColumns.check_rows`).
    """
    from attnreg.formula.checks import subset_mask, translate_patsy_error

    n = frame.shape[0]
    try:
        values, good = _evaluate(spec, frame, find_na=not assume_complete)
    except patsy.PatsyError as exc:
        raise translate_patsy_error(exc, "data") from None
    rows = np.arange(n, dtype=np.int64) if good is None else np.flatnonzero(good)
    n_dropped = n - rows.size
    keep_mask = np.ones(rows.size, dtype=bool)
    w = None
    if spec.weights is not None:
        try:
            w_all = np.asarray(frame[spec.weights], dtype=np.float64)
        except (TypeError, ValueError):
            raise DataError(f"weights column {spec.weights!r} must be numeric") from None
        w = w_all[rows]
        ok = ~np.isnan(w)
        n_dropped += int((~ok).sum())
        keep_mask &= ok
    if spec.na_action == "raise" and n_dropped:
        bad = np.ones(n, dtype=bool)
        bad[rows[keep_mask]] = False
        first = frame.index[int(np.argmax(bad))]
        raise DataError(f"na_action='raise': rows have missing values; the first is row {first!r}")
    n_excluded = 0
    if spec.subset is not None:
        mask = subset_mask(frame, spec.subset) if n else np.zeros(0, dtype=bool)
        assert mask is not None
        n_excluded = int((~mask).sum())
        # rows excluded by subset are not counted as dropped for NA
        n_dropped -= int((~mask[np.setdiff1d(np.arange(n), rows)]).sum()) if n_dropped else 0
        keep_mask &= mask[rows]
    n_zero = 0
    if w is not None:
        wk = w[keep_mask]
        bad = ~np.isfinite(wk) | (wk < 0)
        if bad.any():
            i = np.flatnonzero(keep_mask)[int(np.argmax(bad))]
            raise DataError(f"weights must be finite and non-negative; row "
                            f"{frame.index[rows[i]]!r} has weight {float(w[i])!r}")
        n_zero = int((keep_mask & (w == 0)).sum())
        keep_mask &= w != 0
    if not keep_mask.all():
        rows = rows[keep_mask]
        w = None if w is None else w[keep_mask]
    take = None if rows.size == n else rows
    m = rows.size
    x_pieces = _pieces(spec.x_info, values, take, m)
    cols = ChunkColumns(pieces=x_pieces, n_coef=spec.n_coef, y=_response(spec, values, take, m),
                        weights=w, take=take, index=frame.index, names=spec.column_names,
                        response_name=spec.response_name, n_dropped=int(n_dropped),
                        n_excluded=n_excluded, n_zero_weight=n_zero, n_read=n,
                        complete=not assume_complete)
    return spec.finish_columns(cols, frame)  # type: ignore[no-any-return]


def chunk_design(spec: ChunkSpec, frame: pd.DataFrame) -> ChunkDesign:
    """One chunk's whole design: :func:`chunk_columns` (same arguments), assembled by
    :meth:`ChunkColumns.design` (non-finite values named with their column and row)."""
    return chunk_columns(spec, frame).design()
