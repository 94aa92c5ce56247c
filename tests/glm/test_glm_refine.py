"""Ill-conditioned GLMs reach the optimum of the float64 data: compensated dot products, and
the refinement that uses them, against a 50-digit optimum (mpmath)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg import compensated
from attnreg.glm import refine as refine_module

mpmath = pytest.importorskip("mpmath")

#: float64 holds about 16 digits; the refined optimum is within a few ulps of the 50-digit one
RTOL_REFINED = 1e-14


def _mp(values) -> list:
    return [mpmath.mpf(float(v)) for v in values]


def test_compensated_dots_equal_fifty_digit_sums() -> None:
    mpmath.mp.dps = 50
    rng = np.random.default_rng(0)
    X = rng.normal(size=(700, 4)) * np.array([1.0, 1e8, 1e-8, 1e4])
    X[:, 3] = -X[:, 1] * 1e-4 + rng.normal(size=700) * 1e-6  # cancellation in X b
    b = np.array([0.3, 1e-4, 5.0, 1.0])
    offset = rng.normal(size=700)
    eta = compensated.row_dots(X, b, offset)
    for i in range(0, 700, 37):
        exact = mpmath.fdot(_mp(X[i]), _mp(b)) + mpmath.mpf(float(offset[i]))
        assert abs(eta[i] - float(exact)) <= 2 * np.spacing(abs(float(exact)))
    r = rng.normal(size=700)
    score = compensated.column_dots(X, r)
    for j in range(4):
        exact = mpmath.fdot(_mp(X[:, j]), _mp(r))
        assert abs(score[j] - float(exact)) <= 2 * np.spacing(abs(float(exact)))
    plain = X @ b + offset  # float64 loses the digits that cancel (the test can fail)
    assert np.max(np.abs(plain - eta) / np.abs(eta)) > 1e-13


def _reference(X: np.ndarray, y: np.ndarray, b0: np.ndarray, family: str) -> np.ndarray:
    """The 50-digit optimum from b0 (Newton corrections with η and the score in mpmath)."""
    mpmath.mp.dps = 50
    rows, cols, ys = [_mp(r) for r in X], [_mp(c) for c in X.T], _mp(y)
    b = _mp(b0)
    for _ in range(30):
        mu = [1 / (1 + mpmath.exp(-mpmath.fdot(r, b))) if family == "binomial"
              else mpmath.exp(mpmath.fdot(r, b)) for r in rows]
        resid = [a - m for a, m in zip(ys, mu, strict=True)]
        score = np.array([float(mpmath.fdot(c, resid)) for c in cols])
        m = np.array([float(v) for v in mu])
        w = m * (1 - m) if family == "binomial" else m
        R = np.linalg.qr(X * np.sqrt(w)[:, None], mode="r")
        delta = np.linalg.solve(R, np.linalg.solve(R.T, score))
        b = [bj + mpmath.mpf(float(d)) for bj, d in zip(b, delta, strict=True)]
        if np.max(np.abs(delta / b0)) < 1e-25:
            break
    return np.array([float(v) for v in b])


def _collinear(family: str, n: int = 1500) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    Z = rng.normal(size=(n, 4))
    df = pd.DataFrame({"x1": Z[:, 0], "x2": Z[:, 1], "x3": Z[:, 0] + 1e-6 * Z[:, 2],
                       "x4": 10.0 + Z[:, 3]})
    eta = 0.3 + 0.5 * df.x1 - 0.4 * df.x2 + 0.2 * (df.x3 - df.x1) * 1e6 + 0.05 * df.x4 - 0.5
    df["y"] = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float) if family == "binomial" \
        else rng.poisson(np.exp(eta)).astype(float)
    return df


@pytest.mark.parametrize("family", ["binomial", "poisson"])
def test_ill_conditioned_fits_reach_the_optimum_of_the_data(family, monkeypatch) -> None:
    df = _collinear(family)
    method = "logit" if family == "binomial" else "poisson"
    fit = ar.attnreg("y ~ x1 + x2 + x3 + x4", df, method=method)
    X = np.column_stack([np.ones(len(df)), df[["x1", "x2", "x3", "x4"]].to_numpy()])
    ref = _reference(X, df.y.to_numpy(), fit.coef.to_numpy(), family)
    np.testing.assert_allclose(fit.coef.to_numpy(), ref, rtol=RTOL_REFINED)
    monkeypatch.setattr(refine_module, "REFINE_COND", np.inf)  # float64 IRLS alone
    plain = ar.attnreg("y ~ x1 + x2 + x3 + x4", df, method=method).coef.to_numpy()
    assert np.max(np.abs(plain - ref) / np.abs(ref)) > 1e-12  # the refinement is what reaches it


def test_well_and_hopelessly_conditioned_fits_are_left_alone() -> None:
    rng = np.random.default_rng(1)
    r_good = np.linalg.qr(rng.normal(size=(50, 3)), mode="r")
    assert refine_module.scaled_condition(r_good) < refine_module.REFINE_COND
    assert refine_module.refine(None, np.zeros(3), r_good) is None  # type: ignore[arg-type]
    A = rng.normal(size=(50, 3))
    A[:, 2] = A[:, 0] + 1e-12 * A[:, 1]
    r_bad = np.linalg.qr(A, mode="r")
    assert refine_module.scaled_condition(r_bad) > refine_module.CONTRACTION_LIMIT
    assert refine_module.refine(None, np.zeros(3), r_bad) is None  # type: ignore[arg-type]
