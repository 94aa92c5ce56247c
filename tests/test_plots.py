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
    top, bottom = fc.plot()
    assert len(top.lines) == 3 and len(bottom.lines) == 2
    ax = plots.plot_coef_paths(fc)
    assert len(ax.lines) == 3  # two terms and the zero line
