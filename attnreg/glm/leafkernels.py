"""What one leaf of rows gives an IRLS pass: means, deviance, and the scoring weights.

A kernel takes a leaf's linear predictor and writes its means; it returns the leaf's
deviance, whether η and μ are valid, and, when asked, the square roots of the working
weights ``w`` and the vector ``r`` with X'r the increment's right-hand side
(X'W(y − μ)/μ'(η), so that X'WX δ = X'r is the scoring increment).

:func:`generic_leaf` evaluates R's family and link functions one by one. The canonical
pairs that most fits use have kernels with the algebra done (:data:`KERNELS`): for the
binomial with the logit link and a 0/1 response, and the Poisson with the log link, the
working weights are the variances and X'r is X'(wt (y − μ)), and the deviance needs one
transcendental function per row instead of four. They take a leaf only where R's clamps
(the logit's ±30 threshold, the log link's ``DBL_EPSILON`` floor) are not reached, and hand
it to :func:`generic_leaf` otherwise, so every leaf's numbers are R's formulas up to
rounding. The deviance of the passes only decides R's stopping rule and step-halving; what
is reported is computed from R's formulas after the last QR step.

Examples
--------
>>> import numpy as np
>>> from attnreg.glm.families import FAMILIES
>>> from attnreg.glm.leafkernels import LeafData, kernel_for
>>> from attnreg.glm.links import LINKS
>>> y, wt = np.array([0.0, 1.0, 1.0]), np.ones(3)
>>> fam, link = FAMILIES["binomial"], LINKS["logit"]
>>> leaf = kernel_for(fam, link, y, wt)
>>> mu = np.empty(3)
>>> dev, valid, ww = leaf(LeafData(np.array([-1.0, 0.0, 2.0]), mu, y, wt))
>>> bool(np.isclose(dev, fam.dev_resids(y, mu, wt).sum())), valid
(True, True)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from attnreg._typing import FloatArray
from attnreg.glm.families import Family
from attnreg.glm.links import Link

__all__ = ["KERNELS", "LeafData", "LeafKernel", "generic_leaf", "kernel_for"]

#: the logit link's clamp (R's ``THRESH``): beyond it the means are floored
LOGIT_THRESH = 30.0
#: log(DBL_EPSILON) and the largest η whose exponential is finite with room to spare: the
#: log link's means are floored at DBL_EPSILON below the first
LOG_LOW, LOG_HIGH = float(np.log(np.finfo(np.float64).eps)), 700.0

Weights = tuple[FloatArray, FloatArray] | None


@dataclass(frozen=True)
class LeafData:
    """One leaf of rows at given coefficients.

    Attributes
    ----------
    eta : ndarray, shape (m,)
        The linear predictor (offset included).
    mu : ndarray, shape (m,)
        Output: the means.
    y, wt : ndarray, shape (m,)
        Response and prior weights.
    want : bool
        Whether the working weights are wanted.
    """

    eta: FloatArray
    mu: FloatArray
    y: FloatArray
    wt: FloatArray
    want: bool = True


#: (leaf) -> (deviance, valid, (w, r) or None)
LeafKernel = Callable[[LeafData], tuple[float, bool, Weights]]


def generic_leaf(family: Family, link: Link, leaf: LeafData) -> tuple[float, bool, Weights]:
    """R's family and link functions, one by one (every family and link)."""
    e, m, y, wt = leaf.eta, leaf.mu, leaf.y, leaf.wt
    m[...] = link.linkinv(e)
    dev = float(np.sum(family.dev_resids(y, m, wt)))
    valid = bool(link.valideta(e) and family.validmu(m))
    if not leaf.want:
        return dev, valid, None
    var = family.variance(m)
    if not (np.isfinite(var).all() and (var != 0).all()):
        return dev, valid, None
    d = link.mu_eta(e)
    w = np.sqrt(wt * d ** 2 / var)
    return dev, valid, (w, w * w * ((y - m) / d))


def _canonical_weights(m: FloatArray, var: FloatArray, y: FloatArray, wt: FloatArray,
                       unit: bool) -> tuple[FloatArray, FloatArray]:
    """(√(wt V(μ)), wt (y − μ)) of a canonical link, ``var`` overwritten."""
    r = np.subtract(y, m)
    if not unit:
        var *= wt
        r *= wt
    return np.sqrt(var, out=var), r


def _logit_binary(family: Family, link: Link, unit: bool,
                  leaf: LeafData) -> tuple[float, bool, Weights]:
    """The binomial with the logit link and a 0/1 response: with t = e^η, μ = t/(1 + t) and
    the unit deviance is 2 (log(1 + t) − y η)."""
    e, m, y, wt = leaf.eta, leaf.mu, leaf.y, leaf.wt
    if not (e.size and e.min() >= -LOGIT_THRESH and e.max() <= LOGIT_THRESH):
        return generic_leaf(family, link, leaf)  # R's clamps, or NaN
    t = np.exp(e)
    np.divide(t, 1.0 + t, out=m)
    np.log1p(t, out=t)
    dev = 2.0 * (float(t.sum() - y @ e) if unit else float(wt @ t - (wt * y) @ e))
    if not leaf.want:
        return dev, True, None
    var = np.subtract(1.0, m)
    var *= m
    return dev, True, _canonical_weights(m, var, y, wt, unit)


def _poisson_log(family: Family, link: Link, unit: bool, ylogy: FloatArray,
                 leaf: LeafData) -> tuple[float, bool, Weights]:
    """The Poisson with the log link: μ = e^η and the unit deviance is
    2 (y log y − y η − (y − μ)); ``ylogy`` is the leaf's y log y (0 where y is 0)."""
    e, m, y, wt = leaf.eta, leaf.mu, leaf.y, leaf.wt
    if not (e.size and e.min() > LOG_LOW and e.max() < LOG_HIGH):
        return generic_leaf(family, link, leaf)
    np.exp(e, out=m)
    d = ylogy - y * (e + 1.0) + m
    dev = 2.0 * float(d.sum() if unit else wt @ d)
    if not leaf.want:
        return dev, True, None
    return dev, True, _canonical_weights(m, m.copy(), y, wt, unit)


def _is_binary(y: FloatArray) -> bool:
    return bool(((y == 0) | (y == 1)).all())


def _ylogy(y: FloatArray) -> FloatArray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0)), 0.0)


def _logit_kernel(family: Family, link: Link, y: FloatArray, wt: FloatArray
                  ) -> Callable[[int, int], LeafKernel] | None:
    if not _is_binary(y):
        return None
    unit = bool((wt == 1).all())
    return lambda lo, hi: partial(_logit_binary, family, link, unit)


def _poisson_kernel(family: Family, link: Link, y: FloatArray, wt: FloatArray
                    ) -> Callable[[int, int], LeafKernel] | None:
    unit = bool((wt == 1).all())
    ylogy = _ylogy(y)
    return lambda lo, hi: partial(_poisson_log, family, link, unit, ylogy[lo:hi])


#: (family name, link name) -> a maker of per-leaf kernels for the whole data (y, wt), or
#: None when the data do not suit it (the generic kernel then)
KERNELS: dict[tuple[str, str], Callable[..., Callable[[int, int], LeafKernel] | None]] = {
    ("binomial", "logit"): _logit_kernel,
    ("poisson", "log"): _poisson_kernel,
}


def kernel_for(family: Family, link: Link, y: FloatArray, wt: FloatArray,
               lo: int = 0, hi: int | None = None) -> LeafKernel:
    """The kernel of rows ``lo:hi`` of the data (y, wt) (all rows by default)."""
    return leaf_kernels(family, link, y, wt)(lo, len(y) if hi is None else hi)


def leaf_kernels(family: Family, link: Link, y: FloatArray, wt: FloatArray
                 ) -> Callable[[int, int], LeafKernel]:
    """A maker of the kernels of rows ``lo:hi``: the canonical pair's, or the generic one."""
    maker = KERNELS.get((family.name, link.name))
    made = maker(family, link, y, wt) if maker is not None else None
    if made is not None:
        return made
    generic = partial(generic_leaf, family, link)
    return lambda lo, hi: generic
