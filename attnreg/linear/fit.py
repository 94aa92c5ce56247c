"""Fitting OLS, ridge and PCR on a built design: decompose, choose lambda/k, filter, refine.

The formula-free core of the spectral family (what R's ``lm.fit`` is to ``lm()``);
:mod:`attnreg.methods` registers it for ``method="ols"``, ``"ridge"`` and ``"pcr"``.
"""

from __future__ import annotations

import dataclasses
import numbers
import warnings
from typing import Any

import numpy as np

from attnreg.formula.design import Design
from attnreg.exceptions import DataError, OptionError, RankDeficiencyWarning
from attnreg.linear.inference import make_vcov_spec
from attnreg.linear.refinement import REFINE_COND, REFINE_MAX_SIZE, refine_ols
from attnreg.linear.results import LinearResults
from attnreg.linear.selection import CRITERIA, Selection, select_k, select_lambda
from attnreg.linear.spectral import (
    ALIAS_TOL,
    Scaling,
    apply_filter,
    decompose,
    ols_filter,
    pcr_filter,
    ridge_filter,
)

__all__ = ["check_tuning", "fit_spectral_design"]


def fit_spectral_design(design: Design, method: str, tuning: float | str | None, *,
                        standardize: bool, tol: float = ALIAS_TOL, call: str = "",
                        vcov_spec: Any = None) -> LinearResults:
    """Fit OLS, ridge or PCR on a built design (the formula-free core of :func:`attnreg`)."""
    if method == "ols" and design.n_obs <= design.n_coef:
        raise DataError(f"n_obs ({design.n_obs}) must exceed the number of coefficients "
                        f"({design.n_coef}); use fewer terms or more rows (ridge and PCR "
                        "accept wide designs)")
    if design.n_obs < 2:
        raise DataError(f"n_obs ({design.n_obs}) must be at least 2")
    n_pred = design.n_coef - (1 if design.intercept else 0)
    if method == "pcr" and not isinstance(tuning, str) and int(tuning) > n_pred:  # type: ignore[arg-type]
        raise OptionError(f"k must be between 1 and the number of predictors ({n_pred}), "
                          f"however: k={tuning}")
    intercept = 0 if design.intercept else None
    scaling: Scaling = "norm" if method == "ols" else ("sd" if standardize else "none")
    sp = decompose(design.X, design.y, intercept=intercept, weights=design.weights,
                   scaling=scaling, tol=tol)
    if sp.aliased.size:
        names = [design.column_names[j] for j in sp.aliased]
        warnings.warn(f"{len(names)} coefficient(s) not defined because of singularities: "
                      f"{', '.join(names)}", RankDeficiencyWarning, stacklevel=3)
    selection = _select(sp, method, tuning)
    if method == "ols":
        f = ols_filter(sp.s)
    elif method == "ridge":
        f = ridge_filter(sp.s, selection.value)  # type: ignore[union-attr]
    else:
        f = pcr_filter(sp.s, int(selection.value))  # type: ignore[union-attr]
    filtered = apply_filter(sp, f, design.n_coef)
    if method == "ols" and sp.rank and (sp.s[0] / sp.s[-1] > REFINE_COND
                                        or design.X.size <= REFINE_MAX_SIZE):
        filtered = dataclasses.replace(
            filtered, coef=refine_ols(sp, design.X, design.y, filtered.coef))
    return LinearResults(design=design, method=method, spectrum=sp, filtered=filtered,
                         selection=selection, vcov_spec=vcov_spec or make_vcov_spec("classical"),
                         call=call or design.formula, standardize=standardize)


def _select(sp: Any, method: str, tuning: float | str | None) -> Selection | None:
    if method == "ols":
        return None
    if isinstance(tuning, str):
        return select_lambda(sp, tuning) if method == "ridge" else select_k(sp, tuning)
    if method == "pcr" and int(tuning) > sp.rank:  # type: ignore[arg-type]
        raise OptionError(f"k must be between 1 and the rank of the predictors ({sp.rank}), "
                          f"however: k={tuning}")
    return Selection("fixed", float(tuning), np.zeros(0), np.zeros(0))  # type: ignore[arg-type]


def check_tuning(method: str, lam: Any, k: Any) -> float | str | None:
    """Validate ``lam`` / ``k`` for a spectral method; the criterion or number to use."""
    if method != "ridge" and lam is not None:
        raise OptionError(f"lam applies to method 'ridge' only, however: {method=}, {lam=}")
    if method != "pcr" and k is not None:
        raise OptionError(f"k applies to method 'pcr' only, however: {method=}, {k=}")
    if method == "ridge":
        lam = "gcv" if lam is None else lam
        if isinstance(lam, str):
            if lam not in CRITERIA:
                raise OptionError(f"lam must be a number >= 0 or one of {CRITERIA}, however: {lam=}")
            return lam
        if not isinstance(lam, numbers.Real) or isinstance(lam, bool) \
                or not 0.0 <= float(lam) < float("inf"):
            raise OptionError(f"lam must be a finite number >= 0 or one of {CRITERIA}, "
                              f"however: {lam=}")
        return float(lam)
    if method == "pcr":
        k = "gcv" if k is None else k
        if isinstance(k, str):
            if k not in CRITERIA:
                raise OptionError(f"k must be a positive integer or one of {CRITERIA}, however: {k=}")
            return k
        if not isinstance(k, numbers.Integral) or isinstance(k, bool) or k < 1:
            raise OptionError(f"k must be a positive integer or one of {CRITERIA}, however: {k=}")
        return int(k)
    return None
