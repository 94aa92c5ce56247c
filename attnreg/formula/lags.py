"""Lag and difference helpers for formulas, and the lag a factor applies.

``lag``, ``diff`` and ``lags`` shift along row order (never along calendar time), fill the
rows they cannot compute with NaN so that the default ``na_action`` drops them, and keep
the pandas index. Row order only equals time order on a sorted index without gaps, which
:func:`~attnreg.formula.time_index.check_time_index` verifies. :func:`min_lag` reads a
patsy factor's code and says the smallest lag it applies to data: the look-ahead guard
compares it with the forecast horizon.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, FormulaError, OptionError

__all__ = ["diff", "lag", "lag_column_names", "lags", "min_lag"]



def _check_order(name: str, k: Any) -> int:
    """Return ``k`` as an int, or raise OptionError unless it is a non-negative integer."""
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 0:
        raise OptionError(
            f"{name} must be a non-negative integer, however: {name}={k!r}. "
            "Use e.g. lag(x, 1) for the previous row."
        )
    return int(k)


def _as_float(x: Any) -> FloatArray:
    """Return the values of ``x`` as a float64 array of ndim 1 or 2 (DataError otherwise)."""
    try:
        values = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise DataError(f"lag/diff need numeric data, however: {err}") from err
    if values.ndim not in (1, 2):
        raise DataError(f"lag/diff need 1-D or 2-D data, however: ndim={values.ndim}.")
    return values


def _shift(values: FloatArray, k: int) -> FloatArray:
    """Shift rows down by ``k`` (row t gets row t-k), filling the first ``k`` rows with NaN."""
    out = np.full(values.shape, np.nan)
    if k < values.shape[0]:
        out[k:] = values[: values.shape[0] - k]
    return out


def _rewrap(x: Any, values: FloatArray) -> Any:
    """Give ``values`` the pandas index (and name) of ``x`` when ``x`` is a pandas object."""
    if isinstance(x, pd.Series):
        return pd.Series(values, index=x.index, name=x.name)
    if isinstance(x, pd.DataFrame):
        return pd.DataFrame(values, index=x.index, columns=x.columns)
    return values


def lag(x: Any, k: int = 1) -> Any:
    """Value ``k`` rows earlier: ``lag(x, k)[t] = x[t - k]``, NaN for the first ``k`` rows.

    Parameters
    ----------
    x : pandas.Series, pandas.DataFrame or array_like, shape (T,) or (T, m)
        Data in time order (rows are periods).
    k : int, default 1
        Non-negative lag; ``k = 0`` returns a float copy of ``x``.

    Returns
    -------
    pandas.Series, pandas.DataFrame or numpy.ndarray, shape of ``x``
        Same type and index as ``x`` (arrays come back as float64 arrays).

    Examples
    --------
    >>> lag([1.0, 2.0, 3.0], 1)
    array([nan,  1.,  2.])
    """
    k = _check_order("k", k)
    return _rewrap(x, _shift(_as_float(x), k))


def diff(x: Any, k: int = 1) -> Any:
    """Difference ``x[t] - x[t - k]``, NaN for the first ``k`` rows.

    Parameters
    ----------
    x : pandas.Series, pandas.DataFrame or array_like, shape (T,) or (T, m)
        Data in time order.
    k : int, default 1
        Non-negative lag of the difference (``k = 0`` gives zeros).

    Returns
    -------
    pandas.Series, pandas.DataFrame or numpy.ndarray, shape of ``x``

    Examples
    --------
    >>> diff([1.0, 4.0, 9.0], 1)
    array([nan,  3.,  5.])
    """
    k = _check_order("k", k)
    values = _as_float(x)
    return _rewrap(x, values - _shift(values, k))


def lags(x: Any, first: int, last: int) -> Any:
    """Several lags side by side: columns ``lag(x, first), ..., lag(x, last)``.

    Parameters
    ----------
    x : pandas.Series or array_like, shape (T,)
        One series in time order.
    first, last : int
        Non-negative lags with ``first <= last``.

    Returns
    -------
    pandas.DataFrame or numpy.ndarray, shape (T, last - first + 1)
        A DataFrame with columns ``lag{first}`` ... ``lag{last}`` and the index of ``x``
        when ``x`` is a Series, else a float64 array. patsy numbers the columns of such a
        factor by position (``lags(x, 1, 4)[0]``); :func:`lag_column_names` turns those
        names into ``lags(x, 1, 4)[lag1]``.

    Examples
    --------
    >>> lags([1.0, 2.0, 3.0], 1, 2)
    array([[nan, nan],
           [ 1., nan],
           [ 2.,  1.]])
    """
    first, last = _check_order("first", first), _check_order("last", last)
    if first > last:
        raise OptionError(f"lags needs first <= last, however: {first=}, {last=}.")
    values = _as_float(x)
    if values.ndim != 1:
        raise DataError(f"lags needs one series (1-D), however: shape={values.shape}.")
    order = np.arange(first, last + 1)
    out = np.column_stack([_shift(values, int(k)) for k in order])
    if isinstance(x, pd.Series):
        return pd.DataFrame(out, index=x.index, columns=[f"lag{k}" for k in order])
    return out


def _split_top_level(name: str) -> list[str]:
    """Split a patsy column name on the ``:`` of interactions, ignoring nested ``:``."""
    pieces, depth, start = [], 0, 0
    for i, char in enumerate(name):
        depth += char in "([{"
        depth -= char in ")]}"
        if char == ":" and depth == 0:
            pieces.append(name[start:i])
            start = i + 1
    pieces.append(name[start:])
    return pieces


def _readable_piece(piece: str) -> str:
    """Rewrite ``lags(x, a, b)[i]`` as ``lags(x, a, b)[lag{a+i}]``; leave anything else."""
    code, bracket, index = piece.rpartition("[")
    if not bracket or not index.endswith("]") or not index[:-1].isdigit():
        return piece
    try:
        call = ast.parse(code, mode="eval").body
    except SyntaxError:
        return piece
    if not isinstance(call, ast.Call) or _func_name(call) != "lags":
        return piece
    first = _literal_arg(call, 1, "first")
    if first is None:
        return piece
    return f"{code}[lag{first + int(index[:-1])}]"


def lag_column_names(column_names: Sequence[str]) -> list[str]:
    """Readable names for the columns patsy builds from :func:`lags`.

    Parameters
    ----------
    column_names : sequence of str, length n_coef
        ``design_info.column_names`` of a patsy design.

    Returns
    -------
    list of str, length n_coef
        The names with every ``lags(x, a, b)[i]`` replaced by ``lags(x, a, b)[lag{a+i}]``
        (also inside interactions); other names are returned unchanged.

    Examples
    --------
    >>> lag_column_names(["Intercept", "lags(x, 1, 2)[0]", "lags(x, 1, 2)[1]:z"])
    ['Intercept', 'lags(x, 1, 2)[lag1]', 'lags(x, 1, 2)[lag2]:z']
    """
    return [":".join(_readable_piece(p) for p in _split_top_level(n)) for n in column_names]


def _func_name(call: ast.Call) -> str | None:
    """The bare name of the called function (``lag`` for ``lag(...)`` and ``ts.lag(...)``)."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _literal_arg(call: ast.Call, position: int, keyword: str, default: int | None = None,
                 scope: Mapping[str, Any] | None = None) -> int | None:
    """The integer passed as argument ``position``/``keyword``; None if it is not known.

    A literal is read as it is; any other expression (``h + 1``, ``2 * h``, ``k + 1``) is
    evaluated with the names of ``scope`` when one is given, else it is not known.
    """
    node: ast.expr | None = call.args[position] if len(call.args) > position else None
    for kw in call.keywords:
        if kw.arg == keyword:
            node = kw.value
    if node is None:
        return default
    try:
        value = ast.literal_eval(node)
    except ValueError:
        value = None if scope is None else _evaluated(node, scope)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        return None
    return int(value)


def _evaluated(node: ast.expr, scope: Mapping[str, Any]) -> Any:
    """The value of ``node`` with the names of ``scope`` (None when it cannot be evaluated)."""
    import builtins

    try:  # the formula's own code: patsy evaluates it in the same scope when it builds the design
        code = compile(ast.Expression(body=node), "<lag argument>", "eval")
        return eval(code, {"__builtins__": builtins}, scope)
    except Exception:  # an unknown lag counts as none, so the guard errs towards refusing
        return None


#: Function name -> (position, keyword, default) of its lag argument and the lag offset rule.
_LAG_ARGS = {"lag": (1, "k", 1), "lags": (1, "first", None), "diff": (1, "k", 1)}


def _walk_lag(node: ast.AST, offset: int, scope: Mapping[str, Any] | None = None) -> list[int]:
    """Lags at which the data referenced in ``node`` enter, given an enclosing lag ``offset``."""
    if isinstance(node, (ast.Name, ast.Attribute)):
        return [offset]  # a variable (or df.x, np.pi: counted conservatively as data)
    if isinstance(node, ast.Constant):
        return []
    if isinstance(node, ast.Call):
        name = _func_name(node)
        if name == "Q":
            return [offset]  # patsy's Q("name") quotes a column
        if name in _LAG_ARGS and node.args:
            position, keyword, default = _LAG_ARGS[name]
            k = _literal_arg(node, position, keyword, default, scope)
            k = 0 if k is None else k  # an unknown lag counts as none (conservative)
            inner = offset + min(k, 0) if name == "diff" else offset + k
            return _walk_lag(node.args[0], inner, scope)
        children: list[ast.AST] = [*node.args, *(kw.value for kw in node.keywords)]
        if not isinstance(node.func, (ast.Name, ast.Attribute)):
            children.append(node.func)
        return [lag for child in children for lag in _walk_lag(child, offset, scope)]
    return [lag for child in ast.iter_child_nodes(node) for lag in _walk_lag(child, offset, scope)]


def min_lag(expr: str, scope: Mapping[str, Any] | None = None) -> int | None:
    """Smallest lag at which a factor's code uses data.

    A regressor whose minimum lag is below the horizon ``h`` of a direct forecast uses
    information from after the forecast origin.

    Parameters
    ----------
    expr : str
        Code of one patsy factor, e.g. ``"np.log(lag(x, 3))"``.
    scope : mapping of str, optional
        Names for lag arguments that are expressions rather than integer literals
        (``lag(x, h + 1)``, ``lag(x, 2 * h)``, ``lag(x, k)``): each such argument is evaluated
        with them (the formula's scope, and ``h`` bound to the horizon). Without a scope, or
        when the evaluation fails or gives no integer, the lag counts as 0.

    Returns
    -------
    int or None
        The minimum lag over every variable in ``expr``; ``None`` when ``expr`` uses no
        variable (a constant). ``lag(x, k)`` adds ``k``, ``lags(x, a, b)`` adds ``a``,
        ``diff(x, k)`` adds nothing (it uses ``x_t``); lags nest additively. A lag that is
        not known (see ``scope``) counts as 0 and a negative one counts as given, so the
        guard errs towards reporting look-ahead. Attribute names such as ``np.pi`` count as
        data at the enclosing lag for the same reason.

    Raises
    ------
    FormulaError
        If ``expr`` is not a valid Python expression.

    Examples
    --------
    >>> min_lag("np.log(lag(x, 3))"), min_lag("lags(x, 1, 4)"), min_lag("diff(x, 1)")
    (3, 1, 0)
    >>> min_lag("lag(x, h + 1)"), min_lag("lag(x, h + 1)", {"h": 4}), min_lag("lag(x, 2 * k)", {"k": 3})
    (0, 5, 6)
    """
    try:
        tree = ast.parse(expr.strip(), mode="eval")
    except SyntaxError as err:
        raise FormulaError(f"cannot parse the factor {expr!r}: {err.msg}") from err
    found = _walk_lag(tree.body, 0, scope)
    return min(found) if found else None
