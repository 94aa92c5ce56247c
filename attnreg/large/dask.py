"""Formula fits on a dask DataFrame: one R factor per partition, merged in a tree (TSQR).

``ar.attnreg(formula, data=ddf)`` with a ``dask.dataframe.DataFrame`` runs the chunked
engine of :mod:`attnreg.large` with the partitions as chunks:

- **pass 1** (:func:`learn_dask_spec`) learns the formula's factor levels and the memorised
  statistics of ``center``/``standardize``/``scale``. When every stateful transform in the
  formula is one of attnreg's NaN-aware moments (the usual case), each partition is
  summarised on its worker (its own pass-1 spec, and the few rows where each factor level
  first appears) and the summaries are merged on the client: only O(levels) rows and
  O(columns) numbers travel. Otherwise (patsy's own transforms, nested ones) the partitions
  are read through the client one at a time (memory: one partition).
- **pass 2**: each partition's :class:`~attnreg.large.accumulate.RFactor` is computed on its
  worker and the factors are combined in a tree reduction (``split_every`` at a time,
  neighbours first), so the client receives one (p+1) × (p+1) triangle.
- **later passes** (residual statistics, hat values, HC/HAC/cluster meats, the refinement's
  gradient; :mod:`attnreg.large.passes`) run the same way: each returns a P × P matrix or
  per-cluster sums.

The numbers are those of the local chunked fit and of the in-memory fit of the concatenated
data (to rounding: the R factors are merged in another order).

Scheduler: the ``client=`` given (a :class:`distributed.Client` or a scheduler address),
else the client in use (:func:`distributed.get_client`), else dask's default scheduler for
the collection (threads for a dask DataFrame). ``import attnreg`` never imports dask: this
module imports it when a dask frame is fitted.

Examples
--------
(dask and distributed are optional; the example runs only where they are installed)

>>> import numpy as np, pandas as pd
>>> import attnreg as ar
>>> dd = pytest_importorskip("dask.dataframe")
>>> rng = np.random.default_rng(0)
>>> df = pd.DataFrame({"x": rng.normal(size=400), "g": rng.choice(["a", "b"], 400)})
>>> df["y"] = 1 + 2 * df.x + (df.g == "b") + rng.normal(size=400)
>>> ddf = dd.from_pandas(df, npartitions=4)
>>> fit = fit_dask("y ~ x + C(g)", ddf, scheduler="sync")
>>> mem = ar.attnreg("y ~ x + C(g)", df)
>>> bool(np.allclose(fit.coef, mem.coef, rtol=1e-12))
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any


from attnreg.exceptions import AttnregError, OptionError
from attnreg.large.dask_predict import (
    is_dask_frame,
    is_dask_series,
    predict_dask,
    pytest_importorskip,  # noqa: F401 - the examples use it
)
from attnreg.large.dask_runner import (
    DEFAULT_SPLIT_EVERY,
    DaskRunner,
    DaskSource,
    clean_error,
    need_dask,
    resolve_client,
)

__all__ = ["DistributedSource", "dask_predicate", "fit_dask", "fit_request", "is_dask_frame",
           "is_dask_series", "learn_dask_spec", "predict_dask"]


# ------------------------------------------------------------------------------ the fit

class DistributedSource(DaskSource):
    """A dask DataFrame as a ChunkSource whose passes run on the cluster.

    :meth:`map_reduce` computes a pass's partial on every partition's worker and merges the
    partials in a tree (row order kept); :meth:`frames` (inherited) reads the partitions
    through the client for code that folds chunks itself.
    """

    def __init__(self, runner: DaskRunner) -> None:
        super().__init__(runner.ddf, runner.client, runner.scheduler)
        self.runner = runner
        self.description = runner.description

    def map_reduce(self, fn: Callable[..., Any], args: tuple[Any, ...], *,
                   columns: Sequence[str] | None, uses: Any = None,
                   label: str = "attnreg pass") -> Any:
        """``fn(*args, frame)`` on every partition, merged in a tree; see :meth:`DaskRunner.map_reduce`."""
        return self.runner.map_reduce(fn, args, columns=columns, uses=uses, label=label)


def _meta_check(formula: str, ddf: Any, env: Any, weights: str | None, subset: str | None,
                na_action: str) -> str:
    """Formula checks on the frame's metadata (no data read); returns the expanded formula."""
    from attnreg.formula.frame import check_factor_code
    from attnreg.formula.parse import check_names, expand_dot, parse
    from attnreg.large.chunkwise import check_chunkwise
    from attnreg.large.spec import formula_env

    from attnreg.exceptions import FormulaError

    if not isinstance(formula, str) or "~" not in formula:
        raise FormulaError(f"formula must be a string of the form 'y ~ x1 + x2', however: "
                           f"{formula=}")
    empty = ddf._meta.iloc[:0].rename(columns=str)
    columns = [str(c) for c in empty.columns]
    expanded = expand_dot(formula, empty, exclude=[weights] if weights else [])
    desc = parse(expanded)
    if not desc.lhs_termlist:
        raise FormulaError(f"the formula {expanded!r} has no response left of '~'")
    factors = [f for term in desc.lhs_termlist + desc.rhs_termlist for f in term.factors]
    for factor in factors:
        check_factor_code(factor.code, columns)
    check_chunkwise([f.code for f in factors])
    check_names(factors, empty, formula_env(env), "data")
    if weights is not None and weights not in columns:
        raise FormulaError(f"data (dask DataFrame) has no weights column {weights!r}")
    del subset, na_action
    return expanded


def learn_dask_spec(formula: str, source: DistributedSource, eval_env: Any = None, *,
                    weights: str | None = None, subset: str | None = None,
                    na_action: str = "drop", progress: bool = False) -> Any:
    """Pass 1 on the partitions: summaries on the workers, merged on the client.

    Parameters
    ----------
    formula : str
    source : DistributedSource
    eval_env : patsy.EvalEnvironment, optional
    weights, subset, na_action, progress
        As for :func:`attnreg.large.spec.learn_spec`.

    Returns
    -------
    ChunkSpec
        Equal to ``learn_spec`` over the partitions read in order: the same levels, the
        same transform statistics (to rounding: Chan's merges in a tree).
    """
    from attnreg.formula.frame import variable_uses
    from attnreg.formula.parse import parse
    from attnreg.large.dask_spec import partition_summary, portable_env, spec_from_summary
    from attnreg.large.spec import formula_env, learn_spec

    expanded = _meta_check(formula, source.runner.ddf, eval_env, weights, subset, na_action)
    desc = parse(expanded)
    uses: dict[str, bool] = {}
    for term in desc.lhs_termlist + desc.rhs_termlist:
        for factor in term.factors:
            for name, outside in variable_uses(factor.code).items():
                uses[name] = uses.get(name, False) or outside
    needed = [n for n in uses if n in source.columns] or list(source.columns[:1])
    if weights is not None and weights not in needed:
        needed.append(weights)  # the summary rows carry it (learn_spec checks the column)
    env = formula_env(eval_env)
    if not _needs_every_row(desc, env, source.runner.ddf):
        # numbers only, no statistics: patsy learns the design from any rows (as the local
        # path learns it from its first chunk); the first rows of the first partition come
        # to the client, not the partition
        head = source.runner.head(HEAD_ROWS)
        if head.shape[0]:
            from attnreg.large.sources import PandasSource

            spec = learn_spec(expanded, PandasSource(head, HEAD_ROWS), eval_env,
                              weights=weights, subset=subset, na_action=na_action)
            return dataclasses.replace(spec, n_rows_seen=0)
    job = {"formula": expanded, "names": portable_env(expanded, env, source.columns),
           "weights": weights}
    total = source.map_reduce(partition_summary, (job,), columns=needed, uses=uses,
                              label="attnreg pass 1 (levels, transforms)")
    if not total.ok:  # statistics that do not merge: read the partitions in order
        return learn_spec(expanded, source, eval_env, weights=weights, subset=subset,
                          na_action=na_action, progress=progress)
    return spec_from_summary(total, expanded, eval_env, weights=weights, subset=subset,
                             na_action=na_action)


#: Rows of the first partition a numeric, stateless formula's spec is learned from.
HEAD_ROWS = 1000


def _needs_every_row(desc: Any, env: Any, ddf: Any) -> bool:
    """Whether the formula's spec depends on every row: a factor that is categorical (its
    levels) or a stateful transform (its statistics). Otherwise patsy's incremental builder
    learns the spec from the first chunk alone, as the local path does.

    Decided on the frame's metadata (an empty frame of the right dtypes), before any data is
    read; anything that cannot be told there counts as needing every row.
    """
    from patsy.categorical import guess_categorical

    meta = getattr(ddf, "_meta", None)
    if meta is None:
        return True
    try:
        for term in desc.lhs_termlist + desc.rhs_termlist:
            for factor in term.factors:
                state: dict[str, Any] = {}
                if factor.memorize_passes_needed(state, env) > 0:
                    return True
                if guess_categorical(factor.eval(state, meta)):
                    return True
    except Exception:
        return True
    return False


def accumulate_dask_factor(spec: Any, source: DistributedSource) -> Any:
    """Pass 2: every partition's R factor on its worker, combined in a tree (TSQR).

    :func:`attnreg.large.fit.accumulate_factor` with the partitions as chunks.

    Returns
    -------
    RFactor
        Of every row; the client receives one (n_coef + 1)² triangle.
    """
    from attnreg.large.fit import accumulate_factor

    return accumulate_factor(spec, source)


def fit_dask(formula: str, data: Any, method: str = "ols", *, weights: str | None = None,
             subset: str | None = None, na_action: str = "drop", eval_env: Any = None,
             client: Any = None, scheduler: Any = None,
             split_every: int = DEFAULT_SPLIT_EVERY, progress: bool = False,
             read_parquet: bool = True, residuals: bool | None = None,
             vcov: str = "classical", call: str = "",
             **options: Any) -> Any:
    """Fit OLS, WLS, ridge or PCR to a dask DataFrame, partition by partition on the cluster.

    Parameters
    ----------
    formula : str
        ``"y ~ x1 + np.log(x2) + C(region)"``; ``y ~ .`` expands over the frame's columns.
    data : dask.dataframe.DataFrame
    method : {"ols", "ridge", "pcr"}
    weights : str, optional
        A weights column (weighted least squares).
    subset : str, optional
        A row filter expression (``"x > 0"``).
    na_action : {"drop", "raise"}
    eval_env : patsy.EvalEnvironment, optional
        The formula's scope; the names it uses are sent to the workers.
    client : distributed.Client or str, optional
        The cluster (a client or a scheduler address); default: the client in use, else
        dask's default scheduler.
    scheduler : str, optional
        Without a client: a local scheduler for ``dask.compute`` ("threads", "sync").
    split_every : int
        Partials merged per task of the tree reduction (default 8).
    progress : bool
        Partitions done per pass on stderr (quiet by default).
    read_parquet : bool
        When ``data`` is a plain ``dd.read_parquet`` of local files, each partition task reads
        its file's row groups itself with pyarrow (the same frames as dask's read, at half
        its cost; :mod:`attnreg.large.dask_parquet`). False: dask reads them.
    residuals : bool or None
        The residual pass (quantiles, extremes, the largest hat value) with the classical
        covariance: None (default) when first asked for, True during the fit, False never.
    vcov : str
        Covariance, options as keywords (``cluster=``, ``maxlags=``, ``type=``...).
    call : str
    **options
        The method's options (``lam=``, ``k=``, ``standardize=``, ``tol=``).

    Returns
    -------
    ChunkedResults
        As the local chunked fit; ``fit.predict(ddf_new)`` is lazy (:func:`predict_dask`).

    Raises
    ------
    FormulaError
        A column the frame lacks, a term that cannot be evaluated chunk by chunk (checked on
        the frame's metadata, before any work).
    DataError, OptionError
        As the local chunked fit; errors raised on a worker arrive without the scheduler's
        traceback.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> dd = pytest_importorskip("dask.dataframe")
    >>> rng = np.random.default_rng(3)
    >>> df = pd.DataFrame({"x": rng.normal(size=300), "w": rng.uniform(1, 2, 300)})
    >>> df["y"] = 2 - df.x + rng.normal(size=300)
    >>> fit = fit_dask("y ~ x", dd.from_pandas(df, npartitions=3), weights="w",
    ...                vcov="HC1", scheduler="sync")
    >>> fit.vcov_spec.kind, fit.nobs
    ('HC1', 300)
    """
    from attnreg.large.fit import finish, fit_from_factor
    from attnreg.large.options import check_residuals
    from attnreg.large.refine import refine
    from attnreg.linear.refinement import REFINE_COND
    from attnreg.methods import get_method, method_names

    need_dask()
    if not is_dask_frame(data):
        raise OptionError(f"data must be a dask DataFrame, however: type(data) is "
                          f"{type(data).__module__}.{type(data).__name__}")
    estimator = get_method(method, method_names("rule"))
    vcov_keys = ("maxlags", "cluster", "type", "cadjust", "df", "fix", "time", "adjust")
    vcov_options: dict[str, Any] = {k: options.pop(k) for k in vcov_keys if k in options}
    for name in ("chunk_rows",):
        options.pop(name, None)  # partitions are the chunks
    merged: dict[str, Any] = {**options, **vcov_options}
    given = {k: v for k, v in merged.items()
             if not (v is None and k in ("lam", "k", "standardize", "maxlags"))}
    if vcov != "classical":
        given["vcov"] = vcov
    checked = estimator.check_options(given)
    if weights is not None and not isinstance(weights, str):
        raise OptionError("weights of a dask fit must name a column of the data, however: "
                          f"type(weights) is {type(weights).__name__}")
    if subset is not None and not isinstance(subset, str):
        raise OptionError("subset of a dask fit must be an expression such as 'x > 0', "
                          f"however: type(subset) is {type(subset).__name__}")
    if na_action not in ("drop", "raise"):
        raise OptionError(f"na_action must be one of 'drop', 'raise', however: {na_action=}")
    for flag, value in (("progress", progress), ("read_parquet", read_parquet)):
        if not isinstance(value, bool):
            raise OptionError(f"{flag} must be True or False, however: {flag}={value!r}")
    check_residuals(residuals)
    runner = DaskRunner(data, resolve_client(client), scheduler=scheduler,
                        split_every=split_every, progress=progress, read_parquet=read_parquet)
    source = DistributedSource(runner)
    try:
        spec = learn_dask_spec(formula, source, eval_env, weights=weights, subset=subset,
                               na_action=na_action, progress=progress)
        factor = accumulate_dask_factor(spec, source)
        res = fit_from_factor(spec, factor, estimator.name, checked, call=call, source=source)
        sp = res.spectrum
        if res.rule.refine and sp.rank and sp.s[0] / sp.s[-1] > REFINE_COND:
            res = refine(res, source)  # each step's gradient on the workers
        res = finish(res, checked.get("vcov", "classical"), residuals, checked, progress)
    except AttnregError as exc:
        raise clean_error(exc) from None
    return res


# ------------------------------------------------------------------------------ the front door

def dask_predicate(data: Any, options: dict[str, Any]) -> bool:
    """The backend's predicate: a dask DataFrame (dask is not imported to tell)."""
    return is_dask_frame(data)


def fit_request(request: Any) -> Any:
    """Fit an :class:`attnreg.large.FitRequest` whose data is a dask DataFrame.

    The front door's options pass through; ``client=``, ``scheduler=``, ``split_every=``
    and ``read_parquet=`` are this backend's own (``chunk_rows`` is ignored: the partitions are
    the chunks).
    """
    from attnreg.large.options import check_chunk_options, check_request_rows
    from attnreg.methods import call_string, get_method

    options = dict(request.options)
    own = get_method(request.method).fit_chunks
    if own is not None:  # a method with its own passes (a GLM's IRLS): partitions streamed
        need_dask()
        client, scheduler = options.pop("client", None), options.pop("scheduler", None)
        for name in ("split_every", "read_parquet", "chunk_rows"):
            options.pop(name, None)
        chunk = check_chunk_options(options)
        check_request_rows(request)
        call = call_string(request.formula, request.method, options,
                           weighted=request.weights is not None)
        source = DaskSource(request.data, resolve_client(client), scheduler)
        return own(dataclasses.replace(request, data=source, options=options), chunk, call)
    return fit_dask(request.formula, request.data, request.method, weights=request.weights,
                    subset=request.subset, na_action=request.na_action,
                    eval_env=request.eval_env, **options)
