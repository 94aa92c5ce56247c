"""The three conditions every benchmark reports: what users get, one thread, a busy neighbour.

* ``default``  -- the libraries' own thread settings (what users get);
* ``1 thread`` -- BLAS pinned to one thread (threadpoolctl), torch and numba (pyfixest's
  kernels) set to one thread when imported, and attnreg capped at one
  (``attnreg.set_threads(1)``), around every tool timed;
* ``busy``     -- default threads while a second process keeps one core busy (started before
  the timing and stopped after it, by the benchmark itself).

attnreg's own thread policy applies in every condition: it is part of what is measured.
Peers are timed under the same condition in the same run, so ratios compare like with like.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

#: benchmarks measure the checkout they belong to, whatever attnreg is installed
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CONDITIONS = ("default", "1 thread", "busy")

#: environment variables that pin a fresh process's thread pools to one thread
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
               "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS")


def _spin(stop: mp.synchronize.Event) -> None:
    x = 0
    while not stop.is_set():
        x += 1


@contextlib.contextmanager
def busy_neighbour() -> Iterator[None]:
    """A second process spinning one core for the duration (started and stopped here)."""
    stop = mp.Event()
    proc = mp.Process(target=_spin, args=(stop,), daemon=True)
    proc.start()
    time.sleep(0.5)
    try:
        yield
    finally:
        stop.set()
        proc.join()


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """BLAS, torch and numba (when imported) and attnreg on one thread; restored after."""
    from threadpoolctl import threadpool_limits

    import attnreg as ar

    torch, numba = sys.modules.get("torch"), sys.modules.get("numba")
    before = torch.get_num_threads() if torch is not None else None
    numba_before = numba.get_num_threads() if numba is not None else None
    ar.set_threads(1)
    try:
        with threadpool_limits(1):
            if torch is not None:
                torch.set_num_threads(1)
            if numba is not None:  # pyfixest's demeaning runs numba's parallel loops
                numba.set_num_threads(1)
            yield
    finally:
        ar.set_threads(None)
        if torch is not None and before is not None:
            torch.set_num_threads(before)
        if numba is not None and numba_before is not None:
            numba.set_num_threads(numba_before)


@contextlib.contextmanager
def under(condition: str) -> Iterator[None]:
    """Run the enclosed timing under one of :data:`CONDITIONS`."""
    if condition == "default":
        yield
    elif condition == "1 thread":
        with one_thread():
            yield
    elif condition == "busy":
        with busy_neighbour():
            yield
    else:
        raise ValueError(f"condition must be one of {CONDITIONS}, however: {condition!r}")


def child_env(condition: str) -> dict[str, str]:
    """Environment of a fresh worker process under ``condition`` (busy: start it yourself)."""
    env = dict(os.environ)
    if condition == "1 thread":
        env.update({v: "1" for v in THREAD_VARS})
        env["ATTNREG_THREADS"] = "1"
    return env


def best_of(fn: Callable[[], object], reps: int) -> float:
    """The shortest wall-clock time of ``reps`` calls."""
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def add_arguments(ap: object) -> None:
    """``--conditions`` (default: all three), for an ``argparse.ArgumentParser``."""
    ap.add_argument("--conditions", nargs="+", choices=CONDITIONS, default=list(CONDITIONS),  # type: ignore[attr-defined]
                    help="thread conditions to measure (default: all three)")
