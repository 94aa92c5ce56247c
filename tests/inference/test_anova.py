"""Analysis of variance: R's ``anova(lm)``, ``anova(m1, m2, ...)`` and ``car::Anova`` type
II / III, number for number and character for character, and the checks on nested fits.

R's values and printed text are in ``tests/reference/hypotheses.json`` (``LC_ALL=C Rscript
tests/reference/make_hypotheses.R``); the JSON embeds the data.
"""

from __future__ import annotations

import dataclasses
import pickle
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import InferenceWarning, OptionError, ScaleWarning
from attnreg.inference.anova_table import AnovaTable
from tests.conftest import RTOL_EXACT, RTOL_R
from tests.inference.test_hypotheses import DATA, REF, fit_of


def _models(case: dict[str, Any]) -> list[str]:
    return [case["models"]] if isinstance(case["models"], str) else list(case["models"])


def _table_of(case: dict[str, Any]) -> AnovaTable:
    fits = [fit_of(m) for m in _models(case)]
    return ar.anova(*fits, test=case["test"], type=int(case["type"] or 1))


def _case_id(case: dict[str, Any]) -> str:
    return f"{case['kind']}-{'-'.join(_models(case))}-{case['test']}-{case['type']}"


@pytest.mark.parametrize("case", REF["anova"], ids=_case_id)
def test_numbers_match_r(case: dict[str, Any]) -> None:
    tab = _table_of(case)
    want = case["table"]
    assert tab.table.index.tolist() == want["rownames"]
    assert tab.table.columns.tolist() == want["columns"]
    got = tab.table.to_numpy(dtype=float)
    exp = pd.DataFrame(want["values"]).to_numpy(dtype=float)
    assert np.array_equal(np.isnan(got), np.isnan(exp))
    ok = ~np.isnan(exp)
    assert np.max(np.abs(got[ok] - exp[ok]) / np.abs(exp[ok])) < RTOL_R


@pytest.mark.parametrize("case", REF["anova"], ids=_case_id)
def test_printed_like_r(case: dict[str, Any]) -> None:
    assert str(_table_of(case)) == case["printed"] + "\n"


def test_method_and_front_door_agree() -> None:
    fit = fit_of("inter")
    for t in (1, 2, 3):
        a, b = fit.anova(type=t), ar.anova(fit, type=t)
        pd.testing.assert_frame_equal(a.table, b.table)
        assert a.kind == b.kind == {1: "sequential", 2: "type II", 3: "type III"}[t]


def test_sequential_sums_add_up_to_the_total() -> None:
    for name in ("main", "weighted", "aliased", "factor_slope", "no_intercept"):
        fit = fit_of(name)
        tab = fit.anova().table
        assert tab["Sum Sq"].sum() == pytest.approx(fit.tss, rel=RTOL_EXACT)
        assert tab["Df"].sum() == fit.nobs - (1 if fit.design.intercept else 0)


def test_sequential_follows_the_design_order() -> None:
    """patsy puts C(g) first whatever the formula's order: the table follows the columns."""
    a = ar.attnreg("y ~ x1 + C(g) + x2", data=DATA).anova()
    b = ar.attnreg("y ~ C(g) + x1 + x2", data=DATA).anova()
    assert a.table.index.tolist() == ["C(g)", "x1", "x2", "Residuals"]
    pd.testing.assert_frame_equal(a.table, b.table)


def test_scale_invariance_of_the_tests() -> None:
    """y × 2^600: the sums of squares leave float64 (inf, warned), F and p do not change."""
    base = fit_of("main").anova().table
    big = ar.attnreg("y ~ C(g) + x1 + x2 + x3", data=DATA.assign(y=DATA.y * 2.0**600))
    with pytest.warns(ScaleWarning):
        tab = big.anova().table
    assert np.isinf(tab["Sum Sq"]).all()
    np.testing.assert_allclose(tab["F value"], base["F value"], rtol=1e-12)
    np.testing.assert_allclose(tab["Pr(>F)"], base["Pr(>F)"], rtol=1e-10)
    small = ar.attnreg("y ~ C(g) + x1 + x2 + x3", data=DATA.assign(y=DATA.y * 2.0**-300))
    np.testing.assert_allclose(small.anova().table["Sum Sq"], base["Sum Sq"] * 2.0**-600,
                               rtol=1e-12)


def test_perfect_fit_warns() -> None:
    df = DATA.assign(y=1.0 + 2.0 * DATA.x1 - DATA.x2)
    with pytest.warns(InferenceWarning, match="essentially perfect fit"):
        ar.attnreg("y ~ x1 + x2", data=df).anova()


def test_table_is_frozen_pickles_and_renders() -> None:
    tab = fit_of("inter").anova()
    back = pickle.loads(pickle.dumps(tab))
    assert str(back) == str(tab)
    frame = tab.to_frame()
    frame.iloc[0, 0] = 99.0  # a copy
    assert tab.table.iloc[0, 0] == 2.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        tab.kind = "x"  # type: ignore[misc]
    html = tab._repr_html_()
    assert "<table>" in html and "Response: y" in html
    assert repr(tab) == str(tab)


# ------------------------------------------------------------------ refusals

def test_penalised_fits_are_refused() -> None:
    ridge = ar.attnreg("y ~ x1 + x2", data=DATA, method="ridge", lam=1.0)
    pcr = ar.attnreg("y ~ x1 + x2", data=DATA, method="pcr", k=1)
    with pytest.raises(OptionError, match="method 'ridge'"):
        ridge.anova()
    with pytest.raises(OptionError, match="fit 2 has method 'pcr'"):
        ar.anova(fit_of("small"), pcr)


def test_nested_checks() -> None:
    small, medium = fit_of("small"), fit_of("medium")
    other_rows = ar.attnreg("y ~ C(g) + x1", data=DATA.iloc[:-1])
    relabelled = ar.attnreg("y ~ C(g) + x1", data=DATA.set_axis(DATA.index + 100))
    other_y = ar.attnreg("x3 ~ C(g) + x1", data=DATA)
    other_values = ar.attnreg("y ~ C(g) + x1", data=DATA.assign(y=DATA.y + 1.0))
    weighted = ar.attnreg("y ~ C(g) + x1", data=DATA, weights="w")
    not_nested = ar.attnreg("y ~ x2 + x3", data=DATA)
    cases = [
        ((small, other_rows), "not fitted on the same rows: fit 1 has 60 rows, fit 2 has 59"),
        ((small, relabelled), "with other row labels"),
        ((small, other_y), "different responses: fit 1 models 'y', fit 2 models 'x3'"),
        ((small, other_values), "different response values"),
        ((small, weighted), "different prior weights"),
        ((medium, not_nested), "not nested: column\\(s\\) x2, x3 of fit 2 \\(y ~ x2 \\+ x3\\) "
                               "are not in the column space of fit 1"),
        ((small, medium, not_nested), "column\\(s\\) x2, x3 of fit 3"),
    ]
    for fits, message in cases:
        with pytest.raises(OptionError, match=message):
            ar.anova(*fits)
    # the same column space written differently is nested both ways
    same = ar.attnreg("y ~ I(2 * x1) + C(g)", data=DATA)
    tab = ar.anova(medium, same).table
    assert tab.loc["2", "Df"] == 0 and np.isnan(tab.loc["2", "F"])


def test_argument_errors() -> None:
    fit = fit_of("main")
    cases = [
        (lambda: ar.anova(), "at least one fit"),
        (lambda: ar.anova("y ~ x"), "fit 1 is a str"),
        (lambda: ar.anova(fit, test="LRT"), "test must be one of"),
        (lambda: ar.anova(fit, type=4), "type must be 1"),
        (lambda: ar.anova(fit, type=True), "type must be 1"),
        (lambda: ar.anova(fit, test="Chisq"), "test applies to comparisons"),
        (lambda: ar.anova(fit_of("small"), fit, type=2), "type applies to the table of one"),
        (lambda: fit_of("aliased").anova(type=2), "aliased; drop them"),
    ]
    for call, message in cases:
        with pytest.raises(OptionError, match=message):
            call()


def test_nested_chisq_and_f_share_the_scale() -> None:
    """R: the biggest model's residual variance scales every row, whatever the order."""
    fits = [fit_of("small"), fit_of("inter"), fit_of("medium")]
    f = ar.anova(*fits).table
    big = fit_of("inter")
    s2 = big.rss / big.df_resid
    row = f.loc["3"]
    assert row["F"] == pytest.approx(row["Sum of Sq"] / row["Df"] / s2, rel=RTOL_EXACT)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chi = ar.anova(*fits, test="Chisq").table
    assert chi.columns.tolist() == ["Res.Df", "RSS", "Df", "Sum of Sq", "Pr(>Chi)"]
