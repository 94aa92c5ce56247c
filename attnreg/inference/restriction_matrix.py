"""Restrictions R b = r given as a numeric matrix or as the coefficients of formula terms (text
restrictions are parsed by :mod:`attnreg.inference.restrictions`)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError

__all__ = ["matrix_restrictions", "term_restrictions"]


def matrix_restrictions(names: list[str], hypothesis: Any,
                        rhs: Any) -> tuple[FloatArray, FloatArray]:
    """(R, r) from a matrix (or a DataFrame with coefficient columns) and a right-hand side.

    Parameters
    ----------
    names : list of str
        The coefficients, in the order of R's columns.
    hypothesis : array-like, shape (q, K), or DataFrame
        R; a DataFrame's columns are coefficient names (those it lacks are 0).
    rhs : float, array-like of shape (q,), or None
        r (zeros when None).

    Returns
    -------
    R : ndarray, shape (q, K)
    r : ndarray, shape (q,)

    Examples
    --------
    >>> from attnreg.inference.restriction_matrix import matrix_restrictions
    >>> R, r = matrix_restrictions(["a", "b"], [[1.0, -1.0]], 2)
    >>> R.tolist(), r.tolist()
    ([[1.0, -1.0]], [2.0])
    """
    k = len(names)
    if isinstance(hypothesis, pd.DataFrame):
        unknown = [c for c in hypothesis.columns if c not in names]
        if unknown:
            raise OptionError(f"hypothesis matrix has column(s) {unknown} that are not "
                              f"coefficients (the coefficients are: {', '.join(names)})")
        R = hypothesis.reindex(columns=names, fill_value=0.0)
        try:
            R_arr = R.to_numpy(dtype=np.float64)
        except (TypeError, ValueError):
            raise OptionError("hypothesis matrix must be numeric") from None
    else:
        try:
            R_arr = np.array(hypothesis, dtype=np.float64, ndmin=2)
        except (TypeError, ValueError):
            raise OptionError(f"hypothesis must be text, a numeric matrix or a DataFrame, "
                              f"however: {type(hypothesis).__name__}") from None
    if R_arr.ndim != 2 or R_arr.shape[1] != k or R_arr.shape[0] == 0:
        raise OptionError(f"hypothesis matrix R must have shape (q, {k}) (one column per "
                          f"coefficient, in the order of fit.names), however: "
                          f"shape {R_arr.shape}")
    if not np.isfinite(R_arr).all():
        raise OptionError("hypothesis matrix R must be finite")
    q = R_arr.shape[0]
    if rhs is None:
        r = np.zeros(q)
    else:
        try:
            r = np.broadcast_to(np.asarray(rhs, dtype=np.float64), (q,)).copy()
        except (TypeError, ValueError):
            raise OptionError(f"rhs must be a number or {q} numbers (one per row of R), "
                              f"however: {rhs!r}") from None
        if not np.isfinite(r).all():
            raise OptionError(f"rhs must be finite, however: {rhs!r}")
    empty = np.flatnonzero(~(R_arr != 0).any(axis=1))
    if empty.size:
        raise OptionError(f"hypothesis matrix R has row(s) {empty.tolist()} of zeros: "
                          "they restrict no coefficient")
    return R_arr, r


def term_restrictions(design_info: Any, names: list[str], estimable: list[int],
                      term: str | Sequence[str]) -> tuple[FloatArray, FloatArray]:
    """(R, r) setting the estimable coefficients of formula terms to zero.

    Parameters
    ----------
    design_info : patsy.DesignInfo
        The formula's terms and their columns.
    names : list of str
        The coefficients.
    estimable : list of int
        Positions of the estimable (not aliased) coefficients.
    term : str or sequence of str
        Term names, as the formula writes them (spaces ignored).

    Returns
    -------
    R : ndarray, shape (q, K)
    r : ndarray, shape (q,)
    """
    terms = [term] if isinstance(term, str) else list(term)
    if not terms or not all(isinstance(t, str) for t in terms):
        raise OptionError(f"term must be a term name or a list of them, however: {term!r}")
    slices = dict(design_info.term_name_slices)
    if "Intercept" in slices:
        slices["(Intercept)"] = slices["Intercept"]
    compact = {"".join(n.split()): n for n in slices}
    est = set(estimable)
    cols: list[int] = []
    for t in terms:
        key = compact.get("".join(t.split()))
        if key is None:
            listed = [n for n in design_info.term_names]
            close = difflib.get_close_matches(t, listed, n=3, cutoff=0.5)
            hint = f"; close matches: {', '.join(close)}" if close else ""
            raise OptionError(f"term {t!r} is not a term of the formula{hint} (its terms "
                              f"are: {', '.join(listed)})")
        span = range(*slices[key].indices(len(names)))
        usable = [j for j in span if j in est]
        if not usable:
            raise OptionError(f"term {t!r} has no estimable coefficient (all of "
                              f"{', '.join(names[j] for j in span)} are aliased)")
        cols += [j for j in usable if j not in cols]
    R = np.zeros((len(cols), len(names)))
    R[np.arange(len(cols)), cols] = 1.0
    return R, np.zeros(len(cols))
