"""OLS formula -> fit -> printed summary as users run it: default threads, one thread, busy.

    python benchmarks/threads_ols.py                   # 1e5 x 100, best of 3
    python benchmarks/threads_ols.py --size 1e6x100 --reps 2

Three columns, each a ratio against statsmodels measured in the same run and process:

* default  -- the libraries' own thread settings (what users get);
* 1 thread -- BLAS pinned to one thread with threadpoolctl, around both tools;
* busy     -- default threads while a second process keeps one core busy (started and
  stopped by this script); see ``conditions.py``.

attnreg's own thread policy (``attnreg.threads``) applies in every column; it is what is
measured. Times are wall-clock seconds, best of ``--reps``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conditions import add_arguments, best_of, under


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1e5x100", help="rows x predictors, e.g. 1e5x100")
    ap.add_argument("--reps", type=int, default=3)
    add_arguments(ap)
    args = ap.parse_args()
    n_text, p_text = args.size.lower().split("x")
    n, p = int(float(n_text)), int(p_text)

    import statsmodels.formula.api as smf

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
    times = {}
    for label in args.conditions:
        with under(label):
            a, s = best_of(ours, args.reps), best_of(theirs, args.reps)
        times[label] = a
        print(f"{label:>9}: attnreg {a:7.3f} s   statsmodels {s:7.3f} s   ratio {s / a:5.1f}x",
              flush=True)
    if "default" in times and "busy" in times:
        print(f"attnreg busy / idle: {times['busy'] / times['default']:.2f}x (target <= 2)")


if __name__ == "__main__":
    main()
