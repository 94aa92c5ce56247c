"""Columns whose offset dwarfs their spread: the in-memory fit against exact rational solutions.

"The stored data" is the float64 design the fit is given: every value as float64 holds it,
so a uint64 or int64 column near 2^63 is taken as converted to float64 (rounded to the
nearest multiple of 1024 or 2048), exactly as the chunked path (``chunk_rows=``) converts it;
the two paths are compared on such columns too. The reference is the exact least-squares
solution of those float64 values, computed in integer arithmetic (each float64 is an integer
times a power of two) with the normal equations solved in fractions.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import RankDeficiencyWarning
from tests.conftest import RTOL_OFFSET


def _integers(v: np.ndarray) -> tuple[np.ndarray, int]:
    """Python integers m_i and one k with v_i = m_i 2^-k exactly (object array)."""
    ratios = [t.as_integer_ratio() for t in v.tolist()]  # denominators: powers of two
    den = max(d for _, d in ratios)
    return np.array([m * (den // d) for m, d in ratios], dtype=object), den.bit_length() - 1


def exact_ols(X: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> dict[str, object]:
    """Exact weighted OLS with an intercept of the float64 data (X without the intercept).

    Returns the coefficients (intercept first), sigma, R², the F statistic and the standard
    errors, as floats rounded once from their exact values (sigma and the standard errors
    from exact squares).
    """
    n, p = X.shape
    ints = [_integers(X[:, j]) for j in range(p)]
    yi, ky = _integers(y)
    wi = np.ones(n, dtype=object) if w is None else np.array([int(t) for t in w], dtype=object)
    sw = int(wi.sum())
    M = np.column_stack([m for m, _ in ints] + [yi])  # (n, p + 1) Python integers
    S = M.T @ (M * wi[:, None])  # Σ w m_a m_b, exact
    s = (M * wi[:, None]).sum(axis=0)  # Σ w m_a
    scale = [Fraction(1, 2**k) for _, k in ints] + [Fraction(1, 2**ky)]
    C = [[Fraction(sw * S[a, b] - s[a] * s[b]) * scale[a] * scale[b]
          for b in range(p + 1)] for a in range(p + 1)]  # Σw × centred cross products
    A = [row[:p] for row in C[:p]]
    beta = _solve(A, [C[a][p] for a in range(p)])
    mean = [Fraction(s[a]) * scale[a] / sw for a in range(p + 1)]
    c0 = mean[p] - sum(b * m for b, m in zip(beta, mean[:p], strict=True))
    rss = (C[p][p] - sum(b * C[a][p] for a, b in enumerate(beta))) / sw
    sigma2 = rss / (n - p - 1)
    inv_diag = [_solve(A, [Fraction(int(a == j)) for a in range(p)])[j] * sw for j in range(p)]
    tss = C[p][p] / sw
    return {"coef": np.array([float(c0)] + [float(b) for b in beta]),
            "sigma": float(sigma2) ** 0.5, "r_squared": float(1 - rss / tss),
            "f": _to_float((tss - rss) / p / sigma2),
            "std_err": np.array([float(sigma2 * d) ** 0.5 for d in inv_diag])}


def _to_float(q: Fraction) -> float:
    """float(q), or ±inf when q is beyond the float64 range."""
    try:
        return float(q)
    except OverflowError:
        return float("inf") if q > 0 else float("-inf")


def _solve(A: list[list[Fraction]], b: list[Fraction]) -> list[Fraction]:
    """Gaussian elimination in fractions (A small and nonsingular)."""
    p = len(b)
    M = [[*row, b[i]] for i, row in enumerate(A)]
    for i in range(p):
        piv = next(r for r in range(i, p) if M[r][i] != 0)
        M[i], M[piv] = M[piv], M[i]
        for r in range(p):
            if r != i and M[r][i] != 0:
                f = M[r][i] / M[i][i]
                M[r] = [a - f * c for a, c in zip(M[r], M[i], strict=True)]
    return [M[i][p] / M[i][i] for i in range(p)]


def _frame(offset: float, n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x1 = offset + rng.normal(size=n)
    x2 = offset + 0.125 * (np.arange(n) % 3) + rng.uniform(size=n)
    x3 = rng.normal(size=n)  # an ordinary column beside them
    y = offset + 2.0 * (x1 - offset) - 1.0 * (x2 - offset) + 0.5 * x3 + rng.normal(size=n)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "x3": x3})


def _check(fit: ar.LinearResults, exact: dict[str, object]) -> None:
    coef = fit.coef.to_numpy()
    ref = exact["coef"]
    # the slopes to a few units of float64's rounding; the intercept to that of the
    # offsets' part x̄'β it is computed with (the rounding of the float64 slopes times x̄)
    slopes = np.abs(coef[1:] - ref[1:]) / np.abs(ref[1:])  # type: ignore[index]
    assert slopes.max() <= RTOL_OFFSET, slopes
    size = abs(ref[0]) + float(np.abs(fit.spectrum.center) @ np.abs(ref))  # type: ignore[index]
    assert abs(coef[0] - ref[0]) <= RTOL_OFFSET * size  # type: ignore[index]
    assert abs(fit.sigma / exact["sigma"] - 1) <= RTOL_OFFSET  # type: ignore[operator]
    se = fit.std_err.to_numpy()[1:]
    assert np.max(np.abs(se / exact["std_err"] - 1)) <= RTOL_OFFSET  # type: ignore[operator]


@pytest.mark.parametrize("offset", [1e10, 1e12, 1e14, 1e15])
@pytest.mark.parametrize("n", [300, 80_000])
def test_offset_columns_match_the_exact_solution(offset: float, n: int) -> None:
    # n = 300: a small design (refined in extended precision); n = 80,000 x 4: a tall one
    # whose U is recomputed from the design and which is not refined (cond ~ 1)
    df = _frame(offset, n)
    fit = ar.attnreg("y ~ x1 + x2 + x3", df)
    assert fit.spectrum.U.is_stored == (n == 300)  # both decomposition paths are covered
    _check(fit, exact_ols(df[["x1", "x2", "x3"]].to_numpy(), df["y"].to_numpy()))


def test_offset_columns_weighted() -> None:
    df = _frame(1e14, 400, seed=1)
    w = np.arange(400) % 3 + 1.0  # integer weights: the exact solution stays in integers
    fit = ar.attnreg("y ~ x1 + x2 + x3", df.assign(w=w), weights="w")
    _check(fit, exact_ols(df[["x1", "x2", "x3"]].to_numpy(), df["y"].to_numpy(), w))


def test_residuals_sum_to_zero_at_an_offset() -> None:
    # y − X c in float64 would leave residuals off by eps × 2e15 ≈ 0.25 each
    df = _frame(1e15, 300, seed=2)
    fit = ar.attnreg("y ~ x1 + x2 + x3", df)
    e = fit.resid.to_numpy()
    assert abs(e.sum()) <= RTOL_OFFSET * np.abs(e).sum()
    assert np.allclose(fit.fitted.to_numpy() + e, df["y"].to_numpy(), rtol=0, atol=0.5)


def _extreme_frame(dtype: str, n: int, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    step = rng.integers(0, 2**24, n)
    if dtype == "uint64":
        x = (np.uint64(2**63) + step.astype(np.uint64)).astype(np.uint64)
    elif dtype == "int64_max":
        x = (np.int64(2**63 - 1) - step).astype(np.int64)
    else:  # int64_min
        x = (np.int64(-(2**63)) + step).astype(np.int64)
    xf = x.astype(np.float64)
    y = 1e-6 * (xf - xf.mean()) + rng.normal(size=n)
    return pd.DataFrame({"y": y, "x": x})


@pytest.mark.parametrize("dtype", ["uint64", "int64_max", "int64_min"])
def test_integer_columns_near_two_to_the_63(dtype: str) -> None:
    # the stored data: the integers as float64 (multiples of 1024 or 2048 here), as the
    # design and the chunked path both convert them
    df = _extreme_frame(dtype, 500)
    fit = ar.attnreg("y ~ x", df)
    exact = exact_ols(df[["x"]].to_numpy().astype(np.float64), df["y"].to_numpy())
    _check(fit, exact)
    chunked = ar.attnreg("y ~ x", df, chunk_rows=100)
    np.testing.assert_allclose(fit.coef.to_numpy(), chunked.coef.to_numpy(), rtol=RTOL_OFFSET)


@pytest.mark.parametrize("offset", [1e12, 1e15])
@pytest.mark.parametrize(("method", "tuning"), [("ridge", {"lam": 2.0}), ("pcr", {"k": 2})])
def test_ridge_and_pcr_do_not_see_the_offset(offset: float, method: str,
                                             tuning: dict[str, float]) -> None:
    # with an intercept both are invariant to shifting the columns and the response; the
    # shift by the offset is exact here (x − offset for x within a factor 2 of it), so the
    # fit on the shifted data is the fit of the same stored data without the offset
    # (before: slopes 50 % off at 1e15)
    df = _frame(offset, 300)
    shifted = df.assign(**{c: df[c] - offset for c in ["x1", "x2", "y"]})
    fit = ar.attnreg("y ~ x1 + x2 + x3", df, method=method, **tuning)
    ref = ar.attnreg("y ~ x1 + x2 + x3", shifted, method=method, **tuning)
    np.testing.assert_allclose(fit.coef.to_numpy()[1:], ref.coef.to_numpy()[1:], rtol=RTOL_OFFSET)
    assert fit.sigma == pytest.approx(ref.sigma, rel=RTOL_OFFSET)


def test_wide_ridge_keeps_offset_columns() -> None:
    # more columns than rows (the thin SVD of the data): a column was taken as constant when
    # its centred norm was below 1e-10 of its uncentred one, so every column at 1e15 was
    # aliased; a column constant at that offset still is
    rng = np.random.default_rng(4)
    n, p, offset = 20, 30, 1e15
    cols = [f"x{j}" for j in range(p)]
    df = pd.DataFrame(offset + rng.normal(size=(n, p)), columns=cols)
    df["y"] = df["x0"] - offset + rng.normal(size=n)
    df["const"] = offset + 0.5
    formula = "y ~ " + " + ".join([*cols, "const"])
    with pytest.warns(RankDeficiencyWarning, match="const"):  # the constant column, named
        fit = ar.attnreg(formula, df, method="ridge", lam=1.0)
    ref = ar.attnreg("y ~ " + " + ".join(cols),
                     df.assign(**{c: df[c] - offset for c in cols}), method="ridge", lam=1.0)
    assert np.isnan(fit.coef["const"])
    # the wide SVD's rounding is of the size eps · cond (about 1e-14 here), beyond RTOL_OFFSET
    np.testing.assert_allclose(fit.coef[cols].to_numpy(), ref.coef[cols].to_numpy(),
                               rtol=1e3 * RTOL_OFFSET)
