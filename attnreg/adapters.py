"""The formula-free operations of attnreg's built-in estimator families, which the method
registry (:mod:`attnreg.methods`) registers: for each family, its option check, its fit of a
built design and its prediction from a design matrix. The families' own modules are imported
only when a method is used, so ``import attnreg`` stays light (no torch).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.formula.design import Design

__all__ = ["SPECTRAL_KEYWORDS", "check_glm", "check_iv", "check_network", "check_quantreg", "check_softmax",
           "check_spectral", "drop_intercept", "fit_glm", "fit_glm_chunks",
           "fit_glm_fixed_effects", "fit_iv", "fit_network", "fit_quantreg", "fit_softmax",
           "fit_spectral", "predict_glm", "predict_iv", "predict_network", "predict_quantreg",
           "predict_softmax", "predict_spectral"]

#: The front door's keywords for the spectral family (``attnreg(..., lam=, k=, ...)``).
SPECTRAL_KEYWORDS = ("lam", "k", "standardize", "vcov", "maxlags", "tol")


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
