"""The prevailing-mean benchmark: the mean of every response observed by the origin.

Reference: the definition (Campbell & Thompson 2008; Goyal & Welch 2008), computed by hand
with numpy as the mean of the response over the data rows at or before each origin.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from tests.conftest import RTOL_EXACT

START = "1990Q1"


@pytest.fixture(scope="module")
def macro() -> pd.DataFrame:
    from statsmodels.datasets import macrodata

    frame = macrodata.load_pandas().data
    frame.index = pd.period_range("1959Q1", periods=len(frame), freq="Q")
    return frame


def by_hand(y: np.ndarray, index: pd.Index, origins: pd.Index) -> np.ndarray:
    """Mean of every observed y at or before each origin."""
    return np.array([np.nanmean(y[: index.get_loc(o) + 1]) for o in origins])


@pytest.fixture(scope="module")
def ar_runs(macro) -> dict[str, object]:
    return {"ar1": ar.forecast("infl ~ lag(infl, 1)", macro, start=START),
            "ar8": ar.forecast("infl ~ lags(infl, 1, 8)", macro, start=START),
            "ar1 rolling": ar.forecast("infl ~ lag(infl, 1)", macro, start=START,
                                       scheme="rolling", window=40),
            "ar8 fixed": ar.forecast("infl ~ lags(infl, 1, 8)", macro, start=START,
                                     scheme="fixed")}


def test_one_benchmark_for_every_lag_order_and_scheme(macro, ar_runs) -> None:
    ref = ar_runs["ar1"].forecasts
    expected = by_hand(macro["infl"].to_numpy(), macro.index, ref["origin"])
    assert_allclose(ref["benchmark"], expected, rtol=RTOL_EXACT)
    for name, fc in ar_runs.items():
        f = fc.forecasts
        assert f.index.equals(ref.index), name
        assert_allclose(f["benchmark"], ref["benchmark"], rtol=RTOL_EXACT, err_msg=name)
    msfe = {name: np.mean(fc.forecasts["benchmark_error"] ** 2) for name, fc in ar_runs.items()}
    assert_allclose(list(msfe.values()), msfe["ar1"], rtol=RTOL_EXACT)


def test_oos_r2_does_not_depend_on_the_order_of_the_list(macro, ar_runs) -> None:
    a1, a8 = ar_runs["ar1"], ar_runs["ar8"]
    one = ar.compare_forecasts([a1, a8], names=["AR(1)", "AR(8)"], mcs_reps=50)
    two = ar.compare_forecasts([a8, a1], names=["AR(8)", "AR(1)"], mcs_reps=50)
    y = macro["infl"].to_numpy()
    bench = by_hand(y, macro.index, a1.forecasts["origin"])
    for name, fc in (("AR(1)", a1), ("AR(8)", a8)):
        f = fc.forecasts
        hand = 1 - np.sum((f["actual"] - f["forecast"]) ** 2) / np.sum((f["actual"] - bench) ** 2)
        assert_allclose(one.table.loc[name, "oos_r2"], hand, rtol=RTOL_EXACT)
        assert_allclose(two.table.loc[name, "oos_r2"], hand, rtol=RTOL_EXACT)
        assert_allclose(fc.evaluation["oos_r2"], hand, rtol=RTOL_EXACT)
    assert not any("prevailing means" in n for n in one.notes)


@pytest.mark.parametrize("horizon", [2, 4])
def test_h_step_benchmark_uses_every_y_observed_by_the_origin(macro, horizon) -> None:
    fc = ar.forecast("infl ~ lag(infl, h) + lag(unemp, h)", macro, start=START,
                     horizon=[1, horizon])
    f = fc.at_horizon(horizon).forecasts
    assert (f.index - f["origin"]).map(lambda d: d.n).eq(horizon).all()
    assert_allclose(f["benchmark"], by_hand(macro["infl"].to_numpy(), macro.index, f["origin"]),
                    rtol=RTOL_EXACT)


def test_iterated_benchmark_is_the_same(macro, ar_runs) -> None:
    fi = ar.forecast("infl ~ lag(infl, 1) + lag(infl, 2)", macro, start=START, horizon=[1, 3],
                     strategy="iterated")
    f = fi.at_horizon(3).forecasts
    assert_allclose(f["benchmark"], by_hand(macro["infl"].to_numpy(), macro.index, f["origin"]),
                    rtol=RTOL_EXACT)
    assert_allclose(fi.at_horizon(1).forecasts["benchmark"], ar_runs["ar1"].forecasts["benchmark"],
                    rtol=RTOL_EXACT)


def test_missing_responses_and_a_transformed_response(macro) -> None:
    data = macro.copy()
    data.loc[data.index[[0, 3, 40]], "infl"] = np.nan  # missing observations are skipped
    data["level"] = np.exp(data["realgdp"] / 10_000)
    fc = ar.forecast("infl ~ lag(unemp, 1)", data, start=START)
    f = fc.forecasts
    assert_allclose(f["benchmark"], by_hand(data["infl"].to_numpy(), data.index, f["origin"]),
                    rtol=RTOL_EXACT)
    lg = ar.forecast("np.log(level) ~ lag(np.log(level), 2)", data, start=START)
    g = lg.forecasts
    assert_allclose(g["benchmark"], by_hand(np.log(data["level"].to_numpy()), data.index,
                                            g["origin"]), rtol=RTOL_EXACT)
