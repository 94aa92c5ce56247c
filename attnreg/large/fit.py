"""Chunked spectral fits: the spectrum from the R factor, then the passes the fit needs.

:func:`fit_from_factor` is the formula- and data-free core (what the distributed engine
calls once it has reduced the R factor): it takes the accumulated :class:`RFactor` through
the same steps as the in-memory decomposition (:mod:`attnreg.linear.spectral`): aliased
columns by the relative size of R's diagonal, column scales, the SVD of the scaled R, U'ỹ
and the OLS residual from R's last column. OLS, WLS, ridge (λ fixed or by GCV) and PCR (k
fixed or by GCV) follow from the filters; GCV needs only the spectrum and U'ỹ. (Leave-one-out
would need every row's hat value at each candidate λ or k, one pass per candidate: refused.)

:func:`fit_chunked` runs the whole local fit: pass 1 (:func:`attnreg.large.spec.learn_spec`),
pass 2 (the R factor), for ill-conditioned OLS the refinement passes, and pass 3
(:func:`attnreg.large.passes.second_pass`: residual statistics, hat values and the
covariance meat). The refinement is :mod:`attnreg.large.refine`, the chunked path's own
options are checked in :mod:`attnreg.large.options`.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from attnreg.large.fit import fit_chunked
>>> rng = np.random.default_rng(1)
>>> df = pd.DataFrame({"x": rng.normal(size=300), "g": rng.choice(["a", "b"], 300)})
>>> df["y"] = 1 + 2 * df.x + (df.g == "b") + rng.normal(size=300)
>>> fit = fit_chunked("y ~ x + C(g)", df, chunk_rows=100)
>>> fit.nobs, [round(float(c), 3) for c in fit.coef]
(300, [0.916, 1.08, 1.954])
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import scipy.linalg as sla

from attnreg._warn import warn_user
from attnreg.exceptions import DataError, OptionError, RankDeficiencyWarning
from attnreg.large.accumulate import Incomplete, RFactor, chunk_columns
from attnreg.large.covariance import check_vcov_chunked
from attnreg.large.options import check_chunk_options, check_request_rows, check_residuals
from attnreg.large.passes import frames_of
from attnreg.large.refine import refine
from attnreg.large.source_base import ChunkSource
from attnreg.large.sources import as_source
from attnreg.large.spec import ChunkSpec, learn_spec

__all__ = ["accumulate_factor", "chunk_factor", "finish", "fit_chunked", "fit_from_factor",
           "fit_request", "run_chunked", "spectrum_from_factor"]


def finish(res: Any, vcov: str, residuals: bool | None, checked: dict[str, Any],
           progress: bool) -> Any:
    """The covariance pass (a robust ``vcov``, or ``residuals=True``), or residual statistics
    left to their first use (``residuals=None``)."""
    if vcov != "classical" or residuals:
        return res.with_vcov(vcov, maxlags=checked.get("maxlags"), progress=progress,
                             **checked.get("vcov_options", {}))
    df = checked.get("vcov_options", {}).get("df")  # df=np.inf: z and chi-squared tests
    spec = res.vcov_spec if df is None else dataclasses.replace(res.vcov_spec, df=float(df))
    return res._with(lazy_residuals=residuals is None, vcov_spec=spec)


def chunk_factor(spec: ChunkSpec, frame: Any) -> RFactor:
    """One chunk's :class:`RFactor` (a ``map_reduce`` task: runs where the rows are).

    The chunk is first built without searching its variables for missing values (a pass
    over each): the factorisation checks every value it reads, and a chunk with a NaN (or an
    infinity) is built again with the search, its missing rows dropped and counted.
    """
    try:
        return RFactor.from_columns(chunk_columns(spec, frame, assume_complete=True),
                                    spec.intercept)
    except Incomplete:
        return RFactor.from_columns(chunk_columns(spec, frame), spec.intercept)


def accumulate_factor(spec: ChunkSpec, source: ChunkSource, *, progress: bool = False) -> RFactor:
    """Pass 2: the R factor of every chunk's design, merged in row order.

    Parameters
    ----------
    spec : ChunkSpec
    source : ChunkSource
    progress : bool

    Returns
    -------
    RFactor

    Notes
    -----
    A source with a ``map_reduce`` method (a dask frame's partitions) computes each chunk's
    factor where its rows are and merges the factors in a tree (TSQR); the caller receives
    one (n_coef + 1)² triangle.
    """
    if hasattr(source, "map_reduce"):
        return source.map_reduce(chunk_factor, (spec,), columns=spec.read_columns(),  # type: ignore[no-any-return]
                                 uses=spec.uses, label="attnreg pass 2 (R factors)")
    total = RFactor.empty(spec.n_coef, spec.intercept, spec.weights is not None)
    for frame in frames_of(source, spec, spec.read_columns(), "attnreg pass 2 (R factor): rows",
                         progress):
        total = total.merge(chunk_factor(spec, frame))
    return total


def spectrum_from_factor(factor: RFactor, method: str, *, standardize: bool,
                         tol: float) -> Any:
    """The :class:`~attnreg.linear.spectral.Spectrum` of the accumulated factor.

    The steps of the in-memory tall decomposition on R; U is not available (its rows are
    recomputed in the passes), so the spectrum's ``U`` holds no rows.
    """
    from attnreg.linear.left_vectors import LeftVectors
    from attnreg.scaling import column_norms, unit_weights
    from attnreg.linear.decompositions import (scaled_r as _scaled_r, scales as _scales,
                                               small_svd as _small_svd)
    from attnreg.linear.spectral import Spectrum
    from attnreg.methods import get_method

    rule = get_method(method).require_rule("the chunked fit")
    scaling: Any = "norm" if not rule.penalized else ("sd" if standardize else "none")
    n, p = factor.n_obs, factor.n_coef
    intercept = 0 if factor.intercept else None
    cols = np.array([j for j in range(p) if j != intercept], dtype=np.int64)
    R_aug = factor.centred_r()
    if not np.isfinite(R_aug).all():
        raise DataError("the design is too large for float64 arithmetic (values near 1e308); "
                        "rescale the predictors")
    k = cols.size
    means = factor.means()
    yss = float(column_norms(R_aug[:, k:k + 1])[0] ** 2)
    keep = np.zeros(0, dtype=bool)
    norms = np.zeros(0)
    if k:
        norms = column_norms(R_aug[:k, :k])
        keep = (np.abs(np.diag(R_aug)[:k]) > tol * norms) & (norms > 0)
        if keep.any() and not keep.all():
            R_aug = np.triu(sla.qr(R_aug[:, np.r_[np.flatnonzero(keep), k]], mode="r")[0])
            norms = norms[keep]
    kept, aliased = cols[keep], cols[~keep]
    scale = np.ones(p)
    center = means[:p].copy()
    common: dict[str, Any] = {"center": center, "sqrt_w": unit_weights(n), "sum_w": factor.sum_w,
              "intercept": intercept, "y_center": float(means[p]), "yss": yss,
              "y": np.zeros(0), "y_scale": 1.0, "tol": float(tol)}
    if not kept.size:
        return Spectrum(U=LeftVectors(n, 0, stored=np.zeros((0, 0))), s=np.zeros(0),
                        V=np.zeros((0, 0)), kept=kept, aliased=aliased, scale=scale,
                        uty=np.zeros(0), y_outside=yss, **common)
    m = kept.size
    e = np.zeros(m, dtype=np.int64)
    col_scale = _scales(norms, scaling, factor.sum_w, e)
    scale[kept] = col_scale
    Ur, s, Vt = _small_svd(_scaled_r(R_aug[:m, :m], col_scale, e))
    return Spectrum(U=LeftVectors(n, m, stored=np.zeros((0, m))), s=s, V=Vt.T, kept=kept,
                    aliased=aliased, scale=scale, uty=Ur.T @ R_aug[:m, m],
                    y_outside=float(R_aug[m, m] ** 2), **common)


def fit_from_factor(spec: ChunkSpec, factor: RFactor, method: str = "ols",
                    options: dict[str, Any] | None = None, *, call: str = "",
                    source: ChunkSource | None = None) -> Any:
    """The fit of an accumulated R factor: spectrum, λ or k, filter (no data needed).

    Parameters
    ----------
    spec : ChunkSpec
    factor : RFactor
        Of every row (:func:`accumulate_factor`, or a tree reduction of partition factors).
    method : {"ols", "ridge", "pcr"}
    options : dict, optional
        The method's options as :meth:`attnreg.methods.Estimator.check_options` resolves
        them (``tuning``, ``standardize``, ``tol``, ``vcov``...); default: the method's defaults.
    call : str
        The call string reports show.
    source : ChunkSource, optional
        Kept (not pickled unless it is files) for the passes of ``with_vcov`` and refinement.

    Returns
    -------
    ChunkedResults
        Classical covariance, no residual statistics yet (see :func:`fit_chunked`).

    Raises
    ------
    DataError
        No rows, or no more rows than coefficients for OLS.
    OptionError
        Leave-one-out selection (chunked fits choose λ and k by GCV).
    """
    from attnreg.large.results import ChunkedResults
    from attnreg.linear.filters import apply_filter
    from attnreg.inference.vcov.registry import make_vcov_spec
    from attnreg.linear.spectral import ALIAS_TOL
    from attnreg.methods import get_method, method_names

    rule = get_method(method, method_names("rule")).require_rule("the chunked fit")
    opts = dict(options) if options is not None else get_method(method).check_options({})
    tuning = opts.get("tuning")
    if tuning == "loo":
        raise OptionError(f"{rule.tuning}='loo' needs every row's hat value at each candidate "
                          f"(one pass of the data per candidate); chunked fits choose "
                          f"{rule.tuning} by GCV: {rule.tuning}='gcv' or a number")
    n = factor.n_obs
    if n == 0:
        empty = [c for c in getattr(source, "null_columns", ()) if c in spec.read_columns()]
        why = (f": column {empty[0]!r} is missing in every row (its type in the data is null); "
               "leave it out of the formula" if empty else "")
        raise DataError(f"no rows left after removing missing values ({factor.n_dropped} rows "
                        f"had NA){why}")
    if not rule.penalized and n <= spec.n_coef:
        raise DataError(f"n_obs ({n}) must exceed the number of coefficients ({spec.n_coef})")
    if n < 2:
        raise DataError(f"n_obs ({n}) must be at least 2")
    standardize = bool(opts.get("standardize", rule.penalized))
    tol = float(opts.get("tol", ALIAS_TOL))
    sp = spectrum_from_factor(factor, rule.name, standardize=standardize, tol=tol)
    names = spec.column_names
    if sp.aliased.size:
        warn_user(f"{sp.aliased.size} coefficient(s) not defined because of singularities: "
                  f"{', '.join(names[j] for j in sp.aliased)}", RankDeficiencyWarning)
    selection = None
    if rule.select is not None:
        if isinstance(tuning, str):
            selection = rule.select(sp, tuning)
        else:
            if rule.counts and int(tuning) > sp.rank:  # type: ignore[arg-type]
                raise OptionError(f"{rule.tuning} must be between 1 and the rank of the "
                                  f"predictors ({sp.rank}), however: {rule.tuning}={tuning}")
            selection = rule.fixed(float(tuning))  # type: ignore[arg-type]
    f = rule.filter(sp.s, None if selection is None else selection.value)
    filtered = apply_filter(sp, f, spec.n_coef)
    return ChunkedResults(spec=spec, method=rule.name, factor=factor, spectrum=sp,
                          filtered=filtered, selection=selection,
                          vcov_spec=make_vcov_spec("classical"), call=call or spec.formula,
                          standardize=standardize, source=source)



def fit_chunked(formula: str, data: Any, method: str = "ols", *, weights: str | None = None,
                subset: str | None = None, na_action: str = "drop", eval_env: Any = None,
                chunk_rows: int | None = None, progress: bool = False,
                residuals: bool | None = None, sep: str | None = None,
                vcov: str = "classical", call: str = "", **options: Any) -> Any:
    """Fit a spectral method to data read chunk by chunk (what :func:`attnreg.attnreg` does
    for large inputs).

    Parameters
    ----------
    formula : str
    data : path, glob, arrow, polars, pandas or ChunkSource
        See :func:`attnreg.large.sources.as_source`.
    method : {"ols", "ridge", "pcr"}
    weights : str, optional
        A weights column.
    subset : str, optional
        A row filter expression (``"x > 0"``).
    na_action : {"drop", "raise"}
    eval_env : patsy.EvalEnvironment, optional
    chunk_rows : int, optional
        Rows per chunk.
    progress : bool
        Rows done per pass on stderr.
    sep : str, optional
        Field separator of CSV files (default ``","``): ``";"``, ``"\\t"``, ``"|"``, ...
    residuals : bool or None
        The pass for the residual statistics (quantiles, extremes, the largest hat value)
        with the classical covariance: None (default) when they are first asked for (by
        ``summary()``), True during the fit, False never. A robust ``vcov`` computes them
        in its own pass.
    vcov : str
        Covariance (options as keywords: ``cluster=``, ``maxlags=``, ``type=``...).
    call : str
    **options
        The method's options (``lam=``, ``k=``, ``standardize=``, ``tol=``).

    Returns
    -------
    ChunkedResults

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.normal(size=200)})
    >>> df["y"] = 1 - df.x + rng.normal(size=200)
    >>> fit = fit_chunked("y ~ x", df, chunk_rows=64, vcov="HC1")
    >>> fit.vcov_spec.kind, fit.nobs
    ('HC1', 200)
    """
    from attnreg.methods import get_method, method_names

    estimator = get_method(method, method_names("rule"))
    vcov_options: dict[str, Any] = {k: options.pop(k) for k in ("maxlags", "cluster", "type", "cadjust", "df",
                                                 "fix", "time", "adjust") if k in options}
    given: dict[str, Any] = {**options, **vcov_options}
    if vcov != "classical":
        given["vcov"] = vcov
    checked = estimator.check_options(given)
    check_vcov_chunked(checked)
    check_residuals(residuals)
    source = as_source(data, chunk_rows=chunk_rows, sep=sep)
    if weights is not None and not isinstance(weights, str):
        raise OptionError("weights of a chunked fit must name a column of the data, however: "
                          f"type(weights) is {type(weights).__name__}")
    if subset is not None and not isinstance(subset, str):
        raise OptionError("subset of a chunked fit must be an expression such as 'x > 0', "
                          f"however: type(subset) is {type(subset).__name__}")
    if na_action not in ("drop", "raise"):
        raise OptionError(f"na_action must be one of 'drop', 'raise', however: {na_action=}")
    return run_chunked(formula, source, estimator.name, checked, weights=weights, subset=subset,
                       na_action=na_action, eval_env=eval_env, progress=progress,
                       residuals=residuals, call=call)


def run_chunked(formula: str, source: ChunkSource, method: str, checked: dict[str, Any], *,
                weights: str | None, subset: str | None, na_action: str, eval_env: Any,
                progress: bool, residuals: bool | None, call: str) -> Any:
    """The passes of a local chunked fit with options already checked."""
    from attnreg.linear.refinement import REFINE_COND

    spec = learn_spec(formula, source, eval_env, weights=weights, subset=subset,
                      na_action=na_action, progress=progress)
    factor = accumulate_factor(spec, source, progress=progress)
    res = fit_from_factor(spec, factor, method, checked, call=call, source=source)
    sp = res.spectrum
    if res.rule.refine and sp.rank and sp.s[0] / sp.s[-1] > REFINE_COND:
        res = refine(res, source, progress=progress)
    return finish(res, checked.get("vcov", "classical"), residuals, checked, progress)



def fit_request(request: Any) -> Any:
    """The local chunked backend of :func:`attnreg.attnreg` (a :class:`attnreg.large.FitRequest`).

    Every option is checked before any data is read.
    """
    from attnreg.methods import call_string, get_method, method_names

    options = dict(request.options)
    chunk = check_chunk_options(options)
    estimator = get_method(request.method)  # an unknown method: the registry's message
    if estimator.fit_chunks is not None:  # a method with its own passes (a GLM's IRLS)
        check_request_rows(request)
        call = call_string(request.formula, request.method, options,
                           weighted=request.weights is not None)
        return estimator.fit_chunks(dataclasses.replace(request, options=options), chunk, call)
    if estimator.rule is None:
        raise OptionError(f"method {request.method!r} cannot be fitted chunk by chunk: it "
                          "declares no spectral rule (Estimator(rule=...)) for the chunk passes "
                          f"to apply; chunked fits are {', '.join(map(repr, method_names('rule')))}")
    checked = estimator.check_options(options)
    check_vcov_chunked(checked)
    weights, subset = request.weights, request.subset
    check_request_rows(request)
    source = as_source(request.data, chunk_rows=chunk["chunk_rows"], sep=chunk["sep"])
    call = call_string(request.formula, request.method, options, weighted=weights is not None)
    return run_chunked(request.formula, source, estimator.name, checked, weights=weights,
                       subset=subset, na_action=request.na_action, eval_env=request.eval_env,
                       progress=chunk["progress"], residuals=chunk["residuals"], call=call)
