"""The reports of Wald and t tests hold their numbers: the summary's statistics and tables are
the test's own, and its HTML, LaTeX and Markdown are well formed and show them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from statsmodels.datasets import longley

import attnreg as ar
from attnreg.report.figures import HypothesisSetup, WaldStatistic
from tests.report.renderings import check_renderings

FORMULA = "TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR"


@pytest.fixture(scope="module")
def fit() -> ar.LinearResults:
    return ar.attnreg(FORMULA, longley.load_pandas().data)


@pytest.mark.parametrize("test", ["F", "Chisq"])
def test_wald_summary_holds_the_joint_test(fit, test) -> None:
    w = fit.wald_test("UNEMP = ARMED, POP = 0", test=test)
    s = w.summary()
    stats = s.statistics
    assert (stats["statistic"], stats["p_value"]) == (w.statistic, w.p_value)
    assert (stats["df1"], stats["df2"]) == w.df and stats["test"] == test
    assert stats["n_restrictions"] == 2 and stats["covariance"] == w.covariance
    assert isinstance(stats["statistic"], float) and s.table is w.table
    assert [type(x) for x in s.sections][::2] == [HypothesisSetup, WaldStatistic]
    check_renderings(w, [w.statistic], w.table["Estimate"], ["UNEMP - ARMED = 0"])


def test_wald_summary_under_z_has_an_infinite_denominator(fit) -> None:
    w = fit.with_vcov("HC1", df=np.inf).wald_test("POP = 0")
    stats = w.summary().statistics
    assert stats["test"] == "Chisq" and math.isinf(stats["df2"])
    assert stats["statistic"] == w.statistic


@pytest.mark.parametrize("level", [0.95, 0.9])
def test_t_test_summary_holds_the_table_and_intervals(fit, level) -> None:
    t = fit.with_vcov("HC1").t_test("UNEMP - ARMED = 0, POP = 0", level=level)
    s = t.summary()
    stats = s.statistics
    assert (stats["level"], stats["df"], stats["n_restrictions"]) == (level, t.df, 2)
    assert stats["covariance"] == t.covariance and stats["test"] == "t"
    estimates, intervals = s.tables
    pd.testing.assert_frame_equal(estimates, t.table.iloc[:, :4])
    pd.testing.assert_frame_equal(intervals, t.table.iloc[:, 4:])
    check_renderings(t, [], t.table.iloc[:, [0, 4, 5]].to_numpy().ravel(),
                     [f"{100 * level:.3g} % confidence intervals"])
