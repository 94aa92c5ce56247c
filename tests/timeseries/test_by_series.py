"""forecast(..., by=): the same forecast of many series, and the pooled comparison."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats

import attnreg as ar
from attnreg.exceptions import DataError, OptionError, SkippedSeriesWarning
from attnreg.timeseries.panel import PanelForecasts
from tests.conftest import RTOL_EXACT

FORMULA = "y ~ lag(y, 1) + lag(x, 1)"
N_T = 80


def _long(ids: list, seed: int = 0, n_t: int = N_T) -> pd.DataFrame:
    """Three AR(1)-ish series of 80 quarters, stacked and shuffled (dates in the index)."""
    rng = np.random.default_rng(seed)
    dates = pd.period_range("1990Q1", periods=n_t, freq="Q")
    common = rng.normal(size=n_t)  # a shock shared by every series at each date
    frames = []
    for k, key in enumerate(ids):
        x = rng.normal(size=n_t)
        e = 0.5 * common + rng.normal(size=n_t)
        y = np.zeros(n_t)
        for t in range(1, n_t):  # a simulated AR(1), loop over time for the recursion
            y[t] = 0.2 * k + 0.5 * y[t - 1] + 0.3 * x[t - 1] + e[t]
        frames.append(pd.DataFrame({"id": [key] * n_t, "y": y, "x": x}, index=dates))
    long = pd.concat(frames)
    return long.iloc[rng.permutation(len(long))]


@pytest.fixture(scope="module")
def long() -> pd.DataFrame:
    return _long(["US", "DE", "JP"])


@pytest.fixture(scope="module")
def panel(long: pd.DataFrame) -> PanelForecasts:
    return ar.forecast(FORMULA, long, by="id", start="2005Q1")


def _alone(long: pd.DataFrame, key: object, **kw: object) -> ar.timeseries.ForecastResults:
    rows = long[long["id"] == key].sort_index(kind="stable")
    return ar.forecast(FORMULA, rows, start="2005Q1", **kw)


def test_each_series_is_its_own_forecast(long, panel) -> None:
    assert panel.series == ["DE", "JP", "US"]
    for key in panel.series:
        alone = _alone(long, key)
        pd.testing.assert_frame_equal(panel[key].forecasts, alone.forecasts, check_exact=True)
        pd.testing.assert_series_equal(panel[key].evaluation, alone.evaluation, check_exact=True)
    f = panel.forecasts
    assert f.index.names == ["series", "target"]
    assert len(f) == sum(panel[k].plan.n_forecasts for k in panel.series)
    pd.testing.assert_frame_equal(f.loc["US"], panel["US"].forecasts, check_names=False)


def test_pooled_oos_r2_and_panel_dm(panel) -> None:
    parts = [panel[k].forecasts for k in panel.series]
    sse = sum(float(((p.actual - p.forecast) ** 2).sum()) for p in parts)
    bse = sum(float(((p.actual - p.benchmark) ** 2).sum()) for p in parts)
    pooled = panel.pooled
    assert_allclose(pooled["oos_r2"], 1 - sse / bse, rtol=RTOL_EXACT)
    # the mean over series of each date's loss differential; at h = 1 the HLN DM test is the
    # one-sample t test of that mean (scipy, an independent computation)
    d = pd.concat([(p.actual - p.forecast) ** 2 - (p.actual - p.benchmark) ** 2 for p in parts],
                  axis=1).mean(axis=1)
    ref = stats.ttest_1samp(d.to_numpy(), 0.0)
    assert_allclose([pooled["dm_statistic"], pooled["dm_p_value"]], [ref.statistic, ref.pvalue],
                    rtol=RTOL_EXACT)
    assert pooled["n_dates"] == d.size


def test_summary_numbers_and_text(panel) -> None:
    s = panel.summary()
    table = s.table
    assert list(table.index) == ["DE", "JP", "US", "Pooled"]
    for key in panel.series:
        e = panel[key].evaluation
        assert_allclose(table.loc[key, ["MSFE", "OOS R2", "DM p-value", "CW p-value"]].to_numpy(float),
                        [e.msfe, e.oos_r2, e.dm_p_value, e.cw_p_value], rtol=RTOL_EXACT)
    assert_allclose(table.loc["Pooled", "OOS R2"], panel.pooled["oos_r2"], rtol=RTOL_EXACT)
    text = str(s)
    assert "Pooled" in text and "by 'id'" in text
    assert "pooled OOS R²" in repr(panel)


def test_pickles_and_parallel_is_deterministic(long, panel) -> None:
    back = pickle.loads(pickle.dumps(panel))
    pd.testing.assert_frame_equal(back.forecasts, panel.forecasts, check_exact=True)
    ar.set_threads(1)  # sequential over series
    try:
        seq = ar.forecast(FORMULA, long, by="id", start="2005Q1")
    finally:
        ar.set_threads(None)
    pd.testing.assert_frame_equal(seq.forecasts, panel.forecasts, check_exact=True)


@pytest.mark.parametrize("ids", [[3, 1, 2], [1, "b", 2.5], [(1, "a"), (2, "b"), (0, "c")]])
def test_ids_of_any_dtype(ids) -> None:
    long = _long(ids, seed=1)
    panel = ar.forecast(FORMULA, long, by="id", start="2005Q1")
    assert set(panel.series) == set(ids)
    for key in ids:
        pd.testing.assert_frame_equal(panel[key].forecasts, _alone(long, key).forecasts,
                                      check_exact=True)


def test_input_not_mutated(long) -> None:
    before = long.copy()
    ar.forecast(FORMULA, long, by="id", start="2005Q1")
    pd.testing.assert_frame_equal(long, before, check_exact=True)


def test_missing_by_column(long) -> None:
    with pytest.raises(DataError, match="by='country' is not a column"):
        ar.forecast(FORMULA, long, by="country")
    gap = long.copy()
    gap.iloc[3, gap.columns.get_loc("id")] = None
    with pytest.raises(DataError, match="column 'id' has a missing series id"):
        ar.forecast(FORMULA, gap, by="id")


def test_short_series_skipped_with_warning(long) -> None:
    short = _long(["XX"], seed=2, n_t=6)  # 2004Q3..2005Q4: 1 training row at 2005Q1's origin
    short.index = pd.period_range("2004Q3", periods=6, freq="Q")
    both = pd.concat([long, short])
    with pytest.warns(SkippedSeriesWarning, match=r"series 'XX' of column 'id'.*training rows"):
        panel = ar.forecast(FORMULA, both, by="id", start="2005Q1")
    assert panel.series == ["DE", "JP", "US"] and panel.skipped == ("XX",)
    with pytest.raises(KeyError, match="left out"):
        panel["XX"]
    with pytest.raises(DataError, match=r"no series of 'id' can be forecast; series 'XX'.*training rows"):
        ar.forecast(FORMULA, short, by="id", start="2005Q1")


def test_several_horizons_pooled_per_horizon(long) -> None:
    panel = ar.forecast("y ~ lag(y, h) + lag(x, h)", long, by="id", start="2005Q1",
                        horizon=[1, 2])
    assert panel.horizons == [1, 2]
    assert panel.forecasts.index.names == ["series", "horizon", "target"]
    assert panel.evaluation.index.names == ["horizon", "series"]
    table = panel.pooled_by_horizon
    assert table.index.tolist() == [1, 2]
    for h in (1, 2):
        formula = f"y ~ lag(y, {h}) + lag(x, {h})"
        parts = []
        for key in panel.series:  # each series alone, at this horizon only
            rows = long[long["id"] == key].sort_index(kind="stable")
            alone = ar.forecast(formula, rows, start="2005Q1", horizon=h)
            pd.testing.assert_frame_equal(panel[key].at_horizon(h).forecasts, alone.forecasts,
                                          check_exact=True)
            parts.append(alone.forecasts)
        sse = sum(float(((p.actual - p.forecast) ** 2).sum()) for p in parts)
        bse = sum(float(((p.actual - p.benchmark) ** 2).sum()) for p in parts)
        assert_allclose(table.loc[h, "oos_r2"], 1 - sse / bse, rtol=RTOL_EXACT)
        # HLN DM on the cross-series mean differential, by hand: h - 1 autocovariances
        d = pd.concat([(p.actual - p.forecast) ** 2 - (p.actual - p.benchmark) ** 2
                       for p in parts], axis=1).mean(axis=1).sort_index().to_numpy()
        T, u = d.size, d - d.mean()
        var = (u @ u + 2 * sum(u[k:] @ u[:-k] for k in range(1, h))) / T / T
        hln = np.sqrt((T + 1 - 2 * h + h * (h - 1) / T) / T)
        stat = d.mean() / np.sqrt(var) * hln
        assert_allclose(table.loc[h, ["dm_statistic", "dm_p_value"]].to_numpy(float),
                        [stat, 2 * stats.t.sf(abs(stat), T - 1)], rtol=RTOL_EXACT)
        pd.testing.assert_series_equal(panel.at_horizon(h).pooled, table.loc[h],
                                       check_names=False)
    with pytest.raises(OptionError, match=r"horizons \[1, 2\]: use pooled_by_horizon"):
        _ = panel.pooled
    text = str(panel.summary())
    assert "h = 2: Pooled" in text and "y ~ lag(y, h) + lag(x, h)" in text
    assert "pooled OOS R²=1: " in repr(panel)
    back = pickle.loads(pickle.dumps(panel))
    pd.testing.assert_frame_equal(back.forecasts, panel.forecasts, check_exact=True)
