"""Reports of fixed-effects fits: the summary's fixed-effect lines, tidy, glance and etable.

Numbers are checked against the dummy-variable fit ``y ~ x1 + x2 + C(firm) + C(year)`` to
RTOL_EXACT (the same least-squares problem, both backward stable).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import OptionError
from tests.conftest import RTOL_EXACT


@pytest.fixture(scope="module")
def report_panel() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 500
    firm, year = rng.integers(0, 2000, n) % 25, 2000 + rng.integers(0, 6, n)
    x1, x2 = rng.normal(size=(2, n))
    y = x1 - 0.5 * x2 + 0.1 * firm + 0.2 * (year - 2000) + rng.normal(size=n)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "firm": firm, "year": year})


def test_summary_names_the_fixed_effects_and_within_r_squared(report_panel: pd.DataFrame) -> None:
    fit = ar.attnreg("y ~ x1 + x2 | firm + year", report_panel)
    text = str(fit.summary())
    assert "Fixed effects: firm (25 levels), year (6)" in text
    assert f"Within R-squared:  {fit.within_r_squared:.4f}" in text
    assert "Residual standard error" in text and "Multiple R-squared" in text
    assert "demeaning reached" not in text  # converged: nothing to say
    table = fit.summary().table
    dummy = ar.attnreg("y ~ x1 + x2 + C(firm) + C(year)", report_panel)
    np.testing.assert_allclose(table.loc[["x1", "x2"], "Std. Error"],
                               dummy.std_err[["x1", "x2"]], rtol=RTOL_EXACT)


def test_tidy_and_glance_are_the_dummy_fit_rows(report_panel: pd.DataFrame) -> None:
    fit = ar.attnreg("y ~ x1 + x2 | firm + year", report_panel)
    dummy = ar.attnreg("y ~ x1 + x2 + C(firm) + C(year)", report_panel)
    tidy = fit.tidy(conf_int=True)
    ref = dummy.tidy(conf_int=True).set_index("term").loc[["x1", "x2"]]
    np.testing.assert_allclose(tidy.drop(columns="term").to_numpy(), ref.to_numpy(),
                               rtol=RTOL_EXACT)
    g, gd = fit.glance(), dummy.glance()
    for column in ("r.squared", "adj.r.squared", "sigma", "logLik", "AIC", "BIC", "deviance",
                   "df.residual", "nobs"):
        np.testing.assert_allclose(g[column], gd[column], rtol=RTOL_EXACT, err_msg=column)
    assert g.loc[0, "within.r.squared"] == fit.within_r_squared
    assert g.loc[0, "adj.within.r.squared"] == fit.adj_within_r_squared


def test_etable_shows_fixed_effect_rows_and_within_r_squared(report_panel: pd.DataFrame) -> None:
    fits = [ar.attnreg("y ~ x1 + x2 | firm", report_panel),
            ar.attnreg("y ~ x1 + x2 | firm + year", report_panel),
            ar.attnreg("y ~ x1 + x2", report_panel)]
    t = ar.etable(fits, se={"kind": "cluster", "cluster": "firm"})
    assert t.table.loc[("firm FE", "fixed_effects")].tolist() == ["Yes", "Yes", "No"]
    assert t.table.loc[("year FE", "fixed_effects")].tolist() == ["No", "Yes", "No"]
    within = t.table.loc[("Within R2", "statistic")].tolist()
    assert within == [f"{fits[0].within_r_squared:.3f}", f"{fits[1].within_r_squared:.3f}", ""]
    assert t.table.loc[("x1", "se"), "(2)"] == \
        f"({fits[1].with_vcov('cluster', cluster='firm').std_err['x1']:.3f})"
    assert "firm FE" in str(t) and "firm FE" in t.to_latex()
    plain = ar.etable(fits[2:])
    assert ("Within R2", "statistic") not in plain.table.index


def test_augment_is_the_dummy_fit_frame(report_panel: pd.DataFrame) -> None:
    fit = ar.attnreg("y ~ x1 + x2 | firm + year", report_panel)
    dummy = ar.attnreg("y ~ x1 + x2 + C(firm) + C(year)", report_panel)
    got, ref = fit.augment(), dummy.augment()
    columns = ["y", "x1", "x2", ".fitted", ".resid", ".hat", ".sigma", ".cooksd", ".std.resid"]
    np.testing.assert_allclose(got[columns].to_numpy(), ref[columns].to_numpy(),
                               rtol=RTOL_EXACT, atol=RTOL_EXACT)
    new = report_panel.head(4)
    np.testing.assert_allclose(fit.augment(newdata=new)[".fitted"], dummy.predict(new),
                               rtol=RTOL_EXACT)
    with pytest.raises(OptionError, match=r"augment\(interval=, se_fit=\) is not available"):
        fit.augment(interval="confidence")
