"""Wall-clock time of a full softmax attention regression fit.

Default: 4,000 training rows, 8 predictors, 5 heads, the fitter's default settings, one
torch thread (the machine is shared; pass --threads 2 on an idle one). Prints one line per
repetition and the median.

    python benchmarks/softmax_speed.py [--n 4000] [--p 8] [--heads 5] [--threads 1]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def make_data(n: int, p: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A Friedman-1 style nonlinear signal in the first five columns plus an interaction."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=(n, p))
    f = 10 * np.sin(np.pi * x[:, 0] * x[:, 1]) + 20 * (x[:, 2] - 0.5) ** 2 + 10 * x[:, 3] + 5 * x[:, 4]
    if p > 6:
        f = f + 3 * np.sin(2 * np.pi * x[:, 5] * x[:, 6])
    return x, f + rng.normal(scale=np.std(f), size=n)  # SNR 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--p", type=int, default=8)
    ap.add_argument("--heads", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--kernel", default=None)
    ap.add_argument("--score-dtype", default=None)
    ap.add_argument("--lam", default=None)
    args = ap.parse_args()

    import torch

    from attnreg.softmax import fit_softmax

    torch.set_num_threads(args.threads)
    x, y = make_data(args.n + 1000, args.p, seed=0)
    x_tr, y_tr, x_te, y_te = x[: args.n], y[: args.n], x[args.n :], y[args.n :]
    kw: dict[str, object] = {"heads": args.heads}
    if args.kernel:
        kw["kernel"] = args.kernel
    if args.score_dtype:
        kw["score_dtype"] = args.score_dtype
    if args.lam:
        kw["lam"] = args.lam if args.lam == "auto" else float(args.lam)
    design = np.column_stack([np.ones(len(x_tr)), x_tr])
    ols = np.column_stack([np.ones(len(x_te)), x_te]) @ np.linalg.lstsq(design, y_tr, rcond=None)[0]
    r2 = lambda pred: 1 - np.mean((y_te - pred) ** 2) / np.var(y_te)  # noqa: E731
    times = []
    for rep in range(args.repeat):
        c0 = time.process_time()
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fit = fit_softmax(x_tr, y_tr, seed=rep, **kw)  # type: ignore[arg-type]
        times.append(time.perf_counter() - t0)
        cpu = time.process_time() - c0
        print(
            f"n={args.n} p={args.p} heads={args.heads} threads={args.threads} {kw}: "
            f"{times[-1]:.1f} s wall ({cpu:.1f} s CPU), {fit.n_iter} iterations, {fit.n_evals} evaluations, "
            f"converged={fit.converged}, warnings={len(caught)}, val R2 {fit.val_r2:.3f}, "
            f"test R2 {r2(fit.predict(x_te)):.3f} (OLS {r2(ols):.3f})",
            flush=True,
        )
    print(f"median {statistics.median(times):.1f} s over {args.repeat} fit(s)")


if __name__ == "__main__":
    main()
