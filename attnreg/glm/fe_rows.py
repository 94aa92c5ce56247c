"""The per-row passes of a scoring step with absorbed fixed effects, in leaves of rows on
threads: the means and the deviance at a new η (and whether both are in range), and the
working response and weights at an accepted one.

Each is a handful of array operations per row; done over the whole column, every one reads
and writes eight megabytes at a million rows and they run one after another on one core.
Here a leaf's operations stay in cache and the segments run on :func:`attnreg.threads.
row_workers` threads. The means and the deviance are the leaf kernels' of the IRLS passes
without fixed effects (:mod:`attnreg.glm.leafkernels`: R's formulas up to rounding, with the
algebra done for the canonical pairs); the deviance is summed per leaf and the sums added in
row order over segments fixed by the number of rows, so it is the same bit for bit on any
number of threads.
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
from attnreg.threads import parallel_map

__all__ = ["LEAF_ROWS", "SEGMENT_ROWS", "FeRows"]

#: rows of a leaf: its dozen temporaries (128 kB each) stay in a core's L2 cache, and the
#: numpy calls per leaf (which hold the GIL between them) are few enough that two threads'
#: leaves overlap (1e6 Poisson rows: deviance 3.9 ms on one thread, 5.2 on two; 5.2 and
#: 10.0 with leaves of 4,096 rows)
LEAF_ROWS = 16384
#: rows of a segment (a task of one thread): fixed, so that the sums do not depend on threads
SEGMENT_ROWS = 1 << 16


def _segments(n: int) -> list[tuple[int, int]]:
    return [(lo, min(lo + SEGMENT_ROWS, n)) for lo in range(0, max(n, 1), SEGMENT_ROWS)]


def _leaves(lo0: int, hi0: int) -> range:
    return range(lo0, hi0, LEAF_ROWS)


@dataclass(frozen=True)
class FeRows:
    """The rows of one fit: response, prior weights, offset, family and link.

    Examples
    --------
    >>> from attnreg.glm.families import FAMILIES
    >>> from attnreg.glm.links import LINKS
    >>> rows = FeRows(np.array([1.0, 3.0]), np.ones(2), np.zeros(2), FAMILIES["poisson"],
    ...               LINKS["log"])
    >>> dev, mu, valid = rows.deviance(np.log(np.array([1.0, 3.0])))
    >>> bool(abs(dev) < 1e-12), valid  # a perfect fit, to rounding
    (True, True)
    """

    y: FloatArray
    wt: FloatArray
    offset: FloatArray
    family: Family
    link: Link

    def deviance(self, eta: FloatArray) -> tuple[float, FloatArray, bool]:
        """μ at η, the deviance (NaN or inf when a unit deviance is not), and whether every
        η is in the link's domain and every μ in the family's range.

        Parameters
        ----------
        eta : ndarray, shape (n,)

        Returns
        -------
        deviance : float
        mu : ndarray, shape (n,)
        valid : bool
        """
        mu = np.empty_like(eta)
        kernel = self.kernel

        def segment(bounds: tuple[int, int]) -> tuple[float, bool]:
            dev, valid = 0.0, True
            with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
                for lo in _leaves(*bounds):
                    hi = min(lo + LEAF_ROWS, bounds[1])
                    d, v, _ = kernel(lo, hi)(LeafData(eta[lo:hi], mu[lo:hi], self.y[lo:hi],
                                                      self.wt[lo:hi], want=False))
                    dev, valid = dev + d, valid and v
            return dev, valid

        parts = parallel_map(segment, _segments(eta.size))
        return float(sum(p[0] for p in parts)), mu, all(p[1] for p in parts)

    @cached_property
    def kernel(self) -> Callable[[int, int], LeafKernel]:
        """The maker of each leaf's kernel (:mod:`attnreg.glm.leafkernels`: the canonical
        pairs' algebra done, R's family and link functions otherwise)."""
        return leaf_kernels(self.family, self.link, self.y, self.wt)

    def working(self, eta: FloatArray, mu: FloatArray, z: FloatArray | None = None
                ) -> tuple[FloatArray, FloatArray] | None:
        """The working response z (offset removed) and working weights W at (η, μ), or None
        where a variance is 0 or not finite.

        Parameters
        ----------
        eta, mu : ndarray, shape (n,)
        z : ndarray, shape (n,), optional
            Where to write z (any strides: a column of a wider array); default a new array.

        Returns
        -------
        z, W : ndarray, shape (n,)
        """
        z = np.empty_like(eta) if z is None else z
        W = np.empty_like(eta)
        log = self.link.name == "log"  # dμ/dη of the log link is μ (the same expression)

        def segment(bounds: tuple[int, int]) -> bool:
            for lo in _leaves(*bounds):
                hi = min(lo + LEAF_ROWS, bounds[1])
                e, m = eta[lo:hi], mu[lo:hi]
                var = self.family.variance(m)
                if not np.isfinite(var).all() or (var == 0).any():
                    return False
                d = m if log else self.link.mu_eta(e)
                z[lo:hi] = e - self.offset[lo:hi] + (self.y[lo:hi] - m) / d
                W[lo:hi] = self.wt[lo:hi] * d ** 2 / var
            return True

        return (z, W) if all(parallel_map(segment, _segments(eta.size))) else None
