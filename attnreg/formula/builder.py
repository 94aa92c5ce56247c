"""Building the model matrices fast: patsy's semantics, one pass into a C-contiguous array.

patsy's ``dmatrices(..., return_type="dataframe")`` evaluates every factor through pandas,
assembles the design column by column into a C-ordered matrix (a strided write per column),
wraps it in a DataFrame and is then copied once more to a C-contiguous array. For a large
design that is several passes and up to three copies of the matrix. The builder here keeps
patsy's semantics (patsy's design infos, factor evaluation, NA rules and index checks), but
evaluates numeric factors straight to arrays (views of the data's columns when possible),
encodes factors and builds their columns without per-row Python (:mod:`.factors`, the same
levels, codes and products as patsy) and writes the design once, block of rows by block of
rows, into the final C-contiguous matrix.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import patsy

from attnreg._typing import BoolArray, FloatArray, IntArray
from attnreg.exceptions import DataError
from attnreg.threads import parallel_map

__all__ = ["check_finite", "column_sources", "design_rows", "model_arrays",
           "model_arrays_public"]

_BUILD_BLOCK_BYTES = 1 << 21  # rows per block: about 2 MiB of design (cache sized)
_BUILD_SEGMENT_BLOCKS = 4  # blocks per task of a worker thread


@dataclass(frozen=True)
class _Built:
    y: FloatArray  # (n_rows, n_y) float64
    X: FloatArray  # (n_rows, n_coef) float64, C-contiguous
    labels: pd.Index  # row labels of the rows kept
    rows: IntArray  # their positions in the data
    y_info: Any
    x_info: Any


def model_arrays(desc: Any, frame: pd.DataFrame, env: Any) -> _Built:
    """``patsy.dmatrices(desc, frame, eval_env=env, NA_action="drop")`` as arrays, fast.

    The fast builder uses some of patsy's private helpers; should a patsy release move them,
    the public ``patsy.dmatrices`` (slower, same result) is used instead.
    """
    try:
        from patsy.build import (  # noqa: F401
            _CheckMatch,
            _factors_memorize,
            _make_subterm_infos,
            _max_allowed_dim,
            _subterm_column_combinations,
            _subterm_column_names_iter,
        )
        from patsy.categorical import _CategoricalBox, categorical_to_int  # noqa: F401
    except ImportError:  # pragma: no cover - exercised by monkeypatching in the tests
        return model_arrays_public(desc, frame, env)
    return _model_arrays_fast(desc, frame, env)


def model_arrays_public(desc: Any, frame: pd.DataFrame, env: Any) -> _Built:
    """The public-API route: ``patsy.dmatrices`` on a positional index, then relabelled."""
    from attnreg.formula.response import logical_response

    positional = frame.set_axis(pd.RangeIndex(len(frame)), axis=0)
    y_df, X_df = patsy.dmatrices(desc, positional, eval_env=env, NA_action="drop",
                                 return_type="dataframe")
    if len(y_df.columns) == 0:  # pragma: no cover - patsy raises this itself
        raise patsy.PatsyError("model is missing required outcome variables")
    rows = np.asarray(X_df.index, dtype=np.int64)
    y = y_df.to_numpy(dtype=np.float64)
    y_info = logical_response(y_df.design_info)
    if y_info is not y_df.design_info:  # a logical response: its True column is the 0/1
        y = y[:, 1:]
    return _Built(y=np.ascontiguousarray(y), X=np.ascontiguousarray(X_df.to_numpy(dtype=np.float64)),
                  labels=frame.index[rows], rows=rows, y_info=y_info, x_info=X_df.design_info)


def _model_arrays_fast(desc: Any, frame: pd.DataFrame, env: Any) -> _Built:
    """The fast route (see the comment above :class:`_Built`)."""
    from attnreg.formula.factors import design_infos
    from attnreg.formula.response import logical_response

    na = patsy.NAAction("drop")
    y_info, x_info = design_infos([desc.lhs_termlist, desc.rhs_termlist], lambda: iter([frame]),
                                  env, na)
    y_info = logical_response(y_info)
    values, good, n_rows, index = _evaluate((y_info, x_info), frame, na)
    if good is None:
        rows = np.arange(n_rows, dtype=np.int64)
        labels = index[np.ones(n_rows, dtype=bool)]  # as patsy: the data's index, masked
    else:
        rows = np.flatnonzero(good)
        labels = index[good]
        values = {k: v[good] for k, v in values.items()}
    if len(y_info.column_names) == 0:
        raise patsy.PatsyError("model is missing required outcome variables")
    y = _design_matrix(y_info, values, rows.size)
    X = _design_matrix(x_info, values, rows.size)
    return _Built(y=y, X=X, labels=labels, rows=rows, y_info=y_info, x_info=x_info)


def _evaluate(infos: tuple[Any, ...], frame: pd.DataFrame,
              na: Any) -> tuple[dict[Any, Any], BoolArray | None, int, pd.Index]:
    """Every factor of ``infos`` on ``frame``, with patsy's row and index checks.

    Returns the values by factor info (2-d numeric or 1-d codes), the mask of rows without
    NA (None: every row), the number of rows and the index.
    """
    from patsy.build import _CheckMatch

    rows_checker = _CheckMatch("Number of rows", lambda a, b: a == b)
    index_checker = _CheckMatch("Index", lambda a, b: a.equals(b))
    index_checker.check(frame.index, "data.index", None)
    rows_checker.check(frame.shape[0], "data argument", None)
    values: dict[Any, Any] = {}  # factor info -> evaluated ndarray (2-d numeric or 1-d codes)
    good: BoolArray | None = None
    for info in infos:
        for factor_info in info.factor_infos.values():
            if factor_info in values:
                continue
            value, is_na, value_index = eval_factor(factor_info, frame, na)
            name, origin = factor_info.factor.name(), factor_info.factor.origin
            rows_checker.check(value.shape[0], name, origin)
            if value_index is not None:
                index_checker.check(value_index, name, origin)
            values[factor_info] = value
            if is_na is not None and is_na.any():
                good = ~is_na if good is None else good & ~is_na
    return values, good, int(rows_checker.value), index_checker.value


def design_rows(info: Any, frame: pd.DataFrame) -> tuple[FloatArray, IntArray]:
    """The design of ``frame``'s complete rows under ``info``, as patsy builds it for new data.

    ``patsy.build_design_matrices([info], frame, NA_action="drop")`` on a positional index,
    with factors encoded as in :mod:`attnreg.formula.factors`.

    Returns
    -------
    X : ndarray, shape (n_complete, n_coef)
    rows : ndarray of int, shape (n_complete,)
        Positions in ``frame`` of the rows of ``X``.
    """
    positional = frame.set_axis(pd.RangeIndex(frame.shape[0]), axis=0)
    values, good, n_rows, _ = _evaluate((info,), positional, patsy.NAAction())
    if good is None:
        rows = np.arange(n_rows, dtype=np.int64)
    else:
        rows = np.flatnonzero(good)
        values = {k: v[good] for k, v in values.items()}
    return _design_matrix(info, values, rows.size), rows


def eval_factor(factor_info: Any, frame: pd.DataFrame, na: Any, *,
                 find_na: bool = True) -> tuple[Any, BoolArray | None, pd.Index | None]:
    """patsy's factor evaluation, numeric factors without the DataFrame round trip.

    Returns the values as an ndarray (2-d numeric, or 1-d category codes), the NA mask (None
    when there is no NA) and the pandas index the values came with (None when they had none).
    With ``find_na=False`` a float factor is not searched for NaN (the caller checks its
    values itself, as the chunked fits' leaves do) and its mask is None.
    """
    from patsy.build import _max_allowed_dim

    from patsy.categorical import _CategoricalBox

    from attnreg.formula.factors import categorical_codes

    factor = factor_info.factor
    result = factor.eval(factor_info.state, frame)
    if factor_info.type != "numerical":  # patsy's categorical_to_int, on distinct values
        codes = categorical_codes(result, factor_info.categories, na, factor)
        inner = result.data if isinstance(result, _CategoricalBox) else result  # inside C()
        index = inner.index if isinstance(inner, pd.Series) and isinstance(
            inner.dtype, pd.CategoricalDtype) else None  # patsy returns those codes as a Series
        return codes, np.asarray(codes == -1), index
    index = result.index if isinstance(result, (pd.Series, pd.DataFrame)) else None
    arr = np.asarray(result)  # a view of the data's column when it is one
    if arr.ndim <= 1:
        arr = np.atleast_1d(arr).reshape((-1, 1))
    _max_allowed_dim(2, arr, factor)
    if arr.shape[1] != factor_info.num_columns:
        raise patsy.PatsyError(f"when evaluating factor {factor.name()}, I got {arr.shape[1]} "
                               f"columns instead of the {factor_info.num_columns} I was "
                               "expecting", factor)
    if not np.issubdtype(arr.dtype, np.number):
        raise patsy.PatsyError(f"when evaluating numeric factor {factor.name()}, I got "
                               f"non-numeric data of type '{arr.dtype}'", factor)
    if arr.dtype.kind in "fc" and (not find_na or not _sum_is(np.isnan, arr)):  # one pass,
        return arr, None, index  # no temporaries: a NaN anywhere makes the sum NaN
    return arr, na.is_numerical_NA(arr), index


def column_sources(info: Any, by_factor: dict[Any, Any]) -> list[tuple[int, int, Any, Any]]:
    """Where each block of design columns of ``info`` comes from, as patsy builds it.

    Returns ``(start, stop, value, subterm)`` per subterm: ``value`` the factor's 2-d numeric
    values for a plain numeric column (copied as they are: patsy computes 1 * value), None
    with ``subterm`` None for the intercept (ones), and ``subterm`` for a block patsy's own
    ``_build_subterm`` must build (categorical factors, interactions).
    """
    out: list[tuple[int, int, Any, Any]] = []
    start = 0
    for subterms in info.term_codings.values():
        for subterm in subterms:
            stop = start + subterm.num_columns
            factors = subterm.factors
            if not factors:
                out.append((start, stop, None, None))
            elif (len(factors) == 1 and info.factor_infos[factors[0]].type == "numerical"
                  and by_factor[factors[0]].dtype.kind in "biuf"):
                out.append((start, stop, by_factor[factors[0]], None))
            else:
                out.append((start, stop, None, subterm))
            start = stop
    return out


def _design_matrix(info: Any, values: dict[Any, Any], n_rows: int) -> FloatArray:
    """patsy's ``_build_design_matrix`` into a C-contiguous float64 array, in row blocks."""
    from attnreg.formula.factors import build_subterm, check_codes

    by_factor = {fi.factor: values[fi] for fi in info.factor_infos.values()}
    out = np.empty((n_rows, len(info.column_names)), dtype=np.float64)
    plain: list[tuple[int, int, Any]] = []  # (start, stop, 2-d values or None for ones)
    built: list[tuple[int, int, Any]] = []  # categorical or interaction blocks
    for start, stop, value, subterm in column_sources(info, by_factor):
        if subterm is None:
            plain.append((start, stop, value))
        else:
            check_codes(subterm, info.factor_infos, by_factor)
            built.append((start, stop, subterm))
    plain = merge_adjacent_columns(plain)
    block = max(1, _BUILD_BLOCK_BYTES // max(8 * out.shape[1], 1))

    def fill(bounds: tuple[int, int]) -> None:
        for start, stop, subterm in built:  # patsy's products, vectorised (factors.py)
            build_subterm(subterm, info.factor_infos, by_factor, out[:, start:stop], bounds,
                          checked=True)
        for lo in range(bounds[0], bounds[1], block):  # cache-sized blocks of rows
            hi = min(lo + block, bounds[1])
            for start, stop, value in plain:
                if value is None:
                    out[lo:hi, start:stop] = 1.0
                else:  # patsy computes 1 * value, which is value exactly
                    out[lo:hi, start:stop] = value[lo:hi]

    # one pass over the design; big designs in row segments on the worker threads (numpy's
    # copies release the GIL), each row written once whoever writes it
    step = block * _BUILD_SEGMENT_BLOCKS
    parallel_map(fill, [(lo, min(lo + step, n_rows)) for lo in range(0, n_rows, step)])
    return out


def _column_of(value: Any) -> tuple[Any, int] | None:
    """``(B, j)`` when the (n, 1) array ``value`` is exactly column j of a 2-d array B.

    A DataFrame built from a 2-d array keeps its columns as columns of one array, so the
    design's plain columns can then be copied many at a time instead of one by one.
    """
    base = value
    while isinstance(base.base, np.ndarray):
        base = base.base
    if base.ndim != 2 or base.dtype != value.dtype or value.shape[1] != 1:
        return None
    if base.shape[0] != value.shape[0] or value.strides[0] != base.strides[0] or base.shape[1] < 1:
        return None
    offset = value.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    step = base.strides[1]
    if step == 0 or offset % step or not 0 <= offset // step < base.shape[1]:
        return None
    return base, offset // step


def merge_adjacent_columns(plain: list[tuple[int, int, Any]]) -> list[tuple[int, int, Any]]:
    """Join runs of plain design columns that are consecutive columns of one 2-d array."""
    out: list[tuple[int, int, Any]] = []
    run: tuple[int, int, Any, int, int] | None = None  # (start, stop, base, j0, j1)
    for start, stop, value in [*plain, (-1, -1, None)]:
        where = _column_of(value) if value is not None else None
        if (run is not None and where is not None and where[0] is run[2] and start == run[1]
                and where[1] == run[4]):
            run = (run[0], stop, run[2], run[3], run[4] + 1)
            continue
        if run is not None:
            r0, r1, base, j0, j1 = run
            out.append((r0, r1, base[:, j0:j1]))
            run = None
        if where is not None:
            run = (start, stop, where[0], where[1], where[1] + 1)
        elif start >= 0:
            out.append((start, stop, value))
    return out


def _sum_is(test: Any, arr: Any) -> bool:
    with np.errstate(all="ignore"):  # inf - inf or an overflow must not warn
        return bool(test(np.sum(arr)))


def check_finite(X: FloatArray, names: list[str], labels: pd.Index, what: str) -> None:
    if not _sum_is(lambda total: ~np.isfinite(total), X):  # fast path: a NaN or an infinity
        return  # anywhere makes the sum non-finite (an overflowing sum only means a full check)
    block = max(1, _BUILD_BLOCK_BYTES // max(8 * X.shape[1], 1))
    for lo in range(0, X.shape[0], block):  # in row blocks: no full-size boolean temporaries
        bad = ~np.isfinite(X[lo:lo + block])
        if bad.any():
            row, col = np.argwhere(bad)[0]
            row += lo
            raise DataError(f"{what} column {names[col]!r} has a non-finite value "
                            f"({X[row, col]}) at row {labels[row]!r}")
