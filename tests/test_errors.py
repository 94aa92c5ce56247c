"""Bad input gets a clear error naming the culprit, raised before any work is done."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import DataError, FormulaError, OptionError


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"y": rng.normal(size=20), "income": rng.normal(size=20),
                         "age": rng.normal(size=20), "region": list("abcd") * 5},
                        index=[f"id{i}" for i in range(20)])


def test_unknown_column_is_named_with_suggestions(frame: pd.DataFrame) -> None:
    with pytest.raises(FormulaError, match=r"no column 'incme'.*did you mean 'income'"):
        ar.attnreg("y ~ incme + age", data=frame)


def test_non_numeric_response(frame: pd.DataFrame) -> None:
    with pytest.raises(DataError, match=r"response 'region' must be numeric"):
        ar.attnreg("region ~ age", data=frame)


def test_no_rows_left_after_na(frame: pd.DataFrame) -> None:
    frame = frame.assign(age=np.nan)
    with pytest.raises(DataError, match=r"no rows left after removing missing values \(20 rows"):
        ar.attnreg("y ~ age", data=frame)


def test_too_few_rows(frame: pd.DataFrame) -> None:
    with pytest.raises(DataError, match=r"n_obs \(4\) must exceed the number of coefficients \(6\)"):
        ar.attnreg("y ~ age + income + region", data=frame.iloc[:4])


@pytest.mark.parametrize("value", [np.inf, -np.inf])
def test_non_finite_value_names_column_and_row(frame: pd.DataFrame, value: float) -> None:
    frame.loc["id7", "income"] = value
    with pytest.raises(DataError, match=r"column 'income' has a non-finite value .* at row 'id7'"):
        ar.attnreg("y ~ income", data=frame)


def test_na_action_raise_names_row_and_column(frame: pd.DataFrame) -> None:
    frame.loc["id3", "age"] = np.nan
    with pytest.raises(DataError, match=r"first is row 'id3' in column 'age'"):
        ar.attnreg("y ~ age", data=frame, na_action="raise")


def test_invalid_method_lists_valid_ones(frame: pd.DataFrame) -> None:
    with pytest.raises(OptionError, match=r"method must be one of 'ols', 'ridge', 'pcr'.*'lasso'"):
        ar.attnreg("y ~ age", data=frame, method="lasso")


@pytest.mark.parametrize(("kwargs", "pattern"), [
    ({"method": "ridge", "lam": -1.0}, r"lam must be a finite number >= 0"),
    ({"method": "ridge", "lam": "aic"}, r"lam must be a number >= 0 or one of \('gcv', 'loo'\)"),
    ({"method": "pcr", "k": 0}, r"k must be a positive integer"),
    ({"method": "pcr", "k": 9}, r"k must be between 1 and the number of predictors \(5\)"),
    ({"method": "ols", "lam": 1.0}, r"lam applies to method 'ridge' only"),
    ({"na_action": "omit"}, r"na_action must be one of 'drop', 'raise'"),
    ({"vcov": "HC9"}, r"vcov type must be one of 'classical', 'HC0'"),
    ({"vcov": "HAC", "maxlags": -1}, r"maxlags must be a non-negative integer"),
    ({"standardize": "yes"}, r"standardize must be True or False"),
    ({"heads": 3}, r"unknown option\(s\) for method 'ols': heads"),
    ({"subset": [True, False]}, r"subset must have one entry per row of data \(20\)"),
    ({"weights": "wt"}, r"data has no weights column 'wt'"),
])
def test_invalid_options(frame: pd.DataFrame, kwargs: dict, pattern: str) -> None:
    with pytest.raises(OptionError if "weights" not in kwargs else FormulaError, match=pattern):
        ar.attnreg("y ~ age + income + region", data=frame, **kwargs)


def test_negative_weight_names_row(frame: pd.DataFrame) -> None:
    w = np.ones(20)
    w[5] = -2.0
    with pytest.raises(DataError, match=r"row 'id5' has weight -2.0"):
        ar.attnreg("y ~ age", data=frame, weights=w)


def test_k_beyond_rank_after_aliasing(frame: pd.DataFrame) -> None:
    frame = frame.assign(age2=2 * frame["age"])
    with pytest.warns(UserWarning, match="age2"), pytest.raises(OptionError, match=r"rank.*\(2\)"):
        ar.attnreg("y ~ age + income + age2", data=frame, method="pcr", k=3)


def test_newdata_missing_column(frame: pd.DataFrame) -> None:
    fit = ar.attnreg("y ~ age + income", data=frame)
    with pytest.raises(FormulaError, match=r"newdata has no column 'income'"):
        fit.predict(pd.DataFrame({"age": [1.0]}))


def test_unseen_level_names_factor_and_level(frame: pd.DataFrame) -> None:
    fit = ar.attnreg("y ~ age + C(region)", data=frame)
    with pytest.raises(DataError, match=r"factor 'C\(region\)' has level 'z' not seen"):
        fit.predict(pd.DataFrame({"age": [1.0], "region": ["z"]}))


@pytest.mark.parametrize(("kwargs", "pattern"), [
    ({"interval": "credible"}, r"interval must be one of"),
    ({"interval": "confidence", "level": 1.5}, r"level must be strictly between 0 and 1"),
])
def test_invalid_predict_options(frame: pd.DataFrame, kwargs: dict, pattern: str) -> None:
    fit = ar.attnreg("y ~ age", data=frame)
    with pytest.raises(OptionError, match=pattern):
        fit.predict(frame, **kwargs)


def test_formula_must_have_tilde(frame: pd.DataFrame) -> None:
    with pytest.raises(FormulaError, match=r"formula must be a string of the form"):
        ar.attnreg("y + age", data=frame)


def test_data_must_be_a_frame() -> None:
    with pytest.raises(DataError, match=r"data must be a pandas DataFrame or a dict"):
        ar.attnreg("y ~ x", data=[[1, 2]])


def test_user_frame_is_never_modified(frame: pd.DataFrame) -> None:
    frame.loc["id2", "age"] = np.nan
    before = frame.copy()
    fit = ar.attnreg("y ~ age + np.log(income**2) + C(region)", data=frame, weights=np.ones(20))
    fit.predict(frame, interval="prediction")
    _ = fit.attention(frame).diagnostics
    fit.summary()
    pd.testing.assert_frame_equal(frame, before)
