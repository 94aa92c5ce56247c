"""The formula-free operations of attnreg's built-in estimator families, and their
registration in the method registry (:mod:`attnreg.methods`): for each family, its option
check, its fit of a built design and its prediction from a design matrix. The package imports
this module first, so the built-in methods are registered (in this order) before any other.
The families' own modules are imported only when a method is used, so ``import attnreg``
stays light (no torch).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.formula.design import Design
from attnreg.linear.rules import RULES
from attnreg.methods import SPECTRAL_KEYWORDS, Capabilities, Estimator, register

__all__ = ["check_glm", "check_iv", "check_network", "check_quantreg", "check_softmax",
           "check_spectral", "drop_intercept", "fit_glm", "fit_glm_chunks",
           "fit_glm_fixed_effects", "fit_iv", "fit_network", "fit_quantreg", "fit_softmax",
           "fit_spectral", "predict_glm", "predict_iv", "predict_network", "predict_quantreg",
           "predict_softmax", "predict_spectral"]



def check_spectral(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options of method ``name`` of the spectral family, checked once before any work."""
    from attnreg.linear.registration import check_spectral_options

    return check_spectral_options(name, options)


def fit_spectral(name: str, design: Design, options: dict[str, Any], call: str) -> Any:
    """Fit method ``name`` of the spectral family on a built design."""
    from attnreg.linear.registration import fit_spectral_options

    return fit_spectral_options(name, design, options, call)


def predict_spectral(result: Any, X: FloatArray) -> FloatArray:
    """Predictions of a spectral fit from a design matrix ``X`` (n_rows, n_coef), shape (n_rows,)."""
    return X @ np.nan_to_num(result.filtered.coef)


def check_softmax(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options of method ``name`` of the softmax family, checked once before any work."""
    from attnreg.softmax.results import check_softmax_options

    given = [k for k in SPECTRAL_KEYWORDS if k != "lam" and k in options]
    if given:
        raise OptionError(f"option(s) {', '.join(given)} do not apply to method {name!r}")
    check_softmax_options(options)
    return options


def fit_softmax(name: str, design: Design, options: dict[str, Any], call: str) -> Any:
    """Fit method ``name`` of the softmax family on a built design."""
    from attnreg.softmax.fit import fit_softmax
    from attnreg.softmax.results import SoftmaxResults

    fit = fit_softmax(design.predictor_matrix(name), design.y, **options)
    kept = {k: v for k, v in options.items() if k not in ("warm_start", "progress")}  # for refits
    return SoftmaxResults(design=design, fit=fit, call=call, options=kept)


def drop_intercept(result: Any, X: FloatArray) -> FloatArray:
    """``X`` without its intercept column when the fit has one (the torch models take none)."""
    return X[:, 1:] if result.design.intercept else X


def predict_softmax(result: Any, X: FloatArray) -> FloatArray:
    """Predictions of a softmax fit from a design matrix ``X`` (n_rows, n_coef), shape (n_rows,)."""
    return result.fit.predict(np.ascontiguousarray(drop_intercept(result, X)))


def check_network(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options of method ``name`` of the network family, checked once before any work."""
    from attnreg.nn.results import resolve_network_options

    if any(k in options for k in SPECTRAL_KEYWORDS):
        raise OptionError(f"lam, k, standardize, vcov and maxlags do not apply to method {name!r}")
    variant = options.get("variant")
    config, fit_options = resolve_network_options(name, options)
    return {"config": config, "fit_options": fit_options, "variant": variant}


def fit_network(name: str, design: Design, options: dict[str, Any], call: str) -> Any:
    """Fit method ``name`` of the network family on a built design."""
    from attnreg.nn.results import NetworkResults
    from attnreg.nn.fit import fit_network

    fit = fit_network(design.predictor_matrix(name), design.y, config=options["config"],
                      **options["fit_options"])
    return NetworkResults(design=design, fit=fit, call=call, method=name,
                          variant=options["variant"])


def predict_network(result: Any, X: FloatArray) -> FloatArray:
    """Predictions of a network fit from a design matrix ``X`` (n_rows, n_coef), shape (n_rows,)."""
    return result.fit.predict(np.ascontiguousarray(drop_intercept(result, X)))


def check_glm(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options of method ``name`` of the glm family, checked once before any work."""
    from attnreg.glm.registration import check_glm_options

    return check_glm_options(name, options)


def fit_glm(name: str, design: Design, options: dict[str, Any], call: str) -> Any:
    """Fit method ``name`` of the glm family on a built design."""
    from attnreg.glm.registration import fit_glm_design

    return fit_glm_design(name, design, options, call)


def predict_glm(result: Any, X: FloatArray) -> FloatArray:
    """Predictions of a glm fit from a design matrix ``X`` (n_rows, n_coef), shape (n_rows,)."""
    return result.predict_matrix(X)


def fit_glm_fixed_effects(request: Any, parts: Any, call: str) -> Any:
    """Fit a GLM with absorbed fixed effects (the front door's fixed-effects path)."""
    from attnreg.glm.fe_fit import fit_fe_glm

    return fit_fe_glm(request, parts, call)


def fit_glm_chunks(request: Any, chunk: dict[str, Any], call: str) -> Any:
    """Fit a GLM chunk by chunk (the front door's chunked path)."""
    from attnreg.glm.chunked_results import fit_glm_chunks

    return fit_glm_chunks(request, chunk, call)


def check_quantreg(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options of method ``name`` of the quantreg family, checked once before any work."""
    from attnreg.quantreg.options import check_quantreg_options

    return check_quantreg_options(name, options)


def fit_quantreg(name: str, design: Design, options: dict[str, Any], call: str) -> Any:
    """Fit method ``name`` of the quantreg family on a built design."""
    from attnreg.quantreg.results import fit_quantreg_design

    return fit_quantreg_design(design, options, call)


def predict_quantreg(result: Any, X: FloatArray) -> FloatArray:
    """Predictions of a quantreg fit from a design matrix ``X`` (n_rows, n_coef), shape (n_rows,)."""
    from attnreg.quantreg.results import predict_quantreg

    return predict_quantreg(result, X)


def check_iv(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options of method ``name`` of the iv family, checked once before any work."""
    from attnreg.iv.options import check_iv_options

    return check_iv_options(name, options)


def fit_iv(name: str, design: Design, options: dict[str, Any], call: str) -> Any:
    """Fit method ``name`` of the iv family on a built design."""
    from attnreg.exceptions import FormulaError

    raise FormulaError(f"method {name!r} needs a formula with an instrumental-variable part, "
                       f"'y ~ x | d ~ z' (endogenous ~ instruments), however: {design.formula!r}")


def predict_iv(result: Any, X: FloatArray) -> FloatArray:
    """Predictions of a iv fit from a design matrix ``X`` (n_rows, n_coef), shape (n_rows,)."""
    return X @ result.fit.coef


# ------------------------------------------------------------------------------ spectral

for _rule in RULES.values():  # the spectral family: one entry per method in linear/rules.py
    register(Estimator(_rule.name, "spectral", _rule.title,
                       Capabilities(weights=True, wide=_rule.penalized, vcov=True, rolling=True,
                                    updating=_rule.updating, linear=True, attention=True),
                       check_spectral, fit_spectral, predict_spectral, tuning=_rule.tuning,
                       call_options=() if _rule.tuning is None else (_rule.tuning,), rule=_rule))


# ------------------------------------------------------------------------------ softmax

register(Estimator("softmax", "softmax", "softmax attention regression (L-BFGS)",
                   Capabilities(torch=True, attention=True, intercept_free=True),
                   check_softmax, fit_softmax, predict_softmax,
                   warm=lambda result: {"warm_start": result.fit}))


# ------------------------------------------------------------------------------ networks

register(Estimator("block", "network", "the paper's Regression Block (torch)",
                   Capabilities(torch=True), check_network, fit_network, predict_network,
                   call_options=("variant",)))
register(Estimator("ftt", "network", "FT-Transformer baseline (torch)",
                   Capabilities(torch=True), check_network, fit_network, predict_network,
                   call_options=("variant",)))


# ------------------------------------------------------------------------------ glm

_GLM = Capabilities(weights=True, binomial_counts=True)  # attnreg/glm: R's glm(), and three shortcuts
register(Estimator("glm", "glm", "generalised linear model (IRLS, R's glm)", _GLM, check_glm,
                   fit_glm, predict_glm, call_options=("family", "link", "offset"),
                   fit_chunks=fit_glm_chunks, fit_fixed_effects=fit_glm_fixed_effects))
register(Estimator("logit", "glm", "logistic regression (binomial, logit link)", _GLM,
                   check_glm, fit_glm, predict_glm, call_options=("offset",),
                   fit_chunks=fit_glm_chunks, fit_fixed_effects=fit_glm_fixed_effects))
register(Estimator("probit", "glm", "probit regression (binomial, probit link)", _GLM,
                   check_glm, fit_glm, predict_glm, call_options=("offset",),
                   fit_chunks=fit_glm_chunks, fit_fixed_effects=fit_glm_fixed_effects))
register(Estimator("poisson", "glm", "Poisson regression (log link by default)", _GLM,
                   check_glm, fit_glm, predict_glm, call_options=("link", "offset"),
                   fit_chunks=fit_glm_chunks, fit_fixed_effects=fit_glm_fixed_effects))


# ------------------------------------------------------------------------------ quantile regression

register(Estimator("quantreg", "quantreg", "linear quantile regression (Frisch-Newton, exact vertex)",
                   Capabilities(weights=True, quantiles=True), check_quantreg, fit_quantreg,
                   predict_quantreg, call_options=("tau", "se"),
                   warm=lambda result: {"warm_start": np.column_stack([f.coef for f in result.fits])}))



# ------------------------------------------------------------------------------ instrumental variables

# attnreg/iv: fitted from formulas with an IV part only ("y ~ x | d ~ z"; attnreg.iv.formula)
_IV = Capabilities(weights=True, vcov=True)
register(Estimator("tsls", "iv", "two-stage least squares (IV formula)", _IV, check_iv, fit_iv,
                   predict_iv))
register(Estimator("2sls", "iv", "two-stage least squares (IV formula; as 'tsls')", _IV,
                   check_iv, fit_iv, predict_iv))
register(Estimator("liml", "iv", "limited-information maximum likelihood (IV formula)", _IV,
                   check_iv, fit_iv, predict_iv))
register(Estimator("fuller", "iv", "Fuller's modified LIML (IV formula)", _IV, check_iv,
                   fit_iv, predict_iv, call_options=("alpha",)))
register(Estimator("gmm", "iv", "two-step efficient GMM (IV formula)", _IV, check_iv, fit_iv,
                   predict_iv))
register(Estimator("cue", "iv", "continuously updated GMM (IV formula)", _IV, check_iv, fit_iv,
                   predict_iv))
