"""Errors that explain themselves: exact fits, swapped arguments, subset expressions, R's
spellings, CSV separators."""

from __future__ import annotations

import math
import pickle
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, FormulaError, OptionError

from tests.conftest import RTOL_EXACT

RESIDUAL_TESTS = ["Breusch-Pagan (studentized)", "White", "Durbin-Watson",
                  "Breusch-Godfrey LM (order 1)", "Breusch-Godfrey F (order 1)", "Jarque-Bera",
                  "RESET"]


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 30
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "g": list("abc") * 10})
    df["y"] = 1.0 + df.x1 - df.x2 + rng.normal(size=n)
    return df


# ------------------------------------------------------------------ diagnostics, exact fit
@pytest.mark.parametrize(("intercept", "slope", "weights"), [
    (1.0, 2.0, None),  # residuals exactly zero (a ZeroDivisionError before)
    (0.1, 0.3, None),  # residuals of rounding size: statistics of noise before
    (0.1, 0.3, "w"),
])
def test_diagnostics_of_an_exact_fit_are_nan_with_a_note(frame: pd.DataFrame, intercept: float,
                                                         slope: float, weights: str | None) -> None:
    x = np.arange(20.0)
    df = pd.DataFrame({"x": x, "y": intercept + slope * x, "w": np.linspace(1.0, 2.0, 20)})
    table = ar.attnreg("y ~ x", df, weights=weights).diagnostics().to_frame()
    assert table.loc[RESIDUAL_TESTS, "statistic"].isna().all()
    assert table.loc[RESIDUAL_TESTS, "p_value"].isna().all()
    assert table.loc[RESIDUAL_TESTS, "note"].str.match(
        r"essentially perfect fit: the residuals are rounding errors").all()
    assert math.isfinite(table.loc["Condition number", "statistic"])
    noisy = ar.attnreg("y ~ x1 + x2", frame).diagnostics().to_frame()  # not caught by the rule
    assert noisy.loc[RESIDUAL_TESTS, "statistic"].notna().all()


# ------------------------------------------------------------------ swapped arguments
def test_swapped_arguments_are_named(frame: pd.DataFrame) -> None:
    with pytest.raises(FormulaError, match=r"the arguments are swapped: the formula comes "
                                           r"first.*write attnreg\('y ~ x1', data\)"):
        ar.attnreg(frame, "y ~ x1")


# ------------------------------------------------------------------ subset expressions
def test_subset_expression_sees_numpy(frame: pd.DataFrame) -> None:
    fit = ar.attnreg("y ~ x2", frame, subset="np.abs(x1) < 1")
    keep = np.abs(frame["x1"]) < 1
    ref = ar.attnreg("y ~ x2", frame[keep])
    assert fit.nobs == int(keep.sum()) and fit.design.n_subset_excluded == int((~keep).sum())
    assert_allclose(fit.coef.to_numpy(), ref.coef.to_numpy(), rtol=RTOL_EXACT)
    both = ar.attnreg("y ~ x2", frame, subset="x1 > -1 and x2 < 1")  # pandas' language still
    assert both.nobs == int(((frame.x1 > -1) & (frame.x2 < 1)).sum())


def test_subset_expression_sees_the_callers_scope(frame: pd.DataFrame) -> None:
    limit = 0.25
    fit = ar.attnreg("y ~ x2", frame, subset="x1 < limit")
    assert fit.nobs == int((frame["x1"] < limit).sum())


def test_subset_expression_that_no_one_can_evaluate(frame: pd.DataFrame) -> None:
    with pytest.raises(OptionError, match=r"subset expression 'np\.abs\(x9\) < 1' could not be "
                                          r"evaluated: name 'x9' is not defined"):
        ar.attnreg("y ~ x2", frame, subset="np.abs(x9) < 1")


# ------------------------------------------------------------------ R's spellings
@pytest.mark.parametrize(("formula", "pattern"), [
    ("y ~ factor(g)", r"no column 'factor'.*factor\(\) is R's spelling: write C\(g\)"),
    ("y ~ log(x1 + 5)", r"no column 'log'.*log\(\) is R's spelling: write np\.log\(x1 \+ 5\)"),
    ("y ~ x2 + sqrt(x1 + 5)", r"sqrt\(\) is R's spelling: write np\.sqrt\(x1 \+ 5\)"),
])
def test_r_spellings_get_a_hint(frame: pd.DataFrame, formula: str, pattern: str) -> None:
    with pytest.raises(FormulaError, match=pattern):
        ar.attnreg(formula, frame)


def test_vcov_in_lower_case_gets_a_hint(frame: pd.DataFrame) -> None:
    with pytest.raises(OptionError, match=r"kind='hc1'; did you mean 'HC1'"):
        ar.attnreg("y ~ x1", frame, vcov="hc1")
    with pytest.raises(OptionError, match=r"kind='hac'; did you mean 'HAC'"):
        ar.attnreg("y ~ x1", frame).with_vcov("hac")


# ------------------------------------------------------------------ CSV separators
@pytest.mark.parametrize(("sep", "shown"), [(";", "';'"), ("\t", r"'\\t' \(tabs\)")])
def test_csv_with_another_separator_says_pass_sep(frame: pd.DataFrame, tmp_path: Path,
                                                  sep: str, shown: str) -> None:
    pytest.importorskip("pyarrow")
    path = tmp_path / "data.csv"
    frame.to_csv(path, sep=sep, index=False)
    with pytest.raises(DataError, match=rf"data\.csv' looks separated by {shown}, not commas: its "
                                        rf"header.*Pass sep={re.escape(repr(sep))}"):
        ar.attnreg("y ~ x1", str(path))
    fit = ar.attnreg("y ~ x1 + x2", str(path), sep=sep)  # the message's way
    assert_allclose(fit.coef.to_numpy(), ar.attnreg("y ~ x1 + x2", frame).coef.to_numpy(),
                    rtol=1e-9)  # CSV text round trip of 17-digit floats, then chunked sums
    moved = pickle.loads(pickle.dumps(fit))  # the separator is kept for what re-reads the rows
    assert_allclose(moved.with_vcov("HC1").std_err.to_numpy(),
                    ar.attnreg("y ~ x1 + x2", frame).with_vcov("HC1").std_err.to_numpy(), rtol=1e-9)


def test_sep_is_checked(frame: pd.DataFrame, tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    path = tmp_path / "data.csv"
    frame.to_csv(path, sep=";", index=False)
    with pytest.raises(OptionError, match=r"sep must be one character.*sep=';;'"):
        ar.attnreg("y ~ x1", str(path), sep=";;")
    frame.to_parquet(tmp_path / "data.parquet")
    with pytest.raises(OptionError, match=r"sep= is the field separator of CSV files, however the "
                                          r"files are parquet"):
        ar.attnreg("y ~ x1", str(tmp_path / "data.parquet"), sep=";")
