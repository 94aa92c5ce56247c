"""Instrumental variables on arrays: estimators, covariances, weak-instrument statistics.

Formula-free numerical core: inputs are ``y`` (n,), exogenous ``X`` (n, k1; include a column
of ones for an intercept), endogenous ``D`` (n, k2), excluded instruments ``Z`` (n, l) and
optional ``weights`` (n,); results are frozen dataclasses.  Coefficients are ordered ``[X, D]``.
"""

from __future__ import annotations

from attnreg.iv.arset import ARSet, ARTest, anderson_rubin_set, anderson_rubin_test
from attnreg.iv.attention import IVAttention, tsls_attention
from attnreg.iv.cue import cue
from attnreg.iv.covariance import influence, iv_vcov
from attnreg.iv.estimators import IVFit, fuller, gmm, kclass, liml, liml_kappa, tsls
from attnreg.iv.spec import IVTest, endogeneity, overidentification
from attnreg.iv.weak import WeakIV, weak_instruments

__all__ = ["ARSet", "ARTest", "IVAttention", "IVFit", "IVTest", "WeakIV", "anderson_rubin_set",
           "anderson_rubin_test", "cue", "endogeneity", "fuller", "gmm", "influence", "iv_vcov", "kclass",
           "liml", "liml_kappa", "overidentification", "tsls", "tsls_attention", "weak_instruments"]
