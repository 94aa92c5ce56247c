"""What an estimator registered from outside the package hands over: its coefficients.

A least-squares estimator written elsewhere (a QR, ``np.linalg.lstsq``, a GPU solver)
computes the coefficients of a built design; :func:`least_squares_results` wraps them in a
:class:`~attnreg.linear.results.LinearResults`, so that every operation of a linear fit
applies to it: the summary, every covariance, the tests, anova, tidy/glance/augment, etable,
the bootstrap, influence, diagnostics, prediction intervals, the attention view, pickling,
forecasting and the scikit-learn wrapper. The design is decomposed once, as for the
built-in OLS; the coefficients handed over are checked against that decomposition (they
must solve the least-squares problem their rule declares) and are the ones reported.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from attnreg.formula.design import build_design
>>> rng = np.random.default_rng(0)
>>> df = pd.DataFrame({"x": rng.normal(size=20)})
>>> df["y"] = 1 + 2 * df.x + rng.normal(size=20)
>>> design = build_design("y ~ x", df)
>>> coef = np.linalg.lstsq(design.X, design.y, rcond=None)[0]
>>> fit = least_squares_results(design, coef, method="lstsq")
>>> fit.rule.least_squares, fit.rstudent().shape
(True, (20,))
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnreg.exceptions import DataError, OptionError
from attnreg.formula.design import Design
from attnreg.linear.filters import Filtered, apply_filter
from attnreg.linear.fit import decompose_design
from attnreg.inference.vcov.registry import make_vcov_spec
from attnreg.linear.results import LinearResults
from attnreg.linear.rules import SpectralRule, least_squares_rule
from attnreg.linear.spectral import ALIAS_TOL

__all__ = ["HANDOVER_RTOL", "least_squares_results"]

#: the fitted values of the coefficients handed over may differ from the least-squares fit's
#: by this fraction of the (weighted) response's norm: a solver's rounding on an
#: ill-conditioned design passes, coefficients of another problem do not
HANDOVER_RTOL = 1e-6


def least_squares_results(design: Design, coef: Any, *, method: str, call: str = "",
                          rule: SpectralRule | None = None, vcov: str = "classical",
                          **vcov_options: Any) -> LinearResults:
    """A linear fit from the least-squares coefficients an estimator computed itself.

    Parameters
    ----------
    design : Design
        The built design the estimator's ``fit`` received.
    coef : array-like, shape (n_coef,)
        The coefficients, in the design's column order; NaN for the aliased columns (those
        that are linear combinations of earlier ones, as R reports them) is allowed.
    method : str
        The ``method=`` name the estimator is registered as.
    call : str, optional
        The call string the estimator's ``fit`` received.
    rule : SpectralRule, optional
        What the method declares; default :func:`~attnreg.linear.rules.least_squares_rule`
        of ``method`` (unpenalised least squares). Only unpenalised rules are accepted.
    vcov : str, optional
        The covariance the fit starts with (any name of the covariance registry).
    **vcov_options
        Its options (``maxlags=``, ``cluster=``, ...).

    Returns
    -------
    LinearResults

    Raises
    ------
    OptionError
        A penalised rule, coefficients of the wrong shape, or coefficients that do not solve
        the least-squares problem (the message gives the discrepancy).
    DataError
        No more rows than coefficients.
    """
    rule = least_squares_rule(method) if rule is None else rule
    if not rule.least_squares:
        raise OptionError(f"least_squares_results takes an unpenalised rule, however method "
                          f"{method!r} declares the tuning parameter {rule.tuning!r}: a "
                          "penalised method is a filter of the spectrum (SpectralRule)")
    if design.n_obs <= design.n_coef:
        raise DataError(f"n_obs ({design.n_obs}) must exceed the number of coefficients "
                        f"({design.n_coef}) for method {method!r}; use fewer terms or more rows")
    sp = decompose_design(design, "norm", ALIAS_TOL)
    own = apply_filter(sp, rule.filter(sp.s, None), design.n_coef)
    given = _checked_coef(coef, own.coef, design, method)
    spec = make_vcov_spec(vcov, n_obs=design.n_obs, design=design, **vcov_options)
    return LinearResults(design=design, method=method, spectrum=sp,
                         filtered=Filtered(coef=given, f=own.f, edf=own.edf), selection=None,
                         vcov_spec=spec, call=call or design.formula, standardize=False,
                         rule=rule)


def _checked_coef(coef: Any, reference: np.ndarray, design: Design, method: str) -> np.ndarray:
    """The coefficients handed over as float64 (NaN where aliased), checked against the
    least-squares ``reference`` through their fitted values."""
    try:
        out = np.array(coef, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise OptionError(f"method {method!r} handed over coefficients that are not numbers: "
                          f"{exc}") from None
    if out.shape != reference.shape:
        raise OptionError(f"method {method!r} handed over {out.size} coefficient(s) for a "
                          f"design of {reference.size} columns ({', '.join(design.column_names)})"
                          "; return one per column, in the design's order")
    aliased = np.isnan(reference)
    if np.any(aliased & ~np.isnan(out) & (out != 0.0)):
        names = [design.column_names[j] for j in np.flatnonzero(aliased)]
        raise OptionError(f"the design of method {method!r} is rank deficient: {', '.join(names)} "
                          "are linear combinations of earlier columns; hand over NaN for them "
                          "(as R reports them) and the least-squares fit of the other columns")
    out[aliased] = np.nan  # R's convention: not defined because of singularities
    if not np.isfinite(out[~aliased]).all():
        bad = [design.column_names[j] for j in np.flatnonzero(~aliased & ~np.isfinite(out))]
        raise OptionError(f"method {method!r} handed over non-finite coefficient(s) for "
                          f"{', '.join(bad)}")
    sw = 1.0 if design.weights is None else np.sqrt(design.weights)
    gap = float(np.linalg.norm(sw * (design.X[:, ~aliased] @ (out - reference)[~aliased])))
    scale = float(np.linalg.norm(sw * design.y))
    if gap > HANDOVER_RTOL * scale:
        raise OptionError(f"the coefficients method {method!r} handed over do not solve its "
                          f"least-squares problem: their fitted values differ from the "
                          f"least-squares fit's by {gap / max(scale, 1e-300):.3g} of the "
                          f"response's norm (more than {HANDOVER_RTOL:g}); hand over the "
                          "minimiser of ||y - X b|| (e.g. np.linalg.lstsq(X, y))")
    return out
