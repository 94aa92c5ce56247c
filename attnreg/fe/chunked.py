"""``attnreg("y ~ x | firm + year", "panel/*.parquet")``: fixed effects beyond memory.

The passes over the chunks (files, arrow datasets, polars frames, or a dask DataFrame's
partitions on its workers):

1. the model part's spec (:func:`attnreg.large.spec.learn_spec`: levels of factors,
   statistics of stateful transforms);
2. pass A (:mod:`attnreg.fe.chunk_sums`): per combination of fixed-effect levels, the row
   count, Σ w and the weighted sums of the response and the regressors (the rows with a
   missing fixed effect left out and counted). The fixed effects' demeaning of the
   in-memory fit (:func:`attnreg.fe.demean.demean`) runs on that table, weighted by Σ w: it
   has the normal equations of the demeaning on all the rows, hence the same D α, to the
   data's accuracy. Singletons are removed on it (``fixef_rm="singleton"``);
3. the R factor of the residualised chunks (:mod:`attnreg.fe.chunk_spec`), regressors that
   the fixed effects explain aliased as in memory; then the chunked fit's own passes
   (refinement of ill-conditioned OLS, residual statistics, covariance meats).

Memory holds a chunk and the table of combinations, never a vector of the rows.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from attnreg._warn import warn_user
from attnreg.exceptions import (
    AttnregError,
    ConvergenceWarning,
    DataError,
    FormulaError,
    OptionError,
)
from attnreg.fe.absorb import COLLINEAR_TOL, fixed_effects_of_frame
from attnreg.fe.chunk_spec import AbsorbedSpec, level_sums_part
from attnreg.fe.chunk_sums import LevelSums, drop_singleton_combinations, merge_all
from attnreg.fe.chunked_results import NEEDS_FE_LEVERAGE, ChunkedAbsorbed, ChunkedFixedEffectsResults
from attnreg.fe.demean import demean
from attnreg.fe.effects import redundant_levels
from attnreg.large.covariance import check_vcov_chunked
from attnreg.large.fit import accumulate_factor, finish, fit_from_factor
from attnreg.large.options import check_chunk_options, check_request_rows
from attnreg.large.refine import refine
from attnreg.large.accumulate import RFactor
from attnreg.large.passes import frames_of
from attnreg.large.spec import ChunkSpec
from attnreg.linear.refinement import REFINE_COND

__all__ = ["fit_fe_chunked"]

#: rows of pending per-chunk tables merged into the total at once (at least)
MERGE_ROWS = 1 << 20
#: options of the dask backend (a dask DataFrame's fit)
DASK_OPTIONS = ("client", "scheduler", "split_every", "read_parquet")


def _source_and_spec(request: Any, model: str, backend: str, options: dict[str, Any],
                     chunk: dict[str, Any]) -> tuple[Any, ChunkSpec]:
    """The chunk source of ``request.data`` and pass 1 (the model part's spec)."""
    kw = dict(weights=request.weights, subset=request.subset, na_action=request.na_action,
              progress=chunk["progress"])
    if backend == "dask":
        from attnreg.large.dask import DaskRunner, DistributedSource, learn_dask_spec, resolve_client

        own = {k: options.pop(k) for k in DASK_OPTIONS if k in options}
        runner = DaskRunner(request.data, resolve_client(own.get("client")),
                            scheduler=own.get("scheduler"),
                            split_every=own.get("split_every", 8),
                            progress=chunk["progress"],
                            read_parquet=own.get("read_parquet", True))
        source: Any = DistributedSource(runner)
        return source, learn_dask_spec(model, source, request.eval_env, **kw)
    if backend != "local":
        raise OptionError(f"fixed effects are fitted chunk by chunk on files, arrow, polars "
                          f"and dask data, however the data went to backend {backend!r}; load "
                          "the data as a pandas DataFrame")
    from attnreg.large.sources import as_source
    from attnreg.large.spec import learn_spec

    source = as_source(request.data, chunk_rows=chunk["chunk_rows"], sep=chunk["sep"])
    return source, learn_spec(model, source, request.eval_env, **kw)


def _level_sums(spec: ChunkSpec, slopes: Any, terms: Any, source: Any,
                progress: bool) -> LevelSums:
    """Pass A over every chunk, merged (on dask's workers in a tree)."""
    from attnreg.fe.chunk_spec import key_columns_of

    columns = spec.read_columns(key_columns_of(terms))
    for c in key_columns_of(terms):
        if c not in source.columns:
            raise DataError(f"fixed effect column {c!r} is not a column of the data "
                            f"({source.description})")
    if hasattr(source, "map_reduce"):
        return source.map_reduce(level_sums_part, (spec, slopes, terms),  # type: ignore[no-any-return]
                                 columns=columns, uses=spec.uses,
                                 label="attnreg pass A (fixed-effect sums)")
    total: list[LevelSums] = []
    pending: list[LevelSums] = []
    for frame in frames_of(source, spec, columns, "attnreg pass A (fixed-effect sums): rows",
                           progress):
        pending.append(level_sums_part(spec, slopes, terms, frame))
        # merged when the pending tables outgrow the total: each row is merged O(log) times
        if sum(len(p.table) for p in pending) >= max(len(total[0].table) if total else 0,
                                                     MERGE_ROWS):
            total = [merge_all(total + pending)]
            pending = []
    return merge_all(total + pending)


def _absorb_table(sums: LevelSums, terms: Any, rm: str, cap: int
                  ) -> tuple[Any, Any, ChunkedAbsorbed]:
    """The demeaning on pass A's table: (combinations in the fit, D α per combination,
    what was absorbed)."""
    keys = sums.table.index
    frame = keys.to_frame(index=False)
    got = fixed_effects_of_frame(frame, terms)
    in_fit = np.ones(len(frame), dtype=bool)
    n_rows = sums.table["n"].to_numpy()
    n_single = 0
    if rm == "singleton":
        in_fit = drop_singleton_combinations(got.fe.codes, got.fe.n_levels, n_rows)
        n_single = int(n_rows[~in_fit].sum())
        if not in_fit.any():
            raise DataError("every row is a singleton of some fixed effect: no row is left")
        got = fixed_effects_of_frame(frame[in_fit], terms)
    means = sums.means()[in_fit]
    w = sums.table["w"].to_numpy()[in_fit]
    dm = demean(means, got.fe, w, max_iter=cap, method="auto")
    fitted = np.zeros_like(sums.means())
    fitted[in_fit] = means - dm.resid  # D α of each combination
    absorbed = ChunkedAbsorbed(
        fe=got.fe, terms=got.terms, n_redundant=redundant_levels(got.fe),
        n_missing=dict(sums.n_missing), n_singletons=n_single,
        n_combinations=int(in_fit.sum()), effects=dm.effects,
        orthogonality=float(dm.orthogonality.max()), floor=dm.floor, converged=dm.converged,
        iterations=dm.iterations, tss=sums.total_sum_of_squares(in_fit), weights=w,
        counts=n_rows[in_fit])
    return in_fit, fitted, absorbed


def _leverage(absorbed: ChunkedAbsorbed, in_fit: Any) -> Any:
    """Each combination's leverage on the fixed effects, 0 for those not in the fit."""
    from attnreg.fe.chunked_leverage import combination_leverage

    full = np.zeros(in_fit.size)
    full[in_fit] = combination_leverage(absorbed.fe, absorbed.weights, absorbed.counts)
    return full


def _alias_explained(factor: RFactor, before: Any) -> RFactor:
    """The R factor with the regressors the fixed effects explain set to zero (aliased, R's
    NA), as in memory: a residualised column whose norm (that of its column of R, which QR
    keeps) is below :data:`~attnreg.fe.absorb.COLLINEAR_TOL` of the column's own. X̃ = QR
    with column j zero is QR with column j of R zero: the other columns are unchanged."""
    after = np.sqrt(np.sum(factor.R[:, :before.size] ** 2, axis=0))
    collinear = after <= COLLINEAR_TOL * np.where(before > 0, before, 1.0)
    if not collinear.any():
        return factor
    R = factor.R.copy()
    R[:, np.flatnonzero(collinear)] = 0.0
    return dataclasses.replace(factor, R=R)


def _check_options(request: Any, backend: str, options: dict[str, Any]
                   ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The chunked path's options and the OLS ones, checked before any pass."""
    from attnreg.methods import get_method

    for name in DASK_OPTIONS if backend != "dask" else ():
        if name in options:
            raise OptionError(f"{name}= is an option of dask DataFrames, however the data is "
                              f"{type(request.data).__name__}")
    dask_own = {k: options.pop(k) for k in DASK_OPTIONS if k in options}
    chunk = check_chunk_options(options)
    checked = get_method("ols").check_options(options)
    check_vcov_chunked(checked)
    check_request_rows(request)
    options.update(dask_own)
    return chunk, checked


def fit_fe_chunked(request: Any, parts: Any, backend: str, ssc: str, rm: str, cap: int,
                   options: dict[str, Any], call: str) -> ChunkedFixedEffectsResults:
    """Fit ``request`` (data larger than memory) with the fixed effects of ``parts``
    absorbed (module notes).

    Parameters
    ----------
    request : FitRequest
    parts : FormulaParts
    backend : str
        The chunked backend that took the data (``"local"`` or ``"dask"``).
    ssc, rm, cap : str, str, int
        ``ssc=``, ``fixef_rm=`` and ``fixef_iter=``, checked.
    options : dict
        The other options (OLS, covariance, chunked path, dask).
    call : str

    Returns
    -------
    ChunkedFixedEffectsResults
    """
    terms = parts.fixed_effect_terms
    for t in terms:
        if t.slopes:
            raise FormulaError(f"varying slopes ({t.text!r}) are not supported yet: write the "
                               f"interaction as a regressor, e.g. 'C({t.columns[0]}):{t.slopes[0]}'")
    options = dict(options)
    chunk, checked = _check_options(request, backend, options)
    try:
        return _passes(request, parts, backend, (ssc, rm, cap), options, chunk, checked, call)
    except AttnregError as exc:
        if backend != "dask":
            raise
        raise exc.with_traceback(None) from None  # raised on a worker: no scheduler frames


def _passes(request: Any, parts: Any, backend: str, settings: tuple[str, str, int],
            options: dict[str, Any], chunk: dict[str, Any], checked: dict[str, Any],
            call: str) -> ChunkedFixedEffectsResults:
    """The passes of :func:`fit_fe_chunked` (module notes), options checked."""
    ssc, rm, cap = settings
    terms = parts.fixed_effect_terms
    source, spec = _source_and_spec(request, parts.model, backend, options, chunk)
    slopes = np.array([j for j, n in enumerate(spec.column_names) if n != "(Intercept)"],
                      dtype=np.int64)
    if not slopes.size:
        raise DataError(f"{spec.formula!r} has no regressor besides the fixed effects: "
                        "add one (y ~ x | firm)")
    sums = _level_sums(spec, slopes, terms, source, chunk["progress"]).sorted()
    if sums.table.empty:
        raise DataError(f"no row has every fixed effect ({', '.join(t.text for t in terms)}) "
                        "present")
    in_fit, fitted, absorbed = _absorb_table(sums, terms, rm, cap)
    names = spec.column_names
    fields = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec)}
    fields["formula"] = request.formula  # as the in-memory fit (anova's and reports' label)
    aspec = AbsorbedSpec(**fields, slopes=tuple(int(j) for j in slopes),
                         slope_names=tuple(names[j] for j in slopes), terms=absorbed.terms,
                         keys=sums.table.index, in_fit=in_fit, fitted=fitted)
    if checked["vcov"] in NEEDS_FE_LEVERAGE:  # HC2, HC3: the passes need the hat values
        aspec = dataclasses.replace(aspec, leverage=_leverage(absorbed, in_fit))
    factor = _alias_explained(accumulate_factor(aspec, source, progress=chunk["progress"]),
                              sums.norms(in_fit))
    if not absorbed.converged:
        warn_user(f"the demeaning on the fixed effects stopped at a relative accuracy of "
                  f"{absorbed.orthogonality:.2g} (the data's floor is {absorbed.floor:.2g}) "
                  f"after {absorbed.iterations} iterations", ConvergenceWarning)
    lin = fit_from_factor(aspec, factor, "ols", checked, call=call, source=source)
    res = ChunkedFixedEffectsResults(
        **{f.name: getattr(lin, f.name) for f in dataclasses.fields(lin)},
        absorbed=absorbed, ssc=ssc)
    sp = res.spectrum
    if sp.rank and sp.s[0] / sp.s[-1] > REFINE_COND:
        res = refine(res, source, progress=chunk["progress"])
    return finish(res, checked["vcov"], chunk["residuals"], checked,  # type: ignore[no-any-return]
                  chunk["progress"])
