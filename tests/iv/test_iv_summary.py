"""The IV summary: R's print(summary(ivreg(...), diagnostics = TRUE)) digit for digit (the
text recorded by tests/reference/make_iv_formula.R), then the weak-instrument report."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from tests.conftest import RTOL_EXACT
from tests.iv.conftest import make_iv_data
from tests.iv.test_iv_formula_r import REF, fit_model


def _after_call(lines: list[str]) -> list[str]:
    """The printed lines from the residuals on, R's trailing blank lines dropped."""
    start = next(i for i, line in enumerate(lines) if line.endswith("Residuals:"))
    end = next(i for i, line in enumerate(lines) if line.startswith("Wald test:"))
    return lines[start:end + 1]


def _renamed(lines: list[str]) -> list[str]:
    """patsy's factor columns spelled as R's (same width), the coefficient rows sorted (patsy
    puts factor terms before numeric ones, R keeps the formula's order)."""
    out = [line.replace("grp[T.b]", "grpb    ").replace("grp[T.c]", "grpc    ") for line in lines]
    lo = out.index("Coefficients:") + 2
    hi = out.index("", lo)
    return out[:lo] + sorted(out[lo:hi]) + out[hi:]


@pytest.mark.parametrize("model", ["one", "two", "two_weighted"])
def test_summary_text_is_aers_digit_for_digit(model: str) -> None:
    ours = _after_call(str(fit_model(model).summary()).splitlines())
    theirs = _after_call(REF[model]["printed"])
    assert _renamed(ours) == _renamed(theirs)


def test_summary_ends_with_the_weak_instrument_report() -> None:
    d = make_iv_data(k2=1, n_z=3)  # a draw whose over-identifying restrictions hold
    df = pd.DataFrame({"y": d.y, "x1": d.X[:, 1], "x2": d.X[:, 2], "x3": d.X[:, 3],
                       "d1": d.D[:, 0], "z1": d.Z[:, 0], "z2": d.Z[:, 1], "z3": d.Z[:, 2]})
    fit = ar.attnreg("y ~ x1 + x2 + x3 | d1 ~ z1 + z2 + z3", df, vcov="HC1")
    text = str(fit.summary())
    wk, ars = fit.weak_instruments(), fit.anderson_rubin(0.95)
    assert "Weak-instrument report (HC1 covariance for the robust statistics):" in text
    assert f"Montiel Olea-Pflueger effective F {wk.effective_f:.4g}" in text
    assert f"Anderson-Rubin 95% confidence set for d1: [{ars.lower:.4g}, {ars.upper:.4g}]" in text
    assert "Standard errors and tests: HC1 covariance" in text
    assert ars.shape == "interval" and ars.lower < fit.coef["d1"] < ars.upper


def test_an_empty_ar_set_is_said_so() -> None:
    fit = fit_model("one")  # Sargan rejects at 0.1 %: no coefficient fits every instrument
    assert fit.anderson_rubin(0.95).shape == "empty"
    assert "confidence set for d1: {} (empty; homoskedastic)" in str(fit.summary())


def test_summary_table_is_the_coefficient_table() -> None:
    fit = fit_model("one", "cluster")
    table = fit.summary().table
    assert list(table.columns) == ["Estimate", "Std. Error", "t value", "Pr(>|t|)"]
    assert_allclose(table["Std. Error"], fit.std_err, rtol=RTOL_EXACT)
    assert np.isfinite(table.to_numpy()).all()


def test_weak_instrument_statistics_follow_the_covariance() -> None:
    classical, clustered = fit_model("two"), fit_model("two", "cluster")
    wk = clustered.weak_instruments()
    assert wk.kind == "cluster"
    assert_allclose(wk.f_classical, classical.diagnostics().iloc[:2]["statistic"], rtol=RTOL_EXACT)
    assert not np.allclose(wk.f_robust, wk.f_classical)
    with pytest.raises(ar.exceptions.OptionError, match="level must be strictly between 0 and 1"):
        fit_model("one").anderson_rubin(1.5)


def test_summary_renders_as_html_latex_and_markdown() -> None:
    s = fit_model("two").summary()
    assert "Diagnostic tests:" in s._repr_html_() and "Wu-Hausman" in s.to_markdown()
    assert "\\begin{tabular}" in s.to_latex()


def test_weak_iv_table_holds_the_statistics_and_their_p_values() -> None:
    from scipy import stats

    fit = fit_model("two", "HC1")
    wk, table = fit.weak_instruments(), fit.weak_iv
    assert list(table.columns) == ["statistic", "df1", "df2", "p-value"]
    row = table.loc["first-stage F (d2)"]
    assert_allclose(row["statistic"], wk.f_classical[1], rtol=0)
    assert_allclose(row["p-value"], stats.f.sf(wk.f_classical[1], 4, 136), rtol=RTOL_EXACT)
    assert (row["df1"], row["df2"]) == (4, 136)  # 4 instruments (zf has 3 levels), n - L = 145 - 9
    sw = table.loc["Sanderson-Windmeijer F (d1)"]
    assert (sw["df1"], sw["df2"]) == (3, 136)
    assert_allclose(table.loc["Kleibergen-Paap rk LM", "p-value"], wk.kp_rk_lm_pvalue, rtol=0)
    assert "effective F" not in table.index  # two endogenous regressors: no MOP statistic
    assert_allclose(table.loc["first-stage F (d1)", "statistic"],
                    fit.with_vcov("classical").diagnostics().iloc[0]["statistic"], rtol=RTOL_EXACT)


def test_gmm_and_liml_summaries_show_hansen_j_and_kappa() -> None:
    from scipy import stats

    from tests.iv.test_iv_formula import FORMULA, frame

    gmm = ar.attnreg(FORMULA, frame(), method="gmm", vcov="HC0")
    p = stats.chi2.sf(gmm.fit.j_stat, 2)
    assert f"Hansen J statistic: {gmm.fit.j_stat:.4g} on 2 DF,  p-value: {p:.4g}" in str(gmm.summary())
    fuller = ar.attnreg(FORMULA, frame(), method="fuller", alpha=4.0)
    assert (f"k-class kappa: {fuller.fit.kappa:.7g} (LIML kappa {fuller.fit.liml_kappa:.7g}, "
            "Fuller alpha 4)") in str(fuller.summary())
