"""Analysis of variance, the diagnostics and the outlier test are summary sections: their
text is unchanged, and they render as well-formed HTML, LaTeX and Markdown tables of the
same numbers."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.datasets import longley

import attnreg as ar
from tests.report.renderings import check_renderings

FORMULA = "TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR"


@pytest.fixture(scope="module")
def fit() -> ar.LinearResults:
    return ar.attnreg(FORMULA, longley.load_pandas().data)


def test_anova_renders_its_table(fit) -> None:
    a = fit.anova()
    s = a.summary()
    assert s.table is a.table and str(s) == "\n" + str(a)
    check_renderings(a.summary(), [], a.table["F value"].dropna())
    assert a.to_latex() == s.to_latex() and a.to_markdown() == s.to_markdown()


def test_diagnostics_render_their_tests(fit) -> None:
    d = fit.diagnostics()
    s = d.summary()
    assert s.table is d.table and str(s) == "\n" + str(d) + "\n"
    stats = d.table["statistic"].to_numpy(dtype=float)
    check_renderings(d, [], stats[np.isfinite(stats)], ["Durbin-Watson"])


def test_outlier_test_renders_its_rows(fit) -> None:
    o = fit.outlier_test()
    assert o.summary().table is o.table and str(o.summary()) == "\n" + str(o) + "\n"
    check_renderings(o, [], o.table["rstudent"])
