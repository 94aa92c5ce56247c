r"""Window Grams carried from origin to origin, factorised in place (see ``updating``).

The state of a scan is the Gram ``S2`` of the current window's rows about ``shift`` (the
window mean at the last exact recompute; zero without an intercept), one triangle of a
Fortran-ordered array. With an intercept and a Cholesky kernel the rows are bordered by a
leading 1, ``S2 = [[n, S1'], [S1, sum (z - shift)(z - shift)']]``: the first Cholesky step
then forms the centred Gram ``C = S2 - S1 S1'/n`` itself, so an origin costs one BLAS
``dsyr2`` (``z_new z_new' - z_old z_old'``), one copy and one LAPACK call (``dpotrf``). The
GCV kernel instead centres (``dsyr``) and standardises (one elementwise product) the copy
before reducing it to tridiagonal form (``dsytrd``). The first and second moments that the
kernels need before factorising (window sizes, sums, centred sums of squares, hence means,
standardising scales and ridge penalties) are cumulative sums over a whole batch of
origins, computed before the loop, which holds nothing but those calls.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
from scipy.linalg import blas, lapack

from attnreg._typing import FloatArray, IntArray

#: Ways to factorise an origin's Gram: bordered Cholesky (OLS, ridge with a fixed λ) or
#: reduction of the centred, scaled Gram to tridiagonal form (ridge with λ by GCV).
CHOLESKY, TRIDIAGONAL = "cholesky", "tridiagonal"
#: Origins whose standardising outer products ``w w'`` are formed together (in cache).
OUTER_CHUNK = 32


@dataclass
class Running:
    """Sums of the current window about ``shift``, carried from origin to origin."""

    S2: FloatArray  # (m, m) Fortran order, one triangle; m = K (+1 when bordered by ones)
    S1: FloatArray  # (K,) sum of (z - shift)
    sq: FloatArray  # (K,) sum of (z - shift)^2
    shift: FloatArray  # (K,) window mean at the last exact recompute (zeros: no intercept)
    start: int  # first row of the current window
    ones: bool  # whether S2 is bordered by the column of ones (its first row and column)
    lower: bool  # which triangle S2 keeps; the other stays zero
    exact: tuple[int, FloatArray, FloatArray]  # last row, mean and centred Gram at recompute


def exact(Z: FloatArray, start: int, end: int, centre: bool, run: Running | None, *,
          ones: bool, lower: bool) -> Running:
    """Exact sums of rows ``[start, end]``, pooled with ``run``'s if both start at row 0.

    Pooling (Chan, Golub & LeVeque 1979): ``C = C_a + C_b + n_a n_b / n (m_a - m_b)(..)'``.
    """
    pool = run is not None and run.start == start == 0
    first = run.exact[0] + 1 if run is not None and pool else start
    rows = Z[first : end + 1]  # (m, K)
    mean = rows.mean(axis=0) if centre else np.zeros(Z.shape[1])
    gram = (rows - mean).T @ (rows - mean)
    if run is not None and pool:
        n_a, n_b = first, rows.shape[0]
        delta = run.exact[1] - mean
        gram += run.exact[2] + (n_a * n_b / (n_a + n_b)) * np.outer(delta, delta)
        mean = mean + n_a / (n_a + n_b) * delta
    full = gram
    if ones:
        full = np.zeros((gram.shape[0] + 1,) * 2)
        full[0, 0], full[1:, 1:] = end - start + 1, gram
    S2 = np.asfortranarray(np.tril(full) if lower else np.triu(full))
    return Running(S2, np.zeros(Z.shape[1]), gram.diagonal().copy(), mean, start, ones, lower,
                   (end, mean, gram))


@dataclass
class Work:
    """Buffers of one batch of origins: moments before the loop, factorisations in it."""

    grams: FloatArray  # (B, m, m) C order; grams[j].T (Fortran) is factorised in place
    S1: FloatArray  # (B, K) sums about the shift
    css: FloatArray  # (B, K) centred sums of squares (about the window mean)
    raw: FloatArray  # (B, K) sums of squares about the shift
    means: FloatArray  # (B, K) window means (zeros without intercept)
    nobs: IntArray  # (B,)
    centre: bool  # whether windows are centred (an intercept)
    out: dict[str, FloatArray]  # per-origin factorisation results (see the kernels)


#: ``kernel(work, rows, S2, plus, minus)`` runs the loop over the batch rows ``rows`` (a
#: slice), carrying ``S2`` by ``dsyr2(0.5, plus[j], minus[j])`` and factorising each Gram.
Kernel = Callable[[Work, slice, FloatArray, FloatArray, FloatArray], None]


def cholesky_kernel(lam: float | None, standardize: bool) -> Kernel:
    """Copy each bordered Gram (+ the ridge penalty on its diagonal), Cholesky it, and solve.

    With ``L`` the factor and ``rho = L[-1, -1]``, the whole triangular system
    ``L' theta = e_m`` has ``theta = [-(a, beta) / rho, 1 / rho]`` (``a`` the intercept about
    the shift): one BLAS ``dtrsv`` per origin, on the factor while it is in cache, stored
    in ``work.out["theta"]``.
    """
    def kernel(work: Work, rows: slice, S2: FloatArray, plus: FloatArray,
               minus: FloatArray) -> None:
        syr2, potrf, trsv = blas.dsyr2, lapack.dpotrf, blas.dtrsv
        grams = work.grams[rows].transpose(0, 2, 1)
        m, K, B = S2.shape[0], work.css.shape[1], grams.shape[0]
        info, theta = [0] * B, work.out["theta"][rows]
        theta[:, -1] = 1.0
        if lam is None:
            for j in range(B):
                syr2(0.5, plus[j], minus[j], lower=1, a=S2, overwrite_a=1)
                g = grams[j]
                g[...] = S2
                info[j] = potrf(g, lower=1, clean=0, overwrite_a=1)[1]
                trsv(g, theta[j], lower=1, trans=1, overwrite_x=1)
        else:  # standardised: + lam * sd^2 = lam * css / n on the regressors' diagonal
            penalty = (lam * work.css[rows, :-1] / work.nobs[rows, None] if standardize
                       else np.full((B, K - 1), lam))
            diagonals = work.grams[rows].reshape(B, m * m)[:, :: m + 1][:, m - K : m - 1]
            for j in range(B):
                syr2(0.5, plus[j], minus[j], lower=1, a=S2, overwrite_a=1)
                g = grams[j]
                g[...] = S2
                diagonals[j] += penalty[j]
                info[j] = potrf(g, lower=1, clean=0, overwrite_a=1)[1]
                trsv(g, theta[j], lower=1, trans=1, overwrite_x=1)
        work.out["info"][rows] = info
    return kernel


def tridiagonal_kernel(standardize: bool) -> Kernel:
    """Centre and scale each Gram to ``[[A, r], [r', yy]]`` and reduce it to tridiagonal form."""
    def kernel(work: Work, rows: slice, S2: FloatArray, plus: FloatArray,
               minus: FloatArray) -> None:
        syr2, syr, sytrd, multiply = blas.dsyr2, blas.dsyr, lapack.dsytrd, np.multiply
        grams = work.grams[rows].transpose(0, 2, 1)
        nobs, css = work.nobs[rows], work.css[rows]
        results: list = [None] * nobs.size
        weights = np.ones_like(css)  # column k divided by its SD, sqrt(css_k / n); constant: 1
        if standardize:
            np.sqrt(np.divide(nobs[:, None], css[:, :-1], out=weights[:, :-1],
                              where=css[:, :-1] > 0.0), out=weights[:, :-1])
        scaled_S1 = weights * work.S1[rows]
        alpha = (-1.0 / nobs if work.centre else np.zeros(nobs.size)).tolist()
        outer = np.empty((min(OUTER_CHUNK, nobs.size), *S2.shape))
        outer_T = list(outer.transpose(0, 2, 1))  # Fortran-order views, like S2
        for a in range(0, nobs.size, OUTER_CHUNK):
            b = min(a + OUTER_CHUNK, nobs.size)
            if standardize:  # w w' for a few origins at a time (stays in cache)
                np.einsum("bi,bj->bij", weights[a:b], weights[a:b], out=outer[: b - a])
            for j, ww in zip(range(a, b), outer_T, strict=False):
                syr2(0.5, plus[j], minus[j], lower=0, a=S2, overwrite_a=1)
                g = grams[j]
                if standardize:
                    multiply(S2, ww, out=g)
                else:
                    g[...] = S2
                syr(alpha[j], scaled_S1[j], lower=0, a=g, overwrite_a=1)  # C = S2 - S1 S1'/n
                results[j] = sytrd(g, lower=0, overwrite_a=1)
        for key, k in (("d", 1), ("e", 2), ("tau", 3)):
            work.out[key][rows] = [res[k] for res in results]
    return kernel


def _moments(Z: FloatArray, starts: IntArray, ends: IntArray, run: Running, fresh: bool,
             work: Work, at: int) -> tuple[FloatArray, FloatArray]:
    """Fill the batch's moments for rows ``at, at + 1, ...``; return the rank-two updates.

    A step adds row ``ends[j]`` and drops row ``starts[j-1]`` if the window moved:
    ``z z' - w w' = [(z + w)(z - w)' + (z - w)(z + w)'] / 2``. The first origin after an
    exact recompute adds nothing (zero vectors: ``S2`` is left bit-for-bit unchanged).
    """
    previous = np.concatenate([[run.start], starts[:-1]])
    added = Z[ends] - run.shift  # (B, K)
    if fresh:
        added[0] = 0.0
    removed = np.where((starts > previous)[:, None], Z[previous] - run.shift, 0.0)
    S1 = run.S1 + np.cumsum(added - removed, axis=0)
    sq = run.sq + np.cumsum(added**2 - removed**2, axis=0)
    n = ends - starts + 1
    rows = slice(at, at + ends.size)
    work.S1[rows], work.raw[rows] = S1, sq
    if work.centre:
        work.css[rows] = np.maximum(sq - S1**2 / n[:, None], 0.0)
        work.means[rows] = run.shift + S1 / n[:, None]
    else:
        work.css[rows], work.means[rows] = sq, 0.0
    run.S1, run.sq, run.start = S1[-1], sq[-1], int(starts[-1])
    plus, minus = added + removed, added - removed
    if run.ones:  # the bordering 1s: plus starts with 2 (or 1 when only adding), minus 0
        lead = np.ones(ends.size)
        lead[0] = not fresh
        moved = (starts > previous).astype(float)
        plus = np.column_stack([lead + moved, plus])
        minus = np.column_stack([lead - moved, minus])
    return plus, minus


def fill(Z: FloatArray, starts: IntArray, ends: IntArray, first: int, *, centre: bool,
         reset: int, kind: str, kernel: Kernel, run: Running | None) -> tuple[Work, Running]:
    """Moments and factorised Grams of the windows of origins ``first, first + 1, ...``."""
    B, K = ends.size, Z.shape[1]
    ones = centre and kind == CHOLESKY
    m = K + ones
    out = ({"d": np.empty((B, K)), "e": np.empty((B, K - 1)), "tau": np.empty((B, K - 1))}
           if kind == TRIDIAGONAL else {"info": np.zeros(B, dtype=np.int64), "theta": np.zeros((B, m))})
    work = Work(np.empty((B, m, m)), np.empty((B, K)), np.empty((B, K)), np.empty((B, K)),
                np.empty((B, K)), ends - starts + 1, centre, out)
    cuts = np.flatnonzero((first + np.arange(B)) % reset == 0)
    for a, b in pairwise(np.unique(np.concatenate([[0], cuts, [B]]))):
        fresh = run is None or (first + a) % reset == 0
        if fresh:
            run = exact(Z, int(starts[a]), int(ends[a]), centre, run, ones=ones,
                        lower=kind == CHOLESKY)
        assert run is not None
        plus, minus = _moments(Z, starts[a:b], ends[a:b], run, fresh, work, int(a))
        kernel(work, slice(int(a), int(b)), run.S2, plus, minus)
    assert run is not None
    return work, run
