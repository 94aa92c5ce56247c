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
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import AttnregError, DataError, OptionError
from attnreg.large.dask_predict import (
    is_dask_frame,
    is_dask_series,
    predict_dask,
    pytest_importorskip,  # noqa: F401 - the examples use it
)
from attnreg.large.sources import ChunkSource

__all__ = ["DEFAULT_SPLIT_EVERY", "DaskRunner", "DaskSource", "DistributedSource",
           "dask_predicate", "fit_dask", "fit_request", "is_dask_frame", "is_dask_series",
           "learn_dask_spec", "predict_dask", "resolve_client"]

#: partials merged per task of the tree reduction (depth log_8 P)
DEFAULT_SPLIT_EVERY = 8


def _need_dask() -> None:
    try:
        import dask.dataframe  # noqa: F401
    except ImportError:  # pragma: no cover - the predicate never sends dask data without it
        raise OptionError("fitting a dask DataFrame needs dask: pip install "
                          "'dask[dataframe]' distributed") from None


def resolve_client(client: Any = None) -> Any:
    """The distributed client a dask fit uses, or None for dask's default scheduler.

    Parameters
    ----------
    client : distributed.Client, str or None
        A client; a scheduler address (``"tcp://10.0.0.5:8786"``: a client is connected to
        it); None: the client in use (:func:`distributed.get_client`), if any.

    Returns
    -------
    distributed.Client or None

    Examples
    --------
    >>> resolve_client(None) is None or True
    True
    """
    if client is None:
        if "distributed" not in sys.modules:
            return None
        try:
            from distributed import get_client
        except ImportError:  # pragma: no cover
            return None
        try:
            return get_client()
        except ValueError:
            return None
    if isinstance(client, str):
        try:
            from distributed import Client
        except ImportError:
            raise OptionError("client= as an address needs distributed: pip install "
                              "distributed") from None
        _check_address(client)
        try:
            return Client(client, set_as_default=False, timeout=30)
        except OSError as exc:
            raise OptionError(f"client: no dask scheduler could be reached at {client!r} "
                              f"({exc})") from None
    if not hasattr(client, "submit") or not hasattr(client, "compute"):
        raise OptionError(f"client must be a distributed.Client, a scheduler address or None, "
                          f"however: type(client) is {type(client).__name__}")
    return client


def _check_address(address: str) -> None:
    """A scheduler address distributed can parse (checked before a Client is made: a Client
    whose address fails to parse waits a minute to close when collected)."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        scheme, location = parse_address(address)
        if scheme in ("tcp", "tls", "ws", "wss"):
            parse_host_port(location)
    except (ValueError, TypeError) as exc:
        raise OptionError(f"client must be a distributed.Client or a scheduler address such "
                          f"as 'tcp://10.0.0.5:8786', however: client={address!r} "
                          f"({exc})") from None


def _clean(exc: BaseException) -> BaseException:
    """An attnreg error raised on a worker, without the scheduler's frames."""
    return exc.with_traceback(None)


def _partition_frame(part: pd.DataFrame, columns: Sequence[str] | None,
                     uses: Any) -> pd.DataFrame:
    """A partition as :meth:`ChunkSource.frames` yields a chunk: columns, labels, input rules."""
    from attnreg.formula.frame import prepare_frame, string_labels

    wanted = None if columns is None else list(dict.fromkeys(columns))
    # the partition already holds just these columns (dask projects them when it reads):
    # reordering them would copy the whole partition
    frame = part if wanted is None or (len(wanted) == part.shape[1]
                                       and set(wanted) == set(part.columns)) else part[wanted]
    frame = string_labels(frame, "data")
    return prepare_frame(frame, uses, "data") if uses is not None else frame


def _apply(part: pd.DataFrame, fn: Callable[..., Any], args: tuple[Any, ...],
           columns: Sequence[str] | None, uses: Any) -> Any:
    """``fn(*args, frame)`` on one partition (runs on a worker, as one task of many: its row
    blocks run inline, not on threads of their own)."""
    from attnreg.threads import task_threads

    with task_threads(1):
        return fn(*args, _partition_frame(part, columns, uses))


def _merge_all(*parts: Any) -> Any:
    """Merge consecutive partials in row order (one node of the tree)."""
    out = parts[0]
    for p in parts[1:]:
        out = out.merge(p)
    return out


class DaskSource(ChunkSource):
    """A dask DataFrame read partition by partition through the client (one in memory).

    Used by pass 1 when the formula's statistics cannot be merged from per-partition
    summaries, and wherever a :class:`~attnreg.large.sources.ChunkSource` is needed. The
    next partition is computed while the current one is used.
    """

    portable = False

    def __init__(self, ddf: Any, client: Any = None, scheduler: Any = None) -> None:
        self._ddf = ddf
        self._client = client
        self._scheduler = scheduler
        self.columns = tuple(str(c) for c in ddf.columns)
        self.n_rows = None
        self.chunk_rows = 0
        self.description = f"dask DataFrame ({ddf.npartitions} partitions)"

    def __getstate__(self) -> dict[str, Any]:
        raise DataError(f"{self.description} is not saved with a fit (a fit keeps only a "
                        "description of its source)")

    def _raw(self, columns: Sequence[str]) -> Iterator[pd.DataFrame]:
        import dask

        parts = self._ddf[list(columns)].to_delayed(optimize_graph=True)
        if self._client is not None:
            ahead = self._client.compute(parts[0]) if parts else None
            for i in range(len(parts)):
                current = ahead
                ahead = self._client.compute(parts[i + 1]) if i + 1 < len(parts) else None
                assert current is not None
                yield current.result()
            return
        for p in parts:
            (frame,) = dask.compute(p, scheduler=self._scheduler)
            yield frame


class DaskRunner:
    """Runs a chunk function on every partition and merges the partials in a tree.

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
    client : distributed.Client or None
        None: dask's default scheduler (or ``scheduler``).
    scheduler : str, optional
        A local scheduler name for ``dask.compute`` ("threads", "sync", "processes") when
        there is no client.
    split_every : int
        Partials merged per task of the reduction.
    progress : bool
        Report partitions done on stderr.
    read_parquet : bool
        Whether a frame that is a plain read of local parquet files has its partitions read
        by the tasks themselves with pyarrow (:mod:`attnreg.large.dask_parquet`; the same
        frames, at half the cost) rather than by dask.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> dd = pytest_importorskip("dask.dataframe")
    >>> from attnreg.large.dask import DaskRunner
    >>> ddf = dd.from_pandas(pd.DataFrame({"x": np.arange(10.0)}), npartitions=3)
    >>> runner = DaskRunner(ddf, scheduler="sync")
    >>> runner.map_reduce(_Total.of, (), columns=["x"]).value    # 0 + 1 + ... + 9
    45.0
    """

    def __init__(self, ddf: Any, client: Any = None, *, scheduler: Any = None,
                 split_every: int = DEFAULT_SPLIT_EVERY, progress: bool = False,
                 read_parquet: bool = True) -> None:
        if (not isinstance(split_every, (int, np.integer)) or isinstance(split_every, bool)
                or split_every < 2):
            raise OptionError(f"split_every must be an integer >= 2, however: {split_every=}")
        self.ddf = ddf
        self.client = client
        self.scheduler = scheduler
        self.split_every = int(split_every)
        self.progress = bool(progress)
        self.read_parquet = bool(read_parquet)
        self._pieces: dict[tuple[str, ...], Any] = {}

    @property
    def n_partitions(self) -> int:
        """Partitions of the frame (the chunks)."""
        return int(self.ddf.npartitions)

    @property
    def description(self) -> str:
        """What is fitted, for reports."""
        where = "" if self.client is None else f" on {_client_label(self.client)}"
        return f"dask DataFrame ({self.n_partitions} partitions){where}"

    def head(self, n: int) -> pd.DataFrame:
        """The first ``n`` rows of the first partition (computed on a worker; only they come
        to the client)."""
        import warnings

        import dask

        with warnings.catch_warnings():
            # a first partition shorter than n is fine: its rows are what is wanted
            warnings.filterwarnings("ignore", message="Insufficient elements for `head`")
            lazy = self.ddf.head(n, npartitions=1, compute=False)
            try:
                if self.client is not None:
                    return self.client.compute(lazy).result()  # type: ignore[no-any-return]
                (out,) = dask.compute(lazy, scheduler=self.scheduler)
            except AttnregError as exc:
                raise _clean(exc) from None
        return out  # type: ignore[no-any-return]

    def source(self) -> DaskSource:
        """The frame as a ChunkSource read through the client (pass 1's fallback)."""
        return DaskSource(self.ddf, self.client, self.scheduler)

    def map_reduce(self, fn: Callable[..., Any], args: tuple[Any, ...], *,
                   columns: Sequence[str] | None, uses: Any = None,
                   label: str = "attnreg pass") -> Any:
        """``merge`` of ``fn(*args, frame)`` over the partitions, in row order.

        Parameters
        ----------
        fn : callable
            Of the arguments then one partition's frame; returns a partial with ``merge``.
            Runs on the workers: it and ``args`` must pickle.
        args : tuple
            Shipped once (one key in the graph).
        columns : sequence of str or None
            Columns each partition is cut to (None: all).
        uses : mapping, optional
            Input rules per partition (as :meth:`ChunkSource.frames`).
        label : str
            The progress line's label.

        Returns
        -------
        The merged partial (only it reaches the client).
        """
        import dask

        frame = self.ddf if columns is None else self.ddf[list(columns)]
        pieces = self._parquet_pieces(frame)
        if pieces is not None:
            # a plain read of local parquet files: each task reads its own piece with pyarrow
            # (dask's own read costs twice as much; see attnreg.large.dask_parquet)
            names = [str(c) for c in frame.columns]
            dtypes = {str(c): t for c, t in frame._meta.dtypes.items()}
            layout = dask.delayed((names, dtypes), pure=True)
            parts: list[tuple[Any, ...]] = [(_apply_piece, p, layout) for p in pieces]
        else:
            parts = [(_apply_shared, p) for p in frame.to_delayed(optimize_graph=True)]
        if not parts:
            raise DataError("data (dask DataFrame) has no partitions")
        shared = dask.delayed(args, pure=True)
        try:
            if self.client is not None:
                return self._with_client(parts, fn, shared, columns, uses, label)
            return self._local(parts, fn, shared, columns, uses, label)
        except AttnregError as exc:
            raise _clean(exc) from None

    def _parquet_pieces(self, frame: Any) -> Any:
        """The partitions as parquet pieces attnreg reads itself, or None (see
        :func:`attnreg.large.dask_parquet.parquet_partitions`); asked once per column set."""
        from attnreg.large.dask_parquet import parquet_partitions

        key = tuple(str(c) for c in frame.columns)
        if key not in self._pieces:
            self._pieces[key] = parquet_partitions(self.ddf, key) if self.read_parquet else None
        return self._pieces[key]

    def _with_client(self, parts: list[tuple[Any, ...]], fn: Callable[..., Any], shared: Any,
                     columns: Sequence[str] | None, uses: Any, label: str) -> Any:
        import dask
        from distributed import as_completed

        from attnreg._progress import Progress

        client = self.client
        tasks = [dask.delayed(p[0])(*p[1:], fn, shared, columns, uses) for p in parts]
        futures = client.compute(tasks)
        with Progress(len(futures), f"{label}: partitions", self.progress) as bar:
            for done, fut in enumerate(as_completed(futures), start=1):
                bar.update(done)
                if fut.status == "error":
                    fut.result()  # raises the worker's exception here
        level = futures
        while len(level) > 1:
            s = self.split_every
            level = [client.submit(_merge_all, *level[i:i + s], pure=False)
                     for i in range(0, len(level), s)]
        return level[0].result()

    def _local(self, parts: list[tuple[Any, ...]], fn: Callable[..., Any], shared: Any,
               columns: Sequence[str] | None, uses: Any, label: str) -> Any:
        import dask
        from dask.callbacks import Callback

        from attnreg._progress import Progress

        tasks = [dask.delayed(p[0])(*p[1:], fn, shared, columns, uses,
                                    dask_key_name=f"attnreg-partition-{i}-"
                                                  f"{dask.base.tokenize(p[1], fn)}")
                 for i, p in enumerate(parts)]
        level = tasks
        while len(level) > 1:
            s = self.split_every
            level = [dask.delayed(_merge_all)(*level[i:i + s]) for i in range(0, len(level), s)]
        with Progress(len(tasks), f"{label}: partitions", self.progress) as bar:
            state = {"done": 0}

            def posttask(key: Any, result: Any, dsk: Any, st: Any, worker_id: Any) -> None:
                name = key if isinstance(key, str) else str(key)
                if name.startswith("attnreg-partition-"):
                    state["done"] += 1
                    bar.update(state["done"])

            with Callback(posttask=posttask):
                (out,) = dask.compute(level[0], scheduler=self.scheduler)
        return out


def _apply_shared(part: pd.DataFrame, fn: Callable[..., Any], args: tuple[Any, ...],
                  columns: Sequence[str] | None, uses: Any) -> Any:
    return _apply(part, fn, args, columns, uses)


def _apply_piece(piece: Any, layout: tuple[list[str], dict[str, Any]],
                 fn: Callable[..., Any], args: tuple[Any, ...], columns: Sequence[str] | None,
                 uses: Any) -> Any:
    """:func:`_apply` on a partition this task reads from its parquet file itself."""
    from attnreg.large.dask_parquet import read_piece

    names, dtypes = layout
    return _apply(read_piece(piece, names, dtypes), fn, args, columns, uses)


def _client_label(client: Any) -> str:
    try:
        return str(client.scheduler.address)
    except AttributeError:  # pragma: no cover - a client without a scheduler comm
        return type(client).__name__


@dataclasses.dataclass(frozen=True)
class _Total:
    """A toy partial (the sum of a column), for the examples and tests of the runner."""

    value: float

    @classmethod
    def of(cls, frame: pd.DataFrame) -> _Total:
        return cls(float(frame.iloc[:, 0].sum()))

    def merge(self, other: _Total) -> _Total:
        return _Total(self.value + other.value)


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
    from attnreg.large.spec import check_chunkwise, formula_env

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
    from attnreg.large.fit import check_residuals, finish, fit_from_factor, refine
    from attnreg.linear.refinement import REFINE_COND
    from attnreg.methods import get_method, method_names

    _need_dask()
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
        raise _clean(exc) from None
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
    from attnreg.large.fit import check_chunk_options, check_request_rows
    from attnreg.methods import call_string, get_method

    options = dict(request.options)
    own = get_method(request.method).fit_chunks
    if own is not None:  # a method with its own passes (a GLM's IRLS): partitions streamed
        _need_dask()
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
