"""Quantile regression speed: attnreg's Frisch–Newton + vertex vs statsmodels' ``QuantReg``.

    python benchmarks/quantreg_speed.py                    # n = 1e5, p = 20, tau = 0.5
    python benchmarks/quantreg_speed.py --n 5000 --p 10    # a quick run
    python benchmarks/quantreg_speed.py --conditions "1 thread" --reps 1

Both fit the same arrays (x ~ N(0, 1), an intercept, y = X b + (1 + |x1|) e, seeded); the
data are not timed. The solvers alone are timed (no formula, no standard errors), best of
``--reps``. statsmodels' ``QuantReg.fit`` is iteratively reweighted least squares (its
defaults: max_iter=1000, p_tol=1e-6); attnreg's is exact (an LP vertex). The ratio and the
largest difference in the coefficients and in the check loss are printed, under each thread
condition of ``conditions.py`` (both tools under the same one).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from conditions import CONDITIONS, add_arguments, under


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e5)
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--tau", type=float, default=0.5)
    parser.add_argument("--reps", type=int, default=3)
    add_arguments(parser)
    args = parser.parse_args()
    from statsmodels.regression.quantile_regression import QuantReg

    from attnreg.quantreg.solver import check_loss, rq_fit

    n, p, tau = int(args.n), args.p, args.tau
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


if __name__ == "__main__":
    main()
