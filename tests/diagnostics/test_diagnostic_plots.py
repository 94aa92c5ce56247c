"""R's plot.lm panels and added-variable plots: the plotted data are the computed quantities."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from scipy import stats  # noqa: E402

from attnreg import plots  # noqa: E402

REF = json.loads((Path(__file__).parents[1] / "reference" / "diagnostics.json").read_text())


def fit_case(name: str):
    case = REF["cases"][name]
    data = pd.DataFrame(case["data"], index=case["row_names"])
    return ar.attnreg(case["formula"], data, weights=data["w"] if case["weights"] else None)


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def _points(ax):
    return ax.collections[0].get_offsets().T


def _labels(ax):
    return sorted(t.get_text() for t in ax.texts)


def _top(labels, score, n=3):
    return sorted(str(labels[j]) for j in np.argsort(-np.asarray(score), kind="stable")[:n])


@pytest.mark.parametrize("name", ["ts", "wls", "zero"])
def test_four_panels_draw_the_computed_quantities(name: str) -> None:
    fit = fit_case(name)
    axes = fit.plot()
    assert isinstance(axes, np.ndarray) and axes.shape == (4,)
    infl = fit.influence()
    rows = infl.index
    fitted, resid = fit.fitted.loc[rows].to_numpy(), fit.resid.loc[rows].to_numpy()
    rs, h = infl["std_resid"].to_numpy(), infl["hat"].to_numpy()
    # 1. residuals vs fitted (rows of weight zero not drawn), R's lowess, 3 largest |resid|
    x, y = _points(axes[0])
    assert_allclose(x, fitted) and assert_allclose(y, resid)
    ref = REF["cases"][name]["lowess"]
    lx, ly = axes[0].lines[0].get_data()
    assert_allclose(lx, ref["x"], rtol=1e-12)
    assert_allclose(ly, ref["y"], rtol=1e-7, atol=1e-9)  # R's clowess
    assert _labels(axes[0]) == _top(rows, np.abs(resid))
    # 2. Q-Q: theoretical quantiles of R's ppoints, in the order of the residuals
    x, y = _points(axes[1])
    n = rs.size
    q = stats.norm.ppf((np.arange(1, n + 1) - 0.5) / n)
    assert_allclose(y, rs)
    assert_allclose(np.sort(x), q) and assert_allclose(x[np.argsort(rs)], q)
    assert _labels(axes[1]) == _top(rows, np.abs(rs))
    qx, qy = axes[1].lines[0].get_data()
    slope = (qy[1] - qy[0]) / (qx[1] - qx[0])
    quart = np.quantile(rs, [0.25, 0.75])
    assert_allclose(slope, (quart[1] - quart[0]) / (2 * stats.norm.ppf(0.75)), rtol=1e-12)
    # 3. scale-location
    x, y = _points(axes[2])
    assert_allclose(x, fitted) and assert_allclose(y, np.sqrt(np.abs(rs)))
    # 5. residuals vs leverage, Cook's contours sqrt(c p (1 - h) / h)
    x, y = _points(axes[3])
    assert_allclose(x, h) and assert_allclose(y, rs)
    for line, (level, sign) in zip(axes[3].lines[1:5], [(0.5, 1), (0.5, -1), (1, 1), (1, -1)],
                                   strict=True):
        gx, gy = line.get_data()
        assert_allclose(gy, sign * np.sqrt(level * fit.edf * (1 - gx) / gx), rtol=1e-12)
    assert _labels(axes[3]) == _top(rows, infl["cooks_distance"])
    assert [ax.get_title() for ax in axes] == [plots.LM_PANELS[k] for k in (1, 2, 3, 5)]


def test_ridge_panels_use_the_effective_df() -> None:
    data = pd.DataFrame(REF["cases"]["ts"]["data"])
    fit = ar.attnreg("y ~ x1 + x2", data, method="ridge", lam=3.0)
    (ax,) = fit.plot(which=(5,))
    gx, gy = ax.lines[1].get_data()
    assert_allclose(gy, np.sqrt(0.5 * fit.edf * (1 - gx) / gx), rtol=1e-12)
    assert fit.edf < 3


def test_cooks_panel_and_given_axes() -> None:
    fit = fit_case("ts")
    _, given = plt.subplots(1, 2)
    axes = fit.plot(which=(4, 1), axes=given)
    assert axes[0] is given[0]
    segments = axes[0].collections[1].get_segments()
    assert_allclose([s[1][1] for s in segments], fit.influence()["cooks_distance"])


@pytest.mark.parametrize("which", [(0,), (6,), (1, 1), (), "1", (1.5,)])
def test_which_errors(which) -> None:
    with pytest.raises(OptionError, match="which must be"):
        fit_case("ts").plot(which=which)


def test_axes_count_error() -> None:
    _, one = plt.subplots(1, 1)
    with pytest.raises(OptionError, match="one Axes per panel"):
        fit_case("ts").plot(which=(1, 2), axes=[one])


@pytest.mark.parametrize(("name", "column"), [("ts", "x1"), ("wls", "x2"),
                                               ("wls", "C(g)[T.b]"), ("zero", "z")])
def test_added_variable_slope_is_the_coefficient(name: str, column: str) -> None:
    fit = fit_case(name)
    ax = plots.plot_added_variable(fit, column)
    x, y = _points(ax)
    assert_allclose((x @ y) / (x @ x), fit.coef[column], rtol=1e-9)  # Frisch-Waugh-Lovell
    assert_allclose(y - fit.coef[column] * x, fit.weighted_resid, rtol=1e-7, atol=1e-10)
    lx, ly = ax.lines[0].get_data()
    assert_allclose(ly, fit.coef[column] * lx, rtol=1e-12)


def test_added_variable_errors() -> None:
    fit = fit_case("ts")
    with pytest.raises(OptionError, match="design columns"):
        plots.plot_added_variable(fit, "x9")
    with pytest.raises(OptionError, match="intercept"):
        plots.plot_added_variable(fit, "(Intercept)")
    data = pd.DataFrame(REF["cases"]["ts"]["data"])
    ridge = ar.attnreg("y ~ x1 + x2", data, method="ridge", lam=1.0)
    with pytest.raises(OptionError, match="OLS"):
        plots.plot_added_variable(ridge, "x1")


def test_lowess_matches_r() -> None:
    fit = fit_case("noint")
    ref = REF["cases"]["noint"]["lowess"]
    sx, sy = plots.lowess_xy(fit.fitted, fit.resid)
    assert_allclose(sx, ref["x"], rtol=1e-12)
    assert_allclose(sy, ref["y"], rtol=1e-7, atol=1e-9)
