"""IV formula fit speed: attnreg vs linearmodels' IV2SLS and pyfixest's feols, same data.

    python benchmarks/iv_speed.py                 # n = 1e6: 10 exogenous, 2 endogenous, 4 instruments
    python benchmarks/iv_speed.py --n 100000      # a quick run
    python benchmarks/iv_speed.py --reps 1

Each tool fits the same DataFrame from its own formula and gives coefficients and classical
standard errors; the data are not timed, the formula fit (model frame included) is, best of
``--reps``. Without fixed effects: attnreg, linearmodels and pyfixest; with two fixed effects
(200 firms, 20 years): attnreg and pyfixest (linearmodels' IV has no absorbed fixed effects;
pyfixest 0.60 refuses several endogenous regressors, which is reported, so a third run treats
d2 as exogenous). pyfixest's iid errors count the absorbed levels differently (small gaps).
The largest relative difference of the coefficients with attnreg's is printed.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd


def _data(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    cols = {f"x{j}": rng.standard_normal(n) for j in range(1, 11)}
    cols |= {f"z{j}": rng.standard_normal(n) for j in range(1, 5)}
    firm, year = rng.integers(0, 200, n), rng.integers(0, 20, n)
    u = rng.standard_normal(n)
    d1 = cols["z1"] + 0.5 * cols["z2"] + 0.3 * cols["z3"] + u + rng.standard_normal(n)
    d2 = cols["z2"] - 0.5 * cols["z4"] + 0.5 * u + rng.standard_normal(n)
    y = sum(0.1 * j * cols[f"x{j}"] for j in range(1, 11)) + d1 - d2 + u + 0.01 * firm + 0.02 * year
    return pd.DataFrame({**cols, "d1": d1, "d2": d2, "y": y, "firm": firm, "year": year})


def _best(fn, reps: int) -> tuple[float, np.ndarray]:
    best, out = np.inf, None
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, np.asarray(out, dtype=float)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    import attnreg as ar

    df = _data(args.n)
    xs = " + ".join(f"x{j}" for j in range(1, 11))
    zs = "z1 + z2 + z3 + z4"
    runs = {"attnreg": lambda: ar.attnreg(f"y ~ {xs} | d1 + d2 ~ {zs}", df).std_err}
    try:
        from linearmodels.iv import IV2SLS

        runs["linearmodels"] = lambda: IV2SLS.from_formula(
            f"y ~ 1 + {xs} + [d1 + d2 ~ {zs}]", df).fit(cov_type="unadjusted", debiased=True).std_errors
    except ImportError:
        pass
    fe_runs = {"attnreg": lambda: ar.attnreg(f"y ~ {xs} | firm + year | d1 + d2 ~ {zs}", df).std_err}
    one_runs = {"attnreg": lambda: ar.attnreg(f"y ~ {xs} + d2 | firm + year | d1 ~ {zs}", df).std_err}
    try:
        import pyfixest as pf

        runs["pyfixest"] = lambda: pf.feols(f"y ~ {xs} | d1 + d2 ~ {zs}", df, vcov="iid").se()
        fe_runs["pyfixest"] = lambda: pf.feols(f"y ~ {xs} | firm + year | d1 + d2 ~ {zs}", df,
                                               vcov="iid").se()
        one_runs["pyfixest"] = lambda: pf.feols(f"y ~ {xs} + d2 | firm + year | d1 ~ {zs}", df,
                                                vcov="iid").se()
    except ImportError:
        pass
    for title, group in (("no fixed effects", runs), ("two fixed effects", fe_runs),
                         ("two fixed effects, one endogenous (d2 exogenous)", one_runs)):
        print(f"n = {args.n}, {title}:")
        ref = None
        for name, fn in group.items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    seconds, se = _best(fn, args.reps)
                except Exception as exc:  # e.g. pyfixest: one endogenous regressor only
                    print(f"  {name:13s} fails: {str(exc).splitlines()[0]}")
                    continue
            ref = se if ref is None else ref
            gap = float(np.max(np.abs(np.sort(se) - np.sort(ref)) / np.abs(np.sort(ref))))
            print(f"  {name:13s} {seconds:8.3f} s   std. errors vs attnreg: {gap:.1e}")


if __name__ == "__main__":
    main()
