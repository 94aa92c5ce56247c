"""The chunked IV fit's front door: options and formula checked before any data is read, the
two passes (:mod:`attnreg.iv.chunked`), the in-memory checks of the columns, the results
(:class:`attnreg.iv.chunked_results.ChunkedIVResults`)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

from attnreg.exceptions import DataError, OptionError
from attnreg.iv.chunked import IVChunks, IVLayout, Merged, first_pass, fit_merged, iv_layout, \
    score_pass
from attnreg.iv.chunked_results import IN_MEMORY, ChunkedIVFrame, ChunkedIVResults
from attnreg.iv.chunked_stats import ChunkedIVStats, Pieces
from attnreg.iv.estimators import IVFit
from attnreg.iv.frame import _check_columns, _check_parts, _term_names, name_collinear_column
from attnreg.iv.options import check_iv_options

if TYPE_CHECKING:
    from attnreg.formula.parts import FormulaParts
    from attnreg.large import FitRequest

__all__ = ["CONSTANT_TOL", "fit_iv_chunks"]

#: An instrument whose part outside the intercept is below this share of its norm is constant.
CONSTANT_TOL = 1e-9


def _refuse(request: FitRequest, parts: FormulaParts, method: str, options: dict[str, Any]) -> None:
    """OptionError for what a chunked IV fit cannot do, before any data is read."""
    if method in ("gmm", "cue"):
        raise OptionError(f"method {method!r} cannot be fitted chunk by chunk (its weight "
                          "matrix needs a pass over the data per step); use method='tsls', "
                          f"'liml' or 'fuller', or {IN_MEMORY}")
    if parts.fixed_effects:
        raise OptionError("an IV formula with fixed effects ('y ~ x | fe | d ~ z') cannot be "
                          "fitted chunk by chunk; write the fixed effects as factors "
                          f"('y ~ x + C(fe) | d ~ z') or {IN_MEMORY}")
    kind, extra = options["vcov"], options["vcov_options"]
    if kind not in ("classical", "HC0", "HC1", "cluster") or extra:
        given = "".join(f", {k}={v!r}" for k, v in extra.items())
        raise OptionError(f"a chunked IV fit has the classical, HC0, HC1 and one-way cluster "
                          f"(CR1) covariances, however: vcov={kind!r}{given}; use one of those "
                          f"or {IN_MEMORY}")
    if isinstance(options["cluster"], str) and "+" in options["cluster"]:
        raise OptionError("a chunked IV fit clusters one way, however: "
                          f"cluster={options['cluster']!r}; give one column or {IN_MEMORY}")
    if options["cluster"] is not None and not isinstance(options["cluster"], str):
        raise OptionError("cluster of a chunked IV fit must name a column of the data, however: "
                          f"type(cluster) is {type(options['cluster']).__name__}")
    for name in ("weights", "subset"):
        value = getattr(request, name)
        if value is not None and not isinstance(value, str):
            raise OptionError(f"{name} of a chunked IV fit must be a column name or expression "
                              f"of the data, however: type({name}) is {type(value).__name__}")


def _fit_checked(m: Merged, layout: IVLayout, method: str, alpha: float, formula: str) -> IVFit:
    """The fit of the merged factor, after the in-memory checks of the columns (count of
    instruments, zero and constant columns; a collinear column named on failure)."""
    P, k1, nz = m.P, m.k1, m.nz
    X, Z, D = P[:, :k1], P[:, k1:k1 + nz], P[:, k1 + nz:-1]
    names = [*layout.exog_names, *layout.endog_names, *layout.instrument_names]
    _check_columns(X, D, Z, names, formula, intercept=False)  # P's rows: no constant test
    if "(Intercept)" in layout.exog_names:  # constant: nothing left once the intercept is out
        one = X[:, layout.exog_names.index("(Intercept)")]
        left = Z - np.outer(one, one @ Z) / float(one @ one)
        for j in np.flatnonzero(np.sum(left**2, axis=0) <= CONSTANT_TOL**2 * np.sum(Z**2, axis=0)):
            raise DataError(f"instrument {layout.instrument_names[j]!r} is constant over the "
                            "rows used (absorbed by the intercept): it carries no information; "
                            "drop it")
    try:
        return fit_merged(m, method, alpha)
    except DataError:
        name_collinear_column(SimpleNamespace(  # type: ignore[arg-type]
            X=X, D=D, Z=Z, exog_names=layout.exog_names, endog_names=layout.endog_names,
            instrument_names=layout.instrument_names))
        raise


def fit_iv_chunks(request: FitRequest, parts: FormulaParts, method: str) -> ChunkedIVResults:
    """Fit an IV formula over data read chunk by chunk (see the module doc).

    Parameters
    ----------
    request : FitRequest
        What :func:`attnreg.attnreg` was given (data: files, arrow, polars, dask, or any
        data with ``chunk_rows=``).
    parts : FormulaParts
        The split formula, with an IV part.
    method : str
        ``"tsls"``, ``"2sls"``, ``"liml"`` or ``"fuller"`` (GMM and CUE refused).

    Returns
    -------
    ChunkedIVResults
    """
    from attnreg.large.dask_predict import is_dask_frame
    from attnreg.large.options import check_chunk_options
    from attnreg.large.sources import as_source
    from attnreg.large.spec import learn_spec
    from attnreg.methods import call_string

    options = dict(request.options)
    client, scheduler = options.pop("client", None), options.pop("scheduler", None)
    for name in ("split_every", "read_parquet"):  # the dask backend's, no use here (as GLMs)
        options.pop(name, None)
    chunk = check_chunk_options(options)
    checked = check_iv_options(method, options)
    _refuse(request, parts, method, checked)
    assert parts.endogenous is not None and parts.instruments is not None
    if is_dask_frame(request.data):
        from attnreg.large.dask import DaskSource, resolve_client

        source: Any = DaskSource(request.data, resolve_client(client), scheduler)
    else:
        source = as_source(request.data, chunk_rows=chunk["chunk_rows"], sep=chunk["sep"])
    lhs, rhs = (s.strip() for s in parts.model.split("~", 1))
    _check_parts(_term_names(rhs), _term_names(parts.endogenous),
                 _term_names(parts.instruments), parts.formula)
    combined = f"{lhs} ~ {rhs} + {parts.endogenous} + {parts.instruments}"
    spec = learn_spec(combined, source, request.eval_env, weights=request.weights,
                      subset=request.subset, na_action=request.na_action,
                      progress=chunk["progress"])
    layout = iv_layout(spec.x_info, parts.endogenous, parts.instruments)
    data = IVChunks(spec, source, layout, checked["cluster"], chunk["progress"])
    merged = first_pass(data)
    pieces = Pieces(merged, _fit_checked(merged, layout, method, checked["alpha"], parts.formula))
    meat = score_pass(data, merged, pieces.maps(), pieces.fit.coef,
                      clustered=checked["vcov"] == "cluster", residuals=chunk["residuals"] is not False)
    _, nz, k2 = layout.sizes
    frame = ChunkedIVFrame(D=np.zeros((0, k2)), Z=np.zeros((0, nz)), exog_names=layout.exog_names,
                           endog_names=layout.endog_names,
                           instrument_names=layout.instrument_names,
                           regressor_terms=layout.regressor_terms)
    shown = {k: v for k, v in request.options.items() if k in ("alpha",)}
    call = call_string(parts.formula, method, shown, weighted=request.weights is not None)
    return ChunkedIVResults(frame=frame, stats=ChunkedIVStats(pieces, meat, checked["vcov"]),
                            method=method, vcov_kind=checked["vcov"], cluster=checked["cluster"],
                            alpha=checked["alpha"], formula=parts.formula, call=call, spec=spec)
