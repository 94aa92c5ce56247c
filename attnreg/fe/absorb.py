"""From a data frame to absorbed fixed effects: the levels of each term, and y and X demeaned.

Two helpers any estimator with a fixed-effects part can use (OLS here, IV too):

- :func:`fixed_effects_of_frame` builds the :class:`~attnreg.fe.demean.FixedEffects` of the
  fixed-effect terms of a formula (``firm``, ``firm^year``) from a frame's columns of any
  dtype, leaving out and counting the rows where a term is missing;
- :func:`absorb` residualises y and X (and any other columns) on them, with prior weights,
  and marks the columns the fixed effects explain (collinear with them: aliased).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import BoolArray, FloatArray, IntArray
from attnreg.exceptions import DataError, FormulaError, OptionError
from attnreg.fe.demean import Demeaned, FixedEffects, demean
from attnreg.formula.parts import FixedEffectTerm, split_formula

__all__ = ["COLLINEAR_TOL", "Absorbed", "FrameEffects", "absorb", "codes_of", "fixed_effects_of_frame",
           "term_values"]

#: a column whose part outside the fixed effects is below this fraction of its own norm is
#: collinear with them (aliased, R's NA): 1e4 times the demeaning's rounding floor
COLLINEAR_TOL = 1e-9


@dataclass(frozen=True)
class FrameEffects:
    """The fixed effects of a frame's rows.

    Attributes
    ----------
    fe : FixedEffects
        Levels of the kept rows (``fe.n_obs == keep.sum()``).
    keep : ndarray of bool, shape (n_rows,)
        Rows with every fixed-effect term present.
    n_missing : dict of str to int
        Rows left out because of a missing value, by term (a row missing in two terms is
        counted in both).
    terms : tuple of FixedEffectTerm
    """

    fe: FixedEffects
    keep: BoolArray
    n_missing: dict[str, int]
    terms: tuple[FixedEffectTerm, ...]


def _terms(terms: Sequence[str | FixedEffectTerm]) -> tuple[FixedEffectTerm, ...]:
    out: list[FixedEffectTerm] = []
    for term in terms:
        if isinstance(term, str):
            parsed = split_formula(f"y ~ 1 | {term}").fixed_effect_terms
            out.extend(parsed)
        else:
            out.append(term)
    for t in out:
        if t.slopes:
            raise FormulaError(f"varying slopes ({t.text!r}) are not supported yet: write the "
                               f"interaction as a regressor, e.g. 'C({t.columns[0]}):{t.slopes[0]}'")
    return tuple(out)


def term_values(frame: pd.DataFrame,
                term: FixedEffectTerm) -> tuple[pd.Series | pd.MultiIndex, BoolArray]:
    """The level of each row of ``frame`` in ``term`` (a MultiIndex for ``a^b``) and its
    missing rows.

    Raises
    ------
    DataError
        A column of the term is not in ``frame`` (named, with the columns there are).
    """
    for column in term.columns:
        if column not in frame.columns:
            raise DataError(f"fixed effect {term.text!r}: the data have no column {column!r} "
                            f"(columns: {', '.join(map(str, list(frame.columns)[:12]))})")
    parts = [frame[c] for c in term.columns]
    missing = np.zeros(len(frame), dtype=bool)
    for part in parts:
        missing |= pd.isna(part).to_numpy()
    if len(parts) == 1:
        return parts[0], missing
    return pd.MultiIndex.from_arrays([p.to_numpy() for p in parts], names=term.columns), missing


def _interaction(parts: list[pd.Series]) -> tuple[IntArray, pd.MultiIndex]:
    """Codes of the combinations of ``parts`` (no missing value), in sorted order, and their
    labels: factorised column by column, never through Python tuples of the rows."""
    key = np.zeros(len(parts[0]), dtype=np.int64)
    for part in parts:
        code, uniques = pd.factorize(part, sort=True)
        key, _ = pd.factorize(key * len(uniques) + code, sort=True)  # lexicographic order
    first = np.empty(int(key.max()) + 1, dtype=np.int64)
    first[key] = np.arange(key.size)  # a row of each combination
    labels = pd.MultiIndex.from_arrays([p.to_numpy()[first] for p in parts],
                                       names=[str(p.name) for p in parts])
    return np.asarray(key, dtype=np.int64), labels


def fixed_effects_of_frame(frame: pd.DataFrame,
                           terms: Sequence[str | FixedEffectTerm]) -> FrameEffects:
    """The fixed effects of ``terms`` on the rows of ``frame``, missing rows left out.

    Parameters
    ----------
    frame : DataFrame, shape (n_rows, ...)
        Never modified. Columns of any dtype (ints, uint64 ids, strings, categoricals, dates).
    terms : sequence of str or FixedEffectTerm
        ``"firm"``, ``"firm^year"`` (the levels are the combinations present).

    Returns
    -------
    FrameEffects

    Raises
    ------
    DataError
        A column is missing, or no row is left.
    FormulaError
        A varying slope ``firm[x]`` (not supported).

    Examples
    --------
    >>> df = pd.DataFrame({"firm": ["a", "b", None, "a"], "year": [1, 1, 2, 2]})
    >>> got = fixed_effects_of_frame(df, ["firm", "firm^year"])
    >>> got.fe.n_levels, got.keep.tolist(), got.n_missing
    ((2, 3), [True, True, False, True], {'firm': 1, 'firm^year': 1})
    """
    parsed = _terms(terms)
    if not parsed:
        raise OptionError("give at least one fixed-effect term, e.g. ['firm', 'year']")
    values, keep, n_missing = [], np.ones(len(frame), dtype=bool), {}
    for term in parsed:
        v, missing = term_values(frame, term)
        values.append(v)
        keep &= ~missing
        n_missing[term.text] = int(missing.sum())
    if not keep.any():
        raise DataError(f"no row has every fixed effect ({', '.join(t.text for t in parsed)}) "
                        "present")
    rows = np.flatnonzero(keep)
    columns: list[Any] = []
    labels: dict[int, pd.MultiIndex] = {}
    for k, (term, v) in enumerate(zip(parsed, values, strict=True)):
        if isinstance(v, pd.MultiIndex):
            codes, labels[k] = _interaction([frame[c].iloc[rows] for c in term.columns])
            columns.append(codes)
        else:
            columns.append(v if rows.size == len(frame) else v.iloc[rows])
    fe = FixedEffects.from_columns(columns, [t.text for t in parsed])
    if labels:  # the combinations' codes are in sorted order: label them
        fe = dataclasses.replace(fe, levels=tuple(labels.get(k, lv)
                                                  for k, lv in enumerate(fe.levels)))
    return FrameEffects(fe, keep, n_missing, parsed)


@dataclass(frozen=True)
class Absorbed:
    """y and X residualised on the fixed effects.

    Attributes
    ----------
    y : ndarray, shape (n_obs,)
    X : ndarray, shape (n_obs, n_cols)
        Columns found collinear with the fixed effects are exactly zero.
    collinear : ndarray of bool, shape (n_cols,)
        Columns whose within part is below :data:`COLLINEAR_TOL` of their norm.
    demeaned : Demeaned
        The residualisation of [y, X] (effects α of every column, accuracy reached).
    """

    y: FloatArray
    X: FloatArray
    collinear: BoolArray
    demeaned: Demeaned


def absorb(y: FloatArray, X: FloatArray, fe: FixedEffects, weights: FloatArray | None = None,
           *, tol: float = COLLINEAR_TOL, max_iter: int = 100_000) -> Absorbed:
    """Residualise ``y`` and the columns of ``X`` on ``fe`` (weighted when ``weights``).

    Parameters
    ----------
    y : ndarray, shape (n_obs,)
    X : ndarray, shape (n_obs, n_cols)
        Without an intercept column (the fixed effects absorb it). Not modified.
    fe : FixedEffects
    weights : ndarray, shape (n_obs,), optional
        Positive prior weights.
    tol : float
        Relative size below which a residualised column counts as explained by ``fe``.
    max_iter : int
        Cap on the demeaning's conjugate-gradient iterations (``Demeaned.converged`` says
        whether the data's accuracy was reached first); two fixed effects are solved exactly
        by the rule of ``demean(method="auto")``.

    Returns
    -------
    Absorbed

    Examples
    --------
    >>> fe = FixedEffects.from_columns([[0, 0, 1, 1]])
    >>> out = absorb(np.array([1.0, 2, 3, 5]), np.array([[1.0], [2], [7], [7]]), fe)
    >>> out.y.tolist(), out.collinear.tolist()
    ([-0.5, 0.5, -1.0, 1.0], [False])
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] != np.shape(y)[0]:
        raise DataError(f"X must have shape (n_obs, n_cols) with n_obs = {np.shape(y)[0]}, "
                        f"however: {X.shape}")
    V = np.empty((X.shape[0], 1 + X.shape[1]))  # [y, X]: the one copy the demeaning works on
    V[:, 0], V[:, 1:] = y, X
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    before = _column_norms(V[:, 1:], w)
    dm = demean(V, fe, w, max_iter=max_iter, method="auto", overwrite=True)
    after = _column_norms(dm.resid[:, 1:], w)
    collinear = after <= tol * np.where(before > 0, before, 1.0)
    Xt = np.ascontiguousarray(dm.resid[:, 1:])
    Xt[:, collinear] = 0.0
    return Absorbed(np.ascontiguousarray(dm.resid[:, 0]), Xt, collinear, dm)


def _column_norms(X: FloatArray, w: FloatArray | None) -> FloatArray:
    """The weighted Euclidean norm of each column, shape (n_cols,); no N × n_cols temporary."""
    if w is None:
        return np.sqrt(np.einsum("ij,ij->j", X, X))
    return np.sqrt(np.einsum("ij,ij,i->j", X, X, w))


def codes_of(values: pd.Series | pd.Index, levels: pd.Index) -> IntArray:
    """The code of each value among ``levels`` (−1 for a level not there)."""
    index = values if isinstance(values, pd.Index) else pd.Index(values.to_numpy())
    return np.asarray(levels.get_indexer(index), dtype=np.int64)
