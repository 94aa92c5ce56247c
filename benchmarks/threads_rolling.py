"""Expanding and 60-row rolling OLS over 10,000 origins as users run it: default threads, one
thread, and a busy neighbour, each against statsmodels' RollingOLS(params_only) in the same run.

    python benchmarks/threads_rolling.py            # P = 50 regressors, best of 3

attnreg timings against statsmodels' ``RollingOLS(y, X, window, expanding=...)
.fit(params_only=True)`` over the same windows:

* engine     -- ``attnreg.timeseries.recursive_ls`` (what ``forecast()`` and ``rolling()`` run);
* forecast() -- end to end as users run it: ``ar.forecast(formula, data, method="ols", ...)``
  from the formula (50 lagged regressors), every origin's fit and forecast, and the printed
  ``summary()`` with its evaluation;
* rolling(params_only) -- ``ar.rolling("y ~ x0 + ... + x49", data, window=60[, expanding=True],
  params_only=True)`` end to end (formula, design, coefficient frame): the like-for-like
  counterpart of ``RollingOLS(...).fit(params_only=True)``; and ``rolling()`` with its
  standard errors (the default) for reference.

Wall-clock seconds, best of ``--reps`` interleaved rounds (each round calls every tool once),
under the three conditions of ``conditions.py``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conditions import add_arguments, under

N_ORIGINS, N_REGRESSORS, WINDOW = 10_000, 50, 60


def best_interleaved(funcs: dict[str, Callable[[], object]], reps: int) -> dict[str, float]:
    """Shortest wall-clock time of each function over ``reps`` rounds that call each once.

    Interleaving exposes every tool to the same load from other processes, so the ratios
    measured in one run stay meaningful on a shared machine.
    """
    best = dict.fromkeys(funcs, float("inf"))
    for _ in range(reps):
        for key, fn in funcs.items():
            start = time.perf_counter()
            fn()
            best[key] = min(best[key], time.perf_counter() - start)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=3)
    add_arguments(ap)
    args = ap.parse_args()

    from statsmodels.regression.rolling import RollingOLS

    import attnreg as ar
    from attnreg.timeseries import recursive_ls

    rng = np.random.default_rng(2024)
    n = N_ORIGINS + WINDOW - 1
    X = rng.standard_normal((n, N_REGRESSORS))
    y = 0.5 + X @ rng.standard_normal(N_REGRESSORS) + rng.standard_normal(n)
    X1 = np.column_stack([np.ones(n), X])
    # the same regression as a forecasting formula: y_t on x_{t-1}, so row t+1 holds x_t
    names = [f"x{j}" for j in range(N_REGRESSORS)]
    frame = pd.DataFrame(np.vstack([X, np.zeros((1, N_REGRESSORS))]), columns=names)
    frame["y"] = np.r_[np.nan, y]
    formula = "y ~ " + " + ".join(f"lag({c}, 1)" for c in names)
    plain = pd.DataFrame(X, columns=names).assign(y=y)  # the same regression, unlagged
    plain_formula = "y ~ " + " + ".join(names)
    for window in (None, WINDOW):
        name = "expanding" if window is None else f"rolling {window}"

        def ours(window: int | None = window) -> None:
            recursive_ls(X, y, window=window, min_nobs=WINDOW, intercept=True)

        def theirs(window: int | None = window) -> None:
            RollingOLS(y, X1, window=window or n, min_nobs=WINDOW,
                       expanding=window is None).fit(params_only=True)

        def end_to_end(window: int | None = window) -> None:
            extra = {} if window is None else {"window": window}
            fc = ar.forecast(formula, frame, method="ols",
                             scheme="recursive" if window is None else "rolling",
                             start=WINDOW + 1, progress=False, **extra)
            str(fc.summary())

        def rolling(window: int | None = window, params_only: bool = True) -> None:
            ar.rolling(plain_formula, plain, window=window or WINDOW,
                       expanding=window is None, params_only=params_only)

        ours(), theirs(), end_to_end(), rolling()
        for label in args.conditions:
            with under(label):
                t = best_interleaved({"engine": ours, "peer": theirs, "forecast": end_to_end,
                                      "rolling": rolling,
                                      "rolling_se": lambda: rolling(params_only=False)},
                                     args.reps)
            a, s, f, r, r_se = (t[k] for k in ("engine", "peer", "forecast", "rolling",
                                                "rolling_se"))
            print(f"{name:>10} {label:>9}: engine {a:6.3f} s ({s / a:4.1f}x)   forecast() "
                  f"{f:6.3f} s ({s / f:4.1f}x)   rolling(params_only) {r:6.3f} s "
                  f"({s / r:4.1f}x)   rolling() with SEs {r_se:6.3f} s   RollingOLS {s:6.3f} s",
                  flush=True)


if __name__ == "__main__":
    main()
