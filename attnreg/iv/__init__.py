"""Instrumental variables on arrays: estimators, covariances, weak-instrument statistics.

Formula-free numerical core: inputs are ``y`` (n,), exogenous ``X`` (n, k1; include a column
of ones for an intercept), endogenous ``D`` (n, k2), excluded instruments ``Z`` (n, l) and
optional ``weights`` (n,); results are frozen dataclasses.
"""

from __future__ import annotations

from attnreg.iv.covariance import influence, iv_vcov
from attnreg.iv.estimators import IVFit, fuller, gmm, kclass, liml, liml_kappa, tsls

__all__ = ["IVFit", "fuller", "gmm", "influence", "iv_vcov", "kclass", "liml", "liml_kappa", "tsls"]
