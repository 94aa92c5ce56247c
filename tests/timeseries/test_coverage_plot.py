"""``fc.plot(kind="coverage")``: the rolling hit rate of the intervals against the nominal level;
the lines drawn are the hit rates computed by hand from the forecasts table."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.timeseries.coverage_plot import rolling_coverage
from tests.conftest import RTOL_EXACT

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


@pytest.fixture(autouse=True)
def _close() -> Iterator[None]:
    yield
    plt.close("all")


def _data() -> pd.DataFrame:
    rng = np.random.default_rng(8)
    e, y = rng.standard_normal(180), np.zeros(180)
    for t in range(1, 180):  # the noise doubles two thirds of the way through
        y[t] = 0.5 * y[t - 1] + e[t] * (2.0 if t > 120 else 1.0)
    return pd.DataFrame({"y": y}, index=pd.period_range("1980Q1", periods=180, freq="Q"))


def _by_hand(f: pd.DataFrame, window: int) -> pd.Series:
    """Hit rate over the last ``window`` intervals, by pandas' rolling mean."""
    has = f[["lower", "upper"]].notna().all(axis=1)
    g = f[has]
    hit = ((g["actual"] >= g["lower"]) & (g["actual"] <= g["upper"])).astype(float)
    return hit.rolling(window).mean().dropna()


def test_coverage_plot_draws_the_rolling_hit_rate() -> None:
    fc = ar.forecast("y ~ lag(y, 1)", _data(), start="1995Q1", interval="empirical",
                     level=0.8, min_errors=10)
    ax = fc.plot(kind="coverage", window=12)
    ref = _by_hand(fc.forecasts, 12)
    line = ax.lines[0]
    assert_allclose(line.get_ydata(), ref.to_numpy(), rtol=RTOL_EXACT)
    assert_array_equal(line.get_xdata(), ref.index.to_timestamp())
    nominal = [ln for ln in ax.lines if ln.get_label() == "nominal 80%"]
    assert nominal and nominal[0].get_ydata()[0] == 0.8
    assert "Coverage over time, empirical intervals" in ax.get_title()


def test_coverage_plot_of_several_horizons_draws_a_line_each() -> None:
    fh = ar.forecast("y ~ lag(y, h)", _data(), start="1995Q1", horizon=[1, 4],
                     interval="aci", aci_gamma=0.05, min_errors=10)
    ax = fh.plot(kind="coverage")
    lines = [ln for ln in ax.lines if ln.get_label().startswith("h = ")]
    assert [ln.get_label() for ln in lines] == ["h = 1", "h = 4"]
    for line, h in zip(lines, (1, 4), strict=True):
        ref = _by_hand(fh.at_horizon(h).forecasts, 20)
        assert_allclose(line.get_ydata(), ref.to_numpy(), rtol=RTOL_EXACT)
    one = fh.plot(kind="coverage", horizon=4, window=10).lines[0]
    assert_allclose(one.get_ydata(), _by_hand(fh.at_horizon(4).forecasts, 10), rtol=RTOL_EXACT)


def test_rolling_coverage_counts_bounds_as_inside() -> None:
    out = rolling_coverage([1.0, 0.0, 3.0, -1.0], [1.0, -1.0, -1.0, np.nan],
                           [2.0, 1.0, 2.0, np.nan], window=3)
    assert_array_equal(out[:2], [np.nan, np.nan])
    assert out[2] == pytest.approx(2 / 3, rel=RTOL_EXACT)
    assert np.isnan(out[3])


def test_coverage_plot_errors() -> None:
    fc = ar.forecast("y ~ lag(y, 1)", _data(), start="1995Q1")
    with pytest.raises(OptionError, match="kind='coverage' needs forecast intervals"):
        fc.plot(kind="coverage")
    fc = ar.forecast("y ~ lag(y, 1)", _data(), start="1995Q1", interval="gaussian")
    with pytest.raises(OptionError, match=r"window must be an integer in 2\.\.120 .*window=1"):
        fc.plot(kind="coverage", window=1)
    with pytest.raises(OptionError, match="kind 'coverage' takes the options"):
        fc.plot(kind="coverage", bins=3)
