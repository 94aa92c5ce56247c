"""IV beyond memory: a parquet glob fitted chunk by chunk against the in-memory fit of its rows.

    python benchmarks/iv_chunked.py                  # n = 1e6: 10 exogenous, 2 endogenous, 4 instruments
    python benchmarks/iv_chunked.py --n 200000       # a quick run
    python benchmarks/iv_chunked.py --files 8 --reps 1

The data are generated, written to ``--files`` parquet files in a temporary folder (not timed)
and fitted with 2SLS and LIML under HC1 and a cluster covariance (200 clusters): in memory
from the pandas DataFrame, and chunk by chunk from the glob (two reads of the files). Times are
the best of ``--reps``; the largest relative differences of the coefficients and standard
errors, and whether the summaries' texts are equal, are printed.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time

import numpy as np
import pandas as pd

import attnreg as ar

FORMULA = ("y ~ " + " + ".join(f"x{j}" for j in range(1, 11))
           + " | d1 + d2 ~ z1 + z2 + z3 + z4")


def _data(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cols = {f"x{j}": rng.standard_normal(n) for j in range(1, 11)}
    cols |= {f"z{j}": rng.standard_normal(n) for j in range(1, 5)}
    u = rng.standard_normal(n)
    d1 = cols["z1"] + 0.5 * cols["z2"] + 0.3 * cols["z3"] + u + rng.standard_normal(n)
    d2 = cols["z2"] - 0.5 * cols["z4"] + 0.5 * u + rng.standard_normal(n)
    y = sum(0.1 * j * cols[f"x{j}"] for j in range(1, 11)) + d1 - d2 + u
    return pd.DataFrame({**cols, "d1": d1, "d2": d2, "y": y, "firm": rng.integers(0, 200, n)})


def _best(data, method: str, opts: dict, reps: int):
    """Best time of ``reps`` fits, and the last fit."""
    best, out = np.inf, None
    for _ in range(reps):
        t = time.perf_counter()
        out = ar.attnreg(FORMULA, data, method=method, **opts)
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    n = int(args.n)
    df = _data(n)
    folder = tempfile.mkdtemp()
    try:
        for i, rows in enumerate(np.array_split(np.arange(n), args.files)):
            df.iloc[rows].to_parquet(f"{folder}/part-{i}.parquet", index=False)
        print(f"n = {n:,}, {args.files} parquet files; best of {args.reps}")
        for method in ("tsls", "liml"):
            for opts in ({"vcov": "HC1"}, {"vcov": "cluster", "cluster": "firm"}):
                t_mem, a = _best(df, method, opts, args.reps)
                t_chk, b = _best(f"{folder}/*.parquet", method, opts, args.reps)
                gap = max(float(np.max(np.abs(b.coef / a.coef - 1))),
                          float(np.max(np.abs(b.std_err / a.std_err - 1))))
                same = str(a.summary()) == str(b.summary())
                print(f"{method:5s} {opts['vcov']:8s} in memory {t_mem:6.2f} s   parquet glob "
                      f"{t_chk:6.2f} s   largest relative gap {gap:.1e}   same summary {same}")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
