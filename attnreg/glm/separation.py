"""Separation in binomial and Poisson GLMs, found by linear programming before the fit.

A binomial GLM is separated when a direction ``b`` exists with ``X b >= 0`` on the rows with
``y = 1``, ``X b <= 0`` on the rows with ``y = 0``, ``X b = 0`` on the rows with
``0 < y < 1``, and ``X b != 0`` somewhere (Konis 2007; R's ``detectseparation``): moving the
coefficients along ``b`` raises the likelihood for ever, so the MLE is infinite. A Poisson
GLM is separated when ``X b <= 0`` on the rows with ``y = 0`` and ``X b = 0`` on the rows
with ``y > 0`` (Correia, Guimarães & Zylkin 2019, ppmlhdfe): the rows with ``X b < 0`` are
fitted exactly by a mean of zero. The *separated rows* are those where some such direction
has ``X b != 0``; the MLE of the remaining rows exists and gives the finite coefficients.

The set of directions is a convex cone, so the union of their supports is the support of one
direction (their sum). :func:`find_separation` finds it with a sequence of bounded LPs
(HiGHS): each maximises the sum of ``s_i x_i b`` over the rows not yet found, those capped
at 1, and stops when that maximum is zero, which proves no other row can be separated.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import linprog

from attnreg._typing import BoolArray, FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.exceptions import DataError, OptionError, SeparationWarning
from attnreg.formula.design import Design

__all__ = ["SEPARATION_MODES", "Separation", "check_separation_mode", "find_separation", "handle_separation"]

#: ``separation=``: drop the separated rows (and warn), warn only, raise, or do not check.
SEPARATION_MODES = ("drop", "warn", "error", "none")
#: A row counts as separated when ``|x_i b|`` exceeds this (columns scaled to unit norm,
#: the separated rows' values capped at 1 by the LP).
_ZTOL = 1e-7


@dataclass(frozen=True, eq=False)
class Separation:
    """What :func:`find_separation` found.

    Attributes
    ----------
    rows : pandas.Index
        Labels of the separated rows (fitted exactly by a mean of 0 or 1).
    regressors : list of str
        Design columns with a nonzero entry in the separating direction.
    direction : ndarray, shape (n_coef,)
        A separating direction (in the units of the design columns).
    positions : ndarray of int
        Positions of the separated rows among the design's rows.
    dropped : bool
        Whether the rows were left out of the fit (``separation="drop"``).
    """

    rows: pd.Index
    regressors: list[str]
    direction: FloatArray
    positions: IntArray
    dropped: bool = False

    def __bool__(self) -> bool:
        return len(self.rows) > 0

    def describe(self) -> str:
        """One sentence: how many rows, and the separating regressors."""
        return (f"{len(self.rows)} observation(s) separated by "
                f"{', '.join(self.regressors) or '(none)'}")


def check_separation_mode(mode: object) -> str:
    """Validate ``separation=``."""
    if mode not in SEPARATION_MODES:
        raise OptionError(f"separation must be one of {', '.join(map(repr, SEPARATION_MODES))}, "
                          f"however: separation={mode!r}")
    return str(mode)


def _signs(y: FloatArray, family: str) -> FloatArray:
    """+1: ``x b >= 0`` wanted, -1: ``x b <= 0``, 0: ``x b = 0``."""
    if family == "binomial":
        return np.where(y >= 1, 1.0, np.where(y <= 0, -1.0, 0.0))
    return np.where(y <= 0, -1.0, 0.0)


def _max_support(Z: FloatArray, s: FloatArray) -> tuple[BoolArray, FloatArray]:
    """Rows where some ``b`` with ``s_i z_i b >= 0`` (``= 0`` where ``s_i = 0``) is nonzero.

    Parameters
    ----------
    Z : ndarray, shape (n, p)
        Design with columns of unit norm.
    s : ndarray, shape (n,)
        The signs of :func:`_signs`.

    Returns
    -------
    found : ndarray of bool, shape (n,)
    direction : ndarray, shape (p,)
        The sum of the LPs' directions: nonzero exactly on ``found``.
    """
    n, p = Z.shape
    ineq, eq = s != 0, s == 0
    S = s[ineq, None] * Z[ineq]                       # rows wanted >= 0
    found = np.zeros(int(ineq.sum()), dtype=bool)
    direction = np.zeros(p)
    for _ in range(S.shape[0] + 1):
        open_ = ~found
        if not open_.any():
            break
        A_ub = np.vstack([-S, S[open_]])
        b_ub = np.concatenate([np.zeros(S.shape[0]), np.ones(int(open_.sum()))])
        res = linprog(-S[open_].sum(axis=0), A_ub=A_ub, b_ub=b_ub,
                      A_eq=Z[eq] if eq.any() else None, b_eq=np.zeros(int(eq.sum())) if eq.any()
                      else None, bounds=[(None, None)] * p, method="highs")
        if res.status != 0 or -res.fun <= _ZTOL:
            break
        new = (S @ res.x > _ZTOL) & open_
        if not new.any():
            break
        found |= new
        direction += res.x
    out = np.zeros(n, dtype=bool)
    out[np.flatnonzero(ineq)[found]] = True
    return out, direction


def find_separation(X: FloatArray, y: FloatArray, family: str, column_names: list[str],
                    row_labels: pd.Index) -> Separation:
    """Separated rows and separating regressors of a binomial or Poisson GLM.

    Parameters
    ----------
    X : ndarray, shape (n, p)
        Design (rows of prior weight zero already left out).
    y : ndarray, shape (n,)
        Response: 0/1 or proportions (binomial), counts (Poisson).
    family : {"binomial", "poisson"}
    column_names : list of str, length p
    row_labels : pandas.Index, length n

    Returns
    -------
    Separation
        Empty (falsy) when the data are not separated.
    """
    norms = np.linalg.norm(X, axis=0)
    norms[norms == 0] = 1.0
    found, d = _max_support(X / norms, _signs(y, family))
    d = d / norms
    big = np.abs(d) * norms > _ZTOL * max(1.0, float(np.abs(d * norms).max(initial=0.0)))
    names = [column_names[j] for j in np.flatnonzero(big)] if found.any() else []
    return Separation(rows=row_labels[found], regressors=names,
                      direction=np.where(big, d, 0.0) if found.any() else np.zeros_like(d),
                      positions=np.flatnonzero(found).astype(np.int64))


def handle_separation(design: Design, family: str,
                      mode: str) -> tuple[Design, Separation | None]:
    """Check a binomial or Poisson design for separation and act as ``separation=`` says.

    Returns the design to fit (without the separated rows when ``mode="drop"``) and what
    was found (None when not checked: other families, ``mode="none"``).
    """
    if mode == "none" or family not in ("binomial", "poisson"):
        return design, None
    y = design.y
    if (y < 0).any() or (family == "binomial" and (y > 1).any()):
        return design, None  # the family refuses the response (R's message) in the fit
    sep = find_separation(design.X, design.y, family, design.column_names, design.row_labels)
    if not sep:
        return design, sep
    what = (f"{sep.describe()}: the maximum-likelihood estimates of a {family} GLM are "
            "infinite (fitted means exactly 0" + (" or 1)" if family == "binomial" else ")"))
    if mode == "error":
        raise DataError(f"{what}; drop those rows or regressors, or pass separation='drop' "
                        "to leave the rows out of the fit")
    if mode == "warn":
        warn_user(f"{what}; fitted anyway (separation='warn')", SeparationWarning)
        return design, sep
    keep = np.ones(design.n_obs, dtype=bool)
    keep[sep.positions] = False
    if not keep.any():
        raise DataError(f"complete separation: {what}, and no row is left once they are "
                        "dropped; remove the separating regressors from the formula, or pass "
                        "separation='warn' to fit anyway")
    warn_user(f"{what}; they were dropped before the fit (separation='drop'; see "
              "fit.separation)", SeparationWarning)
    w = None if design.weights is None else design.weights[keep]
    rows = None if design.data_rows is None else design.data_rows[keep]
    kept = dataclasses.replace(design, X=np.ascontiguousarray(design.X[keep]),
                               y=design.y[keep], row_labels=design.row_labels[keep],
                               weights=w, data_rows=rows)
    return kept, dataclasses.replace(sep, dropped=True)
