"""One pass over the rows of an IRLS step, in cached leaves of rows.

At given coefficients one pass computes, leaf by leaf, the linear predictor, the means, the
deviance, whether both are in the link's and the family's range, and the weighted normal
equations of the next scoring step as an increment, X'WX and X'W (y − μ)/μ'(η). A leaf's
temporaries stay in cache and its weighted rows go to a reusable buffer
(:func:`attnreg.threads.scratch`): no n × p temporary is made, and no n-vector other than
the linear predictor and the means, which go to buffers the caller owns. (On a million rows
a fresh 160 MB product costs more in page faults than the product itself.)

The segments of rows are the tall QR's (:func:`attnreg.linear.tallqr.segments`, fixed by the
shape) and their sums are added in row order, so the result is the same bit for bit on any
number of threads.

Examples
--------
>>> import numpy as np
>>> from attnreg.glm.normal import weighted_gram
>>> X = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0]])
>>> G, g = weighted_gram(X, np.array([1.0, 2.0, 3.0]), np.ones(3))
>>> G.tolist(), g.tolist()
([[3.0, 3.0], [3.0, 5.0]], [6.0, 8.0])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from attnreg._typing import FloatArray
from attnreg.glm.families import Family
from attnreg.glm.leafkernels import LeafData, LeafKernel, leaf_kernels
from attnreg.glm.links import Link
from attnreg.linear.blas import gram_update, mirror_upper
from attnreg.linear.tallqr import equal_parts, segments
from attnreg.threads import parallel_map, scratch

__all__ = ["LEAF_BYTES", "LastNormal", "PassResult", "RowPass", "weighted_gram",
           "working_response"]

#: bytes of design per leaf: a leaf and its weighted copy stay within a core's L2 cache (the
#: numpy calls per leaf hold the GIL between them: fewer, larger leaves let the threads'
#: leaves overlap more; 2 MiB for 20 columns is 13,107 rows, 8 % less work per pass than
#: 4,096 rows at 1e6 × 20)
LEAF_BYTES = 2 ** 21


def weighted_gram(X: FloatArray, z: FloatArray, w: FloatArray) -> tuple[FloatArray, FloatArray]:
    """(Xw'Xw, Xw'zw) with Xw = diag(w) X and zw = w z, by leaves of rows.

    Parameters
    ----------
    X : ndarray, shape (n, p)
    z, w : ndarray, shape (n,)
        Working response and the square roots of the working weights.

    Returns
    -------
    G : ndarray, shape (p, p)
    g : ndarray, shape (p,)
    """
    def segment(bounds: tuple[int, int]) -> FloatArray:
        B = _bordered(X.shape[1])
        for lo, hi in _leaves(*bounds, X.shape[1]):
            wl = w[lo:hi]
            _add_weighted(B, X[lo:hi], wl, wl * wl * z[lo:hi])
        return B

    return _in_order(parallel_map(segment, segments(X.shape[0], X.shape[1])))


def working_response(family: Family, link: Link, eta: FloatArray, mu: FloatArray,
                     data: tuple[FloatArray, FloatArray, FloatArray], n_cols: int
                     ) -> tuple[FloatArray, FloatArray, str | None]:
    """R's working response z = η − offset + (y − μ)/μ'(η) and the square roots of the
    working weights, √(wt μ'(η)² / V(μ)), by row segments on threads.

    Parameters
    ----------
    family, link : Family, Link
    eta, mu : ndarray, shape (n,)
    data : tuple of ndarray, shape (n,)
        (y, prior weights, offset).
    n_cols : int
        The design's width (it sets the segments, as for the passes).

    Returns
    -------
    z, w : ndarray, shape (n,)
    problem : str or None
        ``"nan"`` when some V(μ) is not finite, ``"zero"`` when some is 0 (the arrays are
        then incomplete), else None.
    """
    y, wt, offset = data
    z, w = np.empty(eta.size), np.empty(eta.size)

    def segment(bounds: tuple[int, int]) -> str | None:
        lo, hi = bounds
        var = family.variance(mu[lo:hi])
        if not np.isfinite(var).all():
            return "nan"
        if (var == 0).any():
            return "zero"
        d = link.mu_eta(eta[lo:hi])
        zs = z[lo:hi]
        np.divide(y[lo:hi] - mu[lo:hi], d, out=zs)
        zs += eta[lo:hi] - offset[lo:hi]
        w[lo:hi] = np.sqrt(wt[lo:hi] * d ** 2 / var)
        return None

    flags = parallel_map(segment, segments(eta.size, n_cols))
    problem = "nan" if "nan" in flags else "zero" if "zero" in flags else None
    return z, w, problem


@dataclass(frozen=True)
class PassResult:
    """What one :class:`RowPass` found at given coefficients.

    Attributes
    ----------
    deviance : float
        NaN or inf when some unit deviance is not finite.
    valid : bool
        Every η in the link's domain and every μ in the family's range.
    G : ndarray, shape (p, p), or None
        X'WX at these coefficients (None when not asked for, or when the deviance or the
        variances are not finite, or a variance is 0).
    g : ndarray, shape (p,), or None
        X'W (y − μ) / μ'(η): the scoring increment solves G δ = g.
    weight_range : tuple of float, or None
        The smallest and largest working weight over its prior weight (a pass from R's start
        with the normal equations only; else None): G is the Gram matrix of the design under
        weights within that range of the prior weights'.
    weight_change : float
        The largest |W/W₀ − 1| over the rows, W these working weights and W₀ those of the
        last pass that formed normal equations (:attr:`RowPass.last`); inf when not measured.
        A step by that pass's X'W₀X instead of X'WX (a chord step) shrinks the error at
        least by this factor, in the norm of X'WX.
    """

    deviance: float
    valid: bool
    G: FloatArray | None
    g: FloatArray | None
    weight_range: tuple[float, float] | None = None
    weight_change: float = float("inf")


@dataclass
class LastNormal:
    """The normal equations of the last pass that formed them: X'W₀X and the square roots
    of W₀ (a buffer rewritten by each such pass; G None while it is being rewritten)."""

    G: FloatArray | None = None
    root_w: FloatArray | None = None


@dataclass(frozen=True)
class RowPass:
    """The data of one fit, for passes at one coefficient vector after another."""

    X: FloatArray
    y: FloatArray
    wt: FloatArray
    offset: FloatArray
    family: Family
    link: Link

    def run(self, coef: FloatArray | None, eta: FloatArray, mu: FloatArray,
            gram: bool, score: bool = False) -> PassResult:
        """Write η and μ at ``coef`` into ``eta`` and ``mu`` (shape (n,)) and return the rest.

        Parameters
        ----------
        coef : ndarray, shape (p,), or None
            None: ``eta`` holds the linear predictor already (R's start), and the normal
            equations are those of the whole working response, X'WX b = X'Wz, not of an
            increment.
        eta, mu : ndarray, shape (n,)
            Output buffers (``eta`` input when ``coef`` is None).
        gram : bool
            Whether to form the normal equations of the next step (they become
            :attr:`last`).
        score : bool
            Without ``gram``: whether to form the increment's right-hand side g alone (and
            measure the weights' change since :attr:`last`), for a chord step.
        """
        def segment(bounds: tuple[int, int]) -> tuple:
            return self._segment(bounds, coef, eta, mu, gram, score and not gram)

        _ = self.kernel, self.has_offset, self.unit_weights  # made once, before the threads
        last = self.last
        if gram:
            if last.root_w is None:
                last.root_w = np.full(eta.size, np.nan)
            last.G = None  # its weights are being rewritten
        parts = parallel_map(segment, segments(self.X.shape[0], self.X.shape[1]))
        dev = float(sum(part[0] for part in parts))  # in row order
        valid = all(part[1] for part in parts)
        change = max(part[4] for part in parts)
        if not (gram or score) or not np.isfinite(dev) or any(part[2] is None for part in parts):
            return PassResult(dev, valid, None, None)
        if not gram:
            return PassResult(dev, valid, None, _row_order_sum([part[2] for part in parts]),
                              weight_change=change)
        G, g = _in_order([part[2] for part in parts])
        last.G = G
        spread = None
        if coef is None:
            spread = (min(part[3][0] for part in parts), max(part[3][1] for part in parts))
        return PassResult(dev, valid, G, g, spread, change)

    def _segment(self, bounds: tuple[int, int], coef: FloatArray | None, eta: FloatArray,
                 mu: FloatArray, gram: bool, score: bool) -> tuple:
        """(deviance, valid, the bordered sums (gram) or g (score) or None, the range of
        working over prior weights (from R's start), the weights' change) of a segment."""
        p = self.X.shape[1]
        B = _bordered(p) if gram else np.zeros(p)
        dev, valid, ok = 0.0, True, gram or score
        low, high = np.inf, -np.inf  # working over prior weights, from R's start
        change = 0.0 if self.last.root_w is not None else np.inf
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            for lo, hi in _leaves(*bounds, p):
                e = eta[lo:hi]
                if coef is not None:
                    np.dot(self.X[lo:hi], coef, out=e)
                    if self.has_offset:
                        e += self.offset[lo:hi]
                leaf = LeafData(e, mu[lo:hi], self.y[lo:hi], self.wt[lo:hi], ok)
                d, v, weights = self.kernel(lo, hi)(leaf)
                dev, valid = dev + d, valid and v
                if weights is None:
                    ok = False
                elif ok:
                    w, r = weights
                    if change < np.inf and self.last.root_w is not None:
                        change = max(change, _change(w, self.last.root_w[lo:hi]))
                    if score:
                        B += np.dot(r, self.X[lo:hi])
                        continue
                    self.last.root_w[lo:hi] = w  # type: ignore[index]
                    if coef is None:  # the whole working response: r + W (η − offset)
                        ww = w * w
                        r = r + ww * (e - self.offset[lo:hi] if self.has_offset else e)
                        if not self.unit_weights:
                            ww /= self.wt[lo:hi]
                        low, high = min(low, float(ww.min())), max(high, float(ww.max()))
                    _add_weighted(B, self.X[lo:hi], w, r)
        return dev, valid, B if ok else None, (low, high), change

    @cached_property
    def last(self) -> LastNormal:
        """The normal equations of the last pass that formed them, and their weights."""
        return LastNormal()

    @cached_property
    def kernel(self) -> Callable[[int, int], LeafKernel]:
        """The maker of each leaf's kernel (:mod:`attnreg.glm.leafkernels`)."""
        return leaf_kernels(self.family, self.link, self.y, self.wt)

    @cached_property
    def has_offset(self) -> bool:
        return bool(np.any(self.offset != 0))

    @cached_property
    def unit_weights(self) -> bool:
        return bool(np.all(self.wt == 1))


def _bordered(p: int) -> FloatArray:
    """The accumulator of [G; g'], shape (p + 1, p): G in its first p rows (C-contiguous, as
    the rank-k update wants it), g in the last."""
    return np.zeros((p + 1, p))


def _leaves(lo0: int, hi0: int, p: int) -> list[tuple[int, int]]:
    """Equal leaves of at most ``LEAF_BYTES`` of design (no sliver at a segment's end)."""
    return equal_parts(lo0, hi0, max(256, LEAF_BYTES // (8 * max(p, 1))))


def _add_weighted(B: FloatArray, X: FloatArray, w: FloatArray, r: FloatArray) -> None:
    """The upper triangle of G += Xw'Xw, Xw = diag(w) X, by one symmetric rank-k update of a
    reusable buffer without the GIL (the leaves of other threads proceed meanwhile), and
    g += X'r, for one leaf; B is :func:`_bordered`'s. (einsum's row scaling is a quarter
    faster than a broadcast multiply's 20-element inner loops; g by its own product leaves
    the update a column narrower: 20 columns 0.32 ms a leaf, 21 0.38, X'r 0.04.)"""
    m, p = X.shape
    buf = scratch("glm-gram", (m, p))
    np.einsum("ij,i->ij", X, w, out=buf)
    gram_update(B[:p], buf, symmetric=False)
    B[p] += np.dot(r, X)


def _change(w: FloatArray, w0: FloatArray) -> float:
    """max |w²/w0² − 1| over the rows with w0 > 0 (NaN where w0 is unset: inf)."""
    live = w0 > 0
    if not live.all():
        if np.isnan(w0).any():
            return np.inf
        w, w0 = w[live], w0[live]
    if not w.size:
        return 0.0
    q = w / w0
    q *= q
    return float(max(abs(q.max() - 1.0), abs(q.min() - 1.0)))


def _row_order_sum(parts: list[FloatArray]) -> FloatArray:
    """The segments' vectors added in row order."""
    out = parts[0]
    for part in parts[1:]:
        out = out + part
    return out


def _in_order(parts: list[FloatArray]) -> tuple[FloatArray, FloatArray]:
    """(G, g) from the segments' :func:`_bordered` sums (G's upper triangle), added in row
    order."""
    B = _row_order_sum(parts)
    p = B.shape[1]
    G = np.ascontiguousarray(B[:p])
    mirror_upper(G)
    return G, B[p].copy()
