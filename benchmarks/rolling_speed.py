"""Speed of recursive/rolling least squares: updating fits against peers.

Times ``attnreg.timeseries.recursive_ls`` for 10,000 origins with P = 50 regressors
(plus an intercept), expanding and rolling (window = 60), against

* statsmodels ``RollingOLS(...).fit(params_only=True)`` (``expanding=True`` with a window
  spanning the sample for the expanding case),
* a naive refit loop (``numpy.linalg.lstsq`` on every window), timed on every 20th origin
  (500 origins) and extrapolated to all 10,000 (for the expanding window the sampled
  origins are spread evenly, so the growing cost is represented),
* ridge with λ chosen by GCV at every origin against ridge with a fixed λ.

BLAS is pinned to one thread and every timing is the best of ``--repeat`` runs of process
CPU time, so the ratios, all measured in the same run, are not disturbed by other load on
the machine. Run as ``python benchmarks/rolling_speed.py``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import statsmodels.api as sm
from statsmodels.regression.rolling import RollingOLS
from threadpoolctl import threadpool_limits

from attnreg.timeseries.updating import recursive_ls

N_ORIGINS, N_REGRESSORS, WINDOW, NAIVE_STRIDE = 10_000, 50, 60, 20


def best_time(func: Callable[[], object], repeat: int) -> float:
    """Smallest process CPU time (seconds) of ``repeat`` calls of ``func``."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        func()
        times.append(time.process_time() - start)
    return min(times)


def naive_refit(X: np.ndarray, y: np.ndarray, window: int | None, origins: np.ndarray) -> None:
    """Refit OLS with an intercept from scratch on the window of each origin."""
    design = sm.add_constant(X)
    for t in origins:
        start = 0 if window is None else t - window + 1
        np.linalg.lstsq(design[start : t + 1], y[start : t + 1], rcond=None)


def statsmodels_fit(X: np.ndarray, y: np.ndarray, window: int | None) -> np.ndarray:
    """RollingOLS parameters (rows before the first origin dropped)."""
    design = sm.add_constant(X)
    if window is None:
        model = RollingOLS(y, design, window=y.size, expanding=True, min_nobs=WINDOW)
    else:
        model = RollingOLS(y, design, window=window)
    return np.asarray(model.fit(params_only=True).params)[WINDOW - 1 :]


def run_case(X: np.ndarray, y: np.ndarray, window: int | None, repeat: int) -> list[str]:
    """Time one window scheme; return the report lines."""
    ours = best_time(lambda: recursive_ls(X, y, window=window, min_nobs=WINDOW), repeat)
    peer = best_time(lambda: statsmodels_fit(X, y, window), repeat)
    origins = np.arange(WINDOW - 1, y.size)
    naive = best_time(lambda: naive_refit(X, y, window, origins[::NAIVE_STRIDE]), 1)
    naive *= origins.size / origins[::NAIVE_STRIDE].size
    fixed = best_time(lambda: recursive_ls(X, y, window=window, min_nobs=WINDOW,
                                           method="ridge", lam=1.0), repeat)
    gcv = best_time(lambda: recursive_ls(X, y, window=window, min_nobs=WINDOW,
                                         method="ridge", lam="gcv"), repeat)
    gap = np.max(np.abs(recursive_ls(X, y, window=window, min_nobs=WINDOW).coef
                        - statsmodels_fit(X, y, window)))
    name = "expanding" if window is None else f"rolling (window={window})"
    return [
        f"{name}: {origins.size} origins, P={X.shape[1]} + intercept",
        f"  attnreg recursive_ls OLS          {ours:8.3f} s",
        f"  statsmodels RollingOLS params_only {peer:8.3f} s   ratio {peer / ours:6.1f}x",
        f"  naive lstsq refit (extrapolated*)  {naive:8.3f} s   ratio {naive / ours:6.1f}x",
        f"  ridge, fixed lam                   {fixed:8.3f} s",
        f"  ridge, lam by GCV at every origin  {gcv:8.3f} s   GCV / fixed {gcv / fixed:4.2f}x",
        f"  max |coef - statsmodels params| = {gap:.2e}",
    ]


def main() -> None:
    """Simulate one data set and print the timings of both window schemes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing (best kept)")
    args = parser.parse_args()
    rng = np.random.default_rng(2024)
    n_rows = N_ORIGINS + WINDOW - 1
    X = rng.standard_normal((n_rows, N_REGRESSORS))
    y = 0.5 + X @ rng.standard_normal(N_REGRESSORS) + rng.standard_normal(n_rows)
    with threadpool_limits(1):
        lines = [line for window in (None, WINDOW) for line in run_case(X, y, window, args.repeat)]
    footer = (f"* naive refit timed on every {NAIVE_STRIDE}th origin "
              f"({N_ORIGINS // NAIVE_STRIDE} origins) and scaled to {N_ORIGINS}.")
    print("\n".join([*lines, footer, "Times: best process CPU time, BLAS pinned to 1 thread."]))


if __name__ == "__main__":
    main()
