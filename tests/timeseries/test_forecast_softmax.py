"""Forecasting with method="softmax": re-estimated at each origin, no look-ahead."""

from __future__ import annotations

import pandas as pd
from numpy.testing import assert_allclose

import attnreg as ar
from tests.timeseries.test_forecast import FORMULA


def test_future_perturbation_softmax(series) -> None:
    kw = dict(method="softmax", start="2018Q1", refit_every=3, heads=2, max_iter=15, seed=1)
    base = ar.forecast(FORMULA, series, **kw).forecasts
    noisy = series.copy()
    cut = pd.Period("2019Q2", freq="Q")
    noisy.loc[noisy.index > cut] += 5.0
    moved = ar.forecast(FORMULA, noisy, **kw).forecasts
    past = base["origin"] <= cut
    assert past.sum() >= 3
    assert_allclose(moved.loc[past, "forecast"], base.loc[past, "forecast"], rtol=1e-12)
