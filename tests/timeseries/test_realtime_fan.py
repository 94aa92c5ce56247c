"""Fan charts of real-time forecasts (``rt.plot(kind="fan")``).

References: on vintages that are never revised, the fan of the ordinary forecasts of the final
data (:mod:`attnreg.timeseries.fanchart`, itself checked against the interval functions);
on revised vintages, the real-time run made at each level (its own ``lower`` and ``upper``);
the drawn polygons' vertices are those numbers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.timeseries.fanchart import fan_bands
from tests.conftest import RTOL_EXACT
from tests.timeseries.test_vintage_intervals import N, START, _vintages

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

F1 = "y ~ lag(y, 1) + lag(x, 1)"
LEVELS = (0.5, 0.7, 0.9)
RUNS = {"gaussian": {"interval": "gaussian"},
        "empirical": {"interval": "empirical", "min_errors": 10},
        "aci": {"interval": "aci", "min_errors": 10, "aci_gamma": 0.02},
        "quantile": {"method": "quantreg", "tau": [0.05, 0.15, 0.25, 0.5, 0.75, 0.85, 0.95],
                     "interval": "quantile"}}


def _unrevised() -> tuple[pd.DataFrame, pd.DataFrame]:
    final = _vintages()
    final = final[final["vintage"] == N - 1].drop(columns="vintage")
    return pd.concat([final.iloc[: v + 1].assign(vintage=v) for v in range(30, N)]), final


def _drawn(ax: Any, n: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(lower, upper) of each band polygon (fill_between: start, lower, end, upper reversed)."""
    out = []
    for band in ax.collections:
        (path,) = band.get_paths()
        v = path.vertices
        out.append((v[1:n + 1, 1], v[n + 2:2 * n + 2, 1][::-1]))
    return out


@pytest.mark.parametrize("kind", sorted(RUNS))
def test_unrevised_vintages_fan_as_the_ordinary_forecasts(kind: str) -> None:
    truncated, final = _unrevised()
    kw = dict(start=START, level=0.9, **RUNS[kind])
    rt = ar.forecast(F1, truncated, vintage="vintage", **kw)
    fc = ar.forecast(F1, final, **kw)
    a, b = fan_bands(rt, LEVELS), fan_bands(fc, LEVELS)
    assert_array_equal(a.columns, b.columns)
    assert_allclose(a.to_numpy(), b.to_numpy(), rtol=RTOL_EXACT, atol=RTOL_EXACT)


@pytest.mark.parametrize("kind", ["gaussian", "empirical", "aci"])
def test_revised_vintages_fan_is_the_run_at_each_level(kind: str) -> None:
    long = _vintages()
    bands = fan_bands(ar.forecast(F1, long, vintage="vintage", start=START, level=0.9,
                                  **RUNS[kind]), LEVELS)
    for level in LEVELS:
        run = ar.forecast(F1, long, vintage="vintage", start=START, level=level, **RUNS[kind])
        assert_allclose(bands[(level, "lower")], run.forecasts["lower"], rtol=RTOL_EXACT)
        assert_allclose(bands[(level, "upper")], run.forecasts["upper"], rtol=RTOL_EXACT)


@pytest.mark.parametrize("kind", sorted(RUNS))
def test_fan_draws_a_band_per_level(kind: str) -> None:
    rt = ar.forecast(F1, _vintages(), vintage="vintage", start=START, level=0.9, **RUNS[kind])
    bands = fan_bands(rt, LEVELS)
    ok = np.isfinite(bands.to_numpy()).all(axis=1)
    ax = rt.plot("fan", levels=LEVELS)
    drawn = _drawn(ax, int(ok.sum()))
    assert len(drawn) == len(LEVELS)  # one band per level, widest first
    for (lower, upper), level in zip(drawn, sorted(LEVELS, reverse=True), strict=True):
        assert_array_equal(lower, bands[(level, "lower")].to_numpy()[ok])
        assert_array_equal(upper, bands[(level, "upper")].to_numpy()[ok])
    assert [t.get_text() for t in ax.get_legend().get_texts()][:3] == ["90%", "70%", "50%"]
    assert "real-time fan chart" in ax.get_title()
    plt.close(ax.figure)
    ax = rt.plot("fan", levels=0.8)
    assert len(ax.collections) == 1
    plt.close(ax.figure)


def test_several_horizons_fan_one_at_a_time() -> None:
    rh = ar.forecast("y ~ lag(y, h) + lag(x, h)", _vintages(), vintage="vintage", start=START,
                     horizon=[1, 2], interval="gaussian")
    with pytest.raises(OptionError, match=r"these forecasts hold horizons \[1, 2\]: choose one "
                                          r"with horizon="):
        rh.plot("fan")
    ax = rh.plot("fan", horizon=2)
    assert len(ax.collections) == 3 and ax.get_title().endswith("horizon 2")
    plt.close(ax.figure)


def test_fan_errors() -> None:
    long = _vintages()
    aci = ar.forecast(F1, long, vintage="vintage", start=START, interval="aci", min_errors=10)
    plain = ar.forecast(F1, long, vintage="vintage", start=START)
    with pytest.raises(OptionError, match=r"interval=None"):
        plain.plot("fan")
    with pytest.raises(OptionError, match=r"kind 'fan' takes the options \['levels'\]"):
        aci.plot("fan", bins=5)
