"""The thread policy: one BLAS thread for small factorizations, the user's cap, nothing left
changed afterwards."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_info

import attnreg as ar
from attnreg import threads
from attnreg.exceptions import OptionError


def _blas_threads() -> list[int]:
    return [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]


@pytest.fixture
def data() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(300, 5)), columns=list("abcde"))
    df["y"] = df.a - df.b + rng.normal(size=300)
    return df


@pytest.fixture(autouse=True)
def _reset():
    threads.set_threads(None)
    yield
    threads.set_threads(None)


def test_small_lapack_runs_on_one_thread_and_restores() -> None:
    before = _blas_threads()
    with threads.small_lapack():
        assert set(_blas_threads()) == {1}
    assert _blas_threads() == before


def test_fits_and_forecasts_leave_the_thread_settings_as_they_were(data) -> None:
    before = _blas_threads()
    ar.attnreg("y ~ .", data)
    ar.attnreg("y ~ .", data, method="ridge")
    ts = data.set_axis(pd.period_range("1950Q1", periods=300, freq="Q"))
    ar.forecast("y ~ lag(y) + lag(a)", ts, method="ridge")
    ar.rolling("y ~ a", ts, window=50)
    assert _blas_threads() == before


def test_the_user_cap_applies_during_the_fit_only(data, monkeypatch) -> None:
    import dataclasses

    from attnreg import methods

    seen: list[list[int]] = []
    est = methods.METHODS["ols"]

    def spy(*args, **kwargs):
        seen.append(_blas_threads())
        return est.fit(*args, **kwargs)

    monkeypatch.setitem(methods.METHODS, "ols", dataclasses.replace(est, fit=spy))
    before = _blas_threads()
    ar.set_threads(1)
    ar.attnreg("y ~ a + b", data)
    assert seen and set(seen[-1]) == {1}
    assert _blas_threads() == before


def test_environment_variable_and_validation(monkeypatch) -> None:
    monkeypatch.setenv("ATTNREG_THREADS", "3")
    assert ar.get_threads() == 3
    ar.set_threads(2)
    assert ar.get_threads() == 2  # set_threads wins over the variable
    ar.set_threads(None)
    monkeypatch.setenv("ATTNREG_THREADS", "many")
    with pytest.raises(OptionError, match="ATTNREG_THREADS must be a positive integer"):
        ar.get_threads()
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(OptionError, match=r"set_threads\(n\) must be a positive integer"):
            ar.set_threads(bad)  # type: ignore[arg-type]


def test_one_thread_and_default_threads_give_the_same_fit(data) -> None:
    default = ar.attnreg("y ~ .", data).coef.to_numpy()
    ar.set_threads(1)
    single = ar.attnreg("y ~ .", data).coef.to_numpy()
    np.testing.assert_allclose(single, default, rtol=1e-12)  # refined to convergence either way


def test_narrow_designs_are_reduced_on_one_thread() -> None:
    before = _blas_threads()
    with threads.narrow_blas(threads.NARROW_COLUMNS - 1):
        assert set(_blas_threads()) == {1}
    with threads.narrow_blas(threads.NARROW_COLUMNS):
        assert _blas_threads() == before
    assert _blas_threads() == before


def test_network_training_runs_on_one_torch_thread_unless_the_user_asks() -> None:
    """Mini-batch training is many small operations: one thread, or the user's cap."""
    torch = pytest.importorskip("torch")
    from torch import nn

    from attnreg.nn.train import train_model

    before = torch.get_num_threads()
    x = torch.randn(120, 2)
    y = x @ torch.tensor([1.0, -1.0])

    def threads_seen() -> set[int]:
        seen: set[int] = set()
        model = nn.Sequential(nn.Linear(2, 1), nn.Flatten(0))
        train_model(model, x[:100], y[:100], x[100:], y[100:], batch_size=20, max_epochs=3,
                    progress=lambda rec: seen.add(torch.get_num_threads()))
        return seen

    torch.set_num_threads(2)
    try:
        assert threads_seen() == {1}
        assert torch.get_num_threads() == 2  # restored
        ar.set_threads(2)
        try:
            assert threads_seen() == {2}
        finally:
            ar.set_threads(None)
    finally:
        torch.set_num_threads(before)
