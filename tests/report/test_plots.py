"""Plots render headless and return their Axes."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

import attnreg as ar
from attnreg import plots
from attnreg.exceptions import OptionError

FORMULA = "TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR"


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_contributors_and_heatmap(longley: pd.DataFrame) -> None:
    fit = ar.attnreg(FORMULA, data=longley)
    ax = plots.plot_contributors(fit.attention(longley.iloc[[3]]), top=5)
    assert len(ax.patches) == 5
    ax = plots.plot_attention_heatmap(fit.attention())
    assert ax.images[0].get_array().shape == (16, 16)


def test_leverage_and_selection(longley: pd.DataFrame) -> None:
    ax = plots.plot_leverage(ar.attnreg(FORMULA, data=longley))
    assert len(ax.collections[0].get_offsets()) == 16
    ridge = ar.attnreg(FORMULA, data=longley, method="ridge")
    ax = plots.plot_selection(ridge)
    assert ax.get_xscale() == "log" and ax.lines[0].get_xdata().size == ridge.selection.grid.size
    with pytest.raises(OptionError, match="plot_selection needs"):
        plots.plot_selection(ar.attnreg(FORMULA, data=longley, method="ridge", lam=1.0))


def test_forecast_plots(series: pd.DataFrame) -> None:
    fc = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", series, start="2010Q1")
    top, bottom = plots.plot_forecast(fc)
    assert len(top.lines) == 3 and len(bottom.lines) == 2
    assert len(fc.plot().lines) == 3  # forecast, actual, benchmark
    assert len(fc.plot("cumulative").lines) == 2
    ax = plots.plot_coef_paths(fc)
    assert len(ax.lines) == 3  # two terms and the zero line


def test_coefficient_and_dual_view(longley: pd.DataFrame) -> None:
    fit = ar.attnreg(FORMULA, data=longley)
    query = longley.iloc[[15]]
    c = plots.coefficient_contributions(fit, query)
    assert c.attrs["baseline"] == pytest.approx(longley["TOTEMP"].mean(), rel=1e-9)
    assert c.attrs["baseline"] + c.sum() == pytest.approx(fit.predict(query).iloc[0], rel=1e-9)
    left, right = plots.plot_dual_view(fit, query, top=4)
    assert len(left.patches) == 6 and len(right.patches) == 4
    ax = plots.plot_coefficients(ar.attnreg(FORMULA, data=longley, method="ridge"), query, top=3)
    assert len(ax.patches) == 3
    with pytest.raises(OptionError, match="needs a model with an intercept"):
        plots.coefficient_contributions(ar.attnreg(FORMULA + " - 1", data=longley), query)


def test_forecast_plot_returns_both_axes(series: pd.DataFrame) -> None:
    fc = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", series, start="2010Q1")
    _, bottom = plots.plot_forecast(fc)
    assert bottom.get_ylabel().startswith("cum. SSE")
