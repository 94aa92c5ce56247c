"""A generated IV data set: 2 endogenous regressors, 4 instruments, 3 exogenous + intercept."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest


@dataclass(frozen=True)
class IVData:
    y: np.ndarray
    X: np.ndarray
    D: np.ndarray
    Z: np.ndarray
    w: np.ndarray
    g: np.ndarray


def make_iv_data(seed: int = 7, n: int = 400, k2: int = 2, n_z: int = 4) -> IVData:
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 3))])
    Z = rng.normal(size=(n, n_z))
    u = rng.normal(size=n) * (0.5 + np.abs(X[:, 1]))
    V = rng.normal(size=(n, k2)) + 0.6 * u[:, None]
    Pi = rng.uniform(0.3, 0.9, size=(n_z, k2))
    D = X[:, 1:3] @ rng.normal(size=(2, k2)) + Z @ Pi + V
    y = X @ np.array([1.0, 0.5, -0.3, 0.2]) + D @ np.linspace(1.0, -1.0, k2) + u
    w = rng.uniform(0.5, 2.0, size=n)
    g = rng.integers(0, 37, size=n)
    return IVData(y, X, D, Z, w, g)


@pytest.fixture(scope="module", params=[False, True], ids=["unweighted", "weighted"])
def ivdata(request: pytest.FixtureRequest) -> tuple[IVData, np.ndarray | None]:
    d = make_iv_data()
    return d, (d.w if request.param else None)
