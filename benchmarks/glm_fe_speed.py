"""Poisson regression with absorbed fixed effects: attnreg against pyfixest's ``fepois``.

    python benchmarks/glm_fe_speed.py                      # n = 1e6, 2 and 3 fixed effects, 3 conditions
    python benchmarks/glm_fe_speed.py --n 1e5 --reps 2     # a quick run
    python benchmarks/glm_fe_speed.py --fes 2 --conditions default

fixest's *simple* design (seeded): 5 standard normal covariates, fixed effects of N/20, N/1000
and 20 levels drawn independently (the first two, or all three), the counts from the
log-linear model with the first two fixed effects' effects. Both tools fit the same DataFrame
from their own formula, ``y ~ x0 + ... + x4 | fe1 + fe2 (+ fe3)``, with iid standard errors;
pyfixest is called once before timing (its kernels compile on first use). Printed: the best
of ``--reps`` seconds under each thread condition of ``conditions.py``, the ratio (> 1:
attnreg faster) and the digits to which the two tools' coefficients agree (attnreg iterates
to the optimum; pyfixest stops at its tolerance, 1e-8 on the deviance by default).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from conditions import CONDITIONS, add_arguments, under


def _data(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"x{j}": rng.standard_normal(n) for j in range(5)})
    df["fe1"] = rng.integers(0, max(n // 20, 2), n)
    df["fe2"] = rng.integers(0, max(n // 1000, 2), n)
    df["fe3"] = rng.integers(0, 20, n)
    a, b = rng.normal(0, 0.3, df.fe1.max() + 1), rng.normal(0, 0.3, df.fe2.max() + 1)
    eta = 0.2 * df.x0 - 0.1 * df.x1 + 0.05 * df.x2 + a[df.fe1] + b[df.fe2]
    df["y"] = rng.poisson(np.exp(eta)).astype(float)
    return df


def _best(fn, reps: int) -> tuple[float, np.ndarray]:  # type: ignore[no-untyped-def]
    best, coef = np.inf, np.zeros(0)
    for _ in range(reps):
        t = time.perf_counter()
        coef = fn()
        best = min(best, time.perf_counter() - t)
    return best, coef


def main() -> None:
    import pyfixest as pf

    import attnreg as ar

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--fes", default="2,3", help="numbers of fixed effects, e.g. 2,3")
    add_arguments(parser)
    args = parser.parse_args()
    n = int(args.n)
    df = _data(n)
    for k in (int(v) for v in args.fes.split(",")):
        formula = "y ~ x0 + x1 + x2 + x3 + x4 | " + " + ".join(f"fe{j}" for j in range(1, k + 1))
        tools = {
            "attnreg": lambda f=formula: ar.attnreg(f, df, method="poisson").coef.to_numpy(),
            "pyfixest fepois": lambda f=formula: pf.fepois(f, df, vcov="iid").coef().to_numpy(),
        }
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tools["pyfixest fepois"]()  # compile its kernels
        print(f"\n{k} fixed effects: n = {n}, best of {args.reps}")
        for condition in [c for c in CONDITIONS if c in args.conditions]:
            with under(condition), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = {name: _best(fn, args.reps) for name, fn in tools.items()}
            a, p = got["attnreg"][1], got["pyfixest fepois"][1]
            digits = -np.log10(max(float(np.max(np.abs(a - p) / np.abs(a))), 1e-17))
            ratio = got["pyfixest fepois"][0] / got["attnreg"][0]
            print(f"  [{condition}] attnreg {got['attnreg'][0]:.3f} s, pyfixest "
                  f"{got['pyfixest fepois'][0]:.3f} s: attnreg {ratio:.2f}x faster; "
                  f"coefficients agree to {digits:.1f} digits")


if __name__ == "__main__":
    main()
