"""plot_forecasts: every kind draws the computed quantities (line and image data, Agg backend)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.timeseries.fcplots import plot_forecasts
from attnreg.timeseries.views import attention_over_time

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FORMULA = "y ~ lag(y, 1) + lag(x, 1) + lag(z, 2)"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def runs(series):
    return {m: ar.forecast(FORMULA, series, method=m, start="2008Q1")
            for m in ("ols", "ridge", "pcr")}


def dates(index: pd.Index) -> np.ndarray:
    return np.asarray(index.to_timestamp())


def test_cumulative_is_goyal_welch(runs) -> None:
    f = runs["ridge"].forecasts
    ax = plot_forecasts(runs["ridge"], "cumulative")
    gain, total = [], 0.0
    for a, m, b in zip(f["actual"], f["forecast"], f["benchmark"], strict=True):
        total += (a - b) ** 2 - (a - m) ** 2
        gain.append(total)
    line = ax.lines[0]
    assert_allclose(line.get_ydata(), gain, rtol=1e-12)
    assert np.array_equal(np.asarray(line.get_xdata(), dtype="datetime64[ns]"), dates(f.index))
    assert ax.lines[1].get_ydata()[0] == 0  # the zero line


def test_rolling_oos_r2(runs) -> None:
    f = runs["ols"].forecasts
    ax = plot_forecasts(runs["ols"], "oos_r2", window=12)
    e2, b2 = f["error"].to_numpy() ** 2, f["benchmark_error"].to_numpy() ** 2
    ref = [1 - e2[t - 11:t + 1].sum() / b2[t - 11:t + 1].sum() for t in range(11, len(f))]
    assert_allclose(ax.lines[0].get_ydata(), ref, rtol=1e-12)
    assert np.array_equal(np.asarray(ax.lines[0].get_xdata(), dtype="datetime64[ns]"),
                          dates(f.index[11:]))
    with pytest.raises(OptionError, match=r"window must be an integer in 2\.\.58"):
        plot_forecasts(runs["ols"], "oos_r2", window=100)


def test_forecast_lines(runs) -> None:
    f = runs["pcr"].forecasts
    ax = plot_forecasts(runs["pcr"], "forecast")
    labels = [line.get_label() for line in ax.lines]
    assert labels == ["actual", "forecast", "prevailing mean"]
    for line, col in zip(ax.lines, ["actual", "forecast", "benchmark"], strict=True):
        assert_allclose(line.get_ydata(), f[col].to_numpy(), rtol=0)
    assert not ax.collections  # no intervals were asked for: no band


def test_forecast_with_intervals_draws_the_band(series) -> None:
    fc = ar.forecast(FORMULA, series, start="2008Q1", interval="gaussian", level=0.8)
    f = fc.forecasts
    ax = plot_forecasts(fc, "forecast")
    band = ax.collections[0]
    assert band.get_label() == "80% interval"
    vertices = band.get_paths()[0].vertices[:, 1]
    n = len(f)
    # fill_between's polygon: the lower edge forward, then the upper edge backward
    assert_allclose(vertices[1:n + 1], f["lower"].to_numpy(), rtol=1e-12)
    assert_allclose(vertices[n + 2:2 * n + 2][::-1], f["upper"].to_numpy(), rtol=1e-12)


def test_coef_and_tuning_paths(runs) -> None:
    fc = runs["ridge"]
    ax = plot_forecasts(fc, "coef", terms=["lag(x, 1)", "lag(z, 2)"])
    for line, term in zip(ax.lines[:2], ["lag(x, 1)", "lag(z, 2)"], strict=True):
        assert line.get_label() == term
        assert_allclose(line.get_ydata(), fc.coef[term].to_numpy(), rtol=0)
    ax = plot_forecasts(fc, "lambda")
    assert_allclose(ax.lines[0].get_ydata(), fc.tuning_path, rtol=0)
    assert ax.get_yscale() == "log"
    ax = plot_forecasts(runs["pcr"], "k")
    assert_allclose(ax.lines[0].get_ydata(), runs["pcr"].tuning_path, rtol=0)
    with pytest.raises(OptionError, match="tuned by k, not lambda: use kind='k'"):
        plot_forecasts(runs["pcr"], "lambda")
    with pytest.raises(OptionError, match="'ols' has no tuning parameter"):
        plot_forecasts(runs["ols"], "k")
    with pytest.raises(OptionError, match=r"terms \['nope'\] are not coefficients"):
        plot_forecasts(fc, "coef", terms=["nope"])


def test_attention_heatmap_is_the_table(runs) -> None:
    fc = runs["ols"]
    ax = plot_forecasts(fc, "attention")
    table = attention_over_time(fc)
    assert_allclose(np.asarray(ax.images[0].get_array()), table.share.to_numpy().T, rtol=0)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["1-4", "5-20", "21-40", "41+"]
    ax = plot_forecasts(fc, "attention", buckets="decade", value="weight",
                        origins=slice("2010Q1", "2012Q4"))
    ref = attention_over_time(fc, slice("2010Q1", "2012Q4"), "decade").weight
    assert_allclose(np.asarray(ax.images[0].get_array()), ref.to_numpy().T, rtol=0)


def test_comparison_cumulative_one_line_per_model(runs) -> None:
    cmp = ar.compare_forecasts(list(runs.values()))
    ax = cmp.plot("cumulative")
    assert [line.get_label() for line in ax.lines[:3]] == ["ols", "ridge", "pcr"]
    for line, fc in zip(ax.lines[:3], runs.values(), strict=True):
        f = fc.forecasts
        assert_allclose(line.get_ydata(), np.cumsum(f["benchmark_error"] ** 2 - f["error"] ** 2),
                        rtol=1e-12)
    ax = cmp.plot("oos_r2", window=10)
    assert len(ax.lines[0].get_ydata()) == len(cmp.targets) - 9
    with pytest.raises(OptionError, match="'cumulative' or 'oos_r2'"):
        cmp.plot("coef")


def test_several_horizons(series) -> None:
    fh = ar.forecast("y ~ lag(y, h) + lag(x, h)", series, start="2008Q1", horizon=[1, 3])
    ax = plot_forecasts(fh, "cumulative")
    assert [line.get_label() for line in ax.lines[:2]] == ["h = 1", "h = 3"]
    f3 = fh.at_horizon(3).forecasts
    assert_allclose(ax.lines[1].get_ydata(), np.cumsum(f3["benchmark_error"] ** 2 - f3["error"] ** 2),
                    rtol=1e-12)
    ax = plot_forecasts(fh, "forecast", horizon=3)
    assert_allclose(ax.lines[1].get_ydata(), f3["forecast"].to_numpy(), rtol=0)
    with pytest.raises(OptionError, match=r"horizons \[1, 3\]: choose one with horizon="):
        plot_forecasts(fh, "coef")


def test_delegating_plots_keep_working(runs) -> None:
    from attnreg import plots

    fc = runs["ols"]
    top, bottom = plots.plot_forecast(fc)
    assert (len(top.lines), len(bottom.lines)) == (3, 2)
    f = fc.forecasts
    assert_allclose(bottom.lines[0].get_ydata(),
                    np.cumsum(f["benchmark_error"] ** 2 - f["error"] ** 2), rtol=1e-12)
    ax = plots.plot_coef_paths(fc)
    assert [line.get_label() for line in ax.lines[:3]] == ["lag(y, 1)", "lag(x, 1)", "lag(z, 2)"]


def test_plot_errors(runs) -> None:
    with pytest.raises(OptionError, match="kind must be one of"):
        plot_forecasts(runs["ols"], "violin")  # "fan" is a kind now
    with pytest.raises(OptionError, match=r"kind 'cumulative' takes the options \[\], however: window="):
        plot_forecasts(runs["ols"], "cumulative", window=3)
    with pytest.raises(OptionError, match="value must be 'share' or 'weight'"):
        plot_forecasts(runs["ols"], "attention", value="abs")
