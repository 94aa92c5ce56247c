"""Fixed effects beyond memory: each chunk's design with the fixed effects absorbed.

:class:`AbsorbedSpec` is the :class:`~attnreg.large.spec.ChunkSpec` of the model part, with
what pass A learned (:mod:`attnreg.fe.chunk_sums`): the combinations of fixed-effect levels
in the fit, and for each its fitted part D α of the response and of every regressor. Its
:meth:`AbsorbedSpec.finish_columns` turns each chunk's design into the residualised one,
x̃ = x − (D α)_c and ỹ = y − (D α)_c (c the row's combination, found by the values of the
key columns), the intercept dropped and the rows without a fixed effect (or removed as
singletons) left out. Every pass of the chunked fit (the R factor, the refinement, the
residual and covariance passes, on the local chunks or on dask's workers) builds its chunks
through it, so that they fit the residualised y on the residualised X, which by the
Frisch–Waugh–Lovell theorem has the slopes and residuals of the dummy-variable regression.
Memory: the combinations (keys and 1 + p numbers each), never the rows.

:func:`level_sums_part` is pass A's function of one chunk, :func:`key_part` that of the pass
that finds which fixed effects are nested in the cluster columns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import BoolArray, IntArray
from attnreg.exceptions import DataError
from attnreg.fe.chunk_sums import LevelSums
from attnreg.formula.parts import FixedEffectTerm
from attnreg.large.columns import ChunkColumns, Piece, chunk_columns, chunk_design
from attnreg.large.spec import ChunkSpec

__all__ = ["AbsorbedSpec", "KeySet", "cluster_codes", "key_columns_of", "key_part", "key_values",
           "level_sums_part"]


def key_columns_of(terms: tuple[FixedEffectTerm, ...]) -> tuple[str, ...]:
    """The columns whose values make a combination of levels (``firm^year + firm``: both)."""
    return tuple(dict.fromkeys(c for t in terms for c in t.columns))


def key_values(frame: pd.DataFrame, column: str, rows: IntArray) -> Any:
    """The values of ``column`` at ``rows`` as a plain array (categories as their values, so
    that chunks with different category sets agree)."""
    if column not in frame.columns:
        raise DataError(f"fixed effect column {column!r} is not a column of the data "
                        f"(columns: {', '.join(map(str, list(frame.columns)[:12]))})")
    return np.asarray(frame[column].to_numpy())[rows]


def _missing(keys: dict[str, Any], terms: tuple[FixedEffectTerm, ...]
             ) -> tuple[BoolArray, dict[str, int]]:
    """Rows with a missing key, and the count per term (a row may count in several)."""
    na = {c: np.asarray(pd.isna(v), dtype=bool) for c, v in keys.items()}
    n = len(next(iter(keys.values())))
    out, counts = np.zeros(n, dtype=bool), {}
    for term in terms:
        bad = np.zeros(n, dtype=bool)
        for c in term.columns:
            bad |= na[c]
        counts[term.text] = int(bad.sum())
        out |= bad
    return out, counts


def level_sums_part(spec: ChunkSpec, slopes: IntArray, terms: tuple[FixedEffectTerm, ...],
                    frame: pd.DataFrame) -> LevelSums:
    """Pass A on one chunk: :class:`LevelSums` of its rows in the fit (a ``map_reduce`` task).

    Parameters
    ----------
    spec : ChunkSpec
        The model part's (with its intercept).
    slopes : ndarray of int
        Design columns that are regressors (the intercept left out).
    terms : tuple of FixedEffectTerm
    frame : DataFrame
        A chunk with the spec's columns and the key columns.
    """
    chunk = chunk_design(spec, frame)
    keys = {c: key_values(frame, c, chunk.rows) for c in key_columns_of(terms)}
    bad, counts = _missing(keys, terms)
    if spec.na_action == "raise" and bad.any():
        first = int(np.flatnonzero(bad)[0])
        term = next(t.text for t in terms if any(pd.isna(keys[c][first]) for c in t.columns))
        raise DataError(f"fixed effect {term!r} is missing in row "
                        f"{chunk.labels[first]!r} (na_action='raise'); drop the row or use "
                        "na_action='drop'")
    ok = ~bad
    w = None if chunk.weights is None else chunk.weights[ok]
    return LevelSums.of_rows({c: v[ok] for c, v in keys.items()}, chunk.y[ok],
                             chunk.X[ok][:, slopes], w, counts)


@dataclass(frozen=True)
class AbsorbedSpec(ChunkSpec):
    """The model part's chunk spec with the fixed effects absorbed (module notes).

    Attributes
    ----------
    slopes : tuple of int
        Design columns of the model part that are regressors (the intercept left out).
    slope_names : tuple of str
    terms : tuple of FixedEffectTerm
    keys : pandas.Index or MultiIndex
        The combinations of the key columns' values seen in pass A, sorted.
    in_fit : ndarray of bool, shape (n_combinations,)
        Whether a combination's rows are in the fit (False: removed as singletons).
    fitted : ndarray, shape (n_combinations, 1 + p)
        D α of the response and of each regressor, per combination.
    leverage : ndarray, shape (n_combinations,), or None
        d_c'(D'WD)⁺d_c per combination (NaN: a level with a single row), when the passes
        need the hat values of the dummy-variable regression (HC2, HC3:
        :mod:`attnreg.fe.chunked_leverage`); each chunk's rows get w_i times it.
    """

    slopes: tuple[int, ...] = ()
    slope_names: tuple[str, ...] = ()
    terms: tuple[FixedEffectTerm, ...] = ()
    keys: Any = field(default=None, repr=False)
    in_fit: Any = field(default=None, repr=False)
    fitted: Any = field(default=None, repr=False)
    leverage: Any = field(default=None, repr=False)

    @property
    def column_names(self) -> list[str]:
        """The regressors' names (no intercept: the fixed effects absorb it)."""
        return list(self.slope_names)

    @property
    def intercept(self) -> bool:
        """False: the fixed effects absorb the intercept."""
        return False

    @property
    def n_coef(self) -> int:
        """Number of regressors."""
        return len(self.slopes)

    @property
    def key_columns(self) -> tuple[str, ...]:
        """The columns that make a combination of levels."""
        return key_columns_of(self.terms)

    def read_columns(self, extra: tuple[str, ...] = ()) -> list[str]:
        """The formula's, the weights', the fixed effects' and ``extra`` columns."""
        return ChunkSpec.read_columns(self, (*self.key_columns, *extra))

    def combination_of(self, frame: pd.DataFrame, rows: IntArray) -> IntArray:
        """Each row's combination (position in :attr:`keys`; −1 when a key is missing or the
        row is not in the fit).

        Raises
        ------
        DataError
            A combination pass A did not see (the data changed between passes).
        """
        values = [key_values(frame, c, rows) for c in self.key_columns]
        target = pd.Index(values[0]) if len(values) == 1 else pd.MultiIndex.from_arrays(values)
        combo = np.asarray(self.keys.get_indexer(target), dtype=np.int64)
        lost = combo < 0
        if lost.any():
            na = np.zeros(rows.size, dtype=bool)
            for v in values:
                na |= np.asarray(pd.isna(v), dtype=bool)
            if (lost & ~na).any():
                i = int(np.flatnonzero(lost & ~na)[0])
                raise DataError(f"row {frame.index[rows[i]]!r} has a combination of fixed "
                                f"effects ({', '.join(self.key_columns)}) the first pass did "
                                "not see: the data changed between the passes; fit again")
        combo[~lost] = np.where(self.in_fit[combo[~lost]], combo[~lost], -1)
        return combo

    def finish_columns(self, columns: ChunkColumns, frame: pd.DataFrame) -> ChunkColumns:
        """The chunk's residualised design: x − (D α)_c for the regressors and the response,
        rows without a combination in the fit left out."""
        rows = columns.rows
        combo = self.combination_of(frame, rows)
        ok = combo >= 0
        full = np.empty((columns.n_obs, len(self.x_info.column_names)))
        columns.fill(full, 0, columns.n_obs)
        at = combo[ok]
        fitted = self.fitted[at]  # (m, 1 + p)
        X = full[ok][:, list(self.slopes)] - fitted[:, 1:]
        y = columns.y[ok] - fitted[:, 0]
        take = rows[ok]
        p = len(self.slopes)
        weights = None if columns.weights is None else columns.weights[ok]
        leverage = None
        if self.leverage is not None:
            leverage = self.leverage[at] if weights is None else weights * self.leverage[at]
        return ChunkColumns(
            pieces=(Piece(0, p, X, raw=False),) if p else (), n_coef=p, y=y,
            weights=weights,
            take=None if take.size == columns.index.size else take, index=columns.index,
            names=list(self.slope_names), response_name=columns.response_name,
            n_dropped=columns.n_dropped, n_excluded=columns.n_excluded,
            n_zero_weight=columns.n_zero_weight, n_read=columns.n_read,
            complete=columns.complete, leverage=leverage)


@dataclass(frozen=True)
class KeySet:
    """The distinct (combination, cluster ids) of some rows of the fit (mergeable)."""

    table: pd.DataFrame = field(repr=False)

    def merge(self, other: KeySet) -> KeySet:
        """The distinct rows of both."""
        return KeySet(pd.concat([self.table, other.table]).drop_duplicates(ignore_index=True))


def key_part(spec: AbsorbedSpec, cluster: tuple[str, ...], frame: pd.DataFrame) -> KeySet:
    """One chunk's distinct (combination, cluster ids) over its rows in the fit."""
    cols = chunk_columns(spec, frame)
    rows = cols.rows
    combo = spec.combination_of(frame, rows)
    table = pd.DataFrame({"combination": combo,
                          **{f"cluster:{c}": key_values(frame, c, rows) for c in cluster}})
    return KeySet(table.drop_duplicates(ignore_index=True))


def cluster_codes(keys: KeySet, cluster: tuple[str, ...]) -> tuple[IntArray, IntArray]:
    """(combination of each distinct row, its cluster codes (rows, dims))."""
    t = keys.table
    codes = np.column_stack([pd.factorize(t[f"cluster:{c}"])[0] for c in cluster])
    return t["combination"].to_numpy(dtype=np.int64), codes.astype(np.int64)
