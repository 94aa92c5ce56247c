"""The softmax methods' ridge base: the spectral family's LOO on a grid, against a dense reference."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from attnreg.softmax.fit import RIDGE_BASE_GRID, _base


def _dense(z: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    n, p = z.shape
    X = np.column_stack([np.ones(n), z])
    D = np.diag([0.0] + [1.0] * p)  # the intercept is not penalised
    best = (np.inf, 0.0, None)
    for lam in n * RIDGE_BASE_GRID:
        A = X.T @ X + lam * D
        H = X @ np.linalg.solve(A, X.T)
        loo = np.mean(((y - H @ y) / (1.0 - np.diag(H))) ** 2)
        if loo < best[0]:
            best = (loo, lam, np.linalg.solve(A, X.T @ y))
    return best[2], best[1]


@pytest.mark.parametrize(("n", "p"), [(60, 3), (400, 8)])
def test_ridge_base_matches_the_dense_leave_one_out_choice(n, p) -> None:
    rng = np.random.default_rng(n)
    z = rng.normal(size=(n, p))
    y = z[:, 0] - z[:, 1] ** 2 + rng.normal(size=n)
    coef, lam = _base(z, y, "ridge")
    ref_coef, ref_lam = _dense(z, y)
    assert lam == ref_lam
    np.testing.assert_allclose(coef, ref_coef, rtol=1e-8, atol=1e-12)


def test_a_constant_column_gets_a_zero_slope() -> None:
    rng = np.random.default_rng(1)
    z = np.column_stack([rng.normal(size=50), np.zeros(50)])
    coef, _ = _base(z, z[:, 0] + rng.normal(size=50), "ridge")
    assert coef[2] == 0.0 and np.isfinite(coef).all()
    assert _base(z, z[:, 0], "y") == (None, 0.0)
