"""Expanding and 60-row rolling OLS over 10,000 origins as users run it: default threads, one
thread, and a busy neighbour, each against statsmodels' RollingOLS(params_only) in the same run.

    python benchmarks/threads_rolling.py            # P = 50 regressors, best of 3

attnreg's timing is ``attnreg.timeseries.recursive_ls`` (the engine under ``forecast()`` and
``rolling()``); statsmodels' is ``RollingOLS(y, X, window, expanding=...).fit(params_only=True)``
over the same windows. Wall-clock seconds, best of ``--reps``; the busy neighbour is a second
process spinning one core (see :mod:`threads_ols`).
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from threads_ols import best, busy_neighbour

N_ORIGINS, N_REGRESSORS, WINDOW = 10_000, 50, 60


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()

    from statsmodels.regression.rolling import RollingOLS
    from threadpoolctl import threadpool_limits

    from attnreg.timeseries import recursive_ls

    rng = np.random.default_rng(2024)
    n = N_ORIGINS + WINDOW - 1
    X = rng.standard_normal((n, N_REGRESSORS))
    y = 0.5 + X @ rng.standard_normal(N_REGRESSORS) + rng.standard_normal(n)
    X1 = np.column_stack([np.ones(n), X])
    for window in (None, WINDOW):
        name = "expanding" if window is None else f"rolling {window}"

        def ours(window: int | None = window) -> None:
            recursive_ls(X, y, window=window, min_nobs=WINDOW, intercept=True)

        def theirs(window: int | None = window) -> None:
            RollingOLS(y, X1, window=window or n, min_nobs=WINDOW,
                       expanding=window is None).fit(params_only=True)

        ours(), theirs()
        for label, context in (("default", contextlib.nullcontext()),
                               ("1 thread", threadpool_limits(1, user_api="blas")),
                               ("busy", busy_neighbour())):
            with context:
                a, s = best(ours, args.reps), best(theirs, args.reps)
            print(f"{name:>10} {label:>9}: attnreg {a:6.3f} s   RollingOLS {s:6.3f} s   "
                  f"ratio {s / a:4.1f}x", flush=True)


if __name__ == "__main__":
    main()
