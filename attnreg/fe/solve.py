"""Exact solves with the fixed effects' normal equations D'WD, never forming an inverse.

A = D'WD (G × G) is singular when there are several fixed effects, but every right-hand side
needed here, d₀ (a row's levels) or D'W v, lies in its range, where any solution x of
A x = b gives the same d₀'x and D x as the pseudo-inverse's (they differ by a null vector of
D). :class:`LevelSolver` finds one:

- one fixed effect: A is diagonal (the level weights);
- two: A is the Laplacian-like matrix of the bipartite graph of levels. The block of the fixed
  effect with more levels is diagonal and is eliminated exactly, leaving the Schur complement
  S = W_s − B'W_b⁻¹B on the other one (B = D_b'WD_s, sparse G_s × G_s with one entry per pair
  of its levels sharing a level of the first). S is singular with one null vector per
  connected component; one level per component is grounded (its value set to 0, which some
  solution has) and the rest, symmetric positive definite, is factored once and reused for
  every right-hand side: by dense Cholesky when it is small and dense (on fixest's designs
  every two of its levels share a level of the first: :data:`DENSE_MAX_LEVELS`), by sparse
  LU otherwise; its blocks are counted per pair of fixed effects (:mod:`attnreg.fe.levelgram`);
- three or more: the same, with S on the levels of all the others (sparse, not diagonal in
  their own block) and fixest's references grounded (the second largest's first level per
  component, the first level of each further one). When that leaves S singular (fixed
  effects sharing more than a constant, e.g. nested: a pivot below :data:`SINGULAR_PIVOT` of
  the largest, or exactly 0), conjugate gradients on A (consistent, so they converge on its range),
  preconditioned by the exact solve of the two largest fixed effects and the level weights of
  the others, until the residual of every level is at the rounding floor of A x. With more
  than :data:`ITERATE_MANY_FROM` free levels S is never factored (its sparse LU fills in):
  conjugate gradients on S (:func:`attnreg.fe.schur_iter.schur_pcg`), on A if they give up.

Right-hand sides are solved in blocks of at most :data:`BLOCK_ENTRIES` numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import connected_components

from attnreg._typing import FloatArray, IntArray
from attnreg.fe.levelgram import DenseCholesky, pair_weights, rest_gram, subtract_coupling
from attnreg.fe.schur_iter import ITERATE_MAX_RHS, iteration_budget, level_pcg, schur_pcg
from attnreg.fe.schur_quadratic import schur_quadratic

if TYPE_CHECKING:  # demean imports this module at run time
    from attnreg.fe.demean import FixedEffects

__all__ = ["BLOCK_ENTRIES", "LevelSolver"]

#: the largest number of entries of a dense block of right-hand sides (128 MB in float64)
BLOCK_ENTRIES = 1 << 24
#: right-hand sides per sparse triangular solve (SuperLU's solve slows down with many more)
SOLVE_BLOCK = 128
#: a pivot of the grounded Schur complement below this fraction of the largest marks it
#: singular (fixed effects sharing more than a constant): conjugate gradients take over
SINGULAR_PIVOT = 1e-11
#: the grounded Schur complement is factored dense (Cholesky) when it has at most this many
#: free levels (1.2 GB in float64) and at least :data:`DENSE_SHARE` of its entries are
#: nonzero: fixest's designs at 1e7 rows have 10,000, whose sparse LU fills in completely
#: (SuperLU runs out of memory) while LAPACK factors them in seconds
DENSE_MAX_LEVELS = 12_000
DENSE_SHARE = 0.1
#: fixed effects whose grounded Schur complement has more free levels than this are solved
#: by :func:`attnreg.fe.schur_iter.schur_pcg` first (the factor if it gives up; with three or
#: more, conjugate gradients on the whole D'WD if that factor is singular)
ITERATE_FROM = 4_000
#: three or more fixed effects whose grounded Schur complement has more free levels than
#: this (too many for the dense factor) are never factored: a sparse LU of it fills in and
#: may run out of memory. :func:`attnreg.fe.schur_iter.schur_pcg` solves them, and conjugate
#: gradients on the whole of D'WD if it gives up (memory: a few vectors per level)
ITERATE_MANY_FROM = DENSE_MAX_LEVELS
#: the iterations on such an S before giving up (at least; more if the factor would cost more)
ITERATE_MANY_MAX = 1_000
_EPS = np.finfo(np.float64).eps


def _level_weights(codes: IntArray, w: FloatArray | None, n: int) -> FloatArray:
    return np.bincount(codes, weights=w, minlength=n).astype(np.float64)


@dataclass(frozen=True)
class _Schur:
    """The fixed effect ``big`` eliminated, the Schur complement S on the ``rest`` levels
    (every other fixed effect's), with the ``grounded`` rest levels set to 0."""

    big: IntArray  # (n_obs,) codes of the fixed effect eliminated
    w: FloatArray | None = field(repr=False)  # (n_obs,) prior weights (None: all one)
    n_big: int
    grounded: IntArray  # rest levels set to 0, sorted
    rest_codes: tuple[IntArray, ...] = field(repr=False)  # each other fixed effect's codes
    sizes: tuple[int, ...]  # and its number of levels (in the order of ``rest``)
    iterate_many_from: int = ITERATE_MANY_FROM  # see :data:`ITERATE_MANY_FROM`

    def __getstate__(self) -> dict[str, Any]:
        # the sparse LU factor does not pickle: it is rebuilt when first needed
        return {k: v for k, v in self.__dict__.items() if k not in ("_factor",)}

    @property
    def n_small(self) -> int:
        """Number of rest levels."""
        return int(sum(self.sizes))

    @cached_property
    def w_big(self) -> FloatArray:
        """Level weights of the eliminated fixed effect, shape (n_big,)."""
        return _level_weights(self.big, self.w, self.n_big)

    @cached_property
    def cross_blocks(self) -> tuple[sp.csr_matrix, ...]:
        """B's block of each other fixed effect (:func:`attnreg.fe.levelgram.pair_weights`)."""
        return tuple(pair_weights(self.big, c, self.w, self.n_big, s)
                     for c, s in zip(self.rest_codes, self.sizes, strict=True))

    @cached_property
    def cross(self) -> sp.csr_matrix:
        """B = D_big' W D_rest, shape (n_big, n_small): the weights summed per (big level,
        rest level) pair."""
        return sp.csr_matrix(sp.hstack(self.cross_blocks, format="csr"))

    @cached_property
    def share(self) -> sp.csr_matrix:
        """R = W_big⁻¹ B, each big level's weighted share in each rest level."""
        out = self.cross.copy()
        out.data = out.data / np.repeat(self.w_big, np.diff(out.indptr))
        return out

    @cached_property
    def free(self) -> IntArray:
        """The rest levels solved for (all but the grounded)."""
        return np.setdiff1d(np.arange(self.n_small), self.grounded)

    @cached_property
    def rest_gram(self) -> sp.csr_matrix | None:
        """D_rest'WD_rest with several other fixed effects (None with one: diagonal)."""
        if len(self.sizes) == 1:
            return None
        return sp.csr_matrix(rest_gram(self.rest_codes, self.sizes, self.w, dense=False))

    @cached_property
    def bounded(self) -> bool:
        """Three or more fixed effects with more than :attr:`iterate_many_from` free levels:
        S is never factored (conjugate gradients only)."""
        return len(self.sizes) >= 2 and self.free.size > self.iterate_many_from

    @cached_property
    def _factor(self) -> Any:
        """The factor of S on the free levels: dense Cholesky when S is small and dense (as
        on fixest's designs), else sparse LU; None if there are no free levels, or if S is
        exactly singular there (see :attr:`singular`)."""
        free = self.free
        if not free.size:
            return None
        per_big = self.cross.nnz / max(self.n_big, 1)  # rest levels of a big level
        if (free.size <= DENSE_MAX_LEVELS  # S has about n_big · per_big² entries
                and self.n_big * per_big ** 2 >= DENSE_SHARE * self.n_small ** 2):
            S = rest_gram(self.rest_codes, self.sizes, self.w, dense=True)
            subtract_coupling(self.cross_blocks, self.w_big, S)
            S = S[np.ix_(free, free)]
            S += S.T  # symmetric to rounding: exactly symmetric
            S *= 0.5
            return DenseCholesky.of(S)
        S = sp.csc_matrix(rest_gram(self.rest_codes, self.sizes, self.w, dense=False)
                          - self.cross.T @ self.share)[free][:, free]
        S = sp.csc_matrix((S + S.T) * 0.5)
        try:
            return spla.splu(S, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                             options={"SymmetricMode": True})
        except RuntimeError:  # SuperLU: "Factor is exactly singular"
            return None

    @cached_property
    def singular(self) -> bool:
        """Whether the grounded S is singular to rounding (fixed effects sharing more than a
        constant, e.g. nested, or a further fixed effect's levels seen only with one level
        of the largest: then the grounding does not remove the whole null space)."""
        if self.bounded:  # singular or not, S x = b is consistent: CG solves it unless it
            return "_gave_up" in self.__dict__  # gave up (then CG on the whole D'WD)
        if self._iterates(1):  # two fixed effects, grounded per component: positive definite;
            return False  # more: CG solves a consistent S x = b, singular or not
        factor = self._factor
        if factor is None:
            return bool(self.free.size)  # free levels but no factor: exactly singular
        pivots = (factor.pivots if isinstance(factor, DenseCholesky)
                  else np.abs(factor.U.diagonal()))
        return bool(pivots.min() <= SINGULAR_PIVOT * pivots.max())

    def solve_small(self, rhs: FloatArray) -> FloatArray | None:
        """A solution of S x = rhs with the grounded levels 0; rhs shape (n_small, m).
        None when the conjugate gradients gave up and S is :attr:`bounded` or singular."""
        if self._iterates(rhs.shape[1]):
            w_small = np.concatenate([_level_weights(c, self.w, n) for c, n
                                      in zip(self.rest_codes, self.sizes, strict=True)])
            budget = iteration_budget(self.free.size, self.n_big, self.cross.nnz / self.n_big,
                                      self.cross.nnz, rhs.shape[1])
            budget = max(budget, ITERATE_MANY_MAX) if self.bounded else budget
            x = schur_pcg(self.cross, self.w_big, w_small, self.free, rhs, budget,
                          rest=self.rest_gram, sizes=self.sizes)
            if x is not None:
                return x
            self.__dict__["_gave_up"] = True  # poorly connected: the factor from now on
            self.__dict__.pop("singular", None)  # (known now from the factor's pivots)
            if self.bounded or self.singular:  # or CG on the whole D'WD from now on
                self.__dict__["singular"] = True
                return None
        out = np.zeros_like(rhs)
        if self._factor is not None:
            for lo in range(0, rhs.shape[1], SOLVE_BLOCK):
                part = np.ascontiguousarray(rhs[self.free, lo:lo + SOLVE_BLOCK])
                out[self.free, lo:lo + SOLVE_BLOCK] = self._factor.solve(part)
        return out

    def _iterates(self, n_rhs: int) -> bool:
        """Whether S x = b with ``n_rhs`` columns is solved by :func:`schur_pcg` first."""
        if self.bounded:
            return "_gave_up" not in self.__dict__
        return (self.free.size > ITERATE_FROM
                and n_rhs <= ITERATE_MAX_RHS and "_factor" not in self.__dict__
                and "_gave_up" not in self.__dict__)

    def solve(self, b_big: FloatArray,
              b_small: FloatArray) -> tuple[FloatArray, FloatArray] | None:
        """A solution of the normal equations by block elimination; shapes (n, m). None
        when :meth:`solve_small` gave up."""
        x_small = self.solve_small(b_small - self.share.T @ b_big)
        if x_small is None:
            return None
        x_big = (b_big - self.cross @ x_small) / self.w_big[:, None]
        return x_big, x_small


def _first_per_component(big: IntArray, small: IntArray, n_big: int, n_small: int) -> IntArray:
    """The first level of ``small`` in each connected component of the two fixed effects."""
    links = sp.coo_matrix((np.ones(big.size), (big, n_big + small)),
                          shape=(n_big + n_small,) * 2)
    _, labels = connected_components(links, directed=False)
    _, first = np.unique(labels[n_big:], return_index=True)
    return np.sort(first)


def _schur_of(fe: FixedEffects, w: FloatArray | None, order: Sequence[int],
              iterate_many_from: int = ITERATE_MANY_FROM) -> _Schur:
    """The Schur solve of fixed effects ``order`` (the first eliminated; the rest's levels in
    that order), grounded as fixest's references: the second's first level per connected
    component with the first, and the first level of each further one."""
    k0, k1 = order[0], order[1]
    n_rest = [fe.n_levels[k] for k in order[1:]]
    starts = np.concatenate([[0], np.cumsum(n_rest)])
    grounded = np.concatenate([
        fe.first_per_component(k0, k1),
        starts[1:-1]]).astype(np.int64)
    return _Schur(fe.codes[k0], w, fe.n_levels[k0], np.sort(grounded),
                  tuple(fe.codes[k] for k in order[1:]), tuple(n_rest), iterate_many_from)


class LevelSolver:
    """Solutions of D'WD x = b for right-hand sides in its range, exactly.

    Parameters
    ----------
    fe : FixedEffects
        The fit's fixed effects (D, N × G).
    weights : ndarray, shape (n_obs,), or None
        The prior weights (W).
    max_iter : int
        Cap on the conjugate-gradient iterations (three or more fixed effects whose grounded
        Schur complement is singular).
    iterate_many_from : int, optional
        Three or more fixed effects with more free levels than this are never factored
        (default :data:`ITERATE_MANY_FROM`).

    Examples
    --------
    >>> from attnreg.fe.demean import FixedEffects
    >>> fe = FixedEffects.from_columns([[0, 0, 1, 1, 2], [0, 1, 0, 1, 1]])
    >>> solver = LevelSolver(fe)
    >>> np.round(solver.quadratic(fe.codes), 12).tolist()  # the hat values of the dummies
    [0.75, 0.75, 0.75, 0.75, 1.0]
    """

    def __init__(self, fe: FixedEffects, weights: FloatArray | None = None, *,
                 max_iter: int = 10_000, iterate_many_from: int | None = None) -> None:
        self.fe = fe
        self.w = np.ones(fe.n_obs) if weights is None else np.asarray(weights, dtype=np.float64)
        self._given = None if weights is None else self.w  # None: unit weights, no products
        self.max_iter = max_iter
        self.iterate_many_from = (ITERATE_MANY_FROM if iterate_many_from is None
                                  else iterate_many_from)
        self.level_weight = np.concatenate([  # diag of D'WD, (G,)
            _level_weights(c, self._given, n) for c, n in zip(fe.codes, fe.n_levels, strict=True)])
        self.order = tuple(int(k) for k in np.argsort(fe.n_levels, kind="stable")[::-1])
        o = fe.offsets
        self.positions = [np.arange(o[k], o[k + 1]) for k in self.order]  # levels, in order

    @cached_property
    def schur(self) -> _Schur | None:
        """The largest fixed effect eliminated, S on all the others (two or more)."""
        return (_schur_of(self.fe, self._given, self.order, self.iterate_many_from)
                if len(self.order) >= 2 else None)

    @cached_property
    def pair(self) -> _Schur:
        """The two largest fixed effects alone (the preconditioner of conjugate gradients)."""
        return _schur_of(self.fe, self._given, self.order[:2])

    @property
    def exact(self) -> bool:
        """Whether the Schur solve of all the fixed effects is exact (else: PCG)."""
        return self.schur is not None and not self.schur.singular

    def solve(self, rhs: FloatArray) -> FloatArray:
        """A solution x of D'WD x = rhs, shape (G, m); ``rhs`` in the range of D'WD."""
        rhs = np.asarray(rhs, dtype=np.float64)
        if len(self.fe.codes) == 1:
            return rhs / self.level_weight[:, None]
        if self.exact:
            assert self.schur is not None
            out = self._schur_solve(self.schur, self.positions, rhs)
            if out is not None:
                return out
        return level_pcg(self.gram, self._precondition, rhs, self.max_iter)

    def _schur_solve(self, schur: _Schur, positions: list[IntArray],
                     rhs: FloatArray) -> FloatArray | None:
        out = rhs / self.level_weight[:, None]  # the level weights on any level left out
        rest = np.concatenate(positions[1:])
        solved = schur.solve(rhs[positions[0]], rhs[rest])
        if solved is None:
            return None
        out[positions[0]], out[rest] = solved
        return out

    def _precondition(self, rhs: FloatArray) -> FloatArray:
        """The exact solve of the two largest fixed effects, the level weights on others."""
        out = self._schur_solve(self.pair, self.positions[:2], rhs)
        assert out is not None  # two fixed effects: the factor when CG gives up
        return out

    @cached_property
    def gram(self) -> sp.csr_matrix:
        """D'WD, sparse G × G."""
        D = self.fe.dummies
        return sp.csr_matrix(D.T @ sp.diags(self.w) @ D)

    def indicators(self, codes: Sequence[IntArray]) -> FloatArray:
        """d₀ for each row of ``codes`` (all seen), shape (G, m)."""
        m = codes[0].size
        out = np.zeros((int(self.fe.offsets[-1]), m))
        for k, code in enumerate(codes):
            out[code + self.fe.offsets[k], np.arange(m)] += 1.0
        return out

    def quadratic(self, codes: Sequence[IntArray]) -> FloatArray:
        """d'(D'WD)⁺d for each row of ``codes`` (one code array per fixed effect, all ≥ 0).

        Returns
        -------
        ndarray, shape (m,)
        """
        codes = [np.asarray(c, dtype=np.int64) for c in codes]
        if len(codes) == 1:
            return np.asarray(1.0 / self.level_weight[codes[0]])
        if self.exact and not (self.schur is not None and self.schur.bounded):
            assert self.schur is not None
            m = codes[0].size
            cols = np.column_stack([codes[k] for k in self.order[1:]])
            cols = cols + np.cumsum([0] + [self.fe.n_levels[k] for k in self.order[1:-1]])
            E = sp.csr_matrix((np.ones(cols.size), cols.ravel(),
                               np.arange(0, cols.size + 1, cols.shape[1])),
                              shape=(m, self.schur.n_small))
            return schur_quadratic(self.schur, codes[self.order[0]], E,
                                   max(1, min(SOLVE_BLOCK,
                                              BLOCK_ENTRIES // max(self.schur.n_small, 1))))
        stacked = np.column_stack(codes)
        distinct, inverse = np.unique(stacked, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        G = int(self.fe.offsets[-1])
        out = np.empty(distinct.shape[0])
        step = max(1, BLOCK_ENTRIES // G)
        for lo in range(0, distinct.shape[0], step):
            d = self.indicators([distinct[lo:lo + step, k] for k in range(len(codes))])
            out[lo:lo + step] = np.einsum("ij,ij->j", d, self.solve(d))
        return out[inverse]

    def projection(self, codes: Sequence[IntArray]) -> FloatArray:
        """D (D'WD)⁺ d₀ for each row of ``codes`` (all seen), shape (n_obs, m)."""
        x = self.solve(self.indicators(codes))  # (G, m)
        out = np.zeros((self.fe.n_obs, x.shape[1]))
        for k, code in enumerate(self.fe.codes):
            out += x[code + self.fe.offsets[k]]
        return out

