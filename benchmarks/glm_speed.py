"""GLM speed and accuracy: attnreg's IRLS vs statsmodels' ``GLM`` and glum's ``GeneralizedLinearRegressor``.

    python benchmarks/glm_speed.py                       # n = 1e6, p = 20, logit and Poisson
    python benchmarks/glm_speed.py --n 1e5 --reps 1      # a quick run
    python benchmarks/glm_speed.py --conditions "1 thread"

Every tool fits the same arrays (an intercept and p − 1 standard normal columns, seeded; a 0/1
response from the logistic model, counts from the log-linear Poisson model); building the
data is not timed. attnreg is timed on its formula-free IRLS and on the whole front door from
a DataFrame (design, aliasing, the separation check: a fit that reaches its optimum inside the
family's range certifies itself, the linear program runs otherwise); statsmodels' ``GLM``
with its default IRLS; glum unpenalised (``alpha=0``) with its default IRLS solver, on the
arrays and (like for like with attnreg's front door) from the DataFrame with its formula. The ratio
to each peer (> 1: attnreg faster) and each tool's largest coefficient difference from an
extended-precision optimum (mpmath-free: the Newton iterate of attnreg's optimum refined with
compensated sums is the reference; digits = −log10 of the relative error) are printed under
each thread condition of ``conditions.py``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd
from conditions import CONDITIONS, add_arguments, under


def _data(n: int, p: int, family: str, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.standard_normal((n, p - 1))])
    b = rng.uniform(-0.3, 0.3, p)
    eta = X @ b
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float) if family == "binomial" \
        else rng.poisson(np.exp(eta)).astype(float)
    return X, y


def _best(fn: Callable[[], np.ndarray], reps: int) -> tuple[float, np.ndarray]:
    best, out = np.inf, np.zeros(0)
    for _ in range(reps):
        t0 = time.perf_counter()
        out = np.asarray(fn())
        best = min(best, time.perf_counter() - t0)
    return best, out


def _score_refined(X: np.ndarray, y: np.ndarray, b: np.ndarray, family: str) -> np.ndarray:
    """Two Newton steps from ``b`` with the score summed by math.fsum per column (a reference
    whose error is below what the tools reach)."""
    import math

    for _ in range(2):
        eta = X @ b
        mu = 1 / (1 + np.exp(-eta)) if family == "binomial" else np.exp(eta)
        w = mu * (1 - mu) if family == "binomial" else mu
        r = y - mu
        score = np.array([math.fsum(X[:, j] * r) for j in range(X.shape[1])])
        rr = np.linalg.qr(X * np.sqrt(w)[:, None], mode="r")
        b = b + np.linalg.solve(rr, np.linalg.solve(rr.T, score))
    return b


def _digits(b: np.ndarray, ref: np.ndarray) -> float:
    err = float(np.max(np.abs(b - ref)) / np.max(np.abs(ref)))
    return float(-np.log10(max(err, 1e-17)))


def _tools(X: np.ndarray, y: np.ndarray, family: str) -> dict[str, Callable[[], np.ndarray]]:
    import statsmodels.api as sm

    from attnreg.glm.families import FAMILIES
    from attnreg.glm.irls import irls
    from attnreg.glm.links import LINKS

    import attnreg as ar

    fam = FAMILIES[family]
    link = LINKS["logit" if family == "binomial" else "log"]
    ones, zeros = np.ones(len(y)), np.zeros(len(y))
    frame = pd.DataFrame(X[:, 1:], columns=[f"x{j}" for j in range(1, X.shape[1])])
    frame["y"] = y
    formula = "y ~ " + " + ".join(frame.columns[:-1])
    method = "logit" if family == "binomial" else "poisson"

    def core() -> np.ndarray:
        return irls(X, y, ones, zeros, fam, link).coef

    tools: dict[str, Callable[[], np.ndarray]] = {
        "attnreg core": core,
        "attnreg formula": lambda: ar.attnreg(formula, frame, method=method).coef.to_numpy(),
        "statsmodels": lambda: sm.GLM(y, X, family=sm.families.Binomial() if family == "binomial"
                                      else sm.families.Poisson()).fit().params,
    }
    try:
        from glum import GeneralizedLinearRegressor

        def glum_fit() -> np.ndarray:
            m = GeneralizedLinearRegressor(family="binomial" if family == "binomial" else "poisson",
                                           alpha=0, fit_intercept=False).fit(X, y)
            return m.coef_

        def glum_formula() -> np.ndarray:
            m = GeneralizedLinearRegressor(family="binomial" if family == "binomial" else "poisson",
                                           alpha=0, formula=formula).fit(frame)
            return np.concatenate([[m.intercept_], m.coef_])

        tools["glum"] = glum_fit
        tools["glum formula"] = glum_formula
    except ImportError:
        print("glum is not installed: pip install glum")
    return tools


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--p", type=int, default=20)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--families", default="binomial,poisson")
    add_arguments(parser)
    args = parser.parse_args()
    n, p = int(args.n), args.p
    for family in args.families.split(","):
        X, y = _data(n, p, family)
        tools = _tools(X, y, family)
        print(f"\n{family}: n = {n}, p = {p}, best of {args.reps}")
        for condition in [c for c in CONDITIONS if c in args.conditions]:
            with under(condition), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                times, coefs = {}, {}
                for name, fn in tools.items():
                    times[name], coefs[name] = _best(fn, args.reps)
            ref = _score_refined(X, y, coefs["attnreg core"], family)
            print(f"  [{condition}]")
            for name in tools:
                mine = "attnreg formula" if name.endswith("formula") else "attnreg core"
                peer = "" if name.startswith("attnreg") else \
                    (f"   attnreg core / formula are {times[name] / times['attnreg core']:.2f}x"
                     f" / {times[name] / times['attnreg formula']:.2f}x faster")
                if name == "glum formula":  # like for like: both from the DataFrame
                    peer = f"   attnreg formula is {times[name] / times[mine]:.2f}x faster"
                print(f"    {name:16s} {times[name]:8.3f} s   digits {_digits(coefs[name], ref):5.1f}"
                      f"{peer}")


if __name__ == "__main__":
    main()
