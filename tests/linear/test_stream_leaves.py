"""The streaming QR's and the IRLS passes' leaves: equal leaves within each segment (no
sliver), as large as their byte budget, covering the rows once."""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pytest

from attnreg.glm import normal
from attnreg.linear import tallqr


@pytest.mark.parametrize("k", [1, 5, 20, 50, 100, 600])
def test_a_segment_is_cut_into_equal_leaves(k: int) -> None:
    for lo, hi in tallqr.segments(1_000_003, k)[-2:]:
        leaves = tallqr.stream_leaves(lo, hi, k)
        sizes = [b - a for a, b in leaves]
        assert leaves[0][0] == lo and leaves[-1][1] == hi
        assert all(a[1] == b[0] for a, b in pairwise(leaves))
        assert max(sizes) - min(sizes) <= 1 and max(sizes) <= tallqr.stream_rows(k)
    assert tallqr.stream_rows(k) >= tallqr.leaf_rows(k)
    # narrow designs take leaves of the byte budget, not of the wide designs' rows
    if k <= 20:
        assert tallqr.stream_rows(k) * 8 * (k + 1) > tallqr.STREAM_LEAF_BYTES // 2


def test_the_segments_end_in_equal_leaves_not_a_sliver() -> None:
    lo, hi = tallqr.segments(1_000_000, 20)[0]
    sizes = [b - a for a, b in tallqr.stream_leaves(lo, hi, 20)]
    assert min(sizes) > tallqr.stream_rows(20) // 2


def test_the_irls_pass_leaves_are_equal_too() -> None:
    lo, hi = 0, 50_000
    leaves = normal._leaves(lo, hi, 20)
    sizes = [b - a for a, b in leaves]
    assert leaves[0][0] == lo and leaves[-1][1] == hi and max(sizes) - min(sizes) <= 1
    assert max(sizes) * 8 * 20 <= normal.LEAF_BYTES


def test_streaming_r_without_a_centre_is_the_r_of_the_weighted_columns() -> None:
    rng = np.random.default_rng(2)
    n, k = 70_000, 7
    X = rng.normal(size=(n, k))
    y = rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, n)
    R = tallqr.streaming_r(X, y, np.arange(k), np.zeros(k), w, 0.0)
    Z = np.column_stack([X, y]) * w[:, None]
    np.testing.assert_allclose(R.T @ R, Z.T @ Z, rtol=1e-12, atol=1e-9 * np.abs(Z.T @ Z).max())
    c = np.full(k, 0.25)  # and a centre is still subtracted
    Rc = tallqr.streaming_r(X, y, np.arange(k), c, w, 0.5)
    Zc = np.column_stack([X - c, y - 0.5]) * w[:, None]
    np.testing.assert_allclose(Rc.T @ Rc, Zc.T @ Zc, rtol=1e-12,
                               atol=1e-9 * np.abs(Zc.T @ Zc).max())
