"""``attnreg("y ~ x | firm + year", data)``: the fixed-effects part of a formula, fitted.

The model part is built as any formula (missing values, ``subset=``, ``weights=``); rows
with a missing fixed effect are left out and counted; with ``fixef_rm="singleton"`` the
singletons (a level with one row) are removed, repeatedly, as fixest. y and X (its intercept
dropped: the fixed effects absorb it) are residualised on the fixed effects
(:func:`attnreg.fe.absorb.absorb`), OLS is fitted on them, and
:class:`~attnreg.fe.results.FixedEffectsResults` puts back what the demeaning does not carry.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg._warn import warn_user
from attnreg.exceptions import ConvergenceWarning, DataError, OptionError
from attnreg.fe.absorb import FrameEffects, absorb
from attnreg.fe.effects import redundant_levels
from attnreg.fe.frame import absorbed_design
from attnreg.fe.results import AbsorbedEffects, FixedEffectsResults
from attnreg.fe.ssc import check_ssc
from attnreg.formula.design import Design
from attnreg.linear.fit import fit_spectral_design
from attnreg.inference.vcov.registry import make_vcov_spec
from attnreg.methods import call_string, get_method

if TYPE_CHECKING:
    from attnreg.formula.parts import FormulaParts
    from attnreg.large import FitRequest

__all__ = ["FIXEF_RM", "fit_fe_formula"]

#: choices of ``fixef_rm=`` (fixest's name): keep singletons, or remove them repeatedly
FIXEF_RM = ("none", "singleton")


def _split_options(options: dict[str, Any]) -> tuple[str, str, int, dict[str, Any]]:
    rest = dict(options)
    ssc = check_ssc(rest.pop("ssc", "fixest"))
    rm = rest.pop("fixef_rm", "none")
    if rm not in FIXEF_RM:
        raise OptionError(f"fixef_rm must be one of {', '.join(map(repr, FIXEF_RM))}, however: "
                          f"fixef_rm={rm!r}")
    cap = rest.pop("fixef_iter", 100_000)
    if not isinstance(cap, (int, np.integer)) or isinstance(cap, bool) or cap < 1:
        raise OptionError(f"fixef_iter must be a positive integer, however: fixef_iter={cap!r}")
    return ssc, rm, int(cap), rest


def fit_fe_formula(request: FitRequest, parts: FormulaParts) -> Any:
    """Fit ``request`` with the fixed effects of ``parts`` absorbed (module docstring).

    Options besides the OLS ones: ``ssc="fixest"`` (default) or ``"dummy"``
    (:mod:`attnreg.fe.ssc`), ``fixef_rm="none"`` (default) or ``"singleton"``, and
    ``fixef_iter`` (a cap on the demeaning's iterations, 100,000 by default; reaching it
    before the data's accuracy warns and the summary says so). A method that absorbs fixed
    effects its own way (``Estimator.fit_fixed_effects``: the GLMs) fits them itself. Data
    larger than memory (files, arrow, polars, ``chunk_rows=``, dask) is fitted chunk by
    chunk by least squares (:func:`attnreg.fe.chunked.fit_fe_chunked`).
    """
    from attnreg.large import chunked_backend, to_memory

    backend = chunked_backend(request.data, dict(request.options))
    if backend is not None:  # beyond memory: files, arrow, polars, dask
        return _fit_chunked(request, parts, backend.name)
    data = to_memory(request.data)
    request = dataclasses.replace(request, data=data if isinstance(data, pd.DataFrame)
                                  else pd.DataFrame(data))
    estimator = get_method(request.method)
    if estimator.fit_fixed_effects is not None:
        call = call_string(request.formula, request.method, request.options,
                           weighted=request.weights is not None)
        return estimator.fit_fixed_effects(request, parts, call)
    rule = estimator.rule
    if rule is None or not rule.least_squares:  # the projection off the dummies is exact OLS
        raise OptionError(f"fixed effects in a formula are fitted by least squares, method "
                          f"'ols', however: method={request.method!r} is not unpenalised least "
                          "squares; drop the '| ...' part for other methods")
    ssc, rm, cap, options = _split_options(request.options)
    checked = get_method("ols").check_options(options)
    design, got, n_single, n_missing = absorbed_design(
        dataclasses.replace(request, options=options), parts, rm)
    call = call_string(request.formula, "ols", request.options,
                       weighted=request.weights is not None)
    return _fit(design, got, checked, (ssc, cap, request.formula), call, n_single, n_missing)


def _fit_chunked(request: FitRequest, parts: FormulaParts, backend: str) -> Any:
    """The chunked fit (:func:`attnreg.fe.chunked.fit_fe_chunked`), least squares only."""
    from attnreg.fe.chunked import fit_fe_chunked

    estimator = get_method(request.method)
    rule = estimator.rule
    if estimator.fit_fixed_effects is not None or rule is None or not rule.least_squares:
        raise OptionError(f"fixed effects of data read chunk by chunk are fitted by least "
                          f"squares, method 'ols', however: method={request.method!r}; load "
                          "the data as a pandas DataFrame for it")
    ssc, rm, cap, options = _split_options(request.options)
    call = call_string(request.formula, "ols", options, weighted=request.weights is not None)
    return fit_fe_chunked(request, parts, backend, ssc, rm, cap, options, call)


def _fit(design: Design, got: FrameEffects, checked: dict[str, Any],
         settings: tuple[str, int, str], call: str, n_single: int,
         n_missing: dict[str, int]) -> FixedEffectsResults:
    fe, (ssc, cap, formula) = got.fe, settings
    slopes = [j for j, n in enumerate(design.column_names) if n != "(Intercept)"]
    if not slopes:
        raise DataError(f"{design.formula!r} has no regressor besides the fixed effects: "
                        "add one (y ~ x | firm)")
    # the intercept is column 0 when present: the slopes are then a view, copied once by absorb
    X = design.X[:, slopes[0]:] if slopes == list(range(slopes[0], design.n_coef)) \
        else design.X[:, slopes]
    ab = absorb(design.y, X, fe, design.weights, max_iter=cap)
    inner = dataclasses.replace(design, y=ab.y, X=ab.X, intercept=False, zero_weight=None,
                                column_names=[design.column_names[j] for j in slopes],
                                formula=formula)
    spec = make_vcov_spec(checked["vcov"], maxlags=checked["maxlags"], n_obs=inner.n_obs,
                          design=inner, **checked.get("vcov_options", {}))
    lin = fit_spectral_design(inner, "ols", None, standardize=False, tol=checked["tol"],
                              call=call, vcov_spec=spec)
    dm = ab.demeaned
    if not dm.converged:
        warn_user(f"the demeaning on the fixed effects stopped at a relative accuracy of "
                  f"{float(dm.orthogonality.max()):.2g} (the data's floor is {dm.floor:.2g}) "
                  f"after {dm.iterations} iterations", ConvergenceWarning)
    w = np.ones(design.n_obs) if design.weights is None else design.weights
    ybar = float(np.sum(w * design.y) / np.sum(w))
    absorbed = AbsorbedEffects(
        fe=fe, terms=got.terms, n_redundant=redundant_levels(fe), n_missing=n_missing,
        n_singletons=n_single, effects=dm.effects, orthogonality=float(dm.orthogonality.max()),
        floor=dm.floor, converged=dm.converged, iterations=dm.iterations, y=design.y,
        tss=float(np.sum(w * (design.y - ybar) ** 2)), full_design=design)
    fields = {f.name: getattr(lin, f.name) for f in dataclasses.fields(lin)}
    return FixedEffectsResults(**fields, absorbed=absorbed, ssc=ssc)
