"""Link functions of R's ``make.link``: g, its inverse and dμ/dη, with R's clamps.

Each link is a frozen :class:`Link` holding plain functions of float arrays; the clamps
(``DBL_EPSILON`` floors, the logit's ±30 threshold, the probit and cauchit bounds) are R's,
so that iterations and fitted values follow ``glm.fit`` step for step.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from attnreg._typing import FloatArray

__all__ = ["LINKS", "Link"]

EPS = float(np.finfo(np.float64).eps)
_LOGIT_THRESH = 30.0
_PROBIT_THRESH = -float(stats.norm.ppf(EPS))
_CAUCHIT_THRESH = -float(stats.cauchy.ppf(EPS))

ArrayFn = Callable[[FloatArray], FloatArray]


def _always(eta: FloatArray) -> bool:
    return True


def _finite_nonzero(eta: FloatArray) -> bool:
    return bool(np.isfinite(eta).all() and (eta != 0).all())


def _finite_positive(eta: FloatArray) -> bool:
    return bool(np.isfinite(eta).all() and (eta > 0).all())


@dataclass(frozen=True)
class Link:
    """One link function.

    Attributes
    ----------
    name : str
        R's name (``"logit"``, ``"1/mu^2"``, ...).
    linkfun : callable
        η = g(μ), arrays of shape (n,).
    linkinv : callable
        μ = g⁻¹(η).
    mu_eta : callable
        dμ/dη at η.
    valideta : callable
        Whether η is in the link's domain (R's ``valideta``).
    """

    name: str
    linkfun: ArrayFn
    linkinv: ArrayFn
    mu_eta: ArrayFn
    valideta: Callable[[FloatArray], bool] = _always


def _clamped(eta: FloatArray) -> bool:
    """Whether some η lies beyond the logit's threshold (or is NaN): R's clamps apply."""
    e = np.asarray(eta)
    return not (e.size == 0 or (e.min() >= -_LOGIT_THRESH and e.max() <= _LOGIT_THRESH))


def _logit_inv(eta: FloatArray) -> FloatArray:
    t = np.exp(np.clip(eta, -_LOGIT_THRESH, _LOGIT_THRESH))
    if _clamped(eta):
        t = np.where(eta < -_LOGIT_THRESH, EPS, np.where(eta > _LOGIT_THRESH, 1 / EPS, t))
    return t / (1 + t)


def _logit_mu_eta(eta: FloatArray) -> FloatArray:
    e = np.exp(np.clip(eta, -_LOGIT_THRESH, _LOGIT_THRESH))
    d = 1 + e
    out = e / (d * d)  # (1 + e)², as R
    return np.where(np.abs(eta) > _LOGIT_THRESH, EPS, out) if _clamped(eta) else out


def _probit_inv(eta: FloatArray) -> FloatArray:
    return special.ndtr(np.clip(eta, -_PROBIT_THRESH, _PROBIT_THRESH))


def _cauchit_inv(eta: FloatArray) -> FloatArray:
    return stats.cauchy.cdf(np.clip(eta, -_CAUCHIT_THRESH, _CAUCHIT_THRESH))


def _cloglog_inv(eta: FloatArray) -> FloatArray:
    return np.maximum(np.minimum(-np.expm1(-np.exp(eta)), 1 - EPS), EPS)


def _cloglog_mu_eta(eta: FloatArray) -> FloatArray:
    e = np.minimum(eta, 700.0)
    return np.maximum(np.exp(e) * np.exp(-np.exp(e)), EPS)


LINKS: dict[str, Link] = {link.name: link for link in (
    Link("logit", lambda mu: np.log(mu / (1 - mu)), _logit_inv, _logit_mu_eta),
    Link("probit", lambda mu: special.ndtri(mu), _probit_inv,
         lambda eta: np.maximum(stats.norm.pdf(eta), EPS)),
    Link("cauchit", lambda mu: stats.cauchy.ppf(mu), _cauchit_inv,
         lambda eta: np.maximum(stats.cauchy.pdf(eta), EPS)),
    Link("cloglog", lambda mu: np.log(-np.log1p(-mu)), _cloglog_inv, _cloglog_mu_eta),
    Link("identity", lambda mu: mu, lambda eta: eta, np.ones_like),
    Link("log", np.log, lambda eta: np.maximum(np.exp(eta), EPS),
         lambda eta: np.maximum(np.exp(eta), EPS)),
    Link("inverse", lambda mu: 1 / mu, lambda eta: 1 / eta, lambda eta: -1 / eta ** 2,
         _finite_nonzero),
    Link("sqrt", np.sqrt, lambda eta: eta ** 2, lambda eta: 2 * eta, _finite_positive),
    Link("1/mu^2", lambda mu: 1 / mu ** 2, lambda eta: 1 / np.sqrt(eta),
         lambda eta: -1 / (2 * eta ** 1.5), _finite_positive),
)}
