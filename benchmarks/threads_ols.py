"""OLS formula -> fit -> printed summary as users run it: default threads, one thread, busy.

    python benchmarks/threads_ols.py                   # 1e5 x 100, best of 3
    python benchmarks/threads_ols.py --size 1e6x100 --reps 2

Three columns, each a ratio against statsmodels measured in the same run and process:

* default  -- the libraries' own thread settings (what users get);
* 1 thread -- BLAS pinned to one thread with threadpoolctl, around both tools;
* busy     -- default threads while a second process keeps one core busy (started and
  stopped by this script).

attnreg's own thread policy (``attnreg.threads``) applies in every column; it is what is
measured. Times are wall-clock seconds, best of ``--reps``.
"""

from __future__ import annotations

import argparse
import contextlib
import multiprocessing as mp
import time
from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd


def _spin(stop: mp.synchronize.Event) -> None:
    x = 0
    while not stop.is_set():
        x += 1


@contextlib.contextmanager
def busy_neighbour() -> Iterator[None]:
    """A second process spinning one core for the duration."""
    stop = mp.Event()
    proc = mp.Process(target=_spin, args=(stop,), daemon=True)
    proc.start()
    time.sleep(0.5)
    try:
        yield
    finally:
        stop.set()
        proc.join()


def best(fn: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1e5x100", help="rows x predictors, e.g. 1e5x100")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    n_text, p_text = args.size.lower().split("x")
    n, p = int(float(n_text)), int(p_text)

    import statsmodels.formula.api as smf
    from threadpoolctl import threadpool_limits

    import attnreg as ar

    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, p))
    df = pd.DataFrame(X, columns=[f"x{i}" for i in range(p)])
    df["y"] = X @ rng.normal(size=p) + rng.normal(size=n)
    formula = "y ~ " + " + ".join(df.columns[:-1])

    def ours() -> None:
        str(ar.attnreg(formula, df).summary())

    def theirs() -> None:
        str(smf.ols(formula, df).fit().summary())

    ours(), theirs()  # imports and first-call caches are not timed
    rows = []
    for label, context in (("default", contextlib.nullcontext()),
                           ("1 thread", threadpool_limits(1, user_api="blas")),
                           ("busy", busy_neighbour())):
        with context:
            a, s = best(ours, args.reps), best(theirs, args.reps)
        rows.append((label, a, s))
        print(f"{label:>9}: attnreg {a:7.3f} s   statsmodels {s:7.3f} s   ratio {s / a:5.1f}x",
              flush=True)
    idle = rows[0][1]
    print(f"attnreg busy / idle: {rows[2][1] / idle:.2f}x")


if __name__ == "__main__":
    main()
