"""``i(var, treated=None, ref=None)`` in formulas: fixest's event-study indicators.

``i(rel_time, treated, ref=-1)`` makes one column per level of ``rel_time`` but the
reference level(s) ``ref`` (a value or a list): the column of level ``k`` is
``treated * (rel_time == k)``, or ``rel_time == k`` without ``treated``. ``treated`` is a 0/1
or boolean column, or any numeric column (it multiplies). The levels are the sorted distinct
values of ``var`` in the data (a pandas categorical keeps its categories' order), learnt
once when fitting, as a stateful transform: ``predict(newdata)`` builds the same columns
from them. A level of new rows not seen when fitting gets zero in every column (as the
reference level; fixest's ``predict`` does the same) and a warning naming it. A missing
``var`` or ``treated`` makes the row missing (left out of a fit, NaN when predicting).
Like every stateful transform, ``i()`` learns its levels from all the rows of the data given
(before ``subset=`` and before rows with a missing response are dropped): a level none of
the fitted rows has gets a column of zeros, whose coefficient is aliased (NaN, as R's);
fixest leaves such a level out.

The columns are named as fixest and pyfixest print them: ``var::level:treated`` or
``var::level`` (``rel_time::-2:treated``), ``var`` and ``treated`` as written in the formula
and a whole-number float level without its ``.0``. The text between ``::`` and the next ``:``
(or the end) is the level; :func:`indicator_terms` gives the levels themselves.

Examples
--------
>>> import numpy as np, pandas as pd
>>> import attnreg as ar
>>> df = pd.DataFrame({"t": [-2, -1, 0, 1] * 3, "d": [1] * 8 + [0] * 4,
...                    "y": [0.1, 0.0, 1.2, 1.9, 0.2, 0.1, 1.0, 2.1, 0.0, 0.1, 0.2, 0.1]})
>>> fit = ar.attnreg("y ~ i(t, d, ref=-1)", df)
>>> fit.names
['(Intercept)', 't::-2:d', 't::0:d', 't::1:d']
>>> from attnreg.formula.indicators import indicators
>>> indicators(np.array([0, 1, 2]), ref=0).tolist()
[[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

import ast
import inspect
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import patsy

from attnreg._warn import warn_user
from attnreg.exceptions import DataError, InferenceWarning, OptionError

__all__ = ["IndicatorTerm", "i", "indicator_column_names", "indicator_terms", "indicators",
           "level_text"]


def _values(x: Any, what: str) -> pd.Series:
    """``x`` as a 1-d Series (a column's name kept)."""
    if isinstance(x, pd.DataFrame) and x.shape[1] == 1:
        x = x.iloc[:, 0]
    series = x if isinstance(x, pd.Series) else pd.Series(np.asarray(x))
    if series.ndim != 1:  # pragma: no cover - a Series is 1-d
        raise OptionError(f"i() takes one column as {what}")
    return series


def _as_multiplier(treated: Any) -> np.ndarray:
    """``treated`` as float64 (booleans 0/1, missing NaN); DataError when it is not numeric."""
    series = _values(treated, "treated")
    name = series.name if series.name is not None else "treated"
    try:
        return np.asarray(series.astype(np.float64), dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"i(): treated {name!r} must be numeric or boolean (0/1, True/False), "
                        f"however it is {series.dtype}; convert it, e.g. (df[{name!r}] == "
                        "'yes').astype(int)") from None


def _refs(ref: Any) -> tuple[Any, ...]:
    if ref is None:
        return ()
    if isinstance(ref, (list, tuple, set, frozenset, np.ndarray, pd.Index)):
        return tuple(ref)
    return (ref,)


def _sorted_levels(series: pd.Series) -> tuple[Any, ...]:
    """The distinct non-missing values: sorted, or in a categorical's order."""
    present = series[series.notna()]
    if isinstance(series.dtype, pd.CategoricalDtype):
        seen = set(present.unique().tolist())
        return tuple(c for c in series.cat.categories.tolist() if c in seen)
    values = pd.unique(present.to_numpy())
    try:
        return tuple(sorted(values.tolist()))
    except TypeError:  # mixed kinds: the order of first appearance
        return tuple(values.tolist())


def level_text(level: Any) -> str:
    """A level as a column name shows it: ``-2`` for the float ``-2.0``, else ``str``.

    Examples
    --------
    >>> level_text(-2.0), level_text(0.5), level_text("pre")
    ('-2', '0.5', 'pre')
    """
    if isinstance(level, (float, np.floating)) and float(level).is_integer():
        return str(int(level))
    return str(level)


def indicators(var: Any, treated: Any = None, ref: Any = None,
               levels: tuple[Any, ...] | None = None) -> np.ndarray:
    """The indicator columns of ``i(var, treated, ref)`` (no state: levels given or found).

    Parameters
    ----------
    var : array-like, shape (n,)
    treated : array-like, shape (n,), optional
    ref : value or list of values, optional
    levels : tuple, optional
        All the levels (the reference ones included); the distinct values of ``var`` if None.

    Returns
    -------
    ndarray, shape (n, n_levels - n_ref)
        NaN rows where ``var`` or ``treated`` is missing; zero rows for a value not in
        ``levels``.
    """
    series = _values(var, "var")
    levels = _sorted_levels(series) if levels is None else levels
    refs = _refs(ref)
    kept = [lv for lv in levels if not any(lv == r for r in refs)]
    codes = pd.Index(kept).get_indexer(pd.Index(series.to_numpy()))  # -1: not a kept level
    out = np.zeros((len(series), len(kept)))
    rows = np.flatnonzero(codes >= 0)
    mult = None if treated is None else _as_multiplier(treated)
    out[rows, codes[rows]] = 1.0 if mult is None else mult[rows]
    missing = series.isna().to_numpy()
    if mult is not None:
        missing = missing | np.isnan(mult)
    out[missing] = np.nan
    return out


class _Indicators:
    """i(var, treated=None, ref=None): fixest's ``i()`` as a patsy stateful transform."""

    def __init__(self) -> None:
        self._seen: list[tuple[Any, ...]] = []
        self._dtype: Any = None
        self._ref_arg: Any = None
        self._bad_treated: DataError | None = None
        self.levels: tuple[Any, ...] = ()
        self.ref: tuple[Any, ...] = ()
        self.kept: tuple[Any, ...] = ()
        self.var_name = "var"

    def memorize_chunk(self, var: Any, treated: Any = None, ref: Any = None) -> None:
        series = _values(var, "var")
        self.var_name = str(series.name) if series.name is not None else self.var_name
        self._dtype = series.dtype if self._dtype is None else self._dtype
        self._ref_arg = ref
        if treated is not None and self._bad_treated is None:
            try:
                _as_multiplier(treated)
            except DataError as exc:  # raised by memorize_finish, which patsy does not wrap
                self._bad_treated = exc
        self._seen.append(_sorted_levels(series))

    def memorize_finish(self) -> None:
        if self._bad_treated is not None:
            raise self._bad_treated
        chunks, self._seen = self._seen, []
        merged = pd.Series([v for chunk in chunks for v in chunk], dtype=object)
        if isinstance(self._dtype, pd.CategoricalDtype):
            merged = merged.astype(self._dtype)
        self.levels = _sorted_levels(merged.drop_duplicates())
        self.ref = _refs(self._ref_arg)
        for r in self.ref:
            if not any(lv == r for lv in self.levels):
                shown = ", ".join(level_text(lv) for lv in self.levels[:12])
                more = ", ..." if len(self.levels) > 12 else ""
                raise DataError(f"i(): the reference level ref={r!r} is not a value of "
                                f"{self.var_name!r} (its values: {shown}{more}); give ref= "
                                "one of them")
        self.kept = tuple(lv for lv in self.levels if not any(lv == r for r in self.ref))
        if not self.kept:
            raise DataError(f"i(): every level of {self.var_name!r} is a reference level "
                            f"(ref={self._ref_arg!r}), so no column is left; drop some from ref=")
        self._dtype = self._ref_arg = None  # what is kept: levels, ref and kept

    def transform(self, var: Any, treated: Any = None, ref: Any = None) -> Any:
        series = _values(var, "var")
        out = indicators(series, treated, self.ref, self.levels)
        self._warn_unseen(series)
        if isinstance(var, pd.Series):
            return pd.DataFrame(out, index=var.index)
        return out

    def _warn_unseen(self, series: pd.Series) -> None:
        present = series[series.notna()]
        unseen = ~pd.Index(present.to_numpy()).isin(pd.Index(list(self.levels), dtype=object))
        if unseen.any():
            new = _sorted_levels(present[unseen])
            warn_user(f"i(): {self.var_name!r} has level(s) not seen when fitting: "
                      f"{', '.join(level_text(v) for v in new[:10])}; their rows get 0 in "
                      "every indicator column (as the reference level)", InferenceWarning,
                      through=_PATSY)


#: patsy's files and the code it compiles, between a transform and the caller
_PATSY = (os.path.dirname(os.path.abspath(patsy.__file__)), "<string>")

i = patsy.stateful_transform(_Indicators)
i.__doc__ = """i(var, treated=None, ref=None): fixest's event-study indicators, in formulas.

One column per level of ``var`` but the reference level(s) ``ref`` (a value or a list),
each multiplied by ``treated`` (0/1, boolean or numeric) when given, named
``var::level:treated``; the levels are learnt when fitting and reused by ``predict``. See
:mod:`attnreg.formula.indicators`.

Examples
--------
>>> import attnreg as ar
>>> import pandas as pd
>>> df = pd.DataFrame({"t": [-1, 0, 1, -1, 0, 1], "y": [0.0, 1.0, 2.0, 0.2, 1.1, 2.3]})
>>> ar.attnreg("y ~ i(t, ref=-1)", df).names
['(Intercept)', 't::0', 't::1']
"""
i.__name__ = i.__qualname__ = "i"  # patsy's wrapper takes the class's names
i.__signature__ = inspect.signature(  # type: ignore[attr-defined]
    lambda var, treated=None, ref=None: None)  # what sphinx and help() show


@dataclass(frozen=True)
class IndicatorTerm:
    """An ``i()`` term of a fitted design.

    Attributes
    ----------
    code : str
        The term as written (``"i(rel_time, treated, ref=-1)"``).
    var : str
        The variable's expression (``"rel_time"``).
    treated : str or None
        The multiplier's expression.
    levels : tuple
        Every level of ``var`` seen when fitting, in order (the reference ones included).
    ref : tuple
        The reference levels (no column).
    columns : tuple of str
        The design column of each non-reference level, in the order of ``levels``.
    """

    code: str
    var: str
    treated: str | None
    levels: tuple[Any, ...]
    ref: tuple[Any, ...]
    columns: tuple[str, ...]

    @property
    def kept(self) -> tuple[Any, ...]:
        """The levels that have a column."""
        return tuple(lv for lv in self.levels if not any(lv == r for r in self.ref))


def _call(code: str) -> ast.Call | None:
    try:
        node = ast.parse(code, mode="eval").body
    except SyntaxError:  # pragma: no cover - patsy parsed it
        return None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "i":
        return node
    return None


def _treated_text(node: ast.Call) -> str | None:
    if len(node.args) > 1:
        return ast.unparse(node.args[1])
    found = [k.value for k in node.keywords if k.arg == "treated"]
    return ast.unparse(found[0]) if found and ast.unparse(found[0]) != "None" else None


def indicator_terms(info: Any) -> list[IndicatorTerm]:
    """The ``i()`` terms of a patsy design info (each a numeric factor ``i(...)``).

    Parameters
    ----------
    info : patsy.DesignInfo

    Returns
    -------
    list of IndicatorTerm, in the order of the design
    """
    out = []
    for factor_info in info.factor_infos.values():
        code = factor_info.factor.code
        node = _call(code)
        state = factor_info.state if isinstance(factor_info.state, dict) else {}
        objs = [t for t in state.get("transforms", {}).values() if isinstance(t, _Indicators)]
        if node is None or factor_info.type != "numerical" or len(objs) != 1 or not node.args:
            continue
        obj, var = objs[0], ast.unparse(node.args[0])
        treated = _treated_text(node)
        tail = "" if treated is None else f":{treated}"
        columns = tuple(f"{var}::{level_text(lv)}{tail}" for lv in obj.kept)
        out.append(IndicatorTerm(code=code, var=var, treated=treated, levels=obj.levels,
                                 ref=obj.ref, columns=columns))
    return out


def indicator_column_names(info: Any, names: list[str]) -> list[str]:
    """``names`` with patsy's ``i(...)[j]`` columns named as fixest (``rel_time::0:treated``).

    Parameters
    ----------
    info : patsy.DesignInfo
    names : list of str
        The design's column names so far (one per column).

    Returns
    -------
    list of str
    """
    rename = {(f"{term.code}[{j}]" if len(term.columns) > 1 else term.code): col
              for term in indicator_terms(info) for j, col in enumerate(term.columns)}
    if not rename:
        return names
    return [":".join(rename.get(part, part) for part in name.split(":")) for name in names]
