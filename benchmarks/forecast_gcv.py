"""Ridge forecasts with λ re-chosen by GCV at every origin vs a fixed λ, end to end.

    python benchmarks/forecast_gcv.py [--origins 10000] [--p 50] [--reps 3]

``rolling_speed.py`` times the engine alone (``recursive_ls``); this times what a user runs:
``ar.forecast(formula, data, method="ridge", lam=...)`` plus ``summary()`` (formula, design,
every origin's fit and forecast, evaluation), recursive and with a 60-row rolling window, best
of ``--reps`` with the two interleaved so machine load hits both, under each condition of
``conditions.py`` (default threads, one thread, a busy neighbour; CPU seconds on one thread,
wall-clock seconds otherwise). Target (issue 14): GCV / fixed at most 3.2x end to end.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
sys.path.insert(0, str(Path(__file__).resolve().parent))
from conditions import add_arguments, under


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--origins", type=int, default=10_000)
    ap.add_argument("--p", type=int, default=50)
    ap.add_argument("--window", type=int, default=60)
    ap.add_argument("--lam", type=float, default=1.0, help="the fixed penalty (default 1)")
    ap.add_argument("--reps", type=int, default=3)
    add_arguments(ap)
    args = ap.parse_args(argv)
    import attnreg as ar

    rng = np.random.default_rng(0)
    t_all, p = args.origins + args.window + 1, args.p
    X = rng.standard_normal((t_all, p))
    y = 0.1 * X @ rng.standard_normal(p) + rng.standard_normal(t_all)
    data = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)]).assign(y=np.r_[0.0, y[:-1]])
    formula = "y ~ " + " + ".join(f"lag(x{j}, 1)" for j in range(p))
    print(f"{args.origins:,} origins, {p} regressors (best of {args.reps})")
    for condition in args.conditions:
        clock = time.process_time if condition == "1 thread" else time.perf_counter
        with under(condition):
            for scheme, extra in (("recursive", {}), ("rolling", {"window": args.window})):
                best: dict[str, float] = {}
                for _ in range(args.reps):
                    for lam in (args.lam, "gcv"):
                        t = clock()
                        fc = ar.forecast(formula, data, method="ridge", lam=lam, scheme=scheme,
                                         start=args.window + 1, progress=False, **extra)
                        str(fc.summary())
                        key = "gcv" if lam == "gcv" else "fixed"
                        best[key] = min(best.get(key, np.inf), clock() - t)
                ratio = best["gcv"] / best["fixed"]
                print(f"  {condition:>8} {scheme:9s} fixed lambda {best['fixed']:.3f} s, lambda by "
                      f"GCV {best['gcv']:.3f} s: GCV / fixed = {ratio:.2f}x (target <= 3.2: "
                      f"{'met' if ratio <= 3.2 else 'NOT met'}; {len(fc.forecasts):,} forecasts)",
                      flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
