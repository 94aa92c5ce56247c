"""Fan charts (``fc.plot(kind="fan")``): the bands drawn are the forecast's interval numbers.

References: at the run's own level the bands are the run's ``lower`` and ``upper``; at the
other levels they are recomputed by the functions that make the intervals (Gaussian: the
normal quantile times the predictive sd; empirical and adaptive: the intervals' own
functions at that level; quantile forecasts: the fitted quantiles), and the drawn polygons'
vertices are those numbers.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy import stats

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.timeseries.conformal import aci_bounds
from attnreg.timeseries.fanchart import fan_bands
from attnreg.timeseries.intervals import empirical_bounds
from tests.conftest import RTOL_EXACT

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

LEVELS = (0.5, 0.7, 0.9)


@pytest.fixture(scope="module")
def series() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 160
    x, y = rng.standard_normal(n), np.zeros(n)
    for t in range(1, n):
        y[t] = 0.3 + 0.5 * y[t - 1] - 0.4 * x[t - 1] + (1 + 0.5 * abs(x[t - 1])) * rng.normal()
    return pd.DataFrame({"y": y, "x": x})


def _run(series: pd.DataFrame, **kw: Any) -> Any:
    return ar.forecast("y ~ lag(y, 1) + lag(x, 1)", series, start=70, min_errors=20, **kw)


def _drawn(ax: Any, n: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(x, lower, upper) of each band polygon (fill_between: start, lower, end, upper reversed)."""
    out = []
    for band in ax.collections:
        (path,) = band.get_paths()
        v = path.vertices
        out.append((v[1:n + 1, 0], v[1:n + 1, 1], v[n + 2:2 * n + 2, 1][::-1]))
    return out


def _check_drawing(fc: Any, bands: pd.DataFrame) -> None:
    ok = np.isfinite(bands.to_numpy()).all(axis=1)
    ax = fc.plot("fan", levels=LEVELS)
    drawn = _drawn(ax, int(ok.sum()))
    assert len(drawn) == len(LEVELS)
    for (x, lower, upper), level in zip(drawn, sorted(LEVELS, reverse=True), strict=True):
        assert_array_equal(x, fc.forecasts.index.to_numpy()[ok])
        assert_array_equal(lower, bands[(level, "lower")].to_numpy()[ok])
        assert_array_equal(upper, bands[(level, "upper")].to_numpy()[ok])
    assert [t.get_text() for t in ax.get_legend().get_texts()][:3] == ["90%", "70%", "50%"]
    plt.close(ax.figure)


def _nested(bands: pd.DataFrame) -> None:
    ok = np.isfinite(bands.to_numpy()).all(axis=1)
    b = bands[ok]
    for narrow, wide in itertools.pairwise(LEVELS):
        assert (b[(wide, "lower")] <= b[(narrow, "lower")]).all()
        assert (b[(wide, "upper")] >= b[(narrow, "upper")]).all()


def test_gaussian_fan(series: pd.DataFrame) -> None:
    fc = _run(series, interval="gaussian", level=0.9)
    bands = fan_bands(fc, LEVELS)
    assert_allclose(bands[(0.9, "lower")], fc.lower, rtol=RTOL_EXACT)
    assert_allclose(bands[(0.9, "upper")], fc.upper, rtol=RTOL_EXACT)
    # h = 1: the Student t of the fit's prediction interval (its residual df)
    s = (fc.upper - fc.lower) / (2 * stats.t.ppf(0.95, fc.df_path))
    for level in (0.5, 0.7):
        half = stats.t.ppf(0.5 + level / 2, fc.df_path) * s
        assert_allclose(bands[(level, "lower")], fc.predictions - half, rtol=RTOL_EXACT)
        assert_allclose(bands[(level, "upper")], fc.predictions + half, rtol=RTOL_EXACT)
    _nested(bands)
    _check_drawing(fc, bands)


@pytest.mark.parametrize("interval", ["empirical", "aci"])
def test_conformal_fan(series: pd.DataFrame, interval: str) -> None:
    fc = _run(series, interval=interval, level=0.7)
    bands = fan_bands(fc, LEVELS)
    assert_array_equal(bands[(0.7, "lower")], fc.lower)  # the run's own intervals
    assert_array_equal(bands[(0.7, "upper")], fc.upper)
    p, y = fc.plan, fc.forecasts["actual"].to_numpy()
    for level in (0.5, 0.9):
        if interval == "empirical":
            lo, up, _ = empirical_bounds(fc.predictions, y - fc.predictions, p.target_pos,
                                         p.origin_pos, level, 20)
        else:
            lo, up, _ = aci_bounds(fc.predictions, y, p.target_pos, p.origin_pos, level, 20,
                                   p.aci_gamma)
        assert_array_equal(bands[(level, "lower")], lo)
        assert_array_equal(bands[(level, "upper")], up)
    if interval == "empirical":  # ACI levels adapt separately: nesting is not guaranteed
        _nested(bands)
    _check_drawing(fc, bands)


def test_quantile_fan(series: pd.DataFrame) -> None:
    taus = [0.05, 0.15, 0.25, 0.5, 0.75, 0.85, 0.95]
    fc = _run(series, method="quantreg", tau=taus, interval="quantile", level=0.9)
    bands = fan_bands(fc, LEVELS)
    q = np.sort(fc.quantile_path, axis=1)
    for level, (lo, up) in zip(LEVELS, [(2, 4), (1, 5), (0, 6)], strict=True):
        assert_array_equal(bands[(level, "lower")], q[:, lo])  # the fitted quantiles
        assert_array_equal(bands[(level, "upper")], q[:, up])
    assert_array_equal(bands[(0.9, "lower")], fc.lower)
    _nested(bands)
    _check_drawing(fc, bands)


def test_fan_errors(series: pd.DataFrame) -> None:
    fc = _run(series, interval="gaussian")
    with pytest.raises(OptionError, match=r"levels must be coverage levels in \(0, 1\)"):
        fc.plot("fan", levels=(0.5, 1.2))
    with pytest.raises(OptionError, match=r"density scores and calibration need forecast "
                                          r"intervals"):
        _run(series).plot("fan")
