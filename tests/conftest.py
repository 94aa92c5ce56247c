"""Shared tolerances and fixtures. Every tolerance used in an assertion is named here."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

RTOL_EXACT = 1e-10  # two float64 closed forms on well-conditioned data
RTOL_SM = 1e-8  # against statsmodels (different algorithms, same estimator)
RTOL_R = 1e-8  # against R golden values written at full precision
RTOL_R_VCOV = 1e-6  # sandwich/HAC against R
ATOL_IDENTITY = 1e-10  # identities of the attention view (weights @ y = fitted, ...)
RTOL_OFFSET = 1e-13  # against the exact solution of float64 data with large column offsets
RTOL_FD = 1e-6  # a closed-form derivative against central finite differences (step 1e-5)
RTOL_OPTIM = 1e-6  # two optimisers' minima of the same smooth objective (CUE GMM vs linearmodels)

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path | None:
    """The benchmark data directory: $ATTNREG_DATA, else ../shared/data next to the repo."""
    env = os.environ.get("ATTNREG_DATA")
    candidates = [Path(env)] if env else []
    candidates.append(REPO.parent / "shared" / "data")
    for c in candidates:
        if c.is_dir():
            return c
    return None


@pytest.fixture(scope="session")
def nist_dir() -> Path:
    d = shared_data_dir()
    if d is None or not (d / "nist").is_dir():
        pytest.skip("NIST StRD data not available (set ATTNREG_DATA)")
    return d / "nist"


@pytest.fixture(scope="session")
def longley() -> pd.DataFrame:
    from statsmodels.datasets import longley as ds

    return ds.load_pandas().data


@pytest.fixture
def mixed_frame() -> pd.DataFrame:
    """Random data with a categorical, labelled rows and heteroskedastic, autocorrelated noise."""
    rng = np.random.default_rng(42)
    n = 120
    x1 = rng.normal(size=n)
    x2 = rng.uniform(1, 3, size=n)
    g = rng.choice(["a", "b", "c"], size=n)
    e = np.zeros(n)
    for t in range(1, n):
        e[t] = 0.5 * e[t - 1] + rng.normal() * (0.5 + abs(x1[t]))
    y = 1.0 + 2.0 * x1 - 1.5 * np.log(x2) + (g == "b") * 0.7 + e
    idx = [f"r{i:03d}" for i in range(n)]
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "g": g, "w": rng.uniform(0.5, 2, n)},
                        index=idx)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--update-snapshots", action="store_true", default=False,
                     help="rewrite the golden text snapshots in tests/snapshots/")


@pytest.fixture
def snapshot(request: pytest.FixtureRequest):
    """Compare text with tests/snapshots/<name>, or rewrite it with --update-snapshots."""
    update = request.config.getoption("--update-snapshots")

    def check(name: str, text: str) -> None:
        path = Path(__file__).parent / "snapshots" / name
        if update or not path.exists():
            path.parent.mkdir(exist_ok=True)
            path.write_text(text)
            if not update:
                pytest.fail(f"snapshot {name} did not exist; written, rerun to compare")
        assert text == path.read_text()

    return check


@pytest.fixture(scope="session")
def series() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 90
    x, z, y = rng.normal(size=n), rng.normal(size=n), np.zeros(n)
    for t in range(2, n):
        y[t] = 0.5 * y[t - 1] + 0.4 * x[t - 1] - 0.3 * z[t - 2] + rng.normal(scale=0.5)
    return pd.DataFrame({"y": y, "x": x, "z": z},
                        index=pd.period_range("2000Q1", periods=n, freq="Q"))


def ticks_during(work: Callable[[np.ndarray], object], order: str = "C") -> int:
    """Iterations another Python thread makes in the middle half of ``work`` on a
    400,000 × 40 normal array of the given memory order: many when ``work`` releases the GIL."""
    A = np.asarray(np.random.default_rng(0).normal(size=(400_000, 40)), order=order)
    ticks: list[float] = []
    done = threading.Event()

    def count() -> None:
        while not done.is_set():
            ticks.append(time.perf_counter())

    other = threading.Thread(target=count)
    other.start()
    time.sleep(0.02)
    try:
        start = time.perf_counter()
        work(A)
        stop = time.perf_counter()
    finally:
        done.set()
        other.join()
    quarter = (stop - start) / 4
    return sum(start + quarter < x < stop - quarter for x in ticks)
