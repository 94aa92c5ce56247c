"""Type II and III anova tables under robust covariances against ``car::Anova(vcov.=)``.

R's numbers and printouts are in ``tests/reference/cluster_r3.json`` (``LC_ALL=C Rscript
tests/reference/make_cluster_r3.R``): HC0–HC3 (``white.adjust=``), ``sandwich::vcovCL``
with car's residual error df and with G − 1, and clubSandwich's CR2, on factor models with
interactions, balanced and unbalanced clusters, with and without weights.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import OptionError, RankDeficiencyWarning
from attnreg.inference.anova_wald import wald_anova
from tests.conftest import RTOL_EXACT, RTOL_R

REF = json.loads((Path(__file__).parents[1] / "reference" / "cluster_r3.json").read_text())


def fit_of(case: str) -> Any:
    c = REF["cases"][case]
    data = pd.DataFrame(REF["designs"][c["design"]])
    return ar.attnreg(c["py_formula"], data, weights=c["weights"])


def _options(entry: dict[str, Any]) -> dict[str, Any]:
    return dict(entry["options"] or {})  # R's empty list() is written as []


def _robust(fit: Any, entry: dict[str, Any]) -> Any:
    if entry["vcov"] == "cluster":
        return fit.with_vcov("cluster", **_options(entry))
    return fit.with_vcov(entry["vcov"])


ANOVA = [(case, entry) for case, c in REF["cases"].items() for entry in c["anova"]]
IDS = [f"{case}-type{e['type']}-{e['vcov']}-{'-'.join(map(str, _options(e).values()))}"
       for case, e in ANOVA]


@pytest.mark.parametrize(("case", "entry"), ANOVA, ids=IDS)
def test_numbers_match_car_anova(case: str, entry: dict[str, Any]) -> None:
    tab = _robust(fit_of(case), entry).anova(type=entry["type"])
    want = entry["table"]
    assert tab.table.index.tolist() == want["rownames"]
    assert tab.table.columns.tolist() == want["columns"] == ["Df", "F", "Pr(>F)"]
    got = tab.table.to_numpy(dtype=float)
    exp = pd.DataFrame(want["values"]).to_numpy(dtype=float)
    assert np.array_equal(np.isnan(got), np.isnan(exp))
    ok = ~np.isnan(exp)
    assert np.max(np.abs(got[ok] - exp[ok]) / np.abs(exp[ok])) < RTOL_R


@pytest.mark.parametrize(("case", "entry"), ANOVA[::5], ids=IDS[::5])
def test_printed_like_car(case: str, entry: dict[str, Any]) -> None:
    """car's text, with one more heading line naming the covariance."""
    fit = _robust(fit_of(case), entry)
    lines = str(fit.anova(type=entry["type"])).splitlines()
    assert lines[3] == f"Wald F tests; covariance: {fit.vcov_spec.label()}"
    assert "\n".join(lines[:3] + lines[4:]) == entry["table"]["printed"]


def test_the_issue_example_is_no_longer_the_classical_table() -> None:
    """HC0 type III: car's F, not the classical one (sums of squares are not compared)."""
    fit = fit_of("bal_fx")
    classical = fit.anova(type=3).table
    hc0 = fit.with_vcov("HC0").anova(type=3).table
    assert "Sum Sq" in classical.columns and "Sum Sq" not in hc0.columns
    assert not np.allclose(hc0["F"].iloc[:-1], classical["F value"].iloc[:-1])


def test_rows_are_wald_tests_of_the_terms() -> None:
    """Type III rows (and type II rows of terms without relatives) are wald_test(term=)."""
    fit = fit_of("unbal_fx").with_vcov("cluster", cluster="cl", type="CR2")
    t3 = fit.anova(type=3).table
    t2 = fit.anova(type=2).table
    for term in ("C(f)", "x2", "C(f):x1"):
        w = fit.wald_test(term=term)
        assert t3.loc[term, "F"] == w.statistic and t3.loc[term, "Pr(>F)"] == w.p_value
    for term in ("x2", "C(f):x1"):  # no term contains these
        assert t2.loc[term, "F"] == fit.wald_test(term=term).statistic
    assert t3.loc["Residuals", "Df"] == fit.df_inference == 9


def test_wald_type2_equals_the_sums_of_squares_under_the_classical_covariance() -> None:
    """The V-conjugate complement reproduces type II sums of squares when V = s^2 (X'X)^-1."""
    for case in ("bal_fx", "bal_fh", "unbal_fx_w"):
        fit = fit_of(case)
        terms = [(n, list(range(*s.indices(len(fit.names)))))
                 for n, s in fit.design.design_info.term_name_slices.items()]
        for type_ in (2, 3):
            ss = fit.anova(type=type_).table
            wald = wald_anova(fit, type_, terms)[0]
            np.testing.assert_allclose(wald["F"].iloc[:-1], ss["F value"].iloc[:-1],
                                       rtol=RTOL_EXACT)
            np.testing.assert_allclose(wald["Pr(>F)"].iloc[:-1], ss["Pr(>F)"].iloc[:-1],
                                       rtol=1e-8)  # p-values of F near 1e-9 lose digits


def test_sequential_and_nested_tables_are_refused_under_a_robust_covariance() -> None:
    fit = fit_of("bal_fx")
    small = ar.attnreg("y ~ x1", pd.DataFrame(REF["designs"]["balanced"]))
    for robust in (fit.with_vcov("HC3"), fit.with_vcov("cluster", cluster="cl")):
        with pytest.raises(OptionError, match=r"the sequential table \(type=1\) compares "
                                              r"residual sums of squares.*use type=2 or 3"):
            robust.anova()
        with pytest.raises(OptionError, match=r"a comparison of nested fits .* covariance of "
                                              r"fit 2 does not give"):
            ar.anova(small, robust)
    # the classical tables are unchanged
    pd.testing.assert_frame_equal(fit.with_vcov("classical").anova().table, fit.anova().table)
    # and aliased fits are refused under a robust covariance too (as car)
    data = pd.DataFrame(REF["designs"]["balanced"]).assign(x3=lambda d: d.x1 + d.x2)
    with pytest.warns(RankDeficiencyWarning):
        aliased = ar.attnreg("y ~ x1 + x2 + x3", data).with_vcov("HC1")
    with pytest.raises(OptionError, match="x3 are aliased"):
        aliased.anova(type=2)
