"""The methods and options of IV formula fits, checked before any work."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from attnreg.exceptions import OptionError

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
#: Covariances of IV fits (``vcov=``; ``"cluster"`` takes ``cluster=``).
IV_VCOV = ("classical", "HC0", "HC1", "cluster")
#: Options of IV fits and their defaults.
IV_OPTIONS: dict[str, Any] = {"vcov": "classical", "cluster": None, "alpha": 1.0}


def check_vcov(vcov: Any, cluster: Any) -> str:
    """A valid covariance kind (``cluster=`` given exactly when ``vcov="cluster"``)."""
    if vcov not in IV_VCOV:
        raise OptionError(f"vcov must be one of {', '.join(map(repr, IV_VCOV))} for an IV fit, "
                          f"however: vcov={vcov!r}")
    if vcov == "cluster" and cluster is None:
        raise OptionError("vcov='cluster' needs cluster= (a column name of data, or one id per "
                          "row), e.g. vcov='cluster', cluster='firm'")
    if vcov != "cluster" and cluster is not None:
        raise OptionError(f"cluster= is used by vcov='cluster' only, however: vcov={vcov!r}")
    return str(vcov)


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
        ``vcov``, ``cluster``, ``alpha``.

    Raises
    ------
    OptionError
        Naming the option that does not apply or its invalid value.
    """
    if method not in IV_METHODS:
        raise OptionError(f"method must be one of {', '.join(map(repr, IV_METHODS))} for a "
                          f"formula with an IV part ('y ~ x | d ~ z'), however: {method=}")
    unknown = sorted(set(options) - set(IV_OPTIONS))
    if unknown:
        raise OptionError(f"option(s) {', '.join(unknown)} do not apply to IV method {method!r} "
                          f"(its options: {', '.join(IV_OPTIONS)})")
    out = {**IV_OPTIONS, **options}
    out["vcov"] = check_vcov(out["vcov"], out["cluster"])
    alpha = out["alpha"]
    if "alpha" in options and method != "fuller":
        raise OptionError(f"alpha applies to method 'fuller' only, however: method={method!r}")
    if (not isinstance(alpha, numbers.Real) or isinstance(alpha, bool)
            or not np.isfinite(float(alpha)) or alpha < 0):
        raise OptionError(f"alpha must be a non-negative number, however: alpha={alpha!r}")
    out["alpha"] = float(alpha)
    return out
