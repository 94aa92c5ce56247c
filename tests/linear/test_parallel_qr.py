"""Row blocks factorised on worker threads: the GIL-free LAPACK call, the segmented streaming QR
and the parallel passes give the same numbers whatever the number of threads."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import scipy.linalg.lapack as lapack

import attnreg as ar
from attnreg import threads
from attnreg.linear import filters, spectral, tallqr
from attnreg.linear import lapack as qr_lapack
from tests.conftest import ticks_during


@pytest.fixture(autouse=True)
def _reset():
    threads.set_threads(None)
    yield
    threads.set_threads(None)


@pytest.mark.parametrize(("m", "n", "nb"), [(50, 4, 4), (3000, 101, 32), (5, 7, 32), (1, 3, 2),
                                            (130, 21, 8), (64, 64, 16)])
def test_geqrt_equals_scipys_wrapper_bit_for_bit(m, n, nb) -> None:
    rng = np.random.default_rng(m * n)
    A = np.asfortranarray(rng.normal(size=(m, n)))
    v, _, info = lapack.dgeqrt(min(nb, m, n), A.copy(order="F"))
    assert info == 0
    B = A.copy(order="F")
    qr_lapack.geqrt(B, nb, *qr_lapack.workspace(n, nb))
    assert np.array_equal(v, B)


def test_geqrt_refuses_what_lapack_would_misread() -> None:
    t, work = qr_lapack.workspace(3, 3)
    with pytest.raises(ValueError, match="Fortran-ordered"):
        qr_lapack.geqrt(np.zeros((5, 3)), 3, t, work)  # C order
    with pytest.raises(ValueError, match="workspace"):
        qr_lapack.geqrt(np.zeros((5, 6), order="F"), 3, t, work)  # too wide for the workspace


@pytest.mark.skipif(not qr_lapack.releases_gil(), reason="scipy without cython_lapack")
def test_geqrt_releases_the_gil() -> None:
    """While one thread factorises, another runs Python code (holding the GIL it could not:
    scipy's own wrapper gives 0 ticks here)."""
    t, work = qr_lapack.workspace(40, 32)
    assert ticks_during(lambda A: qr_lapack.geqrt(A, 32, t, work), order="F") > 1000


def test_parallel_map_keeps_order_and_runs_nested_calls_inline() -> None:
    assert threads.parallel_map(lambda x: x * x, range(7), workers=3) == [0, 1, 4, 9, 16, 25, 36]
    names = threads.parallel_map(lambda _: threads.parallel_map(
        lambda __: threading.current_thread().name, range(2), workers=2), range(2), workers=2)
    for inner in names:  # the inner map ran in the outer task's own thread
        assert len(set(inner)) == 1
    assert threads.parallel_map(str, [], workers=4) == []


def test_row_workers_follow_the_cap(monkeypatch) -> None:
    ar.set_threads(3)
    assert threads.row_workers() == 3
    ar.set_threads(None)
    monkeypatch.setenv("ATTNREG_THREADS", "2")
    assert threads.row_workers() == 2
    monkeypatch.delenv("ATTNREG_THREADS")
    assert threads.row_workers() >= 1


def _design(n: int, p: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) + 100.0
    X[:, 0] = 1.0
    return X, X[:, 1:] @ rng.normal(size=p - 1) + rng.normal(size=n)


@pytest.mark.parametrize("weighted", [False, True])
def test_streaming_r_is_the_same_on_any_number_of_threads(weighted) -> None:
    n, p = 300_000, 12
    X, y = _design(n, p)
    cols = np.arange(1, p)
    center = X.mean(axis=0)
    sqrt_w = np.sqrt(np.random.default_rng(1).uniform(0.5, 2.0, n)) if weighted else None
    assert len(tallqr.segments(n, cols.size)) > 2
    out = []
    for workers in (1, 2, 3):
        ar.set_threads(workers)
        out.append(tallqr.streaming_r(X, y, cols, center, sqrt_w, float(y.mean())))
    assert np.array_equal(out[0], out[1]) and np.array_equal(out[0], out[2])
    # and it is the R of the centred, weighted [X | y]: R'R equals the cross-product
    Z = np.column_stack([X[:, cols] - center[cols], y - y.mean()])
    if sqrt_w is not None:
        Z *= sqrt_w[:, None]
    R = out[0]
    assert np.allclose(R.T @ R, Z.T @ Z, rtol=1e-12, atol=1e-9 * np.abs(Z.T @ Z).max())
    assert np.allclose(np.tril(R, -1), 0.0)


def test_one_segment_is_the_sequential_stream() -> None:
    """Designs of at most one segment are factorised exactly as before segments existed."""
    X, y = _design(3000, 6)
    cols = np.arange(1, 6)
    center = X.mean(axis=0)
    assert len(tallqr.segments(3000, 5)) == 1
    job = tallqr._LeafJob(X, y, cols, center[cols], tallqr.column_span(cols), None, 0.5, None)
    assert np.array_equal(tallqr.streaming_r(X, y, cols, center, None, 0.5), job.segment_r((0, 3000)))


def test_fill_columns_equals_a_plain_take() -> None:
    X = np.random.default_rng(3).normal(size=(3000, 9))
    for cols in (np.arange(2, 7), np.array([0, 4, 2])):
        span = tallqr.column_span(cols)
        dest = np.zeros((2100, cols.size), order="F")
        tallqr.fill_columns(dest, X, 700, 2800, cols, span)
        assert np.array_equal(dest, X[700:2800][:, cols])


def test_ols_fit_and_hat_values_do_not_depend_on_the_threads() -> None:
    X, y = _design(60_000, 8, seed=4)
    fits = []
    for workers in (1, 2):
        ar.set_threads(workers)
        sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="norm", lazy_u=True)
        f = filters.ols_filter(sp.s)
        fits.append((sp.s, filters.hat_and_weight_stats(sp, f, np.array([0, 5, 59_999]))))
    (s1, (h1, n1, l1)), (s2, (h2, n2, l2)) = fits
    assert np.array_equal(s1, s2)
    assert np.array_equal(h1, h2) and np.array_equal(n1, n2) and np.array_equal(l1, l2)
    assert h1.sum() == pytest.approx(8.0, rel=1e-10)  # the trace: the number of coefficients
    assert np.allclose(l1, h1[[0, 5, 59_999]], rtol=1e-10)  # H = H²: Σ ω² = h for OLS
