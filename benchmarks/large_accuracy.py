"""Accuracy of regression for data larger than memory, against an exact reference.

    python benchmarks/large_accuracy.py                  # 2e6 rows, 8 partitions / chunks
    python benchmarks/large_accuracy.py --rows 2e5       # quicker
    python benchmarks/large_accuracy.py --rows 2e6 --timing --json out.json

The design (``y ~ x1 + x2 + x3 + x4 + C(g)``, 8 coefficients, 4 levels of g) is
ill-conditioned: x2 is x1 plus a perturbation of relative size about 1e-7 and x4 is
nearly (x1 + x3) / 2, so the centred, column-scaled design has a condition number
above 1e6 (printed).

The exact reference. Every stored value is a float64 on a dyadic grid: column j holds
m_ij 2^-e_j with integer mantissas |m_ij| <= 2^26 (the factor's dummies and the intercept
are 0/1). So X'X and X'y of the stored data are sums of integers times powers of two: they
are computed exactly (int64 partial sums over blocks of 1024 rows, which cannot overflow
since every product is below 2^52, then Python integers), and the normal equations
X'X b = X'y are solved in exact rational arithmetic (``fractions.Fraction``). That b is the
exact least-squares solution of the very numbers every tool is given; the residual sum of
squares y'y - b'X'y and (X'X)^-1 are exact too, so the classical standard errors are exact
up to the final square root (taken with mpmath at 40 digits). No tool's own arithmetic is
part of the reference.

Correct digits are NIST's log relative error, LRE = -log10(|b - b_ref| / |b_ref|), capped at
15.9 and reported as the minimum over the coefficients (and over the standard errors).

Tools:

* attnreg chunked: ``attnreg.large.fit.fit_chunked(formula, <parquet glob>)`` (the local
  chunked engine, what ``ar.attnreg(formula, data=<path>)`` runs);
* attnreg on dask: ``attnreg.large.dask.fit_dask(formula, <dask DataFrame>)`` on a
  LocalCluster of two worker processes (per-partition R factors combined by a tree
  reduction);
* attnreg in memory: ``ar.attnreg(formula, data=<pandas DataFrame>)``;
* dask lstsq: ``dask.array.linalg.lstsq`` (TSQR) on the patsy design (coefficients only);
* normal equations: X_c'X_c and X_c'y_c summed over the chunks in float64 and solved by
  Cholesky, as Spark MLlib's ``WeightedLeastSquares`` ("normal" solver) and R's speedglm do;
* statsmodels: ``smf.ols(formula, df).fit()`` in memory (pinv, its default).

``--timing`` also times the dask path against the local chunked path on the same data
(best of ``--reps``), the target being a ratio of at most 1.5.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: benchmarks measure the checkout they belong to, whatever attnreg is installed
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

FORMULA = "y ~ x1 + x2 + x3 + x4 + C(g)"
#: binary exponents of the columns' grids (value = mantissa * 2^-e)
EXPONENTS = {"x1": 25, "x2": 25, "x3": 25, "x4": 25, "y": 22}
LEVELS = ("a", "b", "c", "d")
BLOCK = 1024  # rows per exact int64 partial sum (products < 2^52, so sums < 2^62)
LRE_CAP = 15.9


# ------------------------------------------------------------------------------- the data
def make_data(n_rows: int, seed: int = 20240601) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """The stored data and their integer mantissas (column -> int64 array).

    Every float64 value equals its mantissa times 2^-EXPONENTS[column] exactly.
    """
    rng = np.random.default_rng(seed)
    one = 1 << 25
    m1 = rng.integers(-one, one, size=n_rows)
    m3 = rng.integers(-one, one, size=n_rows)
    m2 = m1 + np.rint(rng.normal(0.0, 2.0, size=n_rows)).astype(np.int64)  # x1 + ~6e-8 noise
    m4 = (m1 + m3) // 2 + np.rint(rng.normal(0.0, 2.0, size=n_rows)).astype(np.int64)
    g = rng.integers(0, len(LEVELS), size=n_rows)
    x = {c: np.ldexp(m.astype(np.float64), -EXPONENTS[c])
         for c, m in (("x1", m1), ("x2", m2), ("x3", m3), ("x4", m4))}
    effect = np.array([0.0, 0.5, -0.25, 1.0])[g]
    y = (1.0 + 2.0 * x["x1"] - 1.0 * x["x2"] + 0.5 * x["x3"] + 3.0 * x["x4"] + effect
         + rng.normal(0.0, 0.05, size=n_rows))
    my = np.rint(np.ldexp(y, EXPONENTS["y"])).astype(np.int64)
    assert np.abs(my).max() < 1 << 26
    df = pd.DataFrame({**x, "g": pd.Categorical(np.asarray(LEVELS)[g], categories=LEVELS),
                       "y": np.ldexp(my.astype(np.float64), -EXPONENTS["y"])})
    mant = {"x1": m1, "x2": m2, "x3": m3, "x4": m4, "y": my, "g": g}
    return df, mant


def coefficient_names() -> list[str]:
    return (["(Intercept)"] + [f"C(g)[T.{lev}]" for lev in LEVELS[1:]]
            + ["x1", "x2", "x3", "x4"])


# --------------------------------------------------------------------------- the reference
def _exact_gram(M: np.ndarray) -> list[list[int]]:
    """M'M exactly for an int64 matrix whose products stay below 2^52 (Python ints)."""
    n, k = M.shape
    total = [[0] * k for _ in range(k)]
    step = BLOCK * 256
    for lo in range(0, n, step):
        part = M[lo:lo + step]
        pad = (-part.shape[0]) % BLOCK
        if pad:
            part = np.vstack([part, np.zeros((pad, k), dtype=np.int64)])
        blocks = part.reshape(-1, BLOCK, k)
        sums = np.einsum("bri,brj->bij", blocks, blocks)  # int64, each < 2^62
        for i in range(k):
            for j in range(i, k):
                total[i][j] += sum(int(v) for v in sums[:, i, j])
    for i in range(k):
        for j in range(i):
            total[i][j] = total[j][i]
    return total


def _solve_fractions(A: list[list[Fraction]], B: list[list[Fraction]]) -> list[list[Fraction]]:
    """A^-1 B by Gauss-Jordan elimination in exact rational arithmetic."""
    k = len(A)
    aug = [A[i][:] + B[i][:] for i in range(k)]
    for c in range(k):
        p = next(r for r in range(c, k) if aug[r][c] != 0)
        aug[c], aug[p] = aug[p], aug[c]
        piv = aug[c][c]
        aug[c] = [v / piv for v in aug[c]]
        for r in range(k):
            if r != c and aug[r][c] != 0:
                f = aug[r][c]
                aug[r] = [a - f * b for a, b in zip(aug[r], aug[c], strict=True)]
    return [row[k:] for row in aug]


def exact_reference(mant: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Exact OLS coefficients and classical SEs of the stored data (as float64 at the end)."""
    import mpmath

    n = mant["y"].size
    g = mant["g"]
    cols = [np.ones(n, dtype=np.int64)] + [(g == i).astype(np.int64) for i in range(1, len(LEVELS))]
    exps = [0] * len(LEVELS)
    for c in ("x1", "x2", "x3", "x4"):
        cols.append(mant[c])
        exps.append(EXPONENTS[c])
    cols.append(mant["y"])
    exps.append(EXPONENTS["y"])
    S = _exact_gram(np.column_stack(cols))
    k = len(cols) - 1
    scale = [Fraction(1, 1 << e) for e in exps]
    G = [[Fraction(S[i][j]) * scale[i] * scale[j] for j in range(k)] for i in range(k)]
    Xty = [[Fraction(S[i][k]) * scale[i] * scale[k]] for i in range(k)]
    yty = Fraction(S[k][k]) * scale[k] ** 2
    eye = [[Fraction(int(i == j)) for j in range(k)] for i in range(k)]
    sol = _solve_fractions(G, [Xty[i] + eye[i] for i in range(k)])
    beta = [sol[i][0] for i in range(k)]
    inv_diag = [sol[i][1 + i] for i in range(k)]
    rss = yty - sum(b * v[0] for b, v in zip(beta, Xty, strict=True))
    sigma2 = rss / (n - k)
    mpmath.mp.dps = 40
    se = [float(mpmath.sqrt(mpmath.mpf(d.numerator) / d.denominator
                            * mpmath.mpf(sigma2.numerator) / sigma2.denominator))
          for d in inv_diag]
    return {"coef": np.array([float(b) for b in beta]), "se": np.array(se)}


def condition_number(df: pd.DataFrame) -> float:
    """2-norm condition of the centred design, columns scaled to unit norm (attnreg's scale)."""
    import patsy

    X = np.asarray(patsy.dmatrix(FORMULA.split("~")[1], df.head(200_000)))[:, 1:]
    Z = X - X.mean(axis=0)
    Z /= np.linalg.norm(Z, axis=0)
    return float(np.linalg.cond(Z))


def lre(estimate: np.ndarray, reference: np.ndarray) -> float:
    """Minimum over entries of -log10 relative error, capped at LRE_CAP (NaN: 0)."""
    est = np.asarray(estimate, dtype=np.float64)
    if est.shape != reference.shape or not np.all(np.isfinite(est)):
        return 0.0
    with np.errstate(divide="ignore"):
        rel = np.abs(est - reference) / np.abs(reference)
        digits = np.where(rel == 0, LRE_CAP, -np.log10(rel))
    return float(np.clip(digits, 0.0, LRE_CAP).min())


# ------------------------------------------------------------------------------- the tools
def _design(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    import patsy

    y, X = patsy.dmatrices(FORMULA, df, return_type="matrix")
    return np.asarray(X), np.asarray(y).ravel()


def run_normal_equations(df: pd.DataFrame, n_chunks: int) -> tuple[np.ndarray, np.ndarray]:
    """Spark's / speedglm's solver: float64 X'X, X'y summed over chunks, Cholesky solve."""
    import scipy.linalg as sla

    k = len(coefficient_names())
    xtx, xty, yty, n = np.zeros((k, k)), np.zeros(k), 0.0, 0
    for part in np.array_split(np.arange(len(df)), n_chunks):
        X, y = _design(df.iloc[part])
        xtx += X.T @ X
        xty += X.T @ y
        yty += float(y @ y)
        n += y.size
    c = sla.cho_factor(xtx)
    beta = sla.cho_solve(c, xty)
    sigma2 = (yty - beta @ xty) / (n - k)
    se = np.sqrt(np.abs(sigma2) * np.diag(sla.cho_solve(c, np.eye(k))))
    return beta, se


def run_statsmodels(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    import statsmodels.formula.api as smf

    res = smf.ols(FORMULA, df).fit()
    return np.asarray(res.params), np.asarray(res.bse)


def run_dask_lstsq(df: pd.DataFrame, n_chunks: int, client: Any) -> tuple[np.ndarray, np.ndarray]:
    """dask.array.linalg.lstsq (TSQR) on the patsy design; it gives no standard errors."""
    import dask.array as da

    X, y = _design(df)
    rows = -(-len(df) // n_chunks)
    Xd = da.from_array(X, chunks=(rows, X.shape[1]))
    yd = da.from_array(y, chunks=(rows,))
    beta, *_ = da.linalg.lstsq(Xd, yd)
    return np.asarray(client.compute(beta).result()), np.full(X.shape[1], np.nan)


def _attnreg_numbers(fit: Any) -> tuple[np.ndarray, np.ndarray]:
    names = coefficient_names()
    coef = fit.coef.reindex(names).to_numpy()
    se = np.asarray(fit.std_err, dtype=np.float64)
    se = pd.Series(se, index=fit.coef.index).reindex(names).to_numpy()
    return coef, se


def run_attnreg_memory(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    import attnreg as ar

    return _attnreg_numbers(ar.attnreg(FORMULA, df))


def run_attnreg_chunked(path: str) -> tuple[np.ndarray, np.ndarray]:
    from attnreg.large.fit import fit_chunked

    return _attnreg_numbers(fit_chunked(FORMULA, path))


def run_attnreg_dask(ddf: Any) -> tuple[np.ndarray, np.ndarray]:
    from attnreg.large.dask import fit_dask

    return _attnreg_numbers(fit_dask(FORMULA, ddf))


# ------------------------------------------------------------------------------------ main
def _best_time(fn: Callable[[], Any], reps: int) -> float:
    best = math.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=float, default=2e6)
    parser.add_argument("--chunks", type=int, default=8, help="partitions / parquet files")
    parser.add_argument("--timing", action="store_true", help="time dask vs local chunked")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    n_rows = int(args.rows)

    t0 = time.perf_counter()
    df, mant = make_data(n_rows)
    ref = exact_reference(mant)
    print(f"{n_rows} rows, {len(coefficient_names())} coefficients, condition of the centred "
          f"column-scaled design {condition_number(df):.3g}; exact reference in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)

    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp, \
            LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                         dashboard_address=None) as cluster, Client(cluster) as client:
        rows = -(-n_rows // args.chunks)
        for i in range(args.chunks):
            df.iloc[i * rows:(i + 1) * rows].to_parquet(f"{tmp}/part-{i:03d}.parquet")
        glob = f"{tmp}/*.parquet"
        ddf = dd.read_parquet(glob)
        tools: dict[str, Callable[[], tuple[np.ndarray, np.ndarray]]] = {
            "attnreg chunked (parquet)": lambda: run_attnreg_chunked(glob),
            "attnreg on dask (2 workers)": lambda: run_attnreg_dask(ddf),
            "attnreg in memory": lambda: run_attnreg_memory(df),
            "dask.array lstsq (TSQR)": lambda: run_dask_lstsq(df, args.chunks, client),
            "normal equations over chunks": lambda: run_normal_equations(df, args.chunks),
            "statsmodels in memory": lambda: run_statsmodels(df),
        }
        for name, fn in tools.items():
            t = time.perf_counter()
            try:
                coef, se = fn()
            except Exception as exc:  # a tool that fails is reported, not fatal
                results[name] = {"error": f"{type(exc).__name__}: {exc}"}
                print(f"{name}: failed ({results[name]['error']})", flush=True)
                continue
            results[name] = {"coef_lre": lre(coef, ref["coef"]),
                             "se_lre": lre(se, ref["se"]) if np.isfinite(se).all() else None,
                             "seconds": time.perf_counter() - t}
        timing: dict[str, float] = {}
        if args.timing:
            timing["local chunked s"] = _best_time(lambda: run_attnreg_chunked(glob), args.reps)
            timing["dask s"] = _best_time(lambda: run_attnreg_dask(ddf), args.reps)
            timing["ratio dask / local"] = timing["dask s"] / timing["local chunked s"]

    print()
    print(f"{'tool':<32} {'coef digits':>12} {'SE digits':>10} {'seconds':>9}")
    for name, r in results.items():
        if "error" in r:
            print(f"{name:<32} {'failed':>12}")
            continue
        se = "-" if r["se_lre"] is None else f"{r['se_lre']:.1f}"
        print(f"{name:<32} {r['coef_lre']:>12.1f} {se:>10} {r['seconds']:>9.2f}")
    if timing:
        print()
        print(f"local chunked {timing['local chunked s']:.2f} s, dask (LocalCluster, 2 workers) "
              f"{timing['dask s']:.2f} s: ratio {timing['ratio dask / local']:.2f} "
              f"(best of {args.reps})")
    out = {"rows": n_rows, "chunks": args.chunks, "results": results, "timing": timing}
    if args.json is not None:
        args.json.write_text(json.dumps(out, indent=2))
    return out


if __name__ == "__main__":
    main()
