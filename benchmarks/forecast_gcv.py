"""Ridge forecasts with λ re-chosen by GCV at every origin vs a fixed λ, end to end.

    python benchmarks/forecast_gcv.py [--origins 10000] [--p 50] [--reps 3]

``rolling_speed.py`` times the engine alone (``recursive_ls``); this times what a user runs:
``ar.forecast(formula, data, method="ridge", lam=...)`` plus ``summary()`` (formula, design,
every origin's fit and forecast, evaluation), recursive and with a 60-row rolling window, one
BLAS thread, CPU seconds (best of ``--reps``), the two interleaved so machine load hits both.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--origins", type=int, default=10_000)
    ap.add_argument("--p", type=int, default=50)
    ap.add_argument("--window", type=int, default=60)
    ap.add_argument("--lam", type=float, default=1.0, help="the fixed penalty (default 1)")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args(argv)
    import attnreg as ar

    rng = np.random.default_rng(0)
    t_all, p = args.origins + args.window + 1, args.p
    X = rng.standard_normal((t_all, p))
    y = 0.1 * X @ rng.standard_normal(p) + rng.standard_normal(t_all)
    data = pd.DataFrame(X, columns=[f"x{j}" for j in range(p)]).assign(y=np.r_[0.0, y[:-1]])
    formula = "y ~ " + " + ".join(f"lag(x{j}, 1)" for j in range(p))
    print(f"{args.origins:,} origins, {p} regressors, 1 BLAS thread, CPU seconds (best of {args.reps})")
    with threadpool_limits(1):
        for scheme, extra in (("recursive", {}), ("rolling", {"window": args.window})):
            best: dict[str, float] = {}
            for _ in range(args.reps):
                for lam in (args.lam, "gcv"):
                    t = time.process_time()
                    fc = ar.forecast(formula, data, method="ridge", lam=lam, scheme=scheme,
                                     start=args.window + 1, progress=False, **extra)
                    str(fc.summary())
                    key = "gcv" if lam == "gcv" else "fixed"
                    best[key] = min(best.get(key, np.inf), time.process_time() - t)
            print(f"  {scheme:9s} fixed lambda {best['fixed']:.3f} s, lambda by GCV {best['gcv']:.3f} s:"
                  f" GCV / fixed = {best['gcv'] / best['fixed']:.2f}x ({len(fc.forecasts):,} forecasts)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
