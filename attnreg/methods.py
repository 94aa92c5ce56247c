"""The method registry: every estimator attnreg fits, declared once.

R's ``lm()`` builds a model frame and hands it to the formula-free ``lm.fit``; attnreg's front
doors (:func:`attnreg.attnreg`, :func:`attnreg.forecast`, :func:`attnreg.rolling`, the
scikit-learn wrapper and the command line) build the design once and hand it to an
:class:`Estimator` looked up here. An estimator declares its options (validated once, before
any work), what it supports (:class:`Capabilities`) and three formula-free operations:
``fit_design``, ``predict_design`` and, for the forecasting loop, ``warm_start``. Adding a
method is one :func:`register` call; the built-in ones are registered by
:mod:`attnreg.adapters` (imported with the package), so that this registry imports none of
the families that use it.

The softmax and network estimators import torch only when they fit, so ``import attnreg``
stays light.

Examples
--------
>>> method_names()[:11]
('ols', 'ridge', 'pcr', 'softmax', 'block', 'ftt', 'glm', 'logit', 'probit', 'poisson', 'quantreg')
>>> method_names("iv")  # formulas with an IV part, 'y ~ x | d ~ z'
('tsls', '2sls', 'liml', 'fuller', 'gmm', 'cue')
>>> method_names("weights")[:8]
('ols', 'ridge', 'pcr', 'glm', 'logit', 'probit', 'poisson', 'quantreg')
>>> get_method("ridge").check_options({"lam": 0.5})["tuning"]
0.5
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.formula.design import Design
from attnreg.linear.rules import RULES, SpectralRule

__all__ = ["DEFAULT_METHOD", "METHODS", "SPECTRAL_KEYWORDS", "Capabilities", "Estimator", "call_string",
           "get_method", "method_names", "register"]

#: The front door's keywords for the spectral family (``attnreg(..., lam=, k=, ...)``).
SPECTRAL_KEYWORDS = ("lam", "k", "standardize", "vcov", "maxlags", "tol")

#: The method ``attnreg()`` fits when none is named (not shown in the call string).
DEFAULT_METHOD = next(iter(RULES))


@dataclass(frozen=True)
class Capabilities:
    """What an estimator supports.

    Attributes
    ----------
    weights : bool
        Prior weights (``weights=``, ``sample_weight``).
    wide : bool
        Designs with no more rows than coefficients.
    vcov : bool
        Covariance estimators (``vcov=``, ``with_vcov``) and the inference that uses them.
    rolling : bool
        :func:`attnreg.rolling`.
    updating : bool
        The forecasting engine's rank-one updating path (expanding and rolling windows).
    torch : bool
        Fitted with torch (the ``device``/``threads`` options apply).
    linear : bool
        A fit is a :class:`~attnreg.linear.results.LinearResults` (coefficients, per-row
        residuals and hat values, a spectrum of the design): the summary, every covariance,
        the tests, tidy/glance/augment, the bootstrap, influence and diagnostics, Gaussian
        predictive intervals, the coefficient path and iterated forecasts apply. What the
        fit can do beyond that its :class:`~attnreg.linear.rules.SpectralRule` says
        (``rule.least_squares``: exact hat values, anova, the pairs bootstrap).
    attention : bool
        A fit has attention weights over its training rows (``attention_of``).
    intercept_free : bool
        A fit's own methods (``attention_of``) take the predictor columns without the
        design's intercept column.
    binomial_counts : bool
        Takes a ``cbind(successes, failures)`` response (a binomial GLM; the family checks
        the rest).
    quantiles : bool
        One fit predicts the quantiles of several τ (:func:`attnreg.forecast` keeps them
        all: quantile forecasts, ``interval="quantile"``); its results have ``taus`` and
        ``coef`` (a DataFrame, n_coef × n_tau).
    """

    weights: bool = False
    wide: bool = False
    vcov: bool = False
    rolling: bool = False
    updating: bool = False
    torch: bool = False
    linear: bool = False
    attention: bool = False
    intercept_free: bool = False
    quantiles: bool = False
    binomial_counts: bool = False


Checker = Callable[[str, dict[str, Any]], dict[str, Any]]
Fitter = Callable[[str, Design, dict[str, Any], str], Any]
Predictor = Callable[[Any, FloatArray], FloatArray]


@dataclass(frozen=True)
class Estimator:
    """One registered method.

    Attributes
    ----------
    name : str
        The ``method=`` string.
    family : str
        A label grouping methods (``"spectral"``, ``"softmax"``, ``"network"``, ``"glm"``,
        ``"quantreg"``, ``"iv"``, or a third party's own; ``method_names(family)`` lists them). What a
        fit can do is decided by ``capabilities`` and ``rule``, never by the family.
    title : str
        One line for help texts.
    capabilities : Capabilities
    tuning : str or None
        The option chosen by a criterion inside every fit (``"lam"``, ``"k"``), if any.
    call_options : tuple of str
        Options shown in the R-style call string when given.
    fit_chunks : callable, optional
        ``fit_chunks(request, chunk, call)``: the method's own fit of data larger than memory
        (an :class:`attnreg.large.FitRequest` whose rows options are checked, the chunked
        path's options ``chunk_rows``/``progress``/``sep`` checked, and the call string), for a
        method that is not a spectral filter of the accumulated R factor (which the chunked
        backends fit themselves).
    fit_fixed_effects : callable, optional
        ``fit_fixed_effects(request, parts, call)``: the method's own fit of a formula with
        absorbed fixed effects (``y ~ x | firm``; ``parts`` a
        :class:`~attnreg.formula.parts.FormulaParts`, the data in memory, ``call`` the call
        string), for a method that is not unpenalised least squares (which
        :mod:`attnreg.fe.formula` fits itself).
    rule : SpectralRule or None
        The spectral declaration of a linear method (its filter, whether it is penalised and
        by which tuning parameter), for the paths that fit the rule themselves: the chunked
        and dask fits and the forecasting engine's updating path. None: the estimator's own
        ``fit`` is the only way to fit it.
    """

    name: str
    family: str
    title: str
    capabilities: Capabilities
    check: Checker = field(repr=False)
    fit: Fitter = field(repr=False)
    predict: Predictor = field(repr=False)
    warm: Callable[[Any], dict[str, Any]] | None = field(default=None, repr=False)
    tuning: str | None = None
    call_options: tuple[str, ...] = ()
    fit_chunks: Callable[[Any, dict[str, Any], str], Any] | None = field(default=None, repr=False)
    fit_fixed_effects: Callable[[Any, Any, str], Any] | None = field(default=None, repr=False)
    rule: SpectralRule | None = field(default=None, repr=False)

    def require_rule(self, what: str) -> SpectralRule:
        """The method's spectral rule; OptionError naming ``what`` when it declares none."""
        if self.rule is None:
            raise OptionError(f"{what} fits the method's spectral rule itself, however method "
                              f"{self.name!r} declares none (Estimator(rule=...)); use "
                              "attnreg() for it")
        return self.rule

    def check_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """Validate the options given (names and values) and return them resolved.

        Parameters
        ----------
        options : mapping
            The options the caller gave, front-door keywords included (``lam=...``); a
            keyword left at its default is not "given".

        Returns
        -------
        dict
            What :meth:`fit_design` takes.

        Raises
        ------
        OptionError
            Naming the option that does not apply or has an invalid value.
        """
        return self.check(self.name, dict(options))

    def fit_design(self, design: Design, options: dict[str, Any], call: str = "") -> Any:
        """Fit the method to a built design with options from :meth:`check_options`."""
        return self.fit(self.name, design, options, call)

    def predict_design(self, result: Any, X: FloatArray) -> FloatArray:
        """Predictions of a fit of this method for design rows ``X`` (intercept column included).

        Parameters
        ----------
        result : results object of :meth:`fit_design`
        X : ndarray, shape (n, n_coef)

        Returns
        -------
        ndarray, shape (n,)
        """
        return np.asarray(self.predict(result, X), dtype=np.float64).reshape(-1)

    def warm_start(self, result: Any) -> dict[str, Any]:
        """Options that start the next fit from ``result`` (the forecasting loop)."""
        return {} if self.warm is None else self.warm(result)


METHODS: dict[str, Estimator] = {}


def register(estimator: Estimator) -> Estimator:
    """Add a method to the registry (its name must be new)."""
    if estimator.name in METHODS:
        raise OptionError(f"method {estimator.name!r} is already registered")
    METHODS[estimator.name] = estimator
    return estimator


def method_names(capability: str | None = None) -> tuple[str, ...]:
    """Registered method names, optionally only those with a capability (a field of
    :class:`Capabilities`, ``"rule"`` for those declaring a spectral rule, or a family name)."""
    if capability is None:
        return tuple(METHODS)
    if capability == "rule":  # the methods the chunked fits and the updating path can fit
        return tuple(n for n, e in METHODS.items() if e.rule is not None)
    families = {e.family for e in METHODS.values()}
    if capability in families:
        return tuple(n for n, e in METHODS.items() if e.family == capability)
    if capability not in {f.name for f in fields(Capabilities)}:
        raise OptionError(f"unknown capability {capability!r}")
    return tuple(n for n, e in METHODS.items() if getattr(e.capabilities, capability))


def get_method(name: Any, among: tuple[str, ...] | None = None) -> Estimator:
    """The estimator registered as ``name``; OptionError listing the valid names otherwise.

    Parameters
    ----------
    name : str
    among : tuple of str, optional
        Restrict the valid names (e.g. ``method_names("rolling")``).
    """
    valid = method_names() if among is None else among
    if not isinstance(name, str) or name not in valid:
        raise OptionError(f"method must be one of {', '.join(map(repr, valid))}, "
                          f"however: method={name!r}")
    return METHODS[name]


def call_string(formula: str, method: str, options: Mapping[str, Any], *,
                weighted: bool = False) -> str:
    """The R-style call a result prints: ``attnreg(formula = y ~ x, data = data, ...)``.

    Examples
    --------
    >>> call_string("y ~ x", "ridge", {"lam": 0.5})
    "attnreg(formula = y ~ x, data = data, method = 'ridge', lam = 0.5)"
    """
    parts = [f"formula = {formula.strip()}", "data = data"]
    if method != DEFAULT_METHOD:
        parts.append(f"method = {method!r}")
    shown = METHODS[method].call_options if method in METHODS else ()
    parts += [f"{name} = {options[name]!r}" for name in shown if options.get(name) is not None]
    if weighted:
        parts.append("weights = weights")
    return "attnreg(" + ", ".join(parts) + ")"
