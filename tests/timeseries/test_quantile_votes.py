"""``fc.attention(target, tau=)`` on quantile forecasts: the exact vote of the p rows the
origin's rq fit interpolates (``x0' X_h⁻¹ y_h``), checked against the forecast itself and
against the rows whose residual is zero in a cold refit of the window by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.quantreg.solver import rq_fit
from tests.conftest import RTOL_EXACT


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    n = 140
    x, y = rng.standard_normal(n), np.zeros(n)
    for t in range(1, n):
        y[t] = 0.4 * y[t - 1] + 0.5 * x[t - 1] + (1 + 0.5 * abs(x[t - 1])) * rng.normal()
    return pd.DataFrame({"y": y, "x": x})


@pytest.mark.parametrize("tau", [None, 0.1, 0.9])
def test_quantile_forecast_vote_reproduces_the_forecast(data: pd.DataFrame,
                                                        tau: float | None) -> None:
    taus = [0.1, 0.5, 0.9]
    fc = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", data, method="quantreg", tau=taus,
                     start=90)
    k = taus.index(0.5 if tau is None else tau)
    for i in (0, 17, 49):
        target = fc.forecasts.index[i]
        w = fc.attention(target, tau=tau)
        weights = w.weights.to_numpy()[0]
        assert w.weights.shape == (1, target - 1)  # rows 1..target-1 (the first has no lag)
        assert_allclose(weights @ w.y_train, fc.quantile_path[i, k], rtol=RTOL_EXACT)
        # the voters: the p rows a cold rq fit of the window interpolates, by hand
        lagged = pd.DataFrame({"y": data["y"], "ly": data["y"].shift(1),
                               "lx": data["x"].shift(1)}).iloc[1:target]
        X = np.column_stack([np.ones(len(lagged)), lagged["ly"], lagged["lx"]])
        b = rq_fit(X, lagged["y"].to_numpy(), taus[k]).coef
        on_fit = np.flatnonzero(np.abs(lagged["y"].to_numpy() - X @ b) < 1e-9)
        assert np.flatnonzero(weights).tolist() == on_fit.tolist()
        assert on_fit.size == 3  # p = 3 coefficients


def test_quantile_vote_errors(data: pd.DataFrame) -> None:
    fc = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", data, method="quantreg", tau=[0.1, 0.9],
                     start=90)
    with pytest.raises(OptionError, match=r"have tau=\[0.1, 0.9\], without the median: "
                                          r"choose the quantile with tau="):
        fc.attention(100)
    with pytest.raises(OptionError, match=r"tau=0.5 was not fitted; the fitted tau are "
                                          r"\[0.1, 0.9\]"):
        fc.attention(100, tau=0.5)
    ols = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", data, start=90)
    with pytest.raises(OptionError, match=r"tau applies to quantile forecasts"):
        ols.attention(100, tau=0.5)
