"""``fit.plot(kind="partial")``: the curves drawn are partial_dependence()'s numbers."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import ConvergenceWarning, OptionError

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")


@pytest.fixture(scope="module")
def fit():
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.uniform(-2, 2, (150, 2)), columns=["x1", "x2"])
    df["y"] = np.sin(2 * df.x1) + 0.5 * df.x2 + 0.1 * rng.standard_normal(150)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return ar.attnreg("y ~ x1 + x2", df, method="softmax", heads=2, max_iter=20, seed=0)


def test_partial_plot_draws_partial_dependence(fit) -> None:
    axes = fit.plot(kind="partial")
    assert len(axes) == 2
    for ax, col in zip(axes, ["x1", "x2"], strict=True):
        (line,) = ax.get_lines()
        curve = fit.partial_dependence(col)
        np.testing.assert_array_equal(line.get_xdata(), curve[col].to_numpy())
        np.testing.assert_array_equal(line.get_ydata(), curve["partial_dependence"].to_numpy())
        assert ax.get_xlabel() == col and ax.get_ylabel() == "partial dependence of y"
    plt.close("all")


def test_partial_plot_of_one_column_on_given_axes_with_a_grid(fit) -> None:
    _, ax = plt.subplots()
    out = fit.plot("partial", columns=["x2"], grid=[-1.0, 0.0, 1.0], ax=ax)
    assert out is ax
    np.testing.assert_array_equal(ax.get_lines()[0].get_xdata(), [-1.0, 0.0, 1.0])
    np.testing.assert_array_equal(ax.get_lines()[0].get_ydata(),
                                  fit.partial_dependence("x2", [-1.0, 0.0, 1.0])["partial_dependence"])
    plt.close("all")


def test_partial_plot_errors_name_the_argument(fit) -> None:
    with pytest.raises(OptionError, match="kind must be one of"):
        fit.plot(kind="heatmap")
    _, ax = plt.subplots()
    with pytest.raises(OptionError, match=r"ax must hold one Axes per column plotted \(2\); got 1"):
        fit.plot(ax=ax)
    with pytest.raises(OptionError, match="x9"):
        fit.plot(columns=["x9"])
    plt.close("all")
