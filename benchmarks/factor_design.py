"""Factors: design build time against patsy, and summary time on a design of many dummies.

    python benchmarks/factor_design.py                      # 1e6 rows; 2e4 rows x 2,000 dummies
    python benchmarks/factor_design.py --rows 1e5 --summary-rows 4000 --dummies 300 \
        --chunked-rows 4e5                                  # quick

Part 1 (design): the same seeded data (x ~ N(0, 1), factors ``g20`` and ``g500`` of text
levels drawn uniformly) for every formula; timed is attnreg's model frame
(``attnreg.formula.design.build_design``: the input rules, patsy's design infos, the factors
encoded and their columns built without per-row Python) against ``patsy.dmatrices(formula,
df, return_type="dataframe")`` itself, best of ``--reps`` runs. The designs are compared
bit for bit. Memory: the 500-level designs of 1e6 rows are 4 GB each (patsy's route holds
about twice that).

Part 2 (summary): ``y ~ x + C(g)`` with a factor of ``--dummies`` + 1 levels; the fits are
not timed. Timed: ``str(fit.summary())`` (classical standard errors: no hat value is
computed; the attention section's figures come from the sampled query rows), the pass over
every row that computes all hat values (what the summary cost before), and statsmodels'
``str(smf.ols(...).fit().summary())`` summary alone.

Part 3 (chunked): a chunked fit (pandas data, chunks of 100,000 rows) of ``y ~ x`` and of
``y ~ x + C(region) + C(hour)`` (20 text levels, 24 integer levels): every chunk's factors
encoded as in memory.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd


def best(fn: Callable[[], Any], reps: int) -> tuple[float, Any]:
    """(best wall-clock seconds of ``reps`` runs, the last result)."""
    times, out = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def design_part(n: int, reps: int) -> None:
    import patsy

    from attnreg.formula.design import build_design

    rng = np.random.default_rng(0)
    df = pd.DataFrame({
        "y": rng.normal(size=n), "x": rng.normal(size=n),
        "g20": rng.choice([f"a{i:02d}" for i in range(20)], n).astype(object),
        "g500": rng.choice([f"b{i:03d}" for i in range(500)], n).astype(object)})
    print(f"design build, {n:,} rows (best of {reps}):")
    print(f"  {'formula':<28}{'columns':>8}{'attnreg s':>11}{'patsy s':>10}{'ratio':>8}  same")
    for formula in ["y ~ x", "y ~ x + C(g20)", "y ~ x + C(g500)", "y ~ x + C(g20) + C(g500)"]:
        t_ar, design = best(lambda f=formula: build_design(f, df), reps)
        t_pa, (_, X) = best(lambda f=formula: patsy.dmatrices(f, df, return_type="dataframe"),
                            reps)
        same = np.array_equal(design.X, X.to_numpy())
        print(f"  {formula:<28}{design.X.shape[1]:>8}{t_ar:>11.3f}{t_pa:>10.3f}"
              f"{t_pa / t_ar:>7.1f}x  {same}")
        del design, X


def summary_part(n: int, dummies: int, reps: int) -> None:
    import statsmodels.formula.api as smf

    import attnreg as ar

    rng = np.random.default_rng(1)
    df = pd.DataFrame({"x": rng.normal(size=n),
                       "g": rng.choice([f"c{i:04d}" for i in range(dummies + 1)], n).astype(object)})
    df["y"] = df.x + rng.normal(size=n)
    formula = "y ~ x + C(g)"
    fit = ar.attnreg(formula, df)
    ref = smf.ols(formula, df).fit()
    t_sum, _ = best(lambda: str(fit.summary()), 1)  # cached parts: timed once
    t_hat, _ = best(lambda: fit.hat_values, 1)  # cached after the first run: timed once
    t_sm, _ = best(lambda: str(ref.summary()), reps)
    print(f"summary, {n:,} rows x {len(fit.names)} columns ({dummies} dummies):")
    print(f"  attnreg str(fit.summary())            {t_sum:9.3f} s")
    print(f"  attnreg every hat value (as before)   {t_hat:9.3f} s  "
          f"(summary before ~ {t_sum + t_hat:.3f} s: {1 + t_hat / t_sum:.1f}x now)")
    print(f"  statsmodels str(res.summary())        {t_sm:9.3f} s  "
          f"(attnreg / statsmodels {t_sum / t_sm:.2f})")


def chunked_part(n: int) -> None:
    import attnreg as ar

    rng = np.random.default_rng(2)
    df = pd.DataFrame({"x": rng.normal(size=n),
                       "region": rng.choice([f"r{i:02d}" for i in range(20)], n).astype(object),
                       "hour": rng.integers(0, 24, n)})
    df["y"] = df.x + rng.normal(size=n)
    ar.attnreg("y ~ x + C(region)", df.iloc[:2000], chunk_rows=500)  # imports, first calls
    print(f"chunked fit, {n:,} rows in chunks of 100,000:")
    base = 0.0
    for formula in ["y ~ x", "y ~ x + C(region) + C(hour)"]:
        t, _ = best(lambda f=formula: ar.attnreg(f, df, chunk_rows=100_000), 1)
        base = base or t
        print(f"  {formula:<30}{t:9.3f} s  ({t / base:.1f}x the numeric formula)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=float, default=1e6, help="rows of part 1")
    ap.add_argument("--summary-rows", type=float, default=2e4, help="rows of part 2")
    ap.add_argument("--dummies", type=int, default=2000, help="dummy columns of part 2")
    ap.add_argument("--chunked-rows", type=float, default=4e6, help="rows of part 3")
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args()
    design_part(int(args.rows), args.reps)
    summary_part(int(args.summary_rows), args.dummies, args.reps)
    chunked_part(int(args.chunked_rows))


if __name__ == "__main__":
    main()
