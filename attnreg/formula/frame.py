"""The model frame's input rules: what a formula may see of the data, checked before any work.

R's ``model.frame`` turns every numeric column into a double and refuses what it cannot use.
Here the same happens before patsy sees the data:

- column labels become strings (``y ~ .`` over integer labels, ``Q("0")``), and a label used
  twice is an error;
- integer, unsigned, boolean-free nullable and low-precision float columns become float64, so
  ``I(x**2)`` on int64 values of 1e9 cannot wrap around;
- text columns whose values are numbers, datetime / timedelta / period and complex columns are
  errors naming the column, the offending value and its row, unless wrapped in ``C()`` (a
  factor is then what is asked for);
- a text column with more distinct values than :data:`MAX_LEVEL_SHARE` of its rows (an
  identifier, most likely) must be wrapped in ``C()`` to be used as a factor;
- vectors given as pandas Series (``weights=``, ``subset=``) are aligned on the data's index,
  never by position.

The frame returned shares the data's unchanged columns; the caller's DataFrame is never
modified.
"""

from __future__ import annotations

import ast
import keyword
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import DataError, FormulaError, OptionError

__all__ = ["MAX_LEVEL_SHARE", "MIN_LEVELS_CHECKED", "TIME_OPERATORS", "align_to_rows",
           "check_factor_code", "names_in", "numeric_columns", "prepare_frame", "string_labels",
           "uses_time_operator", "variable_uses"]

#: A text column used as a factor without ``C()`` may have at most this share of its
#: non-missing rows as distinct values (and at least :data:`MIN_LEVELS_CHECKED` levels before
#: the rule applies): more looks like an identifier, not a grouping.
MAX_LEVEL_SHARE = 0.5
#: Factors with fewer levels than this are never refused for their number of levels.
MIN_LEVELS_CHECKED = 10
#: Formula functions that shift along row order.
TIME_OPERATORS = frozenset({"lag", "lags", "diff"})


# ------------------------------------------------------------------------------ formula codes

def check_factor_code(code: str, columns: Iterable[str]) -> None:
    """Raise FormulaError when a factor's code is not a Python expression.

    Patsy reads ``y ~ my x`` as the factor ``my x``; name the term and, when it is a column
    label (spaces, dots, a leading digit or a Python keyword), show how to quote it.

    Examples
    --------
    >>> check_factor_code("np.log(x)", ["x"])
    >>> check_factor_code("my x", ["y", "my x"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnreg.exceptions.FormulaError: the term 'my x' is not a valid Python expression; ...
    """
    try:
        ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        squeezed = "".join(code.split())
        quoted = [c for c in map(str, columns) if not (c.isidentifier() and not keyword.iskeyword(c))
                  and "".join(c.split()) in squeezed]
        hint = (f"; to use the column {quoted[0]!r}, quote it: Q({quoted[0]!r})" if quoted else
                "; quote a column whose name is not a Python identifier with Q(\"name\")")
        raise FormulaError(f"the term {code!r} is not a valid Python expression{hint}") from None


def names_in(code: str) -> list[str]:
    """Every name a Python expression uses, functions included (``Q("name")`` counts as one).

    Examples
    --------
    >>> names_in("np.log(x) + center(Q('a b'))")
    ['x', 'center', 'a b', 'np', 'Q']
    """
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.append(node.id)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Q"
              and node.args and isinstance(node.args[0], ast.Constant)):
            out.append(str(node.args[0].value))
    return out


def _func_name(node: ast.Call) -> str | None:
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def variable_uses(code: str) -> dict[str, bool]:
    """Variables a factor's code reads, each with whether it is read outside ``C()``.

The first argument of ``i()`` (:mod:`attnreg.formula.indicators`) is read as in ``C()``.

    ``Q("a b")`` counts as the variable ``a b``.

    Examples
    --------
    >>> variable_uses("x * C(g)")
    {'x': True, 'g': False}
    >>> variable_uses("i(rel_time, treated, ref=-1)")
    {'rel_time': False, 'treated': True}
    """
    out: dict[str, bool] = {}

    def visit(node: ast.AST, in_factor: bool) -> None:
        if isinstance(node, ast.Name):
            out[node.id] = out.get(node.id, False) or not in_factor
            return
        if isinstance(node, ast.Call):
            name = _func_name(node)
            if (name == "Q" and node.args and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                label = node.args[0].value
                out[label] = out.get(label, False) or not in_factor
                return
            inside = in_factor or name == "C"
            args = list(node.args)
            if name == "i" and args:  # i(var, ...): var's values are levels, as in C(var)
                visit(args.pop(0), True)
            for child in [*args, *(kw.value for kw in node.keywords)]:
                visit(child, inside)
            if not isinstance(node.func, ast.Name):
                visit(node.func, in_factor)
            return
        for sub in ast.iter_child_nodes(node):
            visit(sub, in_factor)

    try:
        visit(ast.parse(code.strip(), mode="eval"), False)
    except SyntaxError:
        return {}
    return out


def uses_time_operator(codes: Iterable[str]) -> bool:
    """Whether any code calls ``lag``, ``lags`` or ``diff`` (which shift along row order)."""
    for code in codes:
        try:
            tree = ast.parse(code.strip(), mode="eval")
        except SyntaxError:
            continue
        if any(isinstance(n, ast.Call) and _func_name(n) in TIME_OPERATORS for n in ast.walk(tree)):
            return True
    return False


# ------------------------------------------------------------------------------ column labels

def string_labels(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """``frame`` with string column labels; DataError when two columns share a label.

    Examples
    --------
    >>> string_labels(pd.DataFrame({0: [1.0], 1: [2.0]}), "data").columns.tolist()
    ['0', '1']
    """
    labels = [str(c) for c in frame.columns]
    seen: set[str] = set()
    dup = sorted({c for c in labels if c in seen or seen.add(c)})  # type: ignore[func-returns-value]
    if dup:
        raise DataError(f"{what} has more than one column named {', '.join(map(repr, dup))} "
                        "(e.g. after pd.concat); rename them so that each name is unique")
    if all(isinstance(c, str) for c in frame.columns):
        return frame
    return frame.set_axis(labels, axis=1)


# ------------------------------------------------------------------------------ column values

def _row(series: pd.Series, mask: Any) -> tuple[Any, Any]:
    """(label, value) of the first row where ``mask`` holds."""
    i = int(np.argmax(np.asarray(mask)))
    return series.index[i], series.iloc[i]


#: pandas' ``infer_dtype`` kinds of an object array whose values are all real numbers
_NUMBER_KINDS = frozenset({"integer", "floating", "mixed-integer-float"})


def _text_column(series: pd.Series, name: str, what: str, outside_factor: bool,
                 numeric_expected: bool) -> pd.Series:
    """Rules for an object / string column (see the module docstring)."""
    missing = series.isna().to_numpy()
    values = series.to_numpy(dtype=object, na_value=None)
    present = values[~missing]
    # every value a real number (bools excluded), told by pandas without a loop in Python
    numbers = pd.api.types.infer_dtype(present, skipna=False) in _NUMBER_KINDS
    if present.size and numbers:  # Python numbers in an object column: a numeric column
        return pd.Series(np.where(missing, np.nan, values).astype(np.float64),
                         index=series.index, name=series.name)
    if not outside_factor and not numeric_expected:
        return _as_categorical_values(series, missing, values)
    parsed = pd.to_numeric(pd.Series(present, dtype=object), errors="coerce").notna().to_numpy()
    if numeric_expected or (present.size and parsed.mean() >= 0.5):
        bad = np.zeros(series.shape[0], dtype=bool)
        bad[np.flatnonzero(~missing)[~parsed]] = True
        if parsed.all():
            detail = "numbers stored as text"
        else:
            label, value = _row(series, bad)
            share = f"mostly numbers ({int(parsed.sum())} of {present.size}), but " \
                if parsed.mean() >= 0.5 else ""
            detail = f"{share}the value {value!r} at row {label!r} is not a number"
        need = "; the fit used it as a number" if numeric_expected else ""
        raise DataError(
            f"{what} column {name!r} is text ({series.dtype}): {detail}{need}. Convert it with "
            f"pd.to_numeric({what}[{name!r}], errors='coerce') (values that are not numbers "
            f"become missing), or write C({name}) to use it as a factor")
    levels = pd.unique(present)
    if (len(levels) >= MIN_LEVELS_CHECKED and len(levels) > MAX_LEVEL_SHARE * present.size):
        raise DataError(
            f"{what} column {name!r} has {len(levels)} distinct values in {present.size} rows: "
            f"as a factor it would make {len(levels) - 1} indicator columns. Write C({name}) if "
            "a factor is meant (e.g. fixed effects), or leave it out of the formula")
    return _as_categorical_values(series, missing, values)


def _as_categorical_values(series: pd.Series, missing: Any, values: Any) -> pd.Series:
    """Text values as an object Series with None for missing (patsy's NA for factors)."""
    if series.dtype == object and not isinstance(series.dtype, pd.StringDtype):
        return series
    values = values.copy()
    values[missing] = None
    return pd.Series(values, index=series.index, name=series.name, dtype=object)


def _time_like(dtype: Any) -> str | None:
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "a date-time"
    if pd.api.types.is_timedelta64_dtype(dtype):
        return "a time span"
    if isinstance(dtype, pd.PeriodDtype):
        return "a period"
    return None


def _column(series: pd.Series, name: str, what: str, outside_factor: bool,
            numeric_expected: bool) -> pd.Series:
    """The column as the formula should see it (see the module docstring)."""
    dtype = series.dtype
    time_kind = _time_like(dtype)
    if time_kind is not None:
        if outside_factor or numeric_expected:
            raise DataError(
                f"{what} column {name!r} is {time_kind} ({dtype}), which a formula cannot use as "
                f"a number: make a numeric time trend, e.g. {what}['t'] = ({what}[{name!r}] - "
                f"{what}[{name!r}].min()) / pd.Timedelta(days=1), or write C({name}) to use each "
                "value as a factor level")
        return series.astype(object)
    if pd.api.types.is_complex_dtype(dtype):
        raise DataError(f"{what} column {name!r} is complex ({dtype}); regression needs real "
                        "numbers (use its real part or modulus)")
    if pd.api.types.is_bool_dtype(dtype):
        if isinstance(dtype, np.dtype):
            return series  # a factor with levels False / True, as R's logical
        return _as_categorical_values(series, series.isna().to_numpy(),
                                      series.to_numpy(dtype=object, na_value=None))
    if isinstance(dtype, pd.CategoricalDtype):
        return series
    if pd.api.types.is_numeric_dtype(dtype):
        if not (outside_factor or numeric_expected):  # C(cyl): levels keep their values
            if isinstance(dtype, np.dtype):
                return series
            return _as_categorical_values(series, series.isna().to_numpy(),
                                          series.to_numpy(dtype=object, na_value=None))
        if dtype == np.float64:
            return series
        return pd.Series(series.to_numpy(dtype=np.float64, na_value=np.nan), index=series.index,
                         name=series.name)
    if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
        return _text_column(series, name, what, outside_factor, numeric_expected)
    raise DataError(f"{what} column {name!r} has dtype {dtype}, which a formula cannot use")


def prepare_frame(frame: pd.DataFrame, uses: Mapping[str, bool], what: str = "data", *,
                  numeric: Iterable[str] = ()) -> pd.DataFrame:
    """The columns a formula uses, as the formula should see them.

    Parameters
    ----------
    frame : DataFrame
        With string column labels (:func:`string_labels`). Never modified.
    uses : mapping of str to bool
        Variables the formula reads, each with whether it is read outside ``C()``
        (:func:`variable_uses`); names that are not columns are ignored.
    what : str
        ``"data"`` or ``"newdata"``, for messages.
    numeric : iterable of str
        Columns that must be numeric (those the fit used as numbers, when predicting).

    Returns
    -------
    DataFrame
        ``frame`` itself when nothing changes, else a copy sharing the unchanged columns.

    Raises
    ------
    DataError
        Naming the column, the offending value and its row.

    Examples
    --------
    >>> df = pd.DataFrame({"x": np.array([1, 2], dtype=np.int64)})
    >>> prepare_frame(df, {"x": True}).dtypes.tolist()
    [dtype('float64')]
    """
    must = set(numeric)
    changed: dict[str, pd.Series] = {}
    for name, outside in uses.items():
        if name not in frame.columns:
            continue
        series = frame[name]
        new = _column(series, name, what, outside, name in must)
        if new is not series:
            changed[name] = new
    if not changed:
        return frame
    return frame.assign(**changed)


def numeric_columns(frame: pd.DataFrame, uses: Mapping[str, bool]) -> frozenset[str]:
    """Columns among ``uses`` that are float64 in a prepared frame (prediction keeps them so)."""
    return frozenset(n for n in uses if n in frame.columns and frame[n].dtype == np.float64)


# ------------------------------------------------------------------------------ row vectors

def align_to_rows(values: Any, frame: pd.DataFrame, what: str) -> Any:
    """``values`` in the data's row order: a pandas Series is aligned on the index.

    Arrays and lists are taken in row order, as given. A Series whose index equals the data's
    is used as it is; otherwise it is reindexed on the data's labels, which must all be
    present and unique in both.

    Examples
    --------
    >>> df = pd.DataFrame({"x": [1.0, 2.0, 3.0]}, index=["a", "b", "c"])
    >>> align_to_rows(pd.Series([3, 1, 2], index=["c", "a", "b"]), df, "weights").tolist()
    [1, 2, 3]
    """
    if isinstance(values, pd.DataFrame):
        if values.shape[1] != 1:
            raise OptionError(f"{what} must be one column, however it has {values.shape[1]}")
        values = values.iloc[:, 0]
    if not isinstance(values, pd.Series) or values.index.equals(frame.index):
        return values
    if values.index.has_duplicates:
        label = values.index[values.index.duplicated()][0]
        raise DataError(f"{what} is a Series with duplicated index label {label!r}, so it "
                        "cannot be aligned with the rows of data")
    if frame.index.has_duplicates:
        label = frame.index[frame.index.duplicated()][0]
        raise DataError(f"data has duplicated index label {label!r}, so {what} given as a Series "
                        "with another index cannot be aligned with its rows; pass an array in "
                        "data's row order")
    missing = frame.index.difference(values.index, sort=False)
    if len(missing):
        raise DataError(f"{what} is a Series with no entry for {len(missing)} row(s) of data, "
                        f"e.g. the row labelled {missing[0]!r}; it is aligned on the index, "
                        "not by position")
    return values.reindex(frame.index)
