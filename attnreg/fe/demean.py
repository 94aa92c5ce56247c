"""Residualise columns on absorbed fixed effects, to the accuracy the data carry.

With K fixed effects, D = [D_1 … D_K] (N × G, G = Σ G_k) holds the dummies and W the prior
weights. The residual of a column v on D is r = v − D α with α any solution of the normal
equations D'WD α = D'W v. By the Frisch–Waugh–Lovell theorem, least squares of the residualised
y on the residualised X gives the coefficients of the dummy-variable regression, and its
residuals too.

D'WD is never formed. One fixed effect is a group mean (taken twice: the second pass removes
the first's rounding). For several, conjugate gradients on the normal equations (CGLS),
preconditioned by the diagonal of D'WD (the weight of each level: the iteration is accelerated
alternating projections), update the residual r itself, and D'W r is computed from r at every
step, until every level's weighted sum of r is zero to the rounding of that sum. The stopping
test is on that orthogonality, the quantity the coefficients depend on, never on an iteration
count (which is only a cap, reported when reached). The effects α are accumulated alongside.
The passes over the rows of the group means and of the exact solve are those of
:mod:`attnreg.fe.levelpass` (in place, by blocks of rows).

References: Guimarães & Portugal (2010) and Gaure (2013) for alternating projections; Correia
(2017, reghdfe) for conjugate-gradient acceleration.
"""

from __future__ import annotations

from collections.abc import Sequence
import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from attnreg._typing import BoolArray, FloatArray, IntArray
from attnreg.exceptions import DataError, OptionError
from attnreg.fe.cgls import cgls
from attnreg.fe.levelpass import level_sums, subtract_levels
from attnreg.fe.solve import LevelSolver

__all__ = ["DEMEAN_METHODS", "SCHUR_MAX_LEVELS", "Demeaned", "FixedEffects", "demean"]

#: how :func:`demean` solves with several fixed effects: ``"cgls"`` (iterative), ``"schur"``
#: (two or more fixed effects: exact sparse solve), ``"auto"`` (the rule of :func:`demean`)
DEMEAN_METHODS = ("auto", "cgls", "schur")
#: ``method="auto"`` solves the fixed effects exactly when all but the largest have at most
#: this many levels together (their Schur complement is factored once); CGLS otherwise
SCHUR_MAX_LEVELS = 20_000

_EPS = np.finfo(np.float64).eps



@dataclass(frozen=True)
class FixedEffects:
    """The level codes of K fixed effects over the same N rows.

    Attributes
    ----------
    codes : tuple of ndarray of int64, each shape (n_obs,)
        Level code of each row, ``0 … n_levels[k] - 1``, every code used.
    n_levels : tuple of int
        Number of levels of each fixed effect.
    names : tuple of str
        A name per fixed effect (for messages and reports).
    levels : tuple of pandas.Index
        The level labels, in code order.
    """

    codes: tuple[IntArray, ...]
    n_levels: tuple[int, ...]
    names: tuple[str, ...]
    levels: tuple[pd.Index, ...] = field(repr=False, compare=False)

    @classmethod
    def from_columns(cls, columns: Sequence[Any], names: Sequence[str] | None = None) -> FixedEffects:
        """Factorise each column (any dtype: ints, uint64 ids, strings, categories, dates).

        Parameters
        ----------
        columns : sequence of array-like, each shape (n_obs,)
        names : sequence of str, optional
            Default ``fe1, fe2, …``.

        Raises
        ------
        DataError
            Columns of different lengths, or a missing value (drop those rows first).

        Examples
        --------
        >>> fe = FixedEffects.from_columns([["a", "b", "a"], [2010, 2010, 2011]], ["firm", "year"])
        >>> fe.n_levels
        (2, 2)
        """
        names = tuple(names) if names is not None else tuple(f"fe{k + 1}" for k in range(len(columns)))
        if len(names) != len(columns) or not columns:
            raise OptionError(f"give one name per fixed effect, however: {len(columns)} column(s) "
                              f"and names={names!r}")
        codes, levels = [], []
        for name, column in zip(names, columns, strict=True):
            code, uniques = _factorize(column)
            if (code < 0).any():
                raise DataError(f"fixed effect {name!r} has a missing value in row "
                                f"{int(np.flatnonzero(code < 0)[0])}: drop those rows first")
            codes.append(np.asarray(code, dtype=np.int64))
            levels.append(pd.Index(uniques))
        n = {c.size for c in codes}
        if len(n) != 1:
            raise DataError(f"the fixed effects {names!r} have different lengths {sorted(n)}")
        return cls(tuple(codes), tuple(len(u) for u in levels), names, tuple(levels))

    @property
    def n_obs(self) -> int:
        """Number of rows."""
        return int(self.codes[0].size)

    @cached_property
    def offsets(self) -> IntArray:
        """Position of each fixed effect's first level among all G levels, shape (K + 1,)."""
        return np.concatenate([[0], np.cumsum(self.n_levels)]).astype(np.int64)

    @cached_property
    def _pair_cache(self) -> dict[tuple[int, int], tuple[int, IntArray]]:
        return {}

    def pair_components(self, a: int, b: int) -> tuple[int, IntArray]:
        """Connected components of fixed effects ``a < b`` (levels joined by rows), computed
        once per fit and shared by the degrees of freedom and the exact solve.

        Returns
        -------
        n_components : int
        labels : ndarray of int, shape (n_levels[a] + n_levels[b],)
            The component of each level of ``a``, then of each level of ``b``.
        """
        got = self._pair_cache.get((a, b))
        if got is None:
            ga, gb = self.n_levels[a], self.n_levels[b]
            links = sp.coo_matrix((np.ones(self.n_obs), (self.codes[a], ga + self.codes[b])),
                                  shape=(ga + gb, ga + gb))
            n, labels = connected_components(links, directed=False)
            got = self._pair_cache[(a, b)] = (int(n), np.asarray(labels, dtype=np.int64))
        return got

    def first_per_component(self, a: int, b: int) -> IntArray:
        """The first level of fixed effect ``b`` in each connected component of ``a`` and
        ``b`` (fixest's references), sorted."""
        _, labels = self.pair_components(min(a, b), max(a, b))
        labels = labels[self.n_levels[a]:] if a < b else labels[:self.n_levels[b]]
        _, first = np.unique(labels, return_index=True)
        return np.sort(first)

    def subset(self, mask: BoolArray) -> FixedEffects:
        """The rows ``mask`` selects, each fixed effect's levels without a row left out and
        the codes renumbered in order: as factorising those rows' labels gives them.

        Examples
        --------
        >>> fe = FixedEffects.from_columns([["a", "b", "c", "b"]], ["firm"])
        >>> sub = fe.subset(np.array([True, False, True, False]))  # no row of "b" is left
        >>> sub.codes[0].tolist(), sub.n_levels, sub.levels[0].tolist()
        ([0, 1], (2,), ['a', 'c'])
        """
        codes, n_levels, levels = [], [], []
        for code, labels in zip(self.codes, self.levels, strict=True):
            kept = code[mask]
            present = np.bincount(kept, minlength=len(labels)) > 0
            codes.append((np.cumsum(present) - 1)[kept])
            n_levels.append(int(present.sum()))
            levels.append(labels[present])
        return FixedEffects(tuple(codes), tuple(n_levels), self.names, tuple(levels))

    def reordered(self, order: IntArray) -> FixedEffects:
        """The same fixed effects with their rows in ``order`` (a permutation of the rows).
        The connected components do not depend on the rows' order: they are shared, not
        found again."""
        out = dataclasses.replace(self, codes=tuple(c[order] for c in self.codes))
        out.__dict__["_pair_cache"] = self._pair_cache
        return out

    @cached_property
    def dummies(self) -> sp.csr_matrix:
        """D, the N × G sparse dummy matrix (K ones per row)."""
        k = len(self.codes)
        cols = np.stack([c + o for c, o in zip(self.codes, self.offsets[:-1], strict=True)], axis=1)
        indptr = np.arange(0, k * self.n_obs + 1, k, dtype=np.int64)
        data = np.ones(k * self.n_obs)
        return sp.csr_matrix((data, cols.ravel(), indptr), shape=(self.n_obs, int(self.offsets[-1])))


def _factorize(column: Any) -> tuple[IntArray, Any]:
    """pandas' ``factorize(sort=True)``; non-negative integer ids of a range at most about the
    column's length (fixest's designs, codes already) are counted instead of hashed."""
    values = column.to_numpy() if isinstance(column, pd.Series) else column
    if (isinstance(values, np.ndarray) and values.dtype.kind in "iu" and values.ndim == 1
            and values.size and values.min() >= 0
            and int(values.max()) < 2 * values.size + 1024):
        present = np.bincount(values) > 0
        remap = np.cumsum(present) - 1  # the rank of each present id among them
        return remap[values], pd.Index(np.flatnonzero(present).astype(values.dtype))
    return pd.factorize(column if isinstance(column, pd.Series) else pd.Series(column),
                        sort=True)


@dataclass(frozen=True)
class Demeaned:
    """Columns residualised on the fixed effects, and how accurately.

    Attributes
    ----------
    resid : ndarray, shape (n_obs, n_cols)
        r = v − D α for each column v.
    orthogonality : ndarray, shape (n_cols,)
        max over levels of abs(Σ w r) in the level, relative to the largest Σ w abs(v): zero in
        exact arithmetic, the rounding of those sums at convergence.
    floor : float
        The rounding floor of ``orthogonality`` (from the largest level's row count).
    effects : ndarray, shape (n_levels_total, n_cols)
        α, one value per level of every fixed effect (the first fixed effect's levels first),
        with v − r = D α; one solution among many when the fixed effects share information
        (normalise with :func:`attnreg.fe.effects.normalise`).
    iterations : int
        Conjugate-gradient iterations (0 for one fixed effect and for the exact two-way
        solve, ``method="schur"``).
    converged : bool
        Whether every column reached its floor (or stagnated within 16 times of it) before
        ``max_iter``.
    """

    resid: FloatArray
    orthogonality: FloatArray
    floor: float
    effects: FloatArray
    iterations: int
    converged: bool


def demean(values: Any, fe: FixedEffects, weights: Any = None, *,
           max_iter: int = 100_000, method: str = "cgls", overwrite: bool = False) -> Demeaned:
    """Residualise ``values`` on the fixed effects ``fe`` (weighted least squares if ``weights``).

    Parameters
    ----------
    values : array-like, shape (n_obs,) or (n_obs, n_cols)
        Columns to residualise (typically y and the regressors). Not modified, unless
        ``overwrite``.
    fe : FixedEffects
    weights : array-like, shape (n_obs,), optional
        Positive prior weights.
    max_iter : int
        Cap on conjugate-gradient iterations (reported through ``converged`` when reached).
    method : {"cgls", "schur", "auto"}
        Two or more fixed effects: ``"schur"`` solves the normal equations exactly, one
        factor (dense or sparse) of the Schur complement on all but the largest fixed
        effect's levels for every column (:class:`attnreg.fe.solve.LevelSolver`; its
        conjugate gradients where nested fixed effects leave it singular), repeated on the
        residual to the floor (3 passes at most, CGLS finishes). ``"auto"``: that when all
        but the largest have at most :data:`SCHUR_MAX_LEVELS` levels together (3 to 25 times
        faster than CGLS at 1e5 rows on fixest's designs and a worker–firm–year panel), CGLS
        otherwise.
    overwrite : bool
        Residualise ``values`` in place (and return it as ``resid``) when it is a writeable
        C-contiguous float64 array of shape (n_obs, n_cols): no copy of the columns.

    Returns
    -------
    Demeaned

    Examples
    --------
    >>> fe = FixedEffects.from_columns([[0, 0, 1, 1], [0, 1, 0, 1]])
    >>> r = demean([1.0, 2.0, 4.0, 7.0], fe).resid
    >>> np.round(r.ravel(), 12) + 0.0
    array([ 0.5, -0.5, -0.5,  0.5])
    """
    V = _work_array(values, fe.n_obs, overwrite)
    w, exact = _weights(weights, fe.n_obs), _exact(fe, method)
    D = fe.dummies
    counts = [np.bincount(c, minlength=g) for c, g in zip(fe.codes, fe.n_levels, strict=True)]
    floor = float(4 * _EPS * np.sqrt(max(int(c.max()) for c in counts)))
    level_weight = (np.concatenate(counts).astype(np.float64) if w is None
                    else np.asarray(D.T @ w).ravel())  # the diagonal M of D'WD
    scale = level_sums(D, V, w, absolute=True).max(axis=0)
    scale[scale == 0] = 1.0
    if len(fe.codes) == 1:  # one fixed effect: the group means
        return _one_way(V, fe, w, level_weight, scale, floor)
    start = np.zeros((D.shape[1], V.shape[1]))
    if exact:  # CGLS below only finishes what the exact solve left
        V, q, start = _schur(fe, w, V, scale, floor)
        if np.all(q <= floor):
            return Demeaned(resid=V, orthogonality=q, floor=floor, effects=start,
                            iterations=0, converged=True)
    r, q, alpha, its = cgls(D, np.ones(fe.n_obs) if w is None else w, level_weight, V, scale,
                             floor, max_iter)
    return Demeaned(resid=r, orthogonality=q, floor=floor, effects=start + alpha,
                    iterations=its, converged=bool(np.all(q <= 16 * floor)) and its < max_iter)


def _work_array(values: Any, n_obs: int, overwrite: bool) -> FloatArray:
    """``values`` as a C-contiguous float64 (n_obs, n_cols) array to residualise in place:
    ``values`` itself when ``overwrite`` allows and it is one already, else a copy."""
    if (overwrite and isinstance(values, np.ndarray) and values.dtype == np.float64
            and values.ndim == 2 and values.flags.c_contiguous and values.flags.writeable):
        V = values
    else:
        V = np.array(values, dtype=np.float64, copy=True, order="C")
    V = V[:, None] if V.ndim == 1 else V
    if V.ndim != 2 or V.shape[0] != n_obs:
        raise DataError(f"values must have {n_obs} rows (one per row of the fixed effects), "
                        f"however: shape {np.shape(values)}")
    return V


def _one_way(V: FloatArray, fe: FixedEffects, w: FloatArray | None, level_weight: FloatArray,
             scale: FloatArray, floor: float) -> Demeaned:
    """One fixed effect: V less its level means, in place, then once more on the residual
    (the means of the residual are the first pass's rounding: removing them gains a quarter
    of a digit on fixest's simple design, which the floor test is too coarse to see)."""
    D = fe.dummies
    alpha = np.zeros((D.shape[1], V.shape[1]))
    sums = level_sums(D, V, w)
    for _ in range(2):
        means = sums / level_weight[:, None]
        subtract_levels(V, fe.codes, fe.offsets, means)
        alpha += means
        sums = level_sums(D, V, w)
    q = np.abs(sums).max(axis=0) / scale
    return Demeaned(resid=V, orthogonality=q, floor=floor, effects=alpha, iterations=0,
                    converged=bool(np.all(q <= 16 * floor)))


def _exact(fe: FixedEffects, method: str) -> bool:
    """Whether ``demean(method=)`` solves these fixed effects exactly (the Schur solve)."""
    if method not in DEMEAN_METHODS:
        raise OptionError(f"method must be one of {DEMEAN_METHODS}, however: {method=}")
    rest = sum(fe.n_levels) - max(fe.n_levels)  # the levels the Schur complement is on
    return len(fe.codes) >= 2 and (method == "schur" or (
        method == "auto" and rest <= SCHUR_MAX_LEVELS))


def _weights(weights: Any, n: int) -> FloatArray | None:
    if weights is None:
        return None
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise DataError(f"weights must be {n} positive finite numbers")
    return w


def _schur(fe: FixedEffects, w: FloatArray | None, V: FloatArray, scale: FloatArray,
           floor: float) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Residuals of V on two fixed effects by exact sparse solves of the normal equations
    (one factorisation), repeated on the residual (at most 3 passes) to the rounding floor;
    V is residualised in place."""
    solver, D = LevelSolver(fe, w), fe.dummies
    alpha = np.zeros((D.shape[1], V.shape[1]))
    sums = level_sums(D, V, w)
    for _ in range(3):
        x = solver.solve(sums)  # (G, n_cols)
        subtract_levels(V, fe.codes, fe.offsets, x)
        alpha += x
        sums = level_sums(D, V, w)
        q = np.abs(sums).max(axis=0) / scale
        if np.all(q <= floor):
            break
    return V, q, alpha
