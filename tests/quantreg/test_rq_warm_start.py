"""Warm starts of the quantile regression solver across forecast origins.

``rq_fit(..., start=b)`` tries the vertex next to ``b`` first and keeps it only when it is
verified optimal: the answer equals the cold solve (unique solutions), with no interior point
when the start is the previous window's solution; ``forecast(method="quantreg")`` passes each
origin's solution to the next and gives the forecasts of fits refitted cold by hand.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.quantreg.solver import check_loss, rq_fit
from tests.conftest import RTOL_EXACT


def _data(n: int = 400, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.standard_normal((n, 3))])
    y = X @ np.array([0.5, 1.0, -0.5, 0.2]) + (1 + np.abs(X[:, 1])) * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("tau", [0.1, 0.5, 0.9])
def test_warm_start_from_the_previous_window_equals_the_cold_solve(tau: float) -> None:
    X, y = _data()
    warm_hits = 0
    prev = rq_fit(X[:200], y[:200], tau)
    for stop in range(201, 260):  # an expanding window, one row at a time
        cold = rq_fit(X[:stop], y[:stop], tau)
        warm = rq_fit(X[:stop], y[:stop], tau, start=prev.coef)
        assert_allclose(warm.coef, cold.coef, rtol=RTOL_EXACT, atol=1e-12)  # exact vertices
        assert warm.vertex and cold.vertex
        warm_hits += warm.iterations == 0
        prev = warm
    assert warm_hits >= 15  # here about a third of the windows keep the previous vertex


def test_a_poor_start_falls_back_to_the_cold_solve() -> None:
    X, y = _data(seed=1)
    cold = rq_fit(X, y, 0.5)
    bad = rq_fit(X, y, 0.5, start=np.array([10.0, -5.0, 3.0, 7.0]))
    assert bad.iterations > 0
    assert_allclose(bad.coef, cold.coef, rtol=RTOL_EXACT)
    assert check_loss(y - X @ bad.coef, 0.5) == pytest.approx(cold.objective, rel=RTOL_EXACT)


def test_quantile_forecasts_with_warm_starts_equal_cold_fits_by_hand() -> None:
    X, y = _data(160, seed=2)
    df = pd.DataFrame({"y": y, "x": X[:, 1]})
    taus = [0.1, 0.5, 0.9]
    with mock.patch("attnreg.quantreg.results.rq_fit", wraps=rq_fit) as spy:
        fc = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", df, method="quantreg", tau=taus,
                         start=100)
    started = [c for c in spy.call_args_list if c.kwargs.get("start") is not None]
    assert len(started) == len(spy.call_args_list) - len(taus)  # all but the first origin's
    assert "warm_start" not in fc.plan.options  # popped after the loop
    lagged = pd.DataFrame({"y": df["y"], "ly": df["y"].shift(1), "lx": df["x"].shift(1)})
    for i, target in enumerate(range(100, 160)):
        rows = lagged.iloc[1:target]
        Xw = np.column_stack([np.ones(len(rows)), rows["ly"], rows["lx"]])
        x_new = np.array([1.0, lagged["ly"].iloc[target], lagged["lx"].iloc[target]])
        q = [x_new @ rq_fit(Xw, rows["y"].to_numpy(), t).coef for t in taus]
        assert_allclose(fc.quantile_path[i], q, rtol=RTOL_EXACT, atol=1e-12)


def test_warm_start_option_errors() -> None:
    X, y = _data(50)
    df = pd.DataFrame({"y": y, "x": X[:, 1]})
    with pytest.raises(OptionError, match=r"warm_start must be finite coefficients of shape "
                                          r"\(n_coef, 2\) \(a column per tau\), however: shape "
                                          r"\(2,\)"):
        ar.attnreg("y ~ x", df, method="quantreg", tau=[0.2, 0.8], warm_start=[1.0, 2.0])
