"""The forecast's formula guards: look-ahead through expressions, known=, lags given by
expressions, the rolling window, iterated forecasts with h.

References: the same forecasts with the lag written as a number (the guard reads an
expression as its value), ``rolling()``'s own error (the window), and for the look-ahead
rule its definition: a term is refused exactly when its values up to an origin change once
later rows are added.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, LeakageError, OptionError
from attnreg.formula.design import build_design
from attnreg.formula.lags import min_lag


@pytest.fixture(scope="module")
def macro() -> pd.DataFrame:
    from statsmodels.datasets import macrodata

    frame = macrodata.load_pandas().data
    frame.index = pd.period_range("1959Q1", periods=len(frame), freq="Q")
    return frame


def needs_ninety_rows(v: pd.Series) -> pd.Series:
    """A transform that only works on the full sample."""
    if len(v) < 90:
        raise ValueError("too short")
    return v


# ------------------------------------------------------------------ look-ahead through terms

def test_full_sample_mean_inside_a_lag_is_refused(macro) -> None:
    term = "lag(np.log(realgdp) - np.log(realgdp).mean(), 1)"
    with pytest.raises(LeakageError, match=re.escape(
            f"term {term!r} looks ahead: its values at and before the origin "
            "Period('1989Q4', 'Q-DEC') change when the later rows are added")):
        ar.forecast(f"infl ~ {term}", macro, start="1990Q1")


@pytest.mark.parametrize("term", [
    "lag(x / x.std(), 1)",           # full-sample scale
    "I(lag(x, 1) - x.max())",        # full-sample extreme
    "lag(x.shift(-2), 1)",           # a lead hidden inside a lag
    "lag(x.rank(), 1)",              # ranks among all rows
    "lag(x * x.size, 1)",            # the sample length
])
def test_any_term_using_later_rows_is_refused(series, term) -> None:
    with pytest.raises(LeakageError, match=re.escape(f"term {term!r} looks ahead")):
        ar.forecast(f"y ~ lag(y, 1) + {term}", series, start="2010Q1")


def test_a_response_using_later_rows_is_refused(series) -> None:
    with pytest.raises(LeakageError, match=r"the response 'I\(y - y\.mean\(\)\)' looks ahead"):
        ar.forecast("I(y - y.mean()) ~ lag(y, 1)", series, start="2010Q1")


def test_a_term_not_computable_from_past_rows_is_refused(series) -> None:
    with pytest.raises(LeakageError, match=r"term 'lag\(needs_ninety_rows\(x\), 1\)' cannot be "
                                           r"computed from the rows observed by the origin .*"
                                           r"ValueError: too short"):
        ar.forecast("y ~ lag(y, 1) + lag(needs_ninety_rows(x), 1)", series, start="2010Q1")


def test_known_terms_are_exempt(series) -> None:
    data = series.assign(t=np.arange(len(series), dtype=float))
    with pytest.raises(LeakageError, match=r"term 'lag\(t / t\.size, 1\)' looks ahead"):
        ar.forecast("y ~ lag(y, 1) + lag(t / t.size, 1)", data, start="2010Q1")
    ok = ar.forecast("y ~ lag(y, 1) + lag(t / t.size, 1)", data, start="2010Q1", known=["t"])
    assert ok.plan.n_forecasts > 0


@pytest.mark.parametrize(("formula", "known"), [
    ("y ~ lag(y, 1) + lag(x, 1) + lag(z, 2)", ()),
    ("y ~ lags(y, 1, 3) + lag(np.log(np.abs(x) + 1), 1)", ()),
    ("y ~ lag(y, 1) + diff(lag(x, 1)) + lag(diff(z, 2), 1)", ()),
    ("y ~ lag(y, 1) + I(lag(x, 1) - lag(x, 2))", ()),
    ("np.log(np.abs(y) + 1) ~ lag(y, 1) + lag(x.rolling(4).mean(), 1)", ()),
    ("y ~ lag(y, 1) + lag(x.expanding().mean(), 1) + lag(x.cumsum(), 1)", ()),
    ("y ~ lag(y, 1) + lag(x.shift(-1), 2)", ()),  # a lead of 1 lagged 2: x one row back
    ("y ~ lag(y, 1) + C(q)", ("q",)),
    ("y ~ lag(y, 1) + I(np.arange(x.size) / 10.0)", ("x",)),  # a trend
])
def test_legitimate_formulas_are_not_refused(series, formula, known) -> None:
    data = series.assign(q=np.tile(["q1", "q2", "q3", "q4"], len(series) // 4 + 1)[:len(series)])
    fc = ar.forecast(formula, data, start="2010Q1", known=known)
    assert np.isfinite(fc.predictions).all()


def test_categorical_terms_pass_the_check_itself(series) -> None:
    from attnreg.timeseries import lookahead as lk

    data = series.assign(q=np.tile(["a", "b", "c"], len(series) // 3 + 1)[:len(series)])
    design = build_design("y ~ lag(y, 1) + C(q) + C(q):lag(x, 1)", data,
                          extra_names={"lag": ar.lag})
    lk.check_lookahead(design, data, np.array([20, 60]), set())  # no error


def test_stateful_transforms_keep_their_own_message(series) -> None:
    with pytest.raises(LeakageError, match=r"stateful transform center\(\)"):
        ar.forecast("y ~ lag(y, 1) + lag(center(x), 1)", series, start="2010Q1")


def test_the_rule_matches_its_definition(series) -> None:
    """Refused terms change their past values when later rows change; accepted ones do not."""
    cut = series.index.get_loc(pd.Period("2009Q4", freq="Q"))
    for term, refused in [("lag(x / x.std(), 1)", True), ("I(lag(x, 1) / 2.0)", False)]:
        full = build_design(f"y ~ {term}", series, extra_names={"lag": ar.lag})
        part = build_design(f"y ~ {term}", series.iloc[: cut + 1], extra_names={"lag": ar.lag})
        changed = not np.allclose(part.X, full.X[: part.n_obs], rtol=1e-12)
        assert changed == refused
        try:
            ar.forecast(f"y ~ lag(y, 1) + {term}", series, start="2010Q1")
            raised = False
        except LeakageError:
            raised = True
        assert raised == refused


# ------------------------------------------------------------------------------ known=

def test_known_entries_must_be_in_the_formula(series) -> None:
    with pytest.raises(OptionError, match=r"known=\['trend'\] is not a term or variable of the "
                                          r"right-hand side of 'y ~ lag\(y, 1\)'"):
        ar.forecast("y ~ lag(y, 1)", series, start="2010Q1", known=["trend"])
    with pytest.raises(OptionError, match=r"known=\['lag\(x, 3\)'\] is not a term"):
        ar.forecast("y ~ lag(y, 1) + lag(x, 1)", series, start="2010Q1", known=["lag(x, 3)"])


def test_known_entries_are_read_like_the_formula(series) -> None:
    formula = "y ~ lag(y, h) + lag(x, h - 1)"
    with pytest.raises(LeakageError, match=r"term 'lag\(x, 2 - 1\)' is lagged 1 period"):
        ar.forecast(formula, series, start="2010Q1", horizon=2)
    # spacing and the name h as the user writes them
    fc = ar.forecast(formula, series, start="2010Q1", horizon=2, known=["lag(x,h-1)"])
    ref = ar.forecast("y ~ lag(y, 2) + lag(x, 1)", series, start="2010Q1", horizon=2,
                      known=["lag(x, 1)"])
    assert_allclose(fc.predictions, ref.predictions, rtol=1e-12)
    one = ar.forecast("y ~ lag(y, 1) + x", series, start="2010Q1", known="x")  # one string
    assert one.plan.n_forecasts > 0


# --------------------------------------------------------------------- lags as expressions

@pytest.mark.parametrize(("written", "number"), [("h + 1", 3), ("2*h", 4), ("k + 1", 3),
                                                 ("np.maximum(h, k + 2)", 4)])
def test_lags_given_by_expressions_are_evaluated(series, written, number) -> None:
    k = 2  # noqa: F841 - read by the formula through the caller's scope
    fc = ar.forecast(f"y ~ lag(y, {written}) + lag(x, h)", series, start="2010Q1", horizon=2)
    ref = ar.forecast(f"y ~ lag(y, {number}) + lag(x, 2)", series, start="2010Q1", horizon=2)
    assert_allclose(fc.predictions, ref.predictions, rtol=1e-12)


def test_an_evaluated_lag_below_the_horizon_is_still_refused(series) -> None:
    k = 1  # noqa: F841 - read by the formula
    with pytest.raises(LeakageError, match=r"term 'lag\(x, k\)' is lagged 1 period\(s\) but the "
                                           r"horizon is 2"):
        ar.forecast("y ~ lag(y, 2) + lag(x, k)", series, start="2010Q1", horizon=2)


def test_min_lag_evaluates_with_a_scope() -> None:
    assert min_lag("lag(x, h + 1)") == 0  # unknown without a scope: counts as no lag
    assert min_lag("lag(x, h + 1)", {"h": 4}) == 5
    assert min_lag("np.log(lag(diff(x, k), 2 * k))", {"k": 3}) == 6
    assert min_lag("lags(x, first=k, last=k + 2)", {"k": 2}) == 2
    assert min_lag("lag(x, undefined_name)", {"h": 1}) == 0
    assert min_lag("lag(x, 1.5 * h)", {"h": 2}) == 0  # not an integer: unknown


# ------------------------------------------------------------------ window, iterated with h

def test_rolling_window_longer_than_the_data_is_rollings_error(series) -> None:
    with pytest.raises(DataError) as rolled:
        ar.rolling("y ~ lag(y, 1)", series, window=500)
    with pytest.raises(DataError, match=r"window \(500\) is longer than the data \(89 rows\)") \
            as forecast:
        ar.forecast("y ~ lag(y, 1)", series, scheme="rolling", window=500, start="2010Q1")
    assert str(forecast.value) == str(rolled.value)


def test_iterated_with_the_horizon_in_the_formula_is_refused(series) -> None:
    with pytest.raises(OptionError, match=r"strategy='iterated' .* cannot depend on the horizon, "
                                          r"however 'y ~ lag\(y, h\)' uses the name h"):
        ar.forecast("y ~ lag(y, h)", series, start="2010Q1", horizon=[1, 2],
                    strategy="iterated")
    fine = ar.forecast("y ~ lag(y, 1)", series, start="2010Q1", horizon=[1, 2],
                       strategy="iterated")
    assert fine.horizons == [1, 2]
