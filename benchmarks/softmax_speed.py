"""Wall-clock time of a full softmax attention regression fit, as users run it.

Default: 4,000 training rows, 8 predictors, 5 heads, the fitter's default settings, under the
three conditions of ``conditions.py`` (default threads, one thread, a busy neighbour). Each
condition runs in a fresh Python process, like a user's script: the first fit pays whatever
it imports or sets up on first use. No other library fits this estimator, so the figures are
absolute, with the targets (< 10 s idle, < 20 s with one core busy, busy / idle <= 2).

    python benchmarks/softmax_speed.py [--n 4000] [--p 8] [--heads 5] [--repeat 1]
    python benchmarks/softmax_speed.py --conditions default --threads 2   # one column, 2 threads
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conditions import add_arguments, busy_neighbour, child_env

TARGETS = {"default": 10.0, "busy": 20.0}


def make_data(n: int, p: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A Friedman-1 style nonlinear signal in the first five columns plus an interaction."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, p))
    f = 10 * np.sin(np.pi * x[:, 0] * x[:, 1]) + 20 * (x[:, 2] - 0.5) ** 2 + 10 * x[:, 3] + 5 * x[:, 4]
    if p > 6:
        f = f + 3 * np.sin(2 * np.pi * x[:, 5] * x[:, 6])
    return x, f + rng.normal(scale=np.std(f), size=n)  # SNR 1


def worker(args: argparse.Namespace) -> None:
    """Fit ``--repeat`` times in this process; one JSON line per fit."""
    import torch

    from attnreg.softmax import fit_softmax

    if args.threads:
        torch.set_num_threads(args.threads)
    x, y = make_data(args.n + 1000, args.p, seed=0)
    x_tr, y_tr, x_te, y_te = x[: args.n], y[: args.n], x[args.n :], y[args.n :]
    kw: dict[str, object] = {"heads": args.heads}
    if args.score_dtype:
        kw["score_dtype"] = args.score_dtype
    design = np.column_stack([np.ones(len(x_tr)), x_tr])
    ols = np.column_stack([np.ones(len(x_te)), x_te]) @ np.linalg.lstsq(design, y_tr, rcond=None)[0]
    r2 = lambda pred: 1 - np.mean((y_te - pred) ** 2) / np.var(y_te)  # noqa: E731
    for rep in range(args.repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fit = fit_softmax(x_tr, y_tr, seed=rep, **kw)  # type: ignore[arg-type]
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(json.dumps({"wall": wall, "cpu": cpu, "n_iter": fit.n_iter, "n_evals": fit.n_evals,
                          "converged": fit.converged, "warnings": len(caught),
                          "val_r2": fit.val_r2, "test_r2": float(r2(fit.predict(x_te))),
                          "ols_r2": float(r2(ols)), "threads": torch.get_num_threads()}),
              flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--p", type=int, default=8)
    ap.add_argument("--heads", type=int, default=5)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: its default)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--score-dtype", default=None)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    add_arguments(ap)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    passed = ["--n", str(args.n), "--p", str(args.p), "--heads", str(args.heads), "--threads",
              str(args.threads), "--repeat", str(args.repeat)]
    passed += ["--score-dtype", args.score_dtype] if args.score_dtype else []
    print(f"softmax attention fit: n={args.n}, p={args.p}, heads={args.heads}, fresh process per "
          "condition, wall-clock seconds")
    times: dict[str, float] = {}
    for condition in args.conditions:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", *passed]
        if condition == "busy":
            with busy_neighbour():
                proc = subprocess.run(cmd, env=child_env(condition), capture_output=True, text=True)
        else:
            proc = subprocess.run(cmd, env=child_env(condition), capture_output=True, text=True)
        if proc.returncode != 0:
            print(f"{condition:>9}: failed: {proc.stderr.strip().splitlines()[-1:]}")
            continue
        runs = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
        times[condition] = statistics.median(r["wall"] for r in runs)
        last = runs[-1]
        target = TARGETS.get(condition)
        verdict = "" if target is None else (
            f"  (target < {target:g} s: {'met' if times[condition] < target else 'NOT met'})")
        print(f"{condition:>9}: {times[condition]:6.1f} s wall, {last['cpu']:.1f} s CPU, "
              f"{last['threads']} torch thread(s), {last['n_iter']} iterations, "
              f"{last['n_evals']} evaluations, val R2 {last['val_r2']:.3f}, test R2 "
              f"{last['test_r2']:.3f} (OLS {last['ols_r2']:.3f}){verdict}", flush=True)
    if "default" in times and "busy" in times:
        ratio = times["busy"] / times["default"]
        print(f"busy / idle: {ratio:.2f}x (target <= 2: {'met' if ratio <= 2 else 'NOT met'})")


if __name__ == "__main__":
    main()
