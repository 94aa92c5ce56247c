"""Chunked fits against an exact reference: a small version of benchmarks/large_accuracy.py.

Every stored value lies on a dyadic grid (an integer mantissa times 2^-e), so X'X, X'y and
y'y of the stored data are exact integers times powers of two, and the least-squares
coefficients, (X'X)^-1 and the residual sum of squares follow in rational arithmetic: the
classical standard errors are exact up to the final square root. The design is
ill-conditioned (x2 is x1 plus a perturbation of relative size 1e-7).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.large.fit import fit_chunked
from attnreg.large.sources import as_source
from attnreg.large.spec import learn_spec

FORMULA = "y ~ C(g) + x1 + x2 + x3"
E_X, E_Y = 24, 20  # the grids' binary exponents
BLOCK = 1024  # rows per exact int64 partial sum (products < 2^47, sums < 2^57)


def _gram(M: np.ndarray) -> list[list[int]]:
    """M'M exactly (Python integers) for an int64 matrix of small entries."""
    pad = (-M.shape[0]) % BLOCK
    blocks = np.vstack([M, np.zeros((pad, M.shape[1]), dtype=np.int64)]).reshape(-1, BLOCK,
                                                                                  M.shape[1])
    sums = np.einsum("bri,brj->bij", blocks, blocks)
    return [[sum(int(v) for v in sums[:, i, j]) for j in range(M.shape[1])]
            for i in range(M.shape[1])]


def _dyadic(n: int, seed: int) -> tuple[pd.DataFrame, dict[str, object]]:
    rng = np.random.default_rng(seed)
    half = 1 << 23
    m1 = rng.integers(-half, half, size=n)
    m2 = m1 + np.rint(rng.normal(0.0, 2.0, n)).astype(np.int64)
    m3 = rng.integers(-half, half, size=n)
    g = rng.integers(0, 3, n)
    x1, x2, x3 = (np.ldexp(m.astype(np.float64), -E_X) for m in (m1, m2, m3))
    y = 1 + 2 * x1 - x2 + 0.5 * x3 + 0.3 * g + rng.normal(0.0, 0.05, n)
    my = np.rint(np.ldexp(y, E_Y)).astype(np.int64)
    df = pd.DataFrame({"x1": x1, "x2": x2, "x3": x3, "g": np.array(list("abc"))[g],
                       "y": np.ldexp(my.astype(np.float64), -E_Y)})
    cols = [np.ones(n, dtype=np.int64), (g == 1).astype(np.int64), (g == 2).astype(np.int64),
            m1, m2, m3, my]
    exps = [0, 0, 0, E_X, E_X, E_X, E_Y]
    S = _gram(np.column_stack(cols))
    k = 6
    A = [[Fraction(S[i][j], 1 << (exps[i] + exps[j])) for j in range(k)] for i in range(k)]
    b = [Fraction(S[i][k], 1 << (exps[i] + exps[k])) for i in range(k)]
    yty = Fraction(S[k][k], 1 << (2 * exps[k]))
    aug = [A[i] + [b[i]] + [Fraction(int(i == j)) for j in range(k)] for i in range(k)]
    for c in range(k):  # Gauss-Jordan in exact rational arithmetic
        p = next(r for r in range(c, k) if aug[r][c] != 0)
        aug[c], aug[p] = aug[p], aug[c]
        aug[c] = [v / aug[c][c] for v in aug[c]]
        for r in range(k):
            if r != c and aug[r][c] != 0:
                f = aug[r][c]
                aug[r] = [u - f * v for u, v in zip(aug[r], aug[c], strict=True)]
    beta = [aug[i][k] for i in range(k)]
    sigma2 = (yty - sum(bb * v for bb, v in zip(beta, b, strict=True))) / (n - k)
    ref = {"coef": np.array([float(v) for v in beta]),
           "se": np.sqrt(np.array([float(aug[i][k + 1 + i] * sigma2) for i in range(k)])),
           "means": [Fraction(S[0][j], n << exps[j]) for j in range(k + 1)]}
    return df, ref


def _digits(estimate: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """-log10 of the relative error per entry (16 when exact)."""
    rel = np.abs(np.asarray(estimate, dtype=np.float64) / exact - 1.0)
    return np.where(rel == 0, 16.0, -np.log10(np.maximum(rel, 1e-16)))


@pytest.fixture(scope="module")
def dyadic():
    return _dyadic(200_000, seed=1)


def test_the_chunked_means_are_the_exact_means_rounded(dyadic) -> None:
    """The column sums are added over the chunks and divided once (as in memory): on the
    dyadic grid every partial sum is exact, so the means are the exact means, rounded."""
    from attnreg.large.fit import accumulate_factor

    df, ref = dyadic
    source = as_source(df, chunk_rows=25_001)
    spec = learn_spec(FORMULA, source)
    factor = accumulate_factor(spec, source)
    means = factor.means()
    # design columns: (Intercept), C(g)[T.b], C(g)[T.c], x1, x2, x3; then y
    exact = [float(m) for m in ref["means"]]
    assert means[1:].tolist() == exact[1:]


def test_chunked_standard_errors_keep_the_in_memory_digits(dyadic) -> None:
    df, ref = dyadic
    mem = ar.attnreg(FORMULA, df)
    fit = fit_chunked(FORMULA, df, chunk_rows=25_001)
    d_mem, d_fit = _digits(mem.std_err, ref["se"]), _digits(fit.std_err, ref["se"])
    # the intercept's SE depends on the means (it lost two digits when they were taken from
    # the merged R factor's first row); the slopes' digits vary by rounding (cond ~ 1e7).
    # Beyond 14 digits the errors are a few ulps, and which of two orders of summation
    # lands closer is chance: the in-memory digits count up to 14
    d_cap = np.minimum(d_mem, 14.0)
    assert d_fit[0] >= d_cap[0] - 0.7, (d_fit, d_mem)
    assert d_fit.min() >= d_cap.min() - 0.7, (d_fit, d_mem)
    assert d_fit.min() >= 10.5
    assert _digits(fit.coef, ref["coef"]).min() >= 10.0
