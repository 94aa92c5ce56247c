"""The methods and options of IV formula fits, checked before any work."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from attnreg.exceptions import OptionError
from attnreg.inference.vcov.registry import VCOV_REGISTRY, check_vcov_options, get_vcov, vcov_names

__all__ = ["IV_METHODS", "IV_OPTIONS", "IV_VCOV", "check_iv_options", "check_vcov"]

#: ``method=`` of an IV formula -> the estimator's title.
IV_METHODS: dict[str, str] = {
    "tsls": "two-stage least squares",
    "2sls": "two-stage least squares (the same as 'tsls')",
    "liml": "limited-information maximum likelihood",
    "fuller": "Fuller's modified LIML (alpha=)",
    "gmm": "two-step efficient GMM (efficient under vcov=)",
    "cue": "continuously updated GMM",
}
#: The covariances AER's ``summary(ivreg)`` names itself (reports label every other
#: registered covariance, all available for the coefficients and the weak-IV block, with the
#: registry's words); the WRE bootstrap's t statistics are these.
IV_VCOV = ("classical", "HC0", "HC1", "cluster")
#: Options of IV fits and their defaults (and any option of a registered covariance).
IV_OPTIONS: dict[str, Any] = {"vcov": "classical", "cluster": None, "alpha": 1.0}


def _vcov_option_names() -> set[str]:
    """The options of every registered covariance (``type``, ``maxlags``, ``kernel``, ...)."""
    get_vcov("classical")  # the built-in estimators are registered on first lookup
    names = {n for kind in vcov_names() for n in get_vcov(kind).option_names}
    return (names | {"maxlags", "adjust"}) - {"cluster"}


def check_vcov(vcov: Any, cluster: Any,
               options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """A registered covariance name (``cluster=`` given exactly when ``vcov="cluster"``) and
    its other options, checked by the registry (before any work)."""
    options = {k: v for k, v in (options or {}).items() if v is not None}
    get_vcov("classical")  # the built-in estimators are registered on first lookup
    if not isinstance(vcov, str) or vcov not in VCOV_REGISTRY:
        raise OptionError(f"vcov must be one of {', '.join(map(repr, vcov_names()))} for an IV "
                          f"fit, however: vcov={vcov!r}")
    if vcov == "cluster" and cluster is None:
        raise OptionError("vcov='cluster' needs cluster= (a column name of data, or one id per "
                          "row), e.g. vcov='cluster', cluster='firm'")
    if vcov != "cluster" and cluster is not None:
        raise OptionError(f"cluster= is used by vcov='cluster' only, however: vcov={vcov!r}")
    if "df" in options:
        raise OptionError(f"df does not apply to an IV fit's covariance: its t and F tests are "
                          f"on the residual df n - k, as AER's; drop df=, however: "
                          f"df={options['df']!r}")
    check_vcov_options(vcov, **options, **({"cluster": cluster} if cluster is not None else {}))
    return get_vcov(vcov).name, options


def check_iv_options(method: str, options: dict[str, Any]) -> dict[str, Any]:
    """Validate ``attnreg(<IV formula>, method=..., **options)`` and return them resolved.

    Parameters
    ----------
    method : str
        A key of :data:`IV_METHODS`.
    options : dict
        The options given (front-door keywords left at their defaults are absent).

    Returns
    -------
    dict
        ``vcov``, ``cluster``, ``alpha``, ``vcov_options`` (the covariance's other options).

    Raises
    ------
    OptionError
        Naming the option that does not apply or its invalid value.
    """
    if method not in IV_METHODS:
        raise OptionError(f"method must be one of {', '.join(map(repr, IV_METHODS))} for a "
                          f"formula with an IV part ('y ~ x | d ~ z'), however: {method=}")
    unknown = sorted(set(options) - set(IV_OPTIONS) - _vcov_option_names())
    if unknown:
        raise OptionError(f"option(s) {', '.join(unknown)} do not apply to IV method {method!r} "
                          f"(its options: {', '.join(IV_OPTIONS)} and the covariance's)")
    out = {k: v for k, v in {**IV_OPTIONS, **options}.items() if k in IV_OPTIONS}
    given = {k: v for k, v in options.items() if k not in IV_OPTIONS}
    out["vcov"], out["vcov_options"] = check_vcov(out["vcov"], out["cluster"], given)
    alpha = out["alpha"]
    if "alpha" in options and method != "fuller":
        raise OptionError(f"alpha applies to method 'fuller' only, however: method={method!r}")
    if (not isinstance(alpha, numbers.Real) or isinstance(alpha, bool)
            or not np.isfinite(float(alpha)) or alpha < 0):
        raise OptionError(f"alpha must be a non-negative number, however: alpha={alpha!r}")
    out["alpha"] = float(alpha)
    return out
