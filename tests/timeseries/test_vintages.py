"""Real-time forecasts from data vintages (forecast(..., vintage=)).

References: a hand-written as-of loop (at each origin the latest vintage published by it,
its rows up to the origin, the lagged regression by numpy least squares) and the releases
read off the vintages by hand; no look-ahead: changing what is published after an origin
leaves that origin's forecast unchanged.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import attnreg as ar
from attnreg.exceptions import DataError, LeakageError, OptionError
from tests.conftest import RTOL_EXACT

N = 100
FIRST_VINTAGE = 30


def _vintages(seed: int = 0) -> pd.DataFrame:
    """Quarterly vintages 30..99 in long form: vintage v holds dates 0..v; the value of y at
    date d is revised twice (first release noisy, then less, exact two quarters later); x is
    never revised."""
    rng = np.random.default_rng(seed)
    x, y = rng.standard_normal(N), np.zeros(N)
    for t in range(1, N):
        y[t] = 0.4 * y[t - 1] + 0.5 * x[t - 1] + rng.standard_normal()
    noise = rng.standard_normal(N)
    frames = []
    for v in range(FIRST_VINTAGE, N):
        d = np.arange(v + 1)
        age = v - d  # 0: first release
        revised = y[d] + noise[d] * np.where(age == 0, 1.0, np.where(age == 1, 0.5, 0.0))
        frames.append(pd.DataFrame({"vintage": v, "y": revised, "x": x[d]}, index=d))
    return pd.concat(frames)


def _as_of_loop(long: pd.DataFrame, h: int, start: int, window: int | None = None
                ) -> tuple[np.ndarray, np.ndarray]:
    """Forecasts and first releases, by a plain loop over origins (the test's reference)."""
    preds, firsts = [], []
    for target in range(start, N):
        origin = target - h
        v = max(k for k in long["vintage"].unique() if k <= origin)
        frame = long[long["vintage"] == v].drop(columns="vintage").loc[:origin]
        lagged = pd.DataFrame({"y": frame["y"], "ly": frame["y"].shift(h),
                               "lx": frame["x"].shift(h)}).dropna()
        if window is not None:
            lagged = lagged.iloc[-window:]
        X = np.column_stack([np.ones(len(lagged)), lagged["ly"], lagged["lx"]])
        beta = np.linalg.lstsq(X, lagged["y"].to_numpy(), rcond=None)[0]
        preds.append(beta @ [1.0, frame["y"].loc[origin], frame["x"].loc[origin]])
        release = long[(long.index == target)].sort_values("vintage")
        firsts.append(release["y"].iloc[0])
    return np.array(preds), np.array(firsts)


@pytest.fixture(scope="module")
def long() -> pd.DataFrame:
    return _vintages()


@pytest.mark.parametrize(("h", "window"), [(1, None), (2, 25)])
def test_equals_the_hand_written_as_of_loop(long: pd.DataFrame, h: int, window: int | None
                                            ) -> None:
    scheme = {} if window is None else {"scheme": "rolling", "window": window}
    rt = ar.forecast(f"y ~ lag(y, {h}) + lag(x, {h})", long, vintage="vintage",
                     horizon=h, start=60, **scheme)
    pred, first = _as_of_loop(long, h, 60, window)
    f = rt.forecasts
    assert f.index.tolist() == list(range(60, N))
    assert_array_equal(f["vintage"], f["origin"])  # vintage t is published at t
    assert_allclose(f["forecast"], pred, rtol=RTOL_EXACT)
    assert_array_equal(f["actual"], first)  # evaluate_on="first"
    assert_array_equal(f["first_release"], first)


def test_releases_evaluated_against(long: pd.DataFrame) -> None:
    formula = "y ~ lag(y, 1) + lag(x, 1)"
    kw = dict(vintage="vintage", start=60)
    first = ar.forecast(formula, long, **kw)
    latest = ar.forecast(formula, long, evaluate_on="latest", **kw)
    second = ar.forecast(formula, long, evaluate_on=2, **kw)
    assert_array_equal(first.forecasts["forecast"], latest.forecasts["forecast"])
    final = long[long["vintage"] == N - 1]["y"]
    assert_array_equal(latest.forecasts["actual"], final.loc[60:].to_numpy())
    by_hand = [long[(long.index == d) & (long["vintage"] == d + 1)]["y"].iloc[0]
               if d + 1 < N else np.nan for d in range(60, N)]  # released again a vintage later
    assert_array_equal(second.forecasts["actual"], by_hand)
    e = second.evaluation
    assert e["n_forecasts"] == N - 60 - 1  # the last target has one release only
    f = second.forecasts.dropna()
    sse = ((f["actual"] - f["forecast"]) ** 2).sum()
    bse = ((f["actual"] - f["benchmark"]) ** 2).sum()
    assert e["oos_r2"] == pytest.approx(1 - sse / bse, rel=RTOL_EXACT)
    # the benchmark: the mean of y in the vintage used, up to the origin
    row = first.forecasts.loc[70]
    in_vintage = long[long["vintage"] == row["vintage"]]["y"].loc[: row["origin"]]
    assert row["benchmark"] == pytest.approx(in_vintage.mean(), rel=RTOL_EXACT)
    assert "vs 'first' release" in repr(first)
    back = pickle.loads(pickle.dumps(first))
    pd.testing.assert_frame_equal(back.forecasts, first.forecasts)


def test_later_vintages_do_not_move_earlier_forecasts(long: pd.DataFrame) -> None:
    formula = "y ~ lag(y, 1) + lag(x, 1)"
    honest = ar.forecast(formula, long, vintage="vintage", start=60).forecasts
    cut = 75
    changed = long.copy()
    late = changed["vintage"] > cut  # every vintage published after origin 75 rewritten
    changed.loc[late, ["y", "x"]] = np.random.default_rng(9).normal(size=(late.sum(), 2)) * 10
    moved = ar.forecast(formula, changed, vintage="vintage", start=60).forecasts
    early = honest["origin"] <= cut
    assert_array_equal(moved.loc[early, "forecast"], honest.loc[early, "forecast"])
    assert not np.allclose(moved.loc[~early, "forecast"], honest.loc[~early, "forecast"])
    assert_array_equal(long["y"].to_numpy(), _vintages()["y"].to_numpy())  # input kept


def test_dict_of_vintages_equals_long_form(long: pd.DataFrame) -> None:
    frames = {v: g.drop(columns="vintage") for v, g in long.groupby("vintage")}
    a = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", frames, start=60)
    b = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", long, vintage="vintage", start=60)
    pd.testing.assert_frame_equal(a.forecasts, b.forecasts)


def test_vintage_errors(long: pd.DataFrame) -> None:
    formula = "y ~ lag(y, 1) + lag(x, 1)"
    with pytest.raises(DataError, match=r"vintage='release' is not a column of the data"):
        ar.forecast(formula, long, vintage="release", start=60)
    with pytest.raises(OptionError, match=r"evaluate_on must be 'first', 'latest' or a release "
                                          r"number k >= 1, however: evaluate_on='final'"):
        ar.forecast(formula, long, vintage="vintage", start=60, evaluate_on="final")
    with pytest.raises(DataError, match=r"no vintage is published by origin 20 \(the first is "
                                        r"30\): start later"):
        ar.forecast(formula, long, vintage="vintage", start=21)
    with pytest.raises(OptionError, match=r"real-time forecasts \(vintage=\) use the direct "
                                          r"strategy and a refit at every origin"):
        ar.forecast(formula, long, vintage="vintage", start=60, strategy="iterated")
    with pytest.raises(DataError, match=r"data is a dict, read as vintages \{release date: "
                                        r"DataFrame\}, but its entry 'x' is not a DataFrame"):
        ar.forecast(formula, {"y": [1.0, 2.0], "x": [0.0, 1.0]}, start=1)
    with pytest.raises(LeakageError, match=r"term 'x' is lagged 0 period\(s\)"):
        ar.forecast("y ~ lag(y, 1) + x", long, vintage="vintage", start=60)


def test_unrevised_vintages_give_the_final_data_forecasts(long: pd.DataFrame) -> None:
    final = long[long["vintage"] == N - 1].drop(columns="vintage")
    truncated = pd.concat([final.iloc[: v + 1].assign(vintage=v) for v in range(40, N)])
    rt = ar.forecast("y ~ lag(y, 2) + lag(x, 2)", truncated, vintage="vintage", horizon=2,
                     start=60, evaluate_on="latest")
    fc = ar.forecast("y ~ lag(y, 2) + lag(x, 2)", final, horizon=2, start=60)
    assert_allclose(rt.forecasts["forecast"], fc.forecasts["forecast"], rtol=RTOL_EXACT)
    assert_allclose(rt.forecasts["benchmark"], fc.forecasts["benchmark"], rtol=RTOL_EXACT)
    assert_allclose(rt.evaluation[["msfe", "oos_r2", "dm_statistic"]].to_numpy(float),
                    fc.evaluation[["msfe", "oos_r2", "dm_statistic"]].to_numpy(float),
                    rtol=RTOL_EXACT)


def test_leakage_audit_against_the_revised_data(long: pd.DataFrame) -> None:
    rt = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", long, vintage="vintage", start=60)
    final = long[long["vintage"] == N - 1].drop(columns="vintage")
    revised = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", final, start=60)  # revised data
    assert_allclose(rt.forecasts["revised_forecast"], revised.forecasts["forecast"],
                    rtol=RTOL_EXACT)
    f = rt.forecasts
    y, b = f["actual"], f["benchmark"]
    r2 = [1 - ((y - f[c]) ** 2).sum() / ((y - b) ** 2).sum()
          for c in ("forecast", "revised_forecast")]
    audit = rt.leakage_audit()
    assert_allclose(audit[["oos_r2_real_time", "oos_r2_revised"]].to_numpy(float), r2,
                    rtol=RTOL_EXACT)
    assert audit["oos_r2_gain"] == pytest.approx(r2[1] - r2[0], rel=RTOL_EXACT)


def test_evaluate_on_needs_vintages(long: pd.DataFrame) -> None:
    final = long[long["vintage"] == N - 1].drop(columns="vintage")
    with pytest.raises(OptionError, match=r"evaluate_on applies to real-time data \(vintage=\), "
                                          r"however: evaluate_on='latest' without vintages"):
        ar.forecast("y ~ lag(y, 1)", final, start=60, evaluate_on="latest")
