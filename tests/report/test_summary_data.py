"""A summary holds numbers; its text, HTML and LaTeX are renderings of the same numbers."""

from __future__ import annotations

import re

import numpy as np
import pytest
import statsmodels.api as sm
from statsmodels.datasets import longley

import attnreg as ar
from attnreg.report.sections import Coefficients, FitStatistics

FORMULA = "TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR"


@pytest.fixture(scope="module")
def data():
    return longley.load_pandas().data


@pytest.mark.parametrize("cov", ["classical", "HC1", "HC3"])
def test_statistics_are_the_numbers_statsmodels_reports(data, cov) -> None:
    fit = ar.attnreg(FORMULA, data)
    fit = fit if cov == "classical" else fit.with_vcov(cov)
    ref = sm.OLS(data.TOTEMP, sm.add_constant(data.drop(columns="TOTEMP"))).fit(
        **({} if cov == "classical" else {"cov_type": cov}))
    stats = fit.summary().statistics
    assert stats["sigma"] == pytest.approx(np.sqrt(ref.scale), rel=1e-9)
    assert stats["r_squared"] == pytest.approx(ref.rsquared, rel=1e-9)
    assert stats["adj_r_squared"] == pytest.approx(ref.rsquared_adj, rel=1e-9)
    assert stats["f_statistic"] == pytest.approx(float(ref.fvalue), rel=1e-8)
    assert stats["f_p_value"] == pytest.approx(float(ref.f_pvalue), rel=1e-6)
    assert (stats["f_df1"], stats["f_df2"], stats["covariance"]) == (6, 9, cov)
    np.testing.assert_allclose(stats["residual_quantiles"].to_numpy(),
                               np.quantile(ref.resid, [0, 0.25, 0.5, 0.75, 1]), rtol=1e-9)


def test_html_and_latex_render_the_statistics_from_numbers(data) -> None:
    s = ar.attnreg(FORMULA, data).with_vcov("HC1").summary()
    stats = s.statistics
    html, latex = s._repr_html_(), s.to_latex()
    assert re.search(rf"<td>Multiple R-squared\s*</td><td>{ar.report.fmt_g(stats['r_squared'])}\s*</td>",
                     html)
    assert "Wald F (HC1)" in html and "Wald F (HC1)" in latex
    assert latex.count("\\begin{tabular}") == 2 and "Residual standard error" in latex
    assert "% Attention view" in latex


def test_sections_are_data(data) -> None:
    s = ar.attnreg(FORMULA, data, method="ridge", lam=0.5).summary()
    kinds = [type(x).__name__ for x in s.sections]
    assert kinds == ["Call", "Residuals", "Coefficients", "FitStatistics", "Penalty",
                     "AttentionSummary"]
    fit_stats = next(x for x in s.sections if isinstance(x, FitStatistics))
    assert fit_stats.effective and s.statistics["parameter"] == "lambda"
    assert s.statistics["value"] == 0.5 and s.statistics["criterion"] == "fixed"
    coefs = next(x for x in s.sections if isinstance(x, Coefficients))
    assert coefs.table is s.table and s.table.shape == (7, 4)


def test_a_summary_without_predictors_has_no_f(data) -> None:
    stats = ar.attnreg("TOTEMP ~ 1", data).summary().statistics
    assert stats["r_squared"] is None and stats["f_statistic"] is None
    assert stats["sigma"] == pytest.approx(float(data.TOTEMP.std()), rel=1e-12)
