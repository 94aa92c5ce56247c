"""attnreg's thread policy: small LAPACK work on one thread, one control for BLAS and torch.

Multi-threaded OpenBLAS is slower than one thread on small factorizations, and spin-waiting
thread pools collapse when another process takes a core. So the factorizations of small
matrices (the p × p SVD of R, the re-triangularisation after dropping aliased columns, the
thin SVD of a wide design) and the many small per-origin solves of the forecasting engine run
on one BLAS thread (:func:`small_lapack`), while the tall QR's big panels, X'X-sized products
and prediction over many rows use every thread the user allows.

The user's control is :func:`set_threads` (or the ``ATTNREG_THREADS`` environment variable):
a cap on BLAS and torch threads during attnreg's work. Settings are restored on return;
attnreg never changes the process's thread settings for good.

Examples
--------
>>> import attnreg as ar
>>> ar.set_threads(1)
>>> ar.get_threads()
1
>>> ar.set_threads(None)  # back to the libraries' own defaults (or ATTNREG_THREADS)
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, TypeVar

from attnreg.exceptions import OptionError

__all__ = ["ENV_VAR", "NARROW_COLUMNS", "get_threads", "narrow_blas", "parallel_map", "row_workers",
           "scratch", "set_threads", "small_lapack", "small_torch_ops", "task_threads", "user_threads"]

T = TypeVar("T")
R = TypeVar("R")

#: The environment variable read when :func:`set_threads` was not called.
ENV_VAR = "ATTNREG_THREADS"

_threads: int | None = None
_controller: Any = None
_local = threading.local()  # per thread: a row_workers override, scratch arrays


def _positive(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise OptionError(f"{what} must be a positive integer or None, however: {value!r}")
    return value


def set_threads(n: int | None) -> None:
    """Cap the BLAS and torch threads attnreg uses (None: the libraries' defaults).

    Parameters
    ----------
    n : int or None
        At most this many threads during every fit and forecast; restored after each call.
        Overrides ``ATTNREG_THREADS``.

    Examples
    --------
    >>> import attnreg as ar
    >>> ar.set_threads(2)
    >>> ar.get_threads()
    2
    >>> ar.set_threads(None)
    """
    global _threads
    _threads = None if n is None else _positive(n, "set_threads(n)")


def get_threads() -> int | None:
    """The cap in force: :func:`set_threads`'s, else ``ATTNREG_THREADS``'s, else None.

    Examples
    --------
    >>> import os
    >>> import attnreg as ar
    >>> os.environ["ATTNREG_THREADS"] = "1"
    >>> ar.get_threads()
    1
    >>> del os.environ["ATTNREG_THREADS"]
    """
    if _threads is not None:
        return _threads
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise OptionError(f"{ENV_VAR} must be a positive integer, however: {raw!r}") from None
    return _positive(value, ENV_VAR)


def _blas() -> Any:
    """threadpoolctl's controller of the loaded BLAS libraries (found once: about 7 µs a use)."""
    global _controller
    if _controller is None:
        from threadpoolctl import ThreadpoolController

        _controller = ThreadpoolController()
    return _controller


@contextmanager
def _blas_limit(n: int) -> Iterator[None]:
    with _blas().limit(limits=n, user_api="blas"):
        yield


@contextmanager
def small_lapack() -> Iterator[None]:
    """One BLAS thread for the enclosed small factorizations (restored after)."""
    with _blas_limit(1):
        yield


#: Designs narrower than this many columns are reduced on one BLAS thread: their row-block
#: QRs and products are too small for threads to pay (measured with OpenBLAS 0.3.31 on two
#: cores: 1e5 x 100, 160 ms on two threads and 111 ms on one; 2e4 x 600, 486 ms and 581 ms;
#: the crossover lies between 300 and 600 columns).
NARROW_COLUMNS = 400


@contextmanager
def narrow_blas(n_columns: int) -> Iterator[None]:
    """One BLAS thread for work on a design narrower than :data:`NARROW_COLUMNS` columns."""
    if n_columns >= NARROW_COLUMNS:
        yield
        return
    with _blas_limit(1):
        yield


@contextmanager
def user_threads(uses_torch: bool = False) -> Iterator[None]:
    """The user's cap (:func:`get_threads`) on BLAS and torch, restored after.

    Parameters
    ----------
    uses_torch : bool
        The enclosed work fits a torch model: import torch to cap it too (otherwise torch is
        capped only when already imported).
    """
    n = get_threads()
    if n is None:
        yield
        return
    if uses_torch:
        importlib.import_module("torch")
    torch: Any = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    try:
        if torch is not None:
            torch.set_num_threads(n)
        with _blas_limit(n):
            yield
    finally:
        if torch is not None and before is not None:
            torch.set_num_threads(before)


@contextmanager
def small_torch_ops() -> Iterator[None]:
    """torch on one intra-op thread for work made of many small operations (restored after).

    Mini-batch training of the networks runs thousands of operations of a few hundred
    microseconds each. An OpenMP team makes every one of them wait for its slowest thread,
    and a thread sharing its core with another process is the slowest by a scheduler time
    slice: on two cores, the Regression Block on Kin8nm trained in 7.5 s on two threads, 9.4 s
    on one, and 84.5 s on two with one core busy. So such work runs on one thread unless the
    user asked for more (:func:`set_threads` or ``ATTNREG_THREADS``), which is then the number.
    """
    import torch

    n = get_threads() or 1
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def row_workers() -> int:
    """Threads that work on row blocks in parallel: the user's cap, else the usable cores.

    Row blocks are factorised by LAPACK calls that release the GIL
    (:mod:`attnreg.linear.lapack`), each on one BLAS thread, so a few Python threads use
    the cores where one multi-threaded BLAS call on a narrow block would not.

    Examples
    --------
    >>> import attnreg as ar
    >>> from attnreg.threads import row_workers
    >>> ar.set_threads(1)
    >>> row_workers()
    1
    >>> ar.set_threads(None)
    """
    local = getattr(_local, "row_workers", None)
    if local is not None:
        return int(local)
    n = get_threads()
    if n is not None:
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@contextmanager
def task_threads(n: int) -> Iterator[None]:
    """:func:`row_workers` is ``n`` in the calling thread for the enclosed work (restored after).

    For work that already runs as one of many parallel tasks (a dask worker's task): its
    row blocks then run inline instead of on threads of their own.

    Examples
    --------
    >>> from attnreg.threads import row_workers, task_threads
    >>> with task_threads(1):
    ...     row_workers()
    1
    """
    before = getattr(_local, "row_workers", None)
    _local.row_workers = _positive(n, "task_threads(n)")
    try:
        yield
    finally:
        _local.row_workers = before


_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def _pool(workers: int) -> ThreadPoolExecutor:
    with _pools_lock:
        pool = _pools.get(workers)
        if pool is None:
            pool = _pools[workers] = ThreadPoolExecutor(workers, thread_name_prefix="attnreg-rows")
        return pool


def parallel_map(fn: Callable[[T], R], items: Iterable[T], workers: int | None = None) -> list[R]:
    """``[fn(x) for x in items]`` with the items spread over :func:`row_workers` threads.

    The results come back in the order of ``items`` and do not depend on the number of
    workers (each item is one task, whoever runs it). ``fn`` should spend its time in code
    that releases the GIL (LAPACK through :mod:`attnreg.linear.lapack`, numpy's array
    operations). Called from inside a worker, the items run inline (no nested pools).

    Examples
    --------
    >>> from attnreg.threads import parallel_map
    >>> parallel_map(lambda x: x * x, range(5), workers=2)
    [0, 1, 4, 9, 16]
    """
    todo = list(items)
    n = row_workers() if workers is None else workers
    if n <= 1 or len(todo) <= 1 or threading.current_thread().name.startswith("attnreg-rows"):
        return [fn(x) for x in todo]
    return list(_pool(min(n, len(todo))).map(fn, todo))


def scratch(name: str, shape: tuple[int, ...], order: str = "C") -> Any:
    """This thread's reusable float64 array ``name`` of ``shape`` (contents undefined).

    Passes over blocks of rows that allocate their temporaries afresh touch new memory at
    every block: glibc hands blocks of a few MiB out as fresh mappings, and each first
    touch of a page is a fault (a 16384 × 19 temporary: 1 ms of faults, 74 µs of work).
    A worker keeps one buffer per name, grown when needed, for as long as it lives.

    Examples
    --------
    >>> from attnreg.threads import scratch
    >>> a = scratch("demo", (3, 4))
    >>> b = scratch("demo", (2, 2), order="F")   # the same memory, another shape
    >>> a.shape, b.shape, b.flags.f_contiguous
    ((3, 4), (2, 2), True)
    """
    import numpy as np

    cache = _local.__dict__.setdefault("scratch", {})
    size = 1
    for d in shape:
        size *= int(d)
    buf = cache.get(name)
    if buf is None or buf.size < size:
        buf = cache[name] = np.empty(max(size, 1))
    return buf[:size].reshape(shape, order=order)
