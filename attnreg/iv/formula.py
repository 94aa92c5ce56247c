"""``attnreg("y ~ x | d ~ z", data)``: the instrumental-variable part of a formula, fitted.

The front door hands a formula with an IV part (fixest's ``y ~ x | d ~ z`` or
``y ~ x | fe1 + fe2 | d ~ z``) here: the options are checked before any work, one model frame
is built for y, x, d and z (:mod:`attnreg.iv.frame`), the fixed effects if any are absorbed,
and the estimator named by ``method`` fits the arrays (:mod:`attnreg.iv.estimators`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg.exceptions import DataError, OptionError
from attnreg.formula.subset import resolve_subset
from attnreg.iv.chunked_fit import fit_iv_chunks
from attnreg.iv.cue import cue
from attnreg.iv.estimators import IVFit, gmm, kclass, liml, liml_kappa, tsls
from attnreg.iv.frame import IVFrame, build_iv_frame, name_collinear_column
from attnreg.iv.options import check_iv_options
from attnreg.iv.results import IVResults
from attnreg.iv.vcov_binding import bind_iv_vcov, one_way_ids
from attnreg.large import chunked_backend, to_memory
from attnreg.methods import DEFAULT_METHOD, call_string

if TYPE_CHECKING:
    from attnreg.formula.parts import FormulaParts
    from attnreg.large import FitRequest

__all__ = ["fit_iv_arrays", "fit_iv_formula"]

#: GMM's weight matrix under ``vcov=`` (robust under every other covariance)
_GMM_WEIGHT = {"classical": "unadjusted", "cluster": "cluster", "HAC": "kernel"}


def _hac_lag_weights(options: Mapping[str, Any], n: int) -> Any:
    """The kernel weights w_0 = 1, w_1, ... of ``vcov="HAC"`` for GMM's weight matrix: the
    Bartlett weights 1 − l/(L + 1) of ``maxlags=L`` (sandwich's ``NeweyWest(lag = L)``,
    linearmodels' ``bandwidth=L``), or ``kernel=`` at a numeric ``bandwidth=``; a bandwidth
    chosen from the data or prewhitening is refused (the weight matrix needs it fixed)."""
    from attnreg.inference.vcov.hac_kernels import KERNELS, WEIGHT_TOL, kernel_weights

    given = dict(options.get("vcov_options", {}))
    maxlags, bandwidth = given.get("maxlags"), given.get("bandwidth")
    name = str(given.get("kernel") or "bartlett").lower()
    kernel = KERNELS.get(name, name)
    if given.get("prewhite") or not (isinstance(maxlags, int) or (
            isinstance(bandwidth, (int, float)) and not isinstance(bandwidth, bool))):
        raise OptionError("method 'gmm' with vcov='HAC' weights the moments by their kernel "
                          "covariance at a fixed lag: give maxlags= (Bartlett) or a numeric "
                          "bandwidth= with kernel=, without prewhite, however: "
                          f"{ {k: given.get(k) for k in ('maxlags', 'bandwidth', 'prewhite')} }")
    if isinstance(maxlags, int):
        lags = min(int(maxlags), n - 1)
        return 1.0 - np.arange(lags + 1) / (lags + 1.0)
    assert bandwidth is not None
    w = kernel_weights(np.arange(n) / float(bandwidth), kernel)
    return w[: int(np.flatnonzero(np.abs(w) > WEIGHT_TOL).max()) + 1]


def fit_iv_arrays(frame: IVFrame, method: str, options: Mapping[str, Any], clusters: Any) -> IVFit:
    """Fit the arrays of ``frame`` with the estimator ``method`` (GMM's weight matrix is the
    efficient one under ``options["vcov"]``)."""
    X = frame.X if frame.X.shape[1] else None
    args = (frame.y, X, frame.D, frame.Z)
    w = frame.weights
    if method in ("tsls", "2sls"):
        return tsls(*args, weights=w)
    if method == "liml":
        return liml(*args, weights=w)
    if method == "fuller":  # κ_LIML − α/(n − L), L counting the levels absorbed (as the dummies)
        k_liml = liml_kappa(*args, weights=w)
        L = frame.X.shape[1] + frame.Z.shape[1] + frame.n_absorbed
        fit = kclass(*args, kappa=k_liml - options["alpha"] / (len(frame.y) - L), weights=w)
        return dataclasses.replace(fit, method="Fuller", liml_kappa=k_liml)
    if method == "gmm":
        weight = _GMM_WEIGHT.get(options["vcov"], "robust")
        if weight == "cluster" and clusters is None:
            raise OptionError(f"method {method!r} weights the moments by one-way cluster sums; "
                              f"give one cluster dimension, however: cluster={options['cluster']!r}")
        lags = _hac_lag_weights(options, len(frame.y)) if weight == "kernel" else None
        return gmm(*args, weights=w, weight=weight, clusters=clusters, lag_weights=lags)
    if options["vcov"] == "cluster" and clusters is None:
        raise OptionError(f"method {method!r} weights the moments by one-way cluster sums; "
                          f"give one cluster dimension, however: cluster={options['cluster']!r}")
    return cue(*args, weights=w, clusters=clusters)


def fit_iv_formula(request: FitRequest, parts: FormulaParts,
                   namespace: Mapping[str, Callable[..., Any]] | None = None) -> IVResults:
    """Fit ``request`` by instrumental variables, absorbing the fixed effects of ``parts`` if any.

    Parameters
    ----------
    request : FitRequest
        What :func:`attnreg.attnreg` was given; ``method`` is one of
        :data:`attnreg.iv.options.IV_METHODS` (the default method means ``"tsls"``).
    parts : FormulaParts
        The split formula, with an IV part.
    namespace : mapping, optional
        Helper functions available inside the formula (``lag``, ``poly``, ...).

    Returns
    -------
    IVResults
        (:class:`attnreg.iv.chunked_results.ChunkedIVResults` for data read chunk by chunk:
        files, arrow, polars, dask, or ``chunk_rows=``)
    """
    method = "tsls" if request.method == DEFAULT_METHOD else request.method
    if chunked_backend(request.data, dict(request.options)) is not None:  # beyond memory
        return fit_iv_chunks(request, parts, method)  # type: ignore[return-value]
    options = check_iv_options(method, dict(request.options))  # every option, before any work
    data = to_memory(request.data)  # small arrow / polars inputs: pandas
    if not isinstance(data, (pd.DataFrame, Mapping)):
        raise DataError(f"an IV formula needs a pandas DataFrame, a dict of columns, an arrow "
                        f"table, a polars frame, a dask DataFrame or a parquet/CSV path or glob, "
                        f"however: type(data) is {type(data).__name__}")
    names = dict(namespace or {})
    subset = resolve_subset(request.subset, data, request.eval_env, names)
    frame = build_iv_frame(parts, data, weights=request.weights, subset=subset,
                           na_action=request.na_action, eval_env=request.eval_env,
                           extra_names=names)
    clusters = one_way_ids(options["vcov"], options["cluster"], frame)
    bind_iv_vcov(options["vcov"], options["cluster"], clusters, options["vcov_options"],
                 len(frame.y), frame.design)  # the covariance's ids and lags, before the fit
    try:
        fit = fit_iv_arrays(frame, method, options, clusters)
    except DataError:
        name_collinear_column(frame)  # the column to drop, by name, when that is the cause
        raise
    shown = {k: v for k, v in request.options.items() if k in ("alpha",)}
    call = call_string(parts.formula, method, shown, weighted=request.weights is not None)
    return IVResults(frame=frame, fit=fit, method=method, vcov_kind=options["vcov"],
                     clusters=clusters, cluster=options["cluster"], alpha=options["alpha"],
                     call=call, vcov_options=tuple(sorted(options["vcov_options"].items())))
