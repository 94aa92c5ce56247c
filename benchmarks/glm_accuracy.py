"""GLM accuracy on ill-conditioned designs: attnreg, statsmodels' ``GLM`` and glum against an
extended-precision optimum.

    python benchmarks/glm_accuracy.py                  # n = 2e4, logit and Poisson, three designs
    python benchmarks/glm_accuracy.py --n 5e3          # quicker

Designs (seeded; the response drawn from the model at moderate linear predictors):

* ``polynomial``: an intercept and t, t², t³ with t = 10 + u, u uniform on (0, 1) (a cubic
  in a variable far from 0, as NIST's Wampler problems);
* ``collinear``: an intercept, four standard normal columns and a fifth equal to the first
  plus 1e-6 times another standard normal column;
* ``scaled``: the ``collinear`` design with its columns multiplied by 1, 1e3, ..., 1e-3 (units
  that differ by orders of magnitude).

The reference optimum is computed to 50 significant digits with mpmath (the ``bench``
extra): η, μ and the score X'(y − μ) in 50-digit arithmetic, Newton corrections H⁻¹ s with
H = X'WX from the float64 R of √W X, until the correction is below 1e-30 (H's rounding only
slows the iteration; its fixed point is the 50-digit optimum). It is run from two starting
points (attnreg's and statsmodels' optima); their agreement is printed as the reference's
own digits. Digits of a tool: the least, over the coefficients, of −log10(|b − b_ref| /
|b_ref|) (NIST's log relative error), 17 at most (float64's). Tools: attnreg's front
door, statsmodels' ``GLM().fit()`` (IRLS, its defaults), glum unpenalised at its defaults
and at ``gradient_tol=1e-12``.
"""

from __future__ import annotations

import argparse
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd


def _design(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if name == "polynomial":
        t = 10.0 + rng.random(n)
        return np.column_stack([np.ones(n), t, t ** 2, t ** 3])
    Z = rng.standard_normal((n, 5))
    X = np.column_stack([np.ones(n), Z[:, :4], Z[:, 0] + 1e-6 * Z[:, 4]])
    if name == "scaled":
        X = X * np.array([1.0, 1e3, 1e-3, 1.0, 1e2, 1e-3])
    return X


def _data(name: str, family: str, n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = _design(name, n, rng)
    # coefficients that give linear predictors of order 1 (the polynomial's are its own)
    b = np.linalg.lstsq(X, rng.uniform(-1, 1, n) * 0.5 + 0.2, rcond=None)[0]
    eta = X @ b
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float) if family == "binomial" \
        else rng.poisson(np.exp(eta)).astype(float)
    return X, y


def _mean(eta: np.ndarray, family: str) -> np.ndarray:
    return 1 / (1 + np.exp(-eta)) if family == "binomial" else np.exp(eta)


def reference(X: np.ndarray, y: np.ndarray, b0: np.ndarray, family: str) -> list:
    """The optimum to 50 significant digits (mpmath) from ``b0``: Newton corrections H⁻¹ s
    with η, μ and the score s = X'(y − μ) in 50-digit arithmetic and H = X'WX by the float64
    R of √W X (R'R δ = s). H's rounding only slows the iteration (a contraction of about
    cond(X)² · 1e-16 per step); its fixed point is the 50-digit optimum."""
    import mpmath

    mpmath.mp.dps = 50
    rows = [[mpmath.mpf(v) for v in row] for row in X.tolist()]
    cols = [list(c) for c in zip(*rows, strict=True)]
    ys = [mpmath.mpf(v) for v in y.tolist()]
    b = [mpmath.mpf(v) for v in b0.tolist()]
    for _ in range(40):
        eta = [mpmath.fdot(row, b) for row in rows]
        mu = [1 / (1 + mpmath.exp(-e)) if family == "binomial" else mpmath.exp(e) for e in eta]
        resid = [yi - mi for yi, mi in zip(ys, mu, strict=True)]
        score = np.array([float(mpmath.fdot(c, resid)) for c in cols])
        m = np.array([float(v) for v in mu])
        w = m * (1 - m) if family == "binomial" else m
        r = np.linalg.qr(X * np.sqrt(w)[:, None], mode="r")
        delta = np.linalg.solve(r, np.linalg.solve(r.T, score))
        b = [bj + mpmath.mpf(float(dj)) for bj, dj in zip(b, delta, strict=True)]
        if float(np.max(np.abs(delta / b0))) < 1e-30:
            break
    return b


def _lre(b: np.ndarray | list, ref: list, cap: float) -> float:
    """The least over the coefficients of −log10(|b − b_ref| / |b_ref|), at most ``cap``."""
    import mpmath

    err = max(float(abs((mpmath.mpf(float(v)) if not isinstance(v, mpmath.mpf) else v) - r)
                    / abs(r)) for v, r in zip(b, ref, strict=True))
    return float(min(cap, -np.log10(max(err, 1e-40))))


def _tools(X: np.ndarray, y: np.ndarray, family: str) -> dict[str, Callable[[], np.ndarray]]:
    import statsmodels.api as sm

    import attnreg as ar

    frame = pd.DataFrame(X[:, 1:], columns=[f"x{j}" for j in range(1, X.shape[1])])
    frame["y"] = y
    formula = "y ~ " + " + ".join(frame.columns[:-1])
    method = "logit" if family == "binomial" else "poisson"
    fam = sm.families.Binomial() if family == "binomial" else sm.families.Poisson()
    tools: dict[str, Callable[[], np.ndarray]] = {
        "attnreg": lambda: ar.attnreg(formula, frame, method=method).coef.to_numpy(),
        "statsmodels": lambda: np.asarray(sm.GLM(y, X, family=fam).fit().params),
    }
    try:
        from glum import GeneralizedLinearRegressor

        def glum(**kw: float) -> Callable[[], np.ndarray]:
            return lambda: GeneralizedLinearRegressor(family=family, alpha=0, fit_intercept=False,
                                                      **kw).fit(X, y).coef_
        tools["glum"] = glum()
        tools["glum (gradient_tol=1e-12)"] = glum(gradient_tol=1e-12)
    except ImportError:
        print("glum is not installed: pip install glum")
    return tools


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=2e4)
    parser.add_argument("--designs", default="polynomial,collinear,scaled")
    parser.add_argument("--families", default="binomial,poisson")
    args = parser.parse_args()
    n = int(args.n)
    for family in args.families.split(","):
        for name in args.designs.split(","):
            X, y = _data(name, family, n)
            out: dict[str, np.ndarray | str] = {}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for tool, fn in _tools(X, y, family).items():
                    try:
                        out[tool] = fn()
                    except Exception as exc:  # a tool's failure is a result
                        out[tool] = f"failed: {type(exc).__name__}"
            starts = [b for b in (out.get("attnreg"), out.get("statsmodels"))
                      if isinstance(b, np.ndarray) and np.isfinite(b).all()]
            refs = [reference(X, y, b, family) for b in starts]
            ref = refs[0]
            agree = _lre(refs[1], ref, 40.0) if len(refs) > 1 else float("nan")
            cond = float(np.linalg.cond(X / np.linalg.norm(X, axis=0)))
            print(f"\n{family}, {name}: n = {n}, condition number of the column-scaled design "
                  f"{cond:.1e}; the two references agree to {agree:.1f} digits")
            for tool, b in out.items():
                shown = b if isinstance(b, str) else f"{_lre(b, ref, 17.0):5.1f} digits"
                print(f"    {tool:28s} {shown}")


if __name__ == "__main__":
    main()
