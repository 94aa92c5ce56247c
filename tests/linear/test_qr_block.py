"""The tall QR's leaves of at most 32 columns are factorised with geqrt's block size 8 (a
blocked QR beats the unblocked one there), wider ones with 32; the R is the same."""

from __future__ import annotations

import numpy as np
import pytest

import attnreg.linear.tallqr as tallqr


def test_the_block_size_by_width() -> None:
    assert [tallqr.qr_block(k) for k in (1, 6, 8, 21, 32, 33, 101)] == [1, 6, 8, 8, 8, 32, 32]


@pytest.mark.parametrize("k", [20, 40])
def test_streaming_r_uses_it_and_keeps_r(k, monkeypatch) -> None:
    rng = np.random.default_rng(2)
    X = rng.standard_normal((30_000, k))
    y = rng.standard_normal(30_000)
    blocks: list[int] = []
    real = tallqr.geqrt

    def geqrt(a, nb, t, work):  # type: ignore[no-untyped-def]
        blocks.append(nb)
        return real(a, nb, t, work)

    monkeypatch.setattr(tallqr, "geqrt", geqrt)
    R = tallqr.streaming_r(X, y, np.arange(k), np.zeros(k), None, 0.0)
    assert set(blocks) == {tallqr.qr_block(k + 1)}
    ref = np.linalg.qr(np.column_stack([X, y]), mode="r")
    np.testing.assert_allclose(np.abs(np.triu(R)), np.abs(ref), rtol=1e-12,
                               atol=1e-13 * np.abs(ref).max())
