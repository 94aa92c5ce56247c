"""Lag helpers, the time-index check and the minimum-lag parser of attnreg.formula.lags."""

from __future__ import annotations

import doctest

import numpy as np
import pandas as pd
import patsy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from attnreg.exceptions import DataError, FormulaError, OptionError
from attnreg.formula import lags as transforms
from attnreg.formula.time_index import check_time_index
from attnreg.formula.lags import (
    diff,
    lag,
    lag_column_names,
    lags,
    min_lag,
)

NAMESPACE = {"lag": lag, "lags": lags, "diff": diff}


@pytest.fixture
def frame() -> pd.DataFrame:
    index = pd.period_range("2000Q1", periods=8, freq="Q")
    return pd.DataFrame(
        {"y": np.arange(8.0) ** 2, "x": np.arange(8.0) + 10.0, "z": np.arange(8.0) * -1.0},
        index=index,
    )


def test_lag_shifts_rows_and_keeps_the_index(frame: pd.DataFrame) -> None:
    out = lag(frame["x"], 2)
    assert out.index.equals(frame.index) and out.name == "x"
    assert_array_equal(out.to_numpy(), [np.nan, np.nan, 10, 11, 12, 13, 14, 15])
    assert_array_equal(lag(np.array([1, 2, 3]), 0), [1.0, 2.0, 3.0])
    assert_array_equal(lag([1.0, 2.0], 5), [np.nan, np.nan])


def test_lag_of_a_matrix_shifts_every_column() -> None:
    values = np.arange(6.0).reshape(3, 2)
    assert_array_equal(lag(values, 1), [[np.nan, np.nan], [0, 1], [2, 3]])


def test_diff_is_x_minus_its_lag(frame: pd.DataFrame) -> None:
    x = frame["y"]
    assert_array_equal(diff(x, 1).to_numpy(), (x - x.shift(1)).to_numpy())
    assert_array_equal(diff(x, 3).to_numpy(), (x - x.shift(3)).to_numpy())
    assert_array_equal(diff([1.0, 4.0], 0), [0.0, 0.0])


def test_lags_names_its_columns(frame: pd.DataFrame) -> None:
    out = lags(frame["x"], 1, 3)
    assert list(out.columns) == ["lag1", "lag2", "lag3"] and out.index.equals(frame.index)
    for k in (1, 2, 3):
        assert_array_equal(out[f"lag{k}"].to_numpy(), lag(frame["x"], k).to_numpy())
    assert lags(np.arange(5.0), 0, 1).shape == (5, 2)


@pytest.mark.parametrize("k", [-1, 1.0, True, "1", None])
def test_order_must_be_a_non_negative_integer(k: object) -> None:
    with pytest.raises(OptionError, match="k must be a non-negative integer"):
        lag([1.0, 2.0], k)  # type: ignore[arg-type]
    with pytest.raises(OptionError, match="k must be a non-negative integer"):
        diff([1.0, 2.0], k)  # type: ignore[arg-type]


def test_lags_validates_its_range() -> None:
    with pytest.raises(OptionError, match="first <= last"):
        lags([1.0, 2.0], 3, 1)
    with pytest.raises(OptionError, match="last must be a non-negative integer"):
        lags([1.0, 2.0], 0, -2)
    with pytest.raises(DataError, match="one series"):
        lags(np.ones((3, 2)), 1, 2)
    with pytest.raises(DataError, match="numeric data"):
        lag(["a", "b"], 1)


def test_inside_a_patsy_formula(frame: pd.DataFrame) -> None:
    y, X = patsy.dmatrices("y ~ lag(x, 1) + lags(z, 1, 2)", frame,
                           eval_env=patsy.EvalEnvironment([NAMESPACE]), return_type="dataframe")
    assert list(X.columns) == ["Intercept", "lag(x, 1)", "lags(z, 1, 2)[0]", "lags(z, 1, 2)[1]"]
    assert lag_column_names(X.columns) == [
        "Intercept", "lag(x, 1)", "lags(z, 1, 2)[lag1]", "lags(z, 1, 2)[lag2]"]
    # the default na_action drops the rows the lags cannot fill
    assert X.index.equals(frame.index[2:]) and y.index.equals(frame.index[2:])
    t = np.arange(2, 8)
    assert_array_equal(X["lag(x, 1)"], frame["x"].to_numpy()[t - 1])
    assert_array_equal(X["lags(z, 1, 2)[1]"], frame["z"].to_numpy()[t - 2])
    # a plain dict as eval_env's namespace works too
    _, X2 = patsy.dmatrices("y ~ diff(x, 1)", frame, eval_env=patsy.EvalEnvironment([NAMESPACE]))
    assert_array_equal(np.asarray(X2)[:, 1], np.ones(7))


@settings(max_examples=40, deadline=None)
@given(values=st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=30),
       data=st.data())
def test_a_lag_never_sees_future_rows(values: list[float], data: st.DataObject) -> None:
    x = np.array(values)
    t = data.draw(st.integers(0, x.size - 1))
    k = data.draw(st.integers(0, 4))
    future = x.copy()
    future[t + 1 :] = data.draw(st.floats(-1e6, 1e6))
    for func in (lag, diff):
        assert_array_equal(func(x, k)[: t + 1], func(future, k)[: t + 1])
    assert_array_equal(lags(x, k, k + 2)[: t + 1], lags(future, k, k + 2)[: t + 1])


def test_lag_column_names_leaves_other_names_alone() -> None:
    names = ["lags(x, 2, 3)[1]:C(g)[T.b]", "C(g)[T.b]", "x[1:3]", "lags(x, a, 3)[0]"]
    assert lag_column_names(names) == ["lags(x, 2, 3)[lag3]:C(g)[T.b]", "C(g)[T.b]", "x[1:3]",
                                       "lags(x, a, 3)[0]"]


@pytest.mark.parametrize(("expr", "expected"), [
    ("lag(infl, 2)", 2), ("lags(x, 1, 4)", 1), ("diff(x, 1)", 0), ("x", 0),
    ("np.log(lag(x, 3))", 3), ("lag(x)", 1), ("lag(lag(x, 1), 2)", 3),
    ("lag(diff(x, 1), 2)", 2), ("diff(lag(x, 2), 3)", 2), ("lag(x, k=4) + lag(z, 2)", 2),
    ("lags(x, first=3, last=5)", 3), ('Q("x y")', 0), ("I(lag(x, 2) ** 2)", 2),
    ("center(lag(x, 1))", 1), ("ts.lag(x, 5)", 5), ("1", None), ("lag(x, -1)", -1),
    ("lag(x, h)", 0),  # a lag that is not a literal counts as none (conservative)
])
def test_min_lag(expr: str, expected: int | None) -> None:
    assert min_lag(expr) == expected


def test_min_lag_rejects_invalid_code() -> None:
    with pytest.raises(FormulaError, match="cannot parse the factor"):
        min_lag("lag(x, ")


def test_check_time_index_accepts_regular_indexes() -> None:
    check_time_index(pd.period_range("2000Q1", periods=12, freq="Q"))
    check_time_index(pd.date_range("2000-01-31", periods=12, freq="ME"))
    check_time_index(pd.DatetimeIndex(list(pd.bdate_range("2024-01-01", periods=30))))
    check_time_index(pd.RangeIndex(5))
    check_time_index(pd.Index([3, 7, 20]))
    check_time_index(pd.Index(["b", "a"]))  # no time order to check
    stamps = np.sort(np.random.default_rng(0).integers(0, 10**18, 40))
    check_time_index(pd.DatetimeIndex(stamps))  # irregular: no frequency to infer


@pytest.mark.parametrize(("index", "message"), [
    (pd.PeriodIndex(["2000Q1", "2000Q2", "2000Q2"], freq="Q"), "duplicated at position 2"),
    (pd.PeriodIndex(["2000Q2", "2000Q1"], freq="Q"), "not sorted at position 1"),
    (pd.PeriodIndex(["2000Q1", "2000Q2", "2000Q4"], freq="Q"), "gap at position 2: 2000Q2"),
    (pd.DatetimeIndex(list(pd.date_range("2000-01-31", periods=12, freq="ME").delete(5))),
     "gap at position 5: 2000-05-31 00:00:00 is followed by 2000-07-31"),
    (pd.DatetimeIndex(list(pd.bdate_range("2024-01-01", periods=20).delete(7))),
     "gap at position 7.*frequency B"),
    (pd.date_range("2000", periods=5, freq="D")[[0, 2, 1, 3, 4]], "not sorted at position 2"),
    (pd.Index([1, 3, 2]), "not sorted at position 2"),
    (pd.RangeIndex(5, 0, -1), "not sorted at position 1"),
    (pd.DatetimeIndex(["2000-01-01", None, "2000-01-03"]), "NaT at position 1"),
])
def test_check_time_index_reports_the_first_problem(index: pd.Index, message: str) -> None:
    with pytest.raises(DataError, match=message):
        check_time_index(index)


def test_docstring_examples() -> None:
    result = doctest.testmod(transforms, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
