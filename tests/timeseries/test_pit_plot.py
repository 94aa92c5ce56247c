"""``fc.plot(kind="pit")``: the PIT histogram of forecasts with intervals."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.timeseries.scores import forecast_scores
from tests.conftest import RTOL_EXACT

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def _close() -> Iterator[None]:
    yield
    plt.close("all")


def _data() -> pd.DataFrame:
    rng = np.random.default_rng(5)
    e, y = rng.standard_normal(200), np.zeros(200)
    for t in range(1, 200):
        y[t] = 0.5 * y[t - 1] + e[t]
    return pd.DataFrame({"y": y})


def test_pit_plot_draws_the_histogram() -> None:
    fh = ar.forecast("y ~ lag(y, h)", _data(), start=80, horizon=[1, 2], interval="gaussian")
    ax = fh.plot(kind="pit", horizon=2, bins=8)
    heights = np.array([bar.get_height() for bar in ax.patches])
    assert heights.size == 8
    pit = forecast_scores(fh.at_horizon(2))["pit"].to_numpy()
    counts = np.histogram(pit, bins=8, range=(0.0, 1.0))[0]
    assert_allclose(heights, counts / pit.size * 8, rtol=RTOL_EXACT)
    assert ax.lines[0].get_ydata()[0] == 1.0  # the uniform density
    assert "PIT histogram" in ax.get_title()


def test_pit_plot_of_several_horizons_draws_one_outline_each() -> None:
    fh = ar.forecast("y ~ lag(y, h)", _data(), start=80, horizon=[1, 3], interval="aci",
                     aci_gamma=0.05)
    ax = fh.plot(kind="pit", bins=5)
    outlines = [p for p in ax.patches if p.get_label().startswith("h = ")]
    assert [p.get_label() for p in outlines] == ["h = 1", "h = 3"]
    for patch, h in zip(outlines, (1, 3), strict=True):
        pit = forecast_scores(fh.at_horizon(h))["pit"].dropna().to_numpy()
        counts = np.histogram(pit, bins=5, range=(0.0, 1.0))[0]
        assert_allclose(patch.get_data().values, counts / pit.size * 5, rtol=RTOL_EXACT)


def test_pit_plot_needs_intervals() -> None:
    fc = ar.forecast("y ~ lag(y, 1)", _data(), start=80)
    with pytest.raises(OptionError, match="need forecast intervals"):
        fc.plot(kind="pit")
    fc = ar.forecast("y ~ lag(y, 1)", _data(), start=80, interval="empirical")
    with pytest.raises(OptionError, match="kind 'pit' takes the options"):
        fc.plot(kind="pit", window=3)
