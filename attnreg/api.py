"""``attnreg()``: validate the arguments, build the design, dispatch on the method, return a result."""

from __future__ import annotations

import dataclasses
import numbers
import warnings
from collections.abc import Callable
from typing import Any, Literal, cast

import patsy

from attnreg.design import Design, NaAction, build_design
from attnreg.exceptions import DataError, OptionError, RankDeficiencyWarning
from attnreg.inference import make_vcov_spec
from attnreg.results import LinearResults
from attnreg.selection import CRITERIA, Selection, select_k, select_lambda
from attnreg.refinement import REFINE_COND, REFINE_MAX_SIZE, refine_ols
from attnreg.spectral import (
    ALIAS_TOL,
    Scaling,
    apply_filter,
    decompose,
    ols_filter,
    pcr_filter,
    ridge_filter,
)

SPECTRAL_METHODS = ("ols", "ridge", "pcr")
METHODS = (*SPECTRAL_METHODS, "softmax", "block", "ftt")


def formula_namespace() -> dict[str, Callable[..., Any]]:
    """Helper functions available inside every formula.

    Time-series lags and differences, and NaN-aware ``center`` / ``standardize`` / ``scale``
    (:mod:`attnreg.formula_transforms`) in place of patsy's.
    """
    from attnreg.formula_transforms import center, scale, standardize

    names: dict[str, Callable[..., Any]] = {"center": center, "standardize": standardize,
                                            "scale": scale}
    try:
        from attnreg.timeseries.transforms import diff, lag, lags
    except ImportError:  # pragma: no cover - the time-series layer is optional at import time
        return names
    return {**names, "lag": lag, "lags": lags, "diff": diff}


def attnreg(formula: str, data: Any, method: str = "ols", *, weights: Any = None,
            subset: Any = None, na_action: NaAction = "drop", lam: float | str | None = None,
            k: int | str | None = None, standardize: bool | None = None,
            vcov: str = "classical", maxlags: int | None = None, tol: float = ALIAS_TOL,
            eval_env: Any = 0, **options: Any) -> Any:
    """Fit a regression from an R-style formula.

    Parameters
    ----------
    formula : str
        ``"y ~ x1 + C(group) + np.log(x2)"``; ``y ~ .`` uses every other column (R's dot).
        Names not in ``data`` are looked up in the caller's scope.
    data : DataFrame or dict of columns
        Never modified. Row labels carry through to fitted values, residuals and weights.
    method : {"ols", "ridge", "pcr", "softmax", "block", "ftt"}
        OLS, ridge and PCR are spectral filters of one decomposition; ``"softmax"`` is softmax
        attention regression fitted by L-BFGS; ``"block"`` is the paper's Regression Block and
        ``"ftt"`` its FT-Transformer baseline (torch networks, :mod:`attnreg.nn`).
        Ridge and PCR also accept wide designs (no more rows than coefficients: the thin SVD
        of the n_obs × n_obs side); OLS needs more rows than coefficients.
    weights : str or array-like, optional
        Prior weights (weighted least squares): a column name or a vector.
    subset : str or boolean array-like, optional
        Rows to use: a mask or an expression such as ``"year > 1950"``.
    na_action : {"drop", "raise"}
        Drop rows with missing values (the result reports which) or raise.
    lam : float or {"gcv", "loo"}, optional
        Ridge penalty on the standardised scale; chosen by generalised cross-validation by
        default, or by closed-form leave-one-out.
    k : int or {"gcv", "loo"}, optional
        PCR components; chosen by GCV by default.
    standardize : bool, optional
        Scale predictors to unit variance before ridge/PCR (default True); coefficients are
        always reported on the original scale. The intercept is never penalised.
    vcov : {"classical", "HC0", "HC1", "HC2", "HC3", "HAC"}
        Covariance estimator (change it later with ``fit.with_vcov(...)``).
    maxlags : int, optional
        HAC truncation lag.
    tol : float
        A column whose part not explained by earlier columns is below ``tol`` (relative) is
        aliased: its coefficient is NaN, as in R.
    eval_env : int or patsy.EvalEnvironment
        Frames above the caller to look up names in (0: the caller's own scope).
    **options
        Method-specific options (``method="softmax"``: ``heads``, ``seed``, ``device``, ...).

    Returns
    -------
    LinearResults or SoftmaxResults

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
    >>> round(fit.r_squared, 4)
    0.9955
    >>> w = fit.attention()
    >>> bool(abs(w.weights.sum(axis=1) - 1).max() < 1e-10)
    True
    """
    if method not in METHODS:
        raise OptionError(f"method must be one of {', '.join(map(repr, METHODS))}, "
                          f"however: {method=}")
    env = _capture_env(eval_env)
    if method in ("block", "ftt"):
        if any(v is not None for v in (lam, k, standardize, maxlags)) or vcov != "classical":
            raise OptionError(f"lam, k, standardize, vcov and maxlags do not apply to method "
                              f"{method!r}")
        from attnreg.nn import fit_network_formula

        return fit_network_formula(formula, data, method=cast(Literal["block", "ftt"], method),
                                   weights=weights, subset=subset,
                                   na_action=na_action, eval_env=env, **options)
    if method == "softmax":
        from attnreg.softmax_results import fit_softmax_formula

        spectral_only = {"k": k, "standardize": standardize, "maxlags": maxlags}
        given = [name for name, v in spectral_only.items() if v is not None]
        if given or vcov != "classical":
            raise OptionError(f"option(s) {', '.join(given or ['vcov'])} do not apply to "
                              "method 'softmax'")
        if lam is not None:
            options["lam"] = lam
        return fit_softmax_formula(formula, data, weights=weights, subset=subset,
                                   na_action=na_action, eval_env=env, **options)
    if options:
        raise OptionError(f"unknown option(s) for method {method!r}: {', '.join(sorted(options))}")
    tuning = _check_tuning(method, lam, k)
    if standardize is not None and not isinstance(standardize, bool):
        raise OptionError(f"standardize must be True or False, however: {standardize=}")
    if not isinstance(tol, numbers.Real) or not 0 <= tol < 1:
        raise OptionError(f"tol must be in [0, 1), however: {tol=}")
    make_vcov_spec(vcov, maxlags=maxlags)  # validate before any work
    design = build_design(formula, data, weights=weights, subset=subset, na_action=na_action,
                          eval_env=env, extra_names=formula_namespace())
    spec = make_vcov_spec(vcov, maxlags=maxlags, n_obs=design.n_obs)
    std = method != "ols" if standardize is None else standardize
    call = _call_string(design.formula, method, lam, k, weights is not None)
    return fit_spectral_design(design, method, tuning, standardize=std, tol=tol, call=call,
                               vcov_spec=spec)


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
    import numpy as np

    if method == "ols":
        return None
    if isinstance(tuning, str):
        return select_lambda(sp, tuning) if method == "ridge" else select_k(sp, tuning)
    if method == "pcr" and int(tuning) > sp.rank:  # type: ignore[arg-type]
        raise OptionError(f"k must be between 1 and the rank of the predictors ({sp.rank}), "
                          f"however: k={tuning}")
    return Selection("fixed", float(tuning), np.zeros(0), np.zeros(0))  # type: ignore[arg-type]


def _check_tuning(method: str, lam: Any, k: Any) -> float | str | None:
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


def _capture_env(eval_env: Any) -> Any:
    if isinstance(eval_env, patsy.EvalEnvironment):
        return eval_env
    if not isinstance(eval_env, int) or eval_env < 0:
        raise OptionError(f"eval_env must be a non-negative int or a patsy.EvalEnvironment, "
                          f"however: {eval_env=}")
    return patsy.EvalEnvironment.capture(eval_env + 2)


def _call_string(formula: str, method: str, lam: Any, k: Any, weighted: bool) -> str:
    parts = [f"formula = {formula.strip()}", "data = data"]
    if method != "ols":
        parts.append(f"method = {method!r}")
    if lam is not None:
        parts.append(f"lam = {lam!r}")
    if k is not None:
        parts.append(f"k = {k!r}")
    if weighted:
        parts.append("weights = weights")
    return "attnreg(" + ", ".join(parts) + ")"
