"""``attnreg()``: the front door. Check the options, build the design once, fit the method.

Every method goes the same way: :func:`attnreg.methods.get_method` looks the estimator up,
its ``check_options`` validates everything before any work, :func:`attnreg.formula.design.build_design`
builds the model frame, and the estimator's ``fit_design`` fits it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import patsy

from attnreg.formula.design import NaAction, build_design
from attnreg.formula.kept import option_columns
from attnreg.formula.parts import split_formula
from attnreg.formula.subset import resolve_subset
from attnreg.exceptions import FormulaError, OptionError
from attnreg.methods import METHODS as REGISTRY
from attnreg.methods import call_string, get_method, method_names
from attnreg.threads import user_threads
from attnreg.linear.spectral import ALIAS_TOL
from attnreg.linear.fit import fit_spectral_design

__all__ = ["METHODS", "SPECTRAL_METHODS", "attnreg", "fit_network_formula", "fit_softmax_formula",
           "fit_spectral_design", "formula_namespace", "front_door_options"]

SPECTRAL_METHODS = method_names("spectral")
METHODS = tuple(REGISTRY)


def formula_namespace() -> dict[str, Callable[..., Any]]:
    """Helper functions available inside every formula.

    Time-series lags and differences, NaN-aware ``center`` / ``standardize`` / ``scale``
    (:mod:`attnreg.formula.transforms`) in place of patsy's, R's ``poly``
    (:mod:`attnreg.formula.poly`) and fixest's event-study indicators ``i``
    (:mod:`attnreg.formula.indicators`), and R's ``cbind(successes, failures)`` for a
    binomial response of counts (:mod:`attnreg.formula.counts`).
    """
    from attnreg.formula.counts import cbind
    from attnreg.formula.indicators import i
    from attnreg.formula.poly import poly
    from attnreg.formula.transforms import center, scale, standardize

    names: dict[str, Callable[..., Any]] = {"center": center, "standardize": standardize,
                                            "scale": scale, "poly": poly, "i": i,
                                            "cbind": cbind}
    try:
        from attnreg.formula.lags import diff, lag, lags
    except ImportError:  # pragma: no cover - the time-series layer is optional at import time
        return names
    return {**names, "lag": lag, "lags": lags, "diff": diff}


def front_door_options(lam: Any = None, k: Any = None, standardize: Any = None,
                       vcov: str = "classical", maxlags: Any = None, tol: Any = ALIAS_TOL,
                       **options: Any) -> dict[str, Any]:
    """The options a caller gave: front-door keywords left at their defaults are not given."""
    given = {"lam": lam, "k": k, "standardize": standardize, "maxlags": maxlags}
    out = {name: value for name, value in given.items() if value is not None}
    if vcov != "classical":
        out["vcov"] = vcov
    if tol is not ALIAS_TOL and tol != ALIAS_TOL:
        out["tol"] = tol
    return {**out, **options}


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
        Names not in ``data`` are looked up in the caller's scope. ``"y ~ x | firm + year"``
        absorbs fixed effects (OLS; options ``ssc=``, ``fixef_rm=``, ``fixef_iter=``; see
        :func:`attnreg.fe.formula.fit_fe_formula`).
    data : DataFrame or dict of columns
        Never modified. Row labels carry through to fitted values, residuals and weights.
    method : {"ols", "ridge", "pcr", "softmax", "block", "ftt"}
        OLS, ridge and PCR are spectral filters of one decomposition; ``"softmax"`` is softmax
        attention regression fitted by L-BFGS; ``"block"`` is the paper's Regression Block and
        ``"ftt"`` its FT-Transformer baseline (torch networks, :mod:`attnreg.nn`).
        Ridge and PCR also accept wide designs (no more rows than coefficients: the thin SVD
        of the n_obs × n_obs side); OLS needs more rows than coefficients.
        A formula with an instrumental-variable part (``"y ~ x | d ~ z"``, with fixed effects
        ``"y ~ x | firm + year | d ~ z"``) is fitted by ``"tsls"`` (its default), ``"liml"``,
        ``"fuller"`` (``alpha=``), ``"gmm"`` or ``"cue"`` (:mod:`attnreg.iv.formula`).
    weights : str or array-like, optional
        Prior weights (weighted least squares): a column name or a vector.
    subset : str or boolean array-like, optional
        Rows to use: a mask or an expression such as ``"year > 1950"`` or
        ``"np.abs(x1) < 1"`` (pandas' ``DataFrame.eval``, else Python with the data's
        columns, the caller's names and numpy as ``np``, as in formulas).
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
    vcov : {"classical", "HC0", "HC1", "HC2", "HC3", "HC4", "HC4m", "HC5", "HAC", "cluster", "DK"}
        Covariance estimator (change it later with ``fit.with_vcov(...)``). Its options are
        keywords too: ``vcov="cluster", cluster="firm"`` (or ``"firm + year"``, a list, an
        array of ids), ``type="HC1"|"HC0"|"CR2"``, ``cadjust=``,
        ``df="cluster"|"residual"|"satterthwaite"``, ``fix=``; ``vcov="DK", time="year"``;
        ``vcov="HAC", kernel="qs", prewhite=1``; ``df=np.inf`` (z and χ² tests); see
        ``LinearResults.with_vcov``. Checked before
        any work; cluster columns are looked up in ``data`` before the fit.
    maxlags : int, optional
        HAC (and Driscoll–Kraay) truncation lag.
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
    _check_argument_order(formula, data)
    estimator = get_method(method)
    env = capture_env(eval_env)
    given = front_door_options(lam, k, standardize, vcov, maxlags, tol, **options)
    from attnreg.large import FitRequest, chunked_backend, to_memory

    parts = split_formula(formula) if isinstance(formula, str) else None
    if parts is not None and parts.is_multipart:  # fixest's "y ~ x | fe | d ~ z"
        request = FitRequest(formula, data, method, weights, subset, na_action, env, given)
        if parts.endogenous is not None:
            from attnreg.iv.formula import fit_iv_formula  # scipy's optimisers: only when used

            return fit_iv_formula(request, parts, formula_namespace())
        from attnreg.fe.formula import fit_fe_formula

        return fit_fe_formula(request, parts)

    backend = chunked_backend(data, given)  # larger than memory: files, arrow, polars, dask
    if backend is not None:
        return backend.fit(FitRequest(formula, data, method, weights, subset, na_action, env,
                                      given))
    data = to_memory(data)  # small arrow / polars inputs: pandas, then as before
    checked = estimator.check_options(given)  # every option, before any work
    if weights is not None and not estimator.capabilities.weights:
        raise OptionError(f"weights are not supported by method {method!r}")
    names = formula_namespace()
    keep = option_columns({**given, "subset": subset})  # columns named now are kept by the fit
    subset = resolve_subset(subset, data, env, names)  # "np.abs(x) < 1" sees what formulas see
    design = build_design(formula, data, weights=weights, subset=subset, na_action=na_action,
                          eval_env=env, extra_names=names, keep_columns=keep,
                          counts=estimator.capabilities.binomial_counts)
    call = call_string(design.formula, method, given, weighted=weights is not None)
    with user_threads(estimator.capabilities.torch):
        return estimator.fit_design(design, checked, call)


def fit_softmax_formula(formula: str, data: Any, *, weights: Any = None, subset: Any = None,
                        na_action: NaAction = "drop", eval_env: Any = None,
                        **options: Any) -> Any:
    """``attnreg(formula, data, method="softmax", **options)``; see :func:`attnreg.softmax.fit_softmax`."""
    env = eval_env if eval_env is not None else patsy.EvalEnvironment.capture(1)
    return attnreg(formula, data, "softmax", weights=weights, subset=subset,
                   na_action=na_action, eval_env=env, **options)


def fit_network_formula(formula: str, data: Any, *, method: str = "block", weights: Any = None,
                        subset: Any = None, na_action: NaAction = "drop", eval_env: Any = None,
                        **options: Any) -> Any:
    """``attnreg(formula, data, method="block" | "ftt", **options)``: a neural regression.

    Parameters
    ----------
    formula : str
        R-style formula; the intercept column, if any, is dropped (the networks have biases).
    data : DataFrame or dict of columns
    method : {"block", "ftt"}
        The paper's Regression Block or its FT-Transformer baseline.
    weights : None
        Not supported (an error if given).
    subset, na_action, eval_env
        As for :func:`attnreg.attnreg`; ``eval_env`` defaults to the caller's scope.
    **options
        ``variant`` (a key of :data:`attnreg.nn.config.VARIANTS`: "RB", "A0"–"A7",
        "trimmed") or ``config`` (a ``BlockConfig``/``FTTConfig``); any configuration field
        (``d_model``, ``pca_components``, ``n_mixers``, ``ffn``, …) to override it; and the
        fitting options of :func:`attnreg.nn.fit.fit_network` (``seed``, ``device``,
        ``dtype``, ``val_fraction``, ``progress``, ``lr``, ``max_epochs``, ``patience``, …).

    Returns
    -------
    NetworkResults

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    >>> df["y"] = df.a * df.b + 0.1 * rng.normal(size=200)
    >>> fit = fit_network_formula("y ~ a + b", df, variant="trimmed", pca_components=10, max_epochs=5)
    >>> fit.predict(df.head(3)).shape, fit.n_params > 0
    ((3,), True)
    """
    networks = method_names("network")  # the network family's methods, from the registry
    if method not in networks:
        raise OptionError(f"method must be {' or '.join(map(repr, networks))}, however: {method=}")
    env = eval_env if eval_env is not None else patsy.EvalEnvironment.capture(1)
    return attnreg(formula, data, method, weights=weights, subset=subset,
                   na_action=na_action, eval_env=env, **options)


def _check_argument_order(formula: Any, data: Any) -> None:
    """FormulaError when the data came first and the formula second."""
    if isinstance(data, str) and "~" in data and not isinstance(formula, str):
        raise FormulaError(
            f"the arguments are swapped: the formula comes first, then the data, however "
            f"the formula {data!r} came second (and data of type {type(formula).__name__} "
            f"first); write attnreg({data!r}, data)")


def capture_env(eval_env: Any) -> Any:
    """The patsy environment of the caller ``eval_env`` frames up (or the one given)."""
    if isinstance(eval_env, patsy.EvalEnvironment):
        return eval_env
    if not isinstance(eval_env, int) or eval_env < 0:
        raise OptionError(f"eval_env must be a non-negative int or a patsy.EvalEnvironment, "
                          f"however: {eval_env=}")
    return patsy.EvalEnvironment.capture(eval_env + 2)
