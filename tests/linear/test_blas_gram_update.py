"""The GIL-free symmetric rank-k update: the same Gram matrix as numpy's, and other Python
threads run while it works."""

from __future__ import annotations

import numpy as np
import pytest

from attnreg.linear import blas
from tests.conftest import RTOL_EXACT, ticks_during


@pytest.mark.parametrize(("m", "p"), [(1, 1), (7, 3), (5000, 20), (300, 64), (2, 9)])
def test_gram_update_adds_the_gram_matrix(m, p) -> None:
    rng = np.random.default_rng(m + p)
    A = rng.normal(size=(m, p))
    G0 = rng.normal(size=(p, p))
    G0 = G0 + G0.T
    G = G0.copy()
    blas.gram_update(G, A)
    np.testing.assert_allclose(G, G0 + A.T @ A, rtol=RTOL_EXACT, atol=RTOL_EXACT * m)
    assert np.array_equal(G, G.T)


def test_gram_update_takes_views_and_empty_blocks() -> None:
    A = np.arange(24.0).reshape(6, 4)
    G = np.zeros((3, 3))
    blas.gram_update(G, A[:, :3])  # not contiguous: numpy's product
    np.testing.assert_allclose(G, A[:, :3].T @ A[:, :3], rtol=RTOL_EXACT)
    before = G.copy()
    blas.gram_update(G, np.zeros((0, 3)))
    assert np.array_equal(G, before)


@pytest.mark.skipif(not blas.releases_gil(), reason="scipy without cython_blas")
def test_gram_update_releases_the_gil() -> None:
    """While one thread adds a large Gram matrix, another runs Python code."""
    G = np.zeros((40, 40))

    def three_updates(A: np.ndarray) -> None:
        for _ in range(3):
            blas.gram_update(G, A)

    assert ticks_during(three_updates) > 1000
