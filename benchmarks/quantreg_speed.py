"""Quantile regression speed: attnreg's Frisch–Newton + vertex vs statsmodels' ``QuantReg``.

    python benchmarks/quantreg_speed.py                    # n = 1e5, p = 20, tau = 0.5
    python benchmarks/quantreg_speed.py --n 5000 --p 10    # a quick run
    python benchmarks/quantreg_speed.py --conditions "1 thread" --reps 1
    python benchmarks/quantreg_speed.py --r                # and R's rq(method="pfn"), "fn"
    python benchmarks/quantreg_speed.py --origins 400 --n 200 --p 3   # warm starts

Both fit the same arrays (x ~ N(0, 1), an intercept, y = X b + (1 + |x1|) e, seeded); the
data are not timed. The solvers alone are timed (no formula, no standard errors), best of
``--reps``. statsmodels' ``QuantReg.fit`` is iteratively reweighted least squares (its
defaults: max_iter=1000, p_tol=1e-6); attnreg's is exact (an LP vertex). The ratio and the
largest difference in the coefficients and in the check loss are printed, under each thread
condition of ``conditions.py`` (both tools under the same one).

``--r``: R's ``quantreg::rq.fit(X, y, tau, method=...)`` on the same arrays (written as
float64 binaries to a temporary directory and read with ``readBin``; the reading is not
timed), ``"pfn"`` (Portnoy–Koenker preprocessing + Frisch–Newton) and ``"fn"``, best of
``--reps`` ``system.time`` elapsed times in one ``Rscript`` process started under the
condition's thread variables (R's own threads are its BLAS's). Skipped when ``Rscript`` or
quantreg is missing.

``--origins K``: the forecasting loop's fits alone, an expanding window from ``--n`` rows to
``--n + K - 1`` rows and τ = 0.05, 0.25, 0.5, 0.75, 0.95, each fit cold and warm-started from
the previous window's solution (``rq_fit(..., start=)``); total seconds of each, the share of
warm fits that needed no interior point and the largest coefficient difference.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
from conditions import CONDITIONS, THREAD_VARS, add_arguments, under

R_TIMING = """
suppressMessages(library(quantreg))
a <- commandArgs(TRUE); n <- as.integer(a[2]); p <- as.integer(a[3])
tau <- as.numeric(a[4]); reps <- as.integer(a[5])
X <- matrix(readBin(file.path(a[1], "X.bin"), "double", n * p), n, p)
y <- readBin(file.path(a[1], "y.bin"), "double", n)
for (m in c("pfn", "fn")) {
  best <- Inf
  for (r in seq_len(reps)) {
    t <- system.time(f <- rq.fit(X, y, tau = tau, method = m))[["elapsed"]]
    best <- min(best, t)
  }
  cat(m, best, sprintf("%.17g", coef(f)), "\\n")
}
cat("quantreg", as.character(packageVersion("quantreg")), R.version.string, "\\n")
"""


def _data(n: int, p: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.standard_normal((n, p - 1))])
    b = rng.uniform(-1, 1, p)
    y = X @ b + (1 + np.abs(X[:, 1])) * rng.standard_normal(n)
    return X, y


def _best(fn, reps: int) -> tuple[float, np.ndarray]:
    best, out = np.inf, None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, np.asarray(out)


def time_r(X: np.ndarray, y: np.ndarray, tau: float, reps: int,
           one_thread: bool) -> dict[str, tuple[float, np.ndarray]] | None:
    """R's best elapsed seconds and coefficients per method, or None without R."""
    if shutil.which("Rscript") is None:
        return None
    env = dict(os.environ, **({v: "1" for v in THREAD_VARS} if one_thread else {}))
    with tempfile.TemporaryDirectory() as tmp:
        np.ascontiguousarray(X.T).tofile(Path(tmp) / "X.bin")  # column-major for R
        y.tofile(Path(tmp) / "y.bin")
        out = subprocess.run(["Rscript", "-e", R_TIMING, tmp, str(X.shape[0]), str(X.shape[1]),
                              repr(tau), str(reps)], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        print(f"  R: not timed ({out.stderr.strip().splitlines()[-1:]})")
        return None
    found = {}
    for line in out.stdout.splitlines():
        word, *rest = line.split()
        if word in ("pfn", "fn"):
            found[word] = (float(rest[0]), np.array([float(v) for v in rest[1:]]))
        elif word == "quantreg":
            print(f"  R: quantreg {rest[0]}, {' '.join(rest[1:])}")
    return found


def time_origins(n: int, p: int, origins: int) -> None:
    """Cold against warm-started fits over an expanding window (see the module's notes)."""
    from attnreg.quantreg.solver import rq_fit

    X, y = _data(n + origins, p)
    taus = (0.05, 0.25, 0.5, 0.75, 0.95)
    t0 = time.perf_counter()
    cold = [[rq_fit(X[:n + k], y[:n + k], t).coef for t in taus] for k in range(origins)]
    t_cold = time.perf_counter() - t0
    t0, warm, hits = time.perf_counter(), [], 0
    prev: list[np.ndarray | None] = [None] * len(taus)
    for k in range(origins):
        fits = [rq_fit(X[:n + k], y[:n + k], t, start=prev[j]) for j, t in enumerate(taus)]
        hits += sum(f.iterations == 0 for f in fits)
        prev = [f.coef for f in fits]
        warm.append(prev)
    t_warm = time.perf_counter() - t0
    diff = float(np.max(np.abs(np.asarray(cold) - np.asarray(warm))))
    print(f"{origins} origins, windows of {n}..{n + origins - 1} rows, p = {p}, 5 tau")
    print(f"  cold: {t_cold:.3f} s   warm: {t_warm:.3f} s   ratio {t_cold / t_warm:.2f}x; "
          f"{hits} of {origins * len(taus)} fits kept the previous vertex; "
          f"max |coef difference| {diff:.2e}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e5)
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--tau", type=float, default=0.5)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--r", action="store_true", help="also time R's rq.fit (pfn, fn)")
    parser.add_argument("--origins", type=int, default=0,
                        help="time warm starts over this many expanding windows instead")
    add_arguments(parser)
    args = parser.parse_args()
    from statsmodels.regression.quantile_regression import QuantReg

    from attnreg.quantreg.solver import check_loss, rq_fit

    n, p, tau = int(args.n), args.p, args.tau
    if args.origins:
        time_origins(n, p, args.origins)
        return
    X, y = _data(n, p)
    print(f"n = {n}, p = {p}, tau = {tau}, best of {args.reps}")
    for condition in [c for c in CONDITIONS if c in args.conditions]:
        with under(condition):
            t_ar, b_ar = _best(lambda: rq_fit(X, y, tau).coef, args.reps)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # statsmodels' convergence warnings
                t_sm, b_sm = _best(lambda: QuantReg(y, X).fit(q=tau).params, args.reps)
        loss_ar, loss_sm = check_loss(y - X @ b_ar, tau), check_loss(y - X @ b_sm, tau)
        print(f"[{condition}]")
        print(f"  attnreg (Frisch-Newton + vertex): {t_ar:8.3f} s   check loss {loss_ar:.10g}")
        print(f"  statsmodels QuantReg (IRLS):      {t_sm:8.3f} s   check loss {loss_sm:.10g}")
        print(f"  ratio statsmodels / attnreg: {t_sm / t_ar:.1f}x; "
              f"max |coef difference| {np.max(np.abs(b_ar - b_sm)):.2e}")
        if args.r and condition != "busy":
            for method, (t_r, b_r) in (time_r(X, y, tau, args.reps,
                                               condition == "1 thread") or {}).items():
                print(f"  R rq.fit(method={method!r}):{' ' * (9 - len(method))}{t_r:8.3f} s   "
                      f"check loss {check_loss(y - X @ b_r, tau):.10g}; ratio R / attnreg "
                      f"{t_r / t_ar:.1f}x; max |coef difference| "
                      f"{np.max(np.abs(b_ar - b_r)):.2e}")


if __name__ == "__main__":
    main()
