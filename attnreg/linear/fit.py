"""Fitting a spectral method on a built design: decompose, choose lambda/k, filter, refine.

The formula-free core of the spectral family (what R's ``lm.fit`` is to ``lm()``); the
methods themselves are declared in :mod:`attnreg.linear.rules`.
"""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any

from attnreg._warn import warn_user
from attnreg.formula.design import Design
from attnreg.exceptions import DataError, OptionError, RankDeficiencyWarning
from attnreg.inference.vcov.registry import make_vcov_spec
from attnreg.linear.refinement import REFINE_COND, REFINE_MAX_SIZE, refine_ols
from attnreg.linear.results import LinearResults
from attnreg.linear.rules import RULES, SpectralRule
from attnreg.linear.selection import CRITERIA, Selection
from attnreg.linear.spectral import ALIAS_TOL, Scaling, Spectrum, decompose
from attnreg.linear.filters import apply_filter
from attnreg.threads import narrow_blas

__all__ = ["check_tuning", "decompose_design", "fit_spectral_design"]


def fit_spectral_design(design: Design, method: str, tuning: float | str | None, *,
                        standardize: bool, tol: float = ALIAS_TOL, call: str = "",
                        vcov_spec: Any = None) -> LinearResults:
    """Fit a spectral method (:data:`attnreg.linear.rules.RULES`) on a built design.

    The formula-free core of :func:`attnreg.attnreg` for OLS, ridge and PCR; ``tuning`` is
    the λ or k to use, or the criterion (``"gcv"``, ``"loo"``) that chooses it.
    """
    rule = RULES[method]
    if not rule.penalized and design.n_obs <= design.n_coef:
        wide = " and ".join(r.label for r in RULES.values() if r.penalized)
        raise DataError(f"n_obs ({design.n_obs}) must exceed the number of coefficients "
                        f"({design.n_coef}); use fewer terms or more rows ({wide} accept wide "
                        "designs)")
    if design.n_obs < 2:
        raise DataError(f"n_obs ({design.n_obs}) must be at least 2")
    n_pred = design.n_coef - (1 if design.intercept else 0)
    if rule.counts and not isinstance(tuning, str) and int(tuning) > n_pred:  # type: ignore[arg-type]
        raise OptionError(f"{rule.tuning} must be between 1 and the number of predictors "
                          f"({n_pred}), however: {rule.tuning}={tuning}")
    scaling: Scaling = "norm" if not rule.penalized else ("sd" if standardize else "none")
    sp = decompose_design(design, scaling, tol)
    selection = _select(sp, rule, tuning)
    f = rule.filter(sp.s, None if selection is None else selection.value)
    filtered = apply_filter(sp, f, design.n_coef)
    if rule.refine and sp.rank and (sp.s[0] / sp.s[-1] > REFINE_COND
                                    or design.X.size <= REFINE_MAX_SIZE):
        with narrow_blas(design.n_coef):
            filtered = dataclasses.replace(
                filtered, coef=refine_ols(sp, design.X, design.y, filtered.coef))
    return LinearResults(design=design, method=method, spectrum=sp, filtered=filtered,
                         selection=selection, vcov_spec=vcov_spec or make_vcov_spec("classical"),
                         call=call or design.formula, standardize=standardize, rule=rule)


def decompose_design(design: Design, scaling: Scaling, tol: float = ALIAS_TOL) -> Spectrum:
    """The spectrum of a built design (warns once naming the aliased columns, as R).

    Parameters
    ----------
    design : Design
    scaling : {"norm", "sd", "none"}
        How the columns are scaled before the decomposition (see
        :func:`attnreg.linear.spectral.decompose`).
    tol : float
        The aliasing tolerance.

    Returns
    -------
    Spectrum
    """
    intercept = 0 if design.intercept else None
    with narrow_blas(design.n_coef):  # every product of the fit (see attnreg.threads)
        sp = decompose(design.X, design.y, intercept=intercept, weights=design.weights,
                       scaling=scaling, tol=tol)
    if sp.aliased.size:
        names = [design.column_names[j] for j in sp.aliased]
        warn_user(f"{len(names)} coefficient(s) not defined because of singularities: "
                  f"{', '.join(names)}", RankDeficiencyWarning)
    return sp


def _select(sp: Any, rule: SpectralRule, tuning: float | str | None) -> Selection | None:
    if rule.select is None:
        return None
    if isinstance(tuning, str):
        return rule.select(sp, tuning)
    if rule.counts and int(tuning) > sp.rank:  # type: ignore[arg-type]
        raise OptionError(f"{rule.tuning} must be between 1 and the rank of the predictors "
                          f"({sp.rank}), however: {rule.tuning}={tuning}")
    return rule.fixed(float(tuning))  # type: ignore[arg-type]


def check_tuning(method: str, lam: Any, k: Any) -> float | str | None:
    """Validate ``lam`` / ``k`` for a spectral method; the criterion or number to use."""
    rule = RULES[method]
    for option, value in (("lam", lam), ("k", k)):
        if value is not None and option != rule.tuning:
            owner = next(n for n, r in RULES.items() if r.tuning == option)
            raise OptionError(f"{option} applies to method {owner!r} only, however: "
                              f"{method=}, {option}={value!r}")
    if rule.tuning is None:
        return None
    value, name = (lam if rule.tuning == "lam" else k), rule.tuning
    value = "gcv" if value is None else value
    kind = "a positive integer" if rule.counts else "a number >= 0"
    if isinstance(value, str):
        if value not in CRITERIA:
            raise OptionError(f"{name} must be {kind} or one of {CRITERIA}, however: "
                              f"{name}={value!r}")
        return value
    if rule.counts:
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
            raise OptionError(f"{name} must be {kind} or one of {CRITERIA}, however: "
                              f"{name}={value!r}")
        return int(value)
    if not isinstance(value, numbers.Real) or isinstance(value, bool) \
            or not 0.0 <= float(value) < float("inf"):
        raise OptionError(f"{name} must be a finite number >= 0 or one of {CRITERIA}, "
                          f"however: {name}={value!r}")
    return float(value)
