"""Factors without per-row Python: patsy's categorical semantics, on distinct values only.

patsy finds a factor's levels (``CategoricalSniffer.sniff``) and turns its values into level
codes (``categorical_to_int``) with a Python loop over the rows, and builds a factor's design
columns one column at a time (``_build_subterm``). Here the rows are factorised by pandas
(``pd.factorize``: first-occurrence order, Python equality, NaN and None as missing) and
patsy's own per-value rules run once per *distinct* value:

- missing: patsy's ``NAAction.is_categorical_NA`` (None, and whatever ``float()`` makes NaN:
  the text ``"nan"`` included);
- ``True``/``False`` make both levels;
- levels are patsy's level set sorted by patsy (``SortAnythingKey``), each level the object
  patsy would have met first when iterating the data (a Series gives Python scalars, an
  array numpy scalars);
- a value not among the fit's levels raises patsy's own error, for the first such row;
- a block of design columns is the product, left to right, of each factor's contrast rows
  (``M[codes]``) or numeric columns, starting from 1 as patsy does, so the design is the
  same to the bit.

A boolean array and a pandas Categorical take patsy's own shortcuts (levels False, True;
the Categorical's categories, in their order, and its codes). Data these rules do not cover
exactly (a list, objects of other kinds, missing values that are neither None nor NaN, a
Categorical whose categories are not the fit's) go to patsy's own functions.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import pandas as pd
import patsy

from attnreg._typing import IntArray

__all__ = ["build_subterm", "categorical_codes", "design_infos", "sniff"]

#: object arrays whose values pandas groups exactly as a Python set would
_OBJECT_KINDS = frozenset({"string", "boolean", "integer", "floating", "mixed-integer-float",
                           "empty"})
_BLOCK_BYTES = 1 << 21  # rows per block of a factor's columns: about 2 MiB


def _factorized(data: Any) -> tuple[IntArray, list[Any]] | None:
    """(codes, distinct values) of 1-d data, -1 for pandas' missing values; None: not covered.

    The distinct values come in first-occurrence order, as the objects patsy's loop would meet.
    """
    if isinstance(data, pd.Series):
        if not isinstance(data.dtype, np.dtype):
            return None  # Categorical, nullable, arrow: patsy's paths
        arr, python = data.to_numpy(), True
    elif isinstance(data, np.ndarray):
        arr, python = data, False
    else:
        return None
    if arr.ndim != 1 or arr.dtype.kind not in "iufO":
        return None
    if arr.dtype.kind == "O" and pd.api.types.infer_dtype(arr, skipna=True) not in _OBJECT_KINDS:
        return None
    codes, uniques = pd.factorize(arr, use_na_sentinel=True)
    if arr.dtype.kind == "O" and (codes < 0).any():
        kinds = set(map(type, arr[codes < 0]))  # pd.NA, NaT: not missing for patsy
        if not all(t is type(None) or issubclass(t, (float, np.floating)) for t in kinds):
            return None
    values = uniques.tolist() if python else list(uniques)
    return np.asarray(codes, dtype=np.int64), values


def _is_bool(data: Any) -> bool:
    return isinstance(data, (pd.Series, np.ndarray)) and data.dtype == np.bool_ and data.ndim == 1


def _is_categorical(data: Any) -> bool:
    return isinstance(data, pd.Series) and isinstance(data.dtype, pd.CategoricalDtype)


def _unboxed(data: Any) -> tuple[Any, bool]:
    """(the data inside ``C()``, whether ``C()`` was given its levels)."""
    from patsy.categorical import _CategoricalBox

    if isinstance(data, _CategoricalBox):
        return data.data, data.levels is not None
    return data, False


def sniff(sniffer: Any, data: Any) -> bool:
    """``sniffer.sniff(data)`` (patsy's ``CategoricalSniffer``), looping over distinct values.

    Returns whether every level is known (patsy's meaning).
    """
    inner, given = _unboxed(data)
    if not hasattr(sniffer, "_level_set"):
        return bool(sniffer.sniff(data))
    if given or _is_bool(inner) or _is_categorical(inner):  # patsy's shortcuts, no loop
        if hasattr(data, "contrast"):
            sniffer._contrast = data.contrast
        if given:
            sniffer._levels = tuple(data.levels)
        elif _is_bool(inner):
            sniffer._level_set = {True, False}
        else:
            sniffer._levels = tuple(inner.cat.categories)
        return True
    found = _factorized(inner)
    if found is None:
        return bool(sniffer.sniff(data))
    if hasattr(data, "contrast"):
        sniffer._contrast = data.contrast
    na = sniffer._NA_action
    for value in found[1]:  # patsy's loop body, once per distinct value
        if na.is_categorical_NA(value):
            continue
        if value is True or value is False:
            sniffer._level_set.update([True, False])
        else:
            sniffer._level_set.add(value)
    return False


def _level_message(value: Any, levels: tuple[Any, ...]) -> str:
    """patsy's message for a value that is not a level."""
    show = 4
    if len(levels) <= show:
        shown = [repr(level) for level in levels]
    else:
        shown = [*map(repr, levels[:show // 2]), "...", *map(repr, levels[-show // 2:])]
    return ("Error converting data to categorical: observation with value "
            f"{value!r} does not match any of the expected levels (expected: "
            f"[{', '.join(shown)}])")


def categorical_codes(data: Any, levels: tuple[Any, ...], na: Any, origin: Any) -> IntArray:
    """patsy's ``categorical_to_int(data, levels, na, origin)``, looping over distinct values.

    Returns
    -------
    codes : ndarray of int, shape (n_rows,)
        Each row's level position, -1 where missing.
    """
    from patsy.categorical import categorical_to_int

    inner, given = _unboxed(data)  # C(x, levels=...): patsy checks them against the fit's
    patsy_path = given and tuple(data.levels) != levels
    if not patsy_path and _is_bool(inner) and levels == (False, True):
        return np.asarray(inner, dtype=np.int64)  # patsy's shortcut: False 0, True 1
    if not patsy_path and _is_categorical(inner) and tuple(inner.cat.categories) == levels:
        return np.asarray(inner.cat.codes, dtype=np.int64)  # pandas' codes, -1 missing
    found = None if patsy_path else _factorized(inner)
    if found is None:
        return np.asarray(categorical_to_int(data, levels, na, origin=origin))
    codes, values = found
    try:
        position = dict(zip(levels, range(len(levels)), strict=True))
    except TypeError:
        return np.asarray(categorical_to_int(data, levels, na, origin=origin))
    lookup = np.empty(len(values) + 1, dtype=np.int64)
    lookup[-1] = -1  # pandas' missing (code -1) stays missing
    for j, value in enumerate(values):
        lookup[j] = -1 if na.is_categorical_NA(value) else position.get(value, -2)
    out = lookup[codes]
    unseen = out == -2
    if unseen.any():
        i = int(np.argmax(unseen))
        first = next(iter(inner.iloc[i:i + 1])) if isinstance(inner, pd.Series) else inner[i]
        raise patsy.PatsyError(_level_message(first, levels), origin)
    return out


# ------------------------------------------------------------------------- design infos
def _examine_factor_types(factors: Any, states: dict[Any, Any], data_iter_maker: Any,
                          na: Any) -> tuple[dict[Any, int], dict[Any, Any]]:
    """patsy's ``_examine_factor_types`` with :func:`sniff` for the categorical factors."""
    from patsy.build import _max_allowed_dim
    from patsy.categorical import CategoricalSniffer, guess_categorical
    from patsy.util import atleast_2d_column_default

    num_columns: dict[Any, int] = {}
    sniffers: dict[Any, Any] = {}
    needed = set(factors)
    for data in data_iter_maker():
        for factor in list(needed):
            value = factor.eval(states[factor], data)
            if factor in sniffers or guess_categorical(value):
                if factor not in sniffers:
                    sniffers[factor] = CategoricalSniffer(na, factor.origin)
                if sniff(sniffers[factor], value):
                    needed.remove(factor)
            else:
                value = atleast_2d_column_default(value)
                _max_allowed_dim(2, value, factor)
                num_columns[factor] = value.shape[1]
                needed.remove(factor)
        if not needed:
            break
    return num_columns, {f: s.levels_contrast() for f, s in sniffers.items()}


def design_infos(termlists: list[Any], data_iter_maker: Any, eval_env: Any,
                 na: Any) -> list[Any]:
    """``patsy.design_matrix_builders(termlists, data_iter_maker, eval_env, na)``, same infos.

    Levels are found with :func:`sniff`; everything else is patsy's own code.
    """
    from patsy.build import _factors_memorize, _make_subterm_infos, _subterm_column_names_iter

    factors: set[Any] = {f for termlist in termlists for term in termlist for f in term.factors}
    states = _factors_memorize(factors, data_iter_maker, eval_env)
    num_columns, levels_contrasts = _examine_factor_types(factors, states, data_iter_maker, na)
    infos = {}
    for factor in factors:
        if factor in num_columns:
            infos[factor] = patsy.FactorInfo(factor, "numerical", states[factor],
                                             num_columns=num_columns[factor], categories=None)
        else:
            if factor not in levels_contrasts:  # no data at all: patsy asserts here too
                raise AssertionError(f"no data to tell the type of factor {factor.name()}")
            infos[factor] = patsy.FactorInfo(factor, "categorical", states[factor],
                                             num_columns=None,
                                             categories=levels_contrasts[factor][0])
    out = []
    for termlist in termlists:
        codings: OrderedDict[Any, Any] = _make_subterm_infos(termlist, num_columns,
                                                             levels_contrasts)
        names = [name for subterms in codings.values() for sub in subterms
                 for name in _subterm_column_names_iter(infos, sub)]
        used = {f: infos[f] for term in termlist for f in term.factors}
        out.append(patsy.DesignInfo(names, factor_infos=used, term_codings=codings))
    return out


# ------------------------------------------------------------------------- design columns
def check_codes(subterm: Any, factor_infos: Any, values: dict[Any, Any]) -> None:
    """patsy's refusal of a missing level code in a block it builds."""
    for factor in subterm.factors:
        if factor_infos[factor].type == "categorical" and (values[factor] < 0).any():
            raise patsy.PatsyError("can't build a design matrix containing missing values",
                                   factor)


def build_subterm(subterm: Any, factor_infos: Any, values: dict[Any, Any], out: Any,
                  rows: tuple[int, int] | None = None, *, checked: bool = False) -> None:
    """patsy's ``_build_subterm`` into ``out``: the same products, a block of rows at a time.

    Parameters
    ----------
    subterm : patsy.SubtermInfo
    factor_infos : dict
    values : dict
        Factor -> level codes (1-d, categorical) or 2-d numeric values, one row per row of
        ``out``.
    out : ndarray, shape (n_rows, subterm.num_columns)
    rows : (lo, hi), optional
        Fill only these rows (all by default).
    checked : bool
        The codes were already checked with :func:`check_codes`.
    """
    from patsy.build import _subterm_column_combinations

    if not checked:
        check_codes(subterm, factor_infos, values)
    combos = list(_subterm_column_combinations(factor_infos, subterm))
    parts: list[tuple[Any, Any, list[int] | None]] = []  # (values, contrast or None, columns)
    for j, factor in enumerate(subterm.factors):
        cols = [c[j] for c in combos]
        table = (subterm.contrast_matrices[factor].matrix
                 if factor_infos[factor].type == "categorical" else None)
        width = values[factor].shape[1] if table is None else table.shape[1]
        parts.append((values[factor], table, None if cols == list(range(width)) else cols))
    lo, hi = rows if rows is not None else (0, out.shape[0])
    step = max(1, _BLOCK_BYTES // max(8 * len(combos), 1))
    for a in range(lo, hi, step):
        b = min(a + step, hi)
        if len(parts) == 1 and parts[0][2] is None:  # 1 * x is x, to the bit
            value, table, _ = parts[0]
            out[a:b] = value[a:b] if table is None else table[value[a:b]]
            continue
        block = np.ones((b - a, len(combos)))
        for value, table, take in parts:  # 1 * first * second ..., as patsy multiplies
            part = value[a:b] if table is None else table[value[a:b]]
            block *= part if take is None else part[:, take]
        out[a:b] = block
