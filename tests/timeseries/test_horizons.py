"""Several horizons in one call: direct regressions per horizon, the iterated strategy, the
leakage guard per horizon, per-horizon evaluation and the per-horizon summary."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, LeakageError, OptionError
from attnreg.timeseries import _running
from attnreg.timeseries.forecast import at_horizon
from attnreg.timeseries.forecast_results import ForecastResults
from attnreg.timeseries.multihorizon import MultiHorizonForecasts

DIRECT = "y ~ lag(y, h) + lag(x, h)"
HORIZONS = [1, 2, 4]


def _lagged(series: pd.DataFrame, h: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows (y_s; 1, y_{s-h}, x_{s-h}) for every s with both lags, by hand (numpy only)."""
    y, x = series["y"].to_numpy(), series["x"].to_numpy()
    return y[h:], np.column_stack([np.ones(y.size - h), y[:-h], x[:-h]])


def test_scalar_horizon_is_unchanged_and_list_is_indexed_by_horizon(series) -> None:
    one = ar.forecast("y ~ lag(y, 2) + lag(x, 2)", series, start="2010Q1", horizon=2)
    assert isinstance(one, ForecastResults) and one.forecasts.index.name == "target"
    assert one.horizons == [2] and one.at_horizon(2) is one
    listed = ar.forecast("y ~ lag(y, 2) + lag(x, 2)", series, start="2010Q1", horizon=[2])
    assert isinstance(listed, MultiHorizonForecasts)
    assert list(listed.forecasts.index.names) == ["horizon", "target"]
    pd.testing.assert_frame_equal(listed.at_horizon(2).forecasts, one.forecasts)
    pd.testing.assert_frame_equal(listed.forecasts.loc[2], one.forecasts)
    with pytest.raises(OptionError, match=r"horizon=3 was not forecast; horizons: \[2\]"):
        listed.at_horizon(3)


@pytest.mark.parametrize(("method", "options"), [("ols", {}), ("ridge", {"lam": 2.0}),
                                                 ("ridge", {}), ("pcr", {"k": 2})])
def test_direct_horizons_equal_separate_calls_and_keep_fast_paths(series, method,
                                                                 options) -> None:
    fh = ar.forecast(DIRECT, series, method=method, start="2010Q1", horizon=[4, 1, 2],
                     **options)
    assert fh.horizons == HORIZONS
    for h in HORIZONS:
        alone = ar.forecast(f"y ~ lag(y, {h}) + lag(x, {h})", series, method=method,
                            start="2010Q1", horizon=h, **options)
        part = fh.at_horizon(h)
        pd.testing.assert_frame_equal(part.forecasts, alone.forecasts)
        assert part.engine == ("updating" if method in ("ols", "ridge") else "refit")
        assert part.forecasts.index[0] == pd.Period("2010Q1", freq="Q")  # same targets
        assert (part.forecasts.index - part.forecasts["origin"]).map(lambda d: d.n).eq(h).all()


def test_direct_forecast_against_least_squares_by_hand(series) -> None:
    fh = ar.forecast(DIRECT, series, start="2010Q1", horizon=HORIZONS)
    for h in HORIZONS:
        y, X = _lagged(series, h)  # row r is the target date r + h of the data
        f = fh.at_horizon(h).forecasts
        for target in (pd.Period("2010Q1", freq="Q"), pd.Period("2015Q3", freq="Q")):
            s = series.index.get_loc(target)  # data position of the target
            origin = s - h
            rows = np.arange(y.size)[np.arange(y.size) + h <= origin]  # targets observed by t
            beta = np.linalg.lstsq(X[rows], y[rows], rcond=None)[0]
            assert_allclose(f.loc[target, "forecast"], X[s - h] @ beta, rtol=1e-10)
            # prevailing mean: every y observed at or before the origin
            assert_allclose(f.loc[target, "benchmark"],
                            series["y"].to_numpy()[: origin + 1].mean(), rtol=1e-12)


def test_evaluation_per_horizon_by_hand(series) -> None:
    fh = ar.forecast(DIRECT, series, method="ridge", start="2008Q1", horizon=HORIZONS)
    table = fh.evaluation
    assert list(table.index) == HORIZONS
    for h in HORIZONS:
        f = fh.forecasts.loc[h]
        e, b = (f["actual"] - f["forecast"]).to_numpy(), (f["actual"] - f["benchmark"]).to_numpy()
        assert_allclose(table.loc[h, "msfe"], np.mean(e**2))
        assert_allclose(table.loc[h, "oos_r2"], 1 - np.sum(e**2) / np.sum(b**2))
        d = e**2 - b**2
        n, dc = d.size, d - d.mean()
        lrv = (dc @ dc + 2 * sum(dc[k:] @ dc[:-k] for k in range(1, h))) / n
        stat = d.mean() / np.sqrt(lrv / n) * np.sqrt((n + 1 - 2 * h + h * (h - 1) / n) / n)
        assert_allclose(table.loc[h, "dm_statistic"], stat, rtol=1e-10)
        m, bm, yv = f["forecast"].to_numpy(), f["benchmark"].to_numpy(), f["actual"].to_numpy()
        adj = (yv - bm) ** 2 - ((yv - m) ** 2 - (bm - m) ** 2)
        ac = adj - adj.mean()
        nw = (ac @ ac + 2 * sum((1 - k / h) * (ac[k:] @ ac[:-k]) for k in range(1, h))) / n
        assert_allclose(table.loc[h, "cw_statistic"], adj.mean() / np.sqrt(nw / n), rtol=1e-10)


def test_leakage_guard_per_horizon_before_any_fit(series, monkeypatch) -> None:
    def no_fit(*args, **kwargs):
        raise AssertionError("fitted before the arguments were checked")

    monkeypatch.setattr(_running, "run_forecasts", no_fit)
    with pytest.raises(LeakageError, match=r"term 'lag\(x, 1\)' is lagged 1 period\(s\) but "
                                           r"the horizon is 2"):
        ar.forecast("y ~ lag(y, h) + lag(x, 1)", series, horizon=[1, 2, 4])
    with pytest.raises(LeakageError, match=r"term 'lag\(x, 2\)' .* the horizon is 4"):
        ar.forecast("y ~ lag(y, 4) + lag(x, 2)", series, horizon=[1, 2, 4])
    monkeypatch.undo()
    ok = ar.forecast("y ~ lag(y, h) + lag(x, 1)", series, horizon=[1, 2], known=["x"],
                     start="2010Q1")
    assert ok.horizons == [1, 2]


@pytest.mark.parametrize(("kwargs", "pattern"), [
    ({"horizon": [1, 1]}, r"horizon lists a horizon twice"),
    ({"horizon": []}, r"horizon=\[\] gives nothing"),
    ({"horizon": [1, 0]}, r"horizon must be a positive integer, however: horizon=0"),
    ({"horizon": "4"}, r"horizon must be a positive integer or a sequence"),
    ({"strategy": "recursive"}, r"strategy must be one of 'direct', 'iterated'"),
    ({"interval": "normal"}, r"interval must be one of 'empirical', 'gaussian'"),
    ({"level": 90}, r"level must be a number in \(0, 1\)"),
    ({"min_errors": 0}, r"min_errors must be a positive integer"),
    ({"method": "softmax", "interval": "gaussian"}, r"interval='gaussian' needs .* method 'softmax'"),
    ({"method": "softmax", "strategy": "iterated"}, r"strategy='iterated' iterates a linear"),
])
def test_option_errors_name_the_argument(series, kwargs, pattern) -> None:
    with pytest.raises(OptionError, match=pattern):
        ar.forecast("y ~ lag(y, 4) + lag(x, 4)", series, **kwargs)


def test_the_name_h_is_the_horizon_unless_a_column() -> None:
    frame = pd.DataFrame({"y": [1.0], "x": [2.0]})
    assert at_horizon("y ~ lag(y, h) + lag(x, 2 * h)", 3, frame) == "y ~ lag(y, 3) + lag(x, 2 * 3)"
    assert at_horizon("y ~ lag(y, h)\n + lag(x, h)", 2, frame) == "y ~ lag(y, 2)\n + lag(x, 2)"
    assert at_horizon("y ~ lag(y, h)", 3, frame.assign(h=1.0)) == "y ~ lag(y, h)"
    assert at_horizon("y ~ np.h(x) + f(h=1)", 3, frame) == "y ~ np.h(x) + f(h=1)"


# ------------------------------------------------------------------------------ iterated

AR2 = "y ~ lag(y, 1) + lag(y, 2)"


def test_iterated_ar_against_hand_iteration(series) -> None:
    fi = ar.forecast(AR2, series, start="2010Q1", horizon=[1, 2, 3], strategy="iterated")
    direct = ar.forecast(AR2, series, start="2010Q1")
    assert_allclose(fi.at_horizon(1).predictions, direct.predictions, rtol=1e-12)
    y = series["y"].to_numpy()
    for h in (2, 3):
        f = fi.at_horizon(h).forecasts
        assert f.index[0] == pd.Period("2010Q1", freq="Q")
        for target in (f.index[0], f.index[17], f.index[-1]):
            o = series.index.get_loc(target) - h  # the origin's data position
            s = np.arange(2, o + 1)  # one-step targets observed by the origin
            X = np.column_stack([np.ones(s.size), y[s - 1], y[s - 2]])
            c, p1, p2 = np.linalg.lstsq(X, y[s], rcond=None)[0]
            path = [y[o - 1], y[o]]
            for _ in range(h):
                path.append(c + p1 * path[-1] + p2 * path[-2])
            assert_allclose(f.loc[target, "forecast"], path[-1], rtol=1e-10)
            assert_allclose(f.loc[target, "benchmark"], y[: o + 1].mean(), rtol=1e-12)
            assert f.loc[target, "origin"] == series.index[o]


def test_iterated_with_lags_and_ridge_equal_the_coefficient_path(series) -> None:
    fi = ar.forecast("y ~ lags(y, 1, 3)", series, method="ridge", lam=1.0, start="2012Q1",
                     horizon=[2], strategy="iterated")
    part = fi.at_horizon(2)
    assert part.engine == "updating" and part.strategy == "iterated"
    y = series["y"].to_numpy()
    i = 5
    b = part.coef_path[i]
    o = int(part.plan.origin_pos[i])
    one = b[0] + b[1:] @ y[[o, o - 1, o - 2]]
    assert_allclose(part.predictions[i], b[0] + b[1:] @ np.array([one, y[o], y[o - 1]]),
                    rtol=1e-12)
    with pytest.raises(OptionError, match="iterated forecast chains"):
        part.attention(part.forecasts.index[0])


@pytest.mark.parametrize(("formula", "term"), [
    ("y ~ lag(y, 1) + lag(x, 1)", "lag(x, 1)"),
    ("y ~ lag(y, 1) + I(lag(y, 2) ** 2)", "I(lag(y, 2) ** 2)"),
    ("y ~ lag(diff(y), 1)", "lag(diff(y), 1)"),
])
def test_iterated_refuses_terms_other_than_lags_of_the_response(series, formula, term) -> None:
    with pytest.raises(LeakageError, match=rf"the term {term!r} is not a lag of the response"
                       .replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        ar.forecast(formula, series, horizon=[1, 2], strategy="iterated")


def test_iterated_needs_every_origin(series) -> None:
    holes = series.copy()
    holes.loc[pd.Period("2012Q2", freq="Q"), "y"] = np.nan
    with pytest.raises(DataError, match=r"origin .* has none"):
        ar.forecast(AR2, holes, start="2010Q1", horizon=[1, 3], strategy="iterated")


# ------------------------------------------------------------------------------ reports

def test_summary_per_horizon_renders_and_matches_evaluation(series) -> None:
    fh = ar.forecast(DIRECT, series, method="ridge", start="2008Q1", horizon=HORIZONS,
                     interval="empirical", level=0.8, min_errors=10)
    s = fh.summary()
    table, e = s.table, fh.evaluation
    assert list(table.index) == ["h = 1", "h = 2", "h = 4"]
    assert_allclose(table["MSFE"], e["msfe"])
    assert_allclose(table["Pr(CW)"], e["cw_p_value"])
    assert_allclose(table["Coverage"], e["coverage"])
    text = str(s)
    assert "Forecast accuracy by horizon" in text and "80% intervals" in text
    md = s.to_markdown()
    assert "| h = 4 |" in md and "Pr(DM)" in md
    assert md.count("\n|") >= 4  # header, rule, three horizons
    assert "h = 2" in s.to_latex() and "toprule" in s.to_latex()
    single = fh.at_horizon(2).summary()
    assert "Forecast intervals:" in str(single) and "| empirical intervals |" in \
        single.to_markdown()
    assert_allclose(single.sections[3].table["Coverage"].iloc[0], e.loc[2, "coverage"])


def test_multi_horizon_results_pickle(series) -> None:
    fh = ar.forecast(DIRECT, series, start="2010Q1", horizon=[1, 2], interval="empirical",
                     min_errors=5)
    back = pickle.loads(pickle.dumps(fh))
    pd.testing.assert_frame_equal(back.forecasts, fh.forecasts)
    pd.testing.assert_frame_equal(back.evaluation, fh.evaluation)
    with pytest.raises(Exception):  # noqa: B017 - frozen
        fh.formula = "y ~ 1"  # type: ignore[misc]


def test_plot_without_fcplots_is_a_clear_import_error(series, monkeypatch) -> None:
    class Missing:  # an installation without the module
        @staticmethod
        def find_spec(name, path=None, target=None):
            if name == "attnreg.timeseries.fcplots":
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    monkeypatch.delitem(sys.modules, "attnreg.timeseries.fcplots", raising=False)
    monkeypatch.setattr(sys, "meta_path", [Missing(), *sys.meta_path])
    one = ar.forecast("y ~ lag(y, 1)", series, start="2010Q1")
    fh = ar.forecast(DIRECT, series, start="2010Q1", horizon=[1, 2])
    with pytest.raises(ImportError, match=r"needs the module attnreg.timeseries.fcplots"):
        fh.plot()
    with pytest.raises(ImportError, match=r"plot\(kind='cumulative'\)"):
        one.plot(kind="cumulative")
