"""Running work on the partitions of a dask DataFrame: the client or scheduler
(:func:`resolve_client`), :class:`DaskSource` (the partitions as chunks) and
:class:`DaskRunner` (a function mapped over the partitions and its partials merged by a tree
reduction, where the partitions are). ``import attnreg`` never imports dask: this module
imports it when a dask frame is fitted.
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
    pytest_importorskip,  # noqa: F401 - the examples use it
)
from attnreg.large.source_base import ChunkSource

__all__ = ["DEFAULT_SPLIT_EVERY", "DaskRunner", "DaskSource", "clean_error", "need_dask",
           "resolve_client"]

#: partials merged per task of the tree reduction (depth log_8 P)
DEFAULT_SPLIT_EVERY = 8


def need_dask() -> None:
    """Refuse, with the install command, when dask is not installed."""
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


def clean_error(exc: BaseException) -> BaseException:
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
    summaries, and wherever a :class:`~attnreg.large.source_base.ChunkSource` is needed. The
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
                raise clean_error(exc) from None
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
            raise clean_error(exc) from None

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
