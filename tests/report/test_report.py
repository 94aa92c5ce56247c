"""Reports: golden text snapshots, HTML/LaTeX renderings, comparison tables, surface checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import ConvergenceWarning
from attnreg.report.rformat import fmt_g

FORMULA = "TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR"


@pytest.mark.parametrize(("method", "options"), [("ols", {}), ("ridge", {"lam": "gcv"}),
                                                 ("pcr", {"k": "loo"})])
def test_summary_snapshot(longley: pd.DataFrame, snapshot, method: str, options: dict) -> None:
    fit = ar.attnreg(FORMULA, data=longley, method=method, **options)
    snapshot(f"summary_longley_{method}.txt", str(fit.summary()))


def test_summary_renderings_share_data(longley: pd.DataFrame) -> None:
    s = ar.attnreg(FORMULA, data=longley).summary()
    html = s._repr_html_()
    latex = s.to_latex()
    assert "<table>" in html and "Residual standard error" in html
    assert "\\begin{tabular}" in latex and "GNPDEFL" in latex
    assert repr(s) == str(s)
    assert s.table.loc["YEAR", "Estimate"] == pytest.approx(1829.15146461355, rel=1e-9)


def test_robust_summary_says_so(longley: pd.DataFrame) -> None:
    text = str(ar.attnreg(FORMULA, data=longley).with_vcov("HC3").summary())
    assert "Standard errors: heteroskedasticity-robust HC3" in text


def test_compare_side_by_side(longley: pd.DataFrame) -> None:
    fits = [ar.attnreg(FORMULA, data=longley, method=m) for m in ("ols", "ridge", "pcr")]
    table = ar.compare(fits).table
    assert list(table.columns) == ["(1) ols", "(2) ridge", "(3) pcr"]
    assert table.loc["N", "(1) ols"] == "16"
    assert table.loc["R-squared", "(1) ols"] == f"{fits[0].r_squared:.4g}"
    assert "(" in str(ar.compare(fits)) and "<table>" in ar.compare(fits)._repr_html_()
    assert ar.compare(fits, names=["a", "b", "c"]).table.columns.tolist() == ["a", "b", "c"]


def test_compare_a_linear_and_a_softmax_fit(longley: pd.DataFrame) -> None:
    """A statistic a fit does not have (softmax: coefficients, adjusted R², AIC) is blank."""
    ols = ar.attnreg("TOTEMP ~ GNP + POP", data=longley)
    with pytest.warns(ConvergenceWarning):  # a few iterations keep the test fast
        soft = ar.attnreg("TOTEMP ~ GNP + POP", data=longley, method="softmax", heads=2,
                          max_iter=3, seed=0)
    c = ar.compare([ols, soft], names=["ols", "softmax"])
    table = c.table
    assert table.loc["R-squared", "softmax"] == fmt_g(soft.r_squared)
    assert table.loc["sigma", "softmax"] == fmt_g(soft.sigma)
    assert table.loc["N", "softmax"] == "16" and table.loc["method", "softmax"] == "softmax"
    for row in ("Adj. R-squared", "AIC", "edf", "lambda / k", "GNP"):
        assert table.loc[row, "softmax"] == "", row
    assert table.loc["Adj. R-squared", "ols"] == fmt_g(ols.adj_r_squared)
    assert "softmax" in str(c) and "nan" not in str(c)


def test_every_public_attribute_is_reachable(mixed_frame: pd.DataFrame) -> None:
    """Touch every public attribute of every result class (linearmodels' result_checker)."""
    for method in ("ols", "ridge", "pcr"):
        fit = ar.attnreg("y ~ x1 + C(g)", data=mixed_frame, method=method)
        for name in dir(fit):
            if name.startswith("_"):
                continue
            value = getattr(fit, name)
            if callable(value) and name in ("conf_int", "influence", "predict", "attention",
                                             "summary", "with_vcov"):
                value = value()
            assert value is not None or name in ("lam", "k", "selection")
        assert isinstance(repr(fit), str)
        att = fit.attention()
        for name in ("weights", "diagnostics"):
            assert np.isfinite(getattr(att, name).to_numpy()).all()
