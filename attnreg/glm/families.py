"""Families of R's ``glm``: variance, deviance residuals, AIC, starting values, valid links.

Each :class:`Family` mirrors the R object of the same name (``binomial()``, ``poisson()``,
``Gamma()``, ``inverse.gaussian()``, ``gaussian()``): ``initialize`` is R's ``mustart``,
``dev_resids``, ``aic`` and ``validmu`` are R's functions of the same names.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from attnreg._typing import FloatArray
from attnreg._warn import warn_user
from attnreg.exceptions import DataError, InferenceWarning

__all__ = ["FAMILIES", "Family", "counts_aic", "family_names"]

Arr = FloatArray

def _ylogy(y: Arr, mu: Arr) -> Arr:
    """y log(y/μ), 0 where y is 0 (R's ``y_log_y``): the ratio is set to 1 there (masked
    ufuncs, ``where=``, take half again as long at 1e6 rows)."""
    pos = y > 0
    out = np.asarray(np.where(pos, y, 1.0) / np.where(pos, mu, 1.0))  # 1 where y is 0: log 0
    np.log(out, out=out)
    return np.multiply(out, y, out=out)

def _binomial_dev(y: Arr, mu: Arr, wt: Arr) -> Arr:
    if ((y == 0) | (y == 1)).all():  # a 0/1 response: one of the two terms is 0
        return -2 * wt * np.log(np.where(y > 0, mu, 1 - mu))
    return 2 * wt * (_ylogy(y, mu) + _ylogy(1 - y, 1 - mu))

def _poisson_dev(y: Arr, mu: Arr, wt: Arr) -> Arr:
    return 2 * wt * (_ylogy(y, mu) - (y - mu))

def _gamma_dev(y: Arr, mu: Arr, wt: Arr) -> Arr:
    ratio = np.where(y == 0, 1.0, y / mu)
    return -2 * wt * (np.log(ratio) - (y - mu) / mu)

def _binomial_aic(y: Arr, mu: Arr, wt: Arr, dev: float) -> float:
    m = wt  # a 0/1 or proportion response: R's n is 1, so m is the prior weight
    k, size = np.round(m * y), np.round(m)
    scale = np.where(m > 0, wt / np.where(m > 0, m, 1.0), 0.0)
    return float(-2 * np.sum(scale * stats.binom.logpmf(k, size, mu)))

def counts_aic(y: Arr, mu: Arr, wt: Arr, trials: Arr) -> float:
    """R's binomial ``aic`` of a ``cbind(successes, failures)`` response: −2 Σ (wt/n) log
    dbinom(n y; n, μ) with n the trials (R's ``m``: the trials when one exceeds 1, else the
    prior weights), so that each row counts its prior weight ``wt / n`` times."""
    m = trials if (trials > 1).any() else wt
    scale = np.where(m > 0, wt / np.where(m > 0, m, 1.0), 0.0)
    return float(-2 * np.sum(scale * stats.binom.logpmf(np.round(m * y), np.round(m), mu)))

def _poisson_aic(y: Arr, mu: Arr, wt: Arr, dev: float) -> float:
    return float(-2 * np.sum(stats.poisson.logpmf(y, mu) * wt))

def _gaussian_aic(y: Arr, mu: Arr, wt: Arr, dev: float) -> float:
    n = y.size
    return float(n * (np.log(2 * np.pi * dev / n) + 1) + 2 - np.sum(np.log(wt)))

def _gamma_aic(y: Arr, mu: Arr, wt: Arr, dev: float) -> float:
    disp = dev / np.sum(wt)
    shape = 1 / disp
    logpdf = stats.gamma.logpdf(y, shape, scale=mu * disp)
    return float(-2 * np.sum(logpdf * wt) + 2)

def _inverse_gaussian_aic(y: Arr, mu: Arr, wt: Arr, dev: float) -> float:
    sw = np.sum(wt)
    return float(sw * (np.log(dev / sw * 2 * np.pi) + 1) + 3 * np.sum(np.log(y) * wt) + 2)

def _positive_response(family: str) -> Callable[[Arr, Arr, str], Arr]:
    def start(y: Arr, wt: Arr, link: str) -> Arr:
        if (y <= 0).any():
            raise DataError(f"non-positive values not allowed for the '{family}' family; "
                            f"the response has {int((y <= 0).sum())} value(s) <= 0")
        return y.copy()
    return start

def _binomial_start(y: Arr, wt: Arr, link: str) -> Arr:
    if ((y < 0) | (y > 1)).any():
        raise DataError("y values must be 0 <= y <= 1 for the binomial family (a 0/1 response, "
                        "or a proportion with the number of trials as weights=)")
    m = wt * y
    if (np.abs(m - np.round(m)) > 1e-3).any():  # R's check and tolerance
        warn_user("non-integer #successes in a binomial glm: weights × y should count "
                  "successes (the AIC is then not a likelihood)", InferenceWarning)
    return (wt * y + 0.5) / (wt + 1)

def _poisson_start(y: Arr, wt: Arr, link: str) -> Arr:
    if (y < 0).any():
        raise DataError("negative values not allowed for the 'poisson' family; "
                        f"the response has {int((y < 0).sum())} negative value(s)")
    return y + 0.1

def _gaussian_start(y: Arr, wt: Arr, link: str) -> Arr:
    if (link == "inverse" and (y == 0).any()) or (link == "log" and (y <= 0).any()):
        raise DataError(f"cannot find valid starting values for the gaussian family with link "
                        f"{link!r}: the response has values outside the link's domain")
    return y.copy()

def _finite_positive(mu: Arr) -> bool:
    return bool(np.isfinite(mu).all() and (mu > 0).all())

def _unit_interval(mu: Arr) -> bool:
    return bool(np.isfinite(mu).all() and ((mu > 0) & (mu < 1)).all())

def _always(mu: Arr) -> bool:
    return True

@dataclass(frozen=True)
class Family:
    """One exponential family, as R's family object.

    Attributes
    ----------
    name : str
        R's family name (``"binomial"``, ``"Gamma"``, ``"inverse.gaussian"``, ...).
    links : tuple of str
        The links accepted; the first is the default (R's).
    variance : callable
        V(μ), arrays of shape (n,).
    dev_resids : callable
        (y, μ, prior weights) -> unit deviances times weights, shape (n,).
    aic : callable
        (y, μ, prior weights, deviance) -> R's ``aic`` (−2 log-likelihood, plus 2 for an
        estimated dispersion).
    initialize : callable
        (y, prior weights, link name) -> R's ``mustart``; raises DataError on a response
        the family cannot take.
    validmu : callable
        Whether fitted means are in the family's range.
    fixed_dispersion : bool
        Dispersion 1 (binomial, poisson; z tests) rather than Pearson's estimate (t tests).
    """

    name: str
    links: tuple[str, ...]
    variance: Callable[[Arr], Arr]
    dev_resids: Callable[[Arr, Arr, Arr], Arr]
    aic: Callable[[Arr, Arr, Arr, float], float]
    initialize: Callable[[Arr, Arr, str], Arr]
    validmu: Callable[[Arr], bool]
    fixed_dispersion: bool

FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("gaussian", ("identity", "log", "inverse"), np.ones_like,
           lambda y, mu, wt: wt * (y - mu) ** 2, _gaussian_aic, _gaussian_start, _always, False),
    Family("binomial", ("logit", "probit", "cloglog", "cauchit", "log"),
           lambda mu: mu * (1 - mu), _binomial_dev, _binomial_aic, _binomial_start,
           _unit_interval, True),
    Family("poisson", ("log", "identity", "sqrt"), lambda mu: mu, _poisson_dev, _poisson_aic,
           _poisson_start, _finite_positive, True),
    Family("Gamma", ("inverse", "identity", "log"), lambda mu: mu ** 2, _gamma_dev, _gamma_aic,
           _positive_response("Gamma"), _finite_positive, False),
    Family("inverse.gaussian", ("1/mu^2", "inverse", "identity", "log"), lambda mu: mu ** 3,
           lambda y, mu, wt: wt * (y - mu) ** 2 / (y * mu ** 2), _inverse_gaussian_aic,
           _positive_response("inverse.gaussian"), _always, False),
)}

#: Other spellings accepted by ``family=`` (Python names for R's).
ALIASES = {"gamma": "Gamma", "inverse_gaussian": "inverse.gaussian", "normal": "gaussian"}

def family_names() -> tuple[str, ...]:
    """The ``family=`` values accepted (R's names and their Python spellings)."""
    return (*FAMILIES, *ALIASES)

