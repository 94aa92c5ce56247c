"""Wald and t tests of linear restrictions: parity with ``car::linearHypothesis``, the
restriction parser, errors, scale invariance, ridge/PCR, printing and pickling.

R's values are in ``tests/reference/hypotheses.json`` (``LC_ALL=C Rscript
tests/reference/make_hypotheses.R``); the JSON embeds the data, so R is not needed here.
"""

from __future__ import annotations

import dataclasses
import json
import pickle
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attnreg as ar
from attnreg.exceptions import InferenceWarning, OptionError
from attnreg.inference.hypothesis_results import TTest, WaldTest
from attnreg.inference.restrictions import format_restriction, parse_restrictions
from tests.conftest import RTOL_EXACT, RTOL_R

REF: dict[str, Any] = json.loads(
    (Path(__file__).parents[1] / "reference" / "hypotheses.json").read_text(encoding="utf-8"))
DATA = pd.DataFrame(REF["data"])


@cache
def fit_of(model: str) -> Any:
    spec = REF["models"][model]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the aliased model warns
        return ar.attnreg(spec["formula"], data=DATA, weights="w" if spec["weights"] else None)


def _vcov(fit: Any, kind: str) -> Any:
    return fit if kind == "classical" else fit.with_vcov(kind)


def _rel(got: Any, want: Any) -> float:
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    return float(np.max(np.abs(got - want) / np.abs(want)))


def _case_id(c: dict[str, Any]) -> str:
    return f"{c['model']}-{c['vcov']}-{c['test']}-{c['python']}"


# ------------------------------------------------------------------ parity with car

@pytest.mark.parametrize("case", REF["hypotheses"], ids=_case_id)
def test_wald_test_matches_car(case: dict[str, Any]) -> None:
    fit = _vcov(fit_of(case["model"]), case["vcov"])
    wt = fit.wald_test(case["python"], test=case["test"])
    assert _rel(wt.statistic, case["statistic"]) < RTOL_R
    assert _rel(wt.p_value, case["p_value"]) < RTOL_R
    assert wt.df[0] == case["df"]
    assert wt.df[1] == (case["res_df"] if case["test"] == "F" else np.inf)
    assert _rel(wt.table["Estimate"], case["value"]) < RTOL_R
    assert _rel(wt.table["Std. Error"] ** 2, np.diag(case["value_vcov"])) < RTOL_R
    # the same test from R's hypothesis matrix, and as a term block where there is one
    R, r = np.array(case["hypothesis_matrix"], dtype=float), np.array(case["rhs"], dtype=float)
    assert _rel(fit.wald_test(R, r, test=case["test"]).statistic, case["statistic"]) < RTOL_R
    if case["term"]:
        block = fit.wald_test(term=case["term"], test=case["test"])
        assert _rel(block.statistic, case["statistic"]) < RTOL_R


@pytest.mark.parametrize("case", REF["cluster"], ids=lambda c: f"{c['model']}-{c['test']}")
def test_cluster_robust_wald_matches_car(case: dict[str, Any]) -> None:
    """vcovCL's default (HC1) covariance; F on G − 1 denominator df (``df_inference``)."""
    fit = fit_of(case["model"]).with_vcov("cluster", cluster=DATA["cl"].to_numpy())
    wt = fit.wald_test(case["python"], test=case["test"])
    assert _rel(wt.statistic, case["statistic"]) < RTOL_R
    assert _rel(wt.p_value, case["p_value"]) < RTOL_R
    assert wt.df == (case["df"], case["clusters"] - 1 if case["test"] == "F" else np.inf)
    assert _rel(wt.table["Std. Error"] ** 2, np.diag(case["value_vcov"])) < RTOL_R


@pytest.mark.parametrize("case", REF["t_tests"], ids=lambda c: f"{c['vcov']}-{c['python']}")
def test_t_test_matches_r(case: dict[str, Any]) -> None:
    fit = _vcov(fit_of("main"), case["vcov"])
    tt = fit.t_test(case["python"], level=case["level"])
    row = tt.table.iloc[0]
    assert tt.df == case["df"]
    for column, key in [("Estimate", "estimate"), ("Std. Error", "std_error"),
                        ("t value", "t"), ("Pr(>|t|)", "p_value"), ("5 %", "lower"),
                        ("95 %", "upper")]:
        assert _rel(row[column], case[key]) < RTOL_R, column


def test_t_squared_is_the_one_restriction_f() -> None:
    fit = fit_of("inter").with_vcov("HC3")
    tt = fit.t_test("x1 + 2*x2 = 1, x1:x2 = 0")
    for label, row in tt.table.iterrows():
        f = fit.wald_test(str(label)).statistic
        assert abs(row["t value"] ** 2 / f - 1) < RTOL_EXACT


def test_chisq_is_q_times_f() -> None:
    fit = fit_of("main").with_vcov("HAC", maxlags=3)
    f = fit.wald_test("x1 = x2, x3 = 0")
    c = fit.wald_test("x1 = x2, x3 = 0", test="Chisq")
    assert abs(c.statistic / (2 * f.statistic) - 1) < RTOL_EXACT
    assert c.df == (2.0, np.inf)
    assert list(c.table.columns) == ["Estimate", "Std. Error", "z value", "Pr(>|z|)"]


def test_wald_equals_quadratic_form_of_vcov() -> None:
    """Under any covariance: W = (Rb − r)' (R V R')⁻¹ (Rb − r) with V = fit.vcov."""
    for fit in (fit_of("weighted").with_vcov("HAC", maxlags=2),
                ar.attnreg("y ~ C(g) + x1 + x2 + x3", data=DATA, method="ridge", lam=0.5)):
        R, r = parse_restrictions(fit.names, "x1 - x2 = 0.2, C(g)[T.c] + x3 = 0")
        d = R @ fit.coef.to_numpy() - r
        W = d @ np.linalg.solve(R @ fit.vcov.to_numpy() @ R.T, d)
        wt = fit.wald_test("x1 - x2 = 0.2, C(g)[T.c] + x3 = 0", test="Chisq")
        assert abs(wt.statistic / W - 1) < RTOL_EXACT
        assert wt.df == (2.0, np.inf)


def test_matrix_forms_agree() -> None:
    fit = fit_of("main")
    text = fit.wald_test("x1 = x2, x3 = 0")
    frame = pd.DataFrame({"x1": [1.0, 0.0], "x2": [-1.0, 0.0], "x3": [0.0, 1.0]})
    by_frame = fit.wald_test(frame)
    by_list = fit.wald_test(["x1 = x2", "x3 = 0"])
    R = np.zeros((2, 6))
    R[0, 3], R[0, 4], R[1, 5] = 1.0, -1.0, 1.0
    by_array = fit.wald_test(R, [0.0, 0.0])
    for other in (by_frame, by_list, by_array):
        assert other.statistic == pytest.approx(text.statistic, rel=RTOL_EXACT)
    assert list(by_frame.hypothesis_matrix.columns) == fit.names
    assert by_array.table.index.tolist() == ["x1 - x2 = 0", "x3 = 0"]
    one = fit.wald_test(np.eye(6)[5], 0.1)  # a 1-d row is one restriction
    assert one.df[0] == 1 and one.table.index.tolist() == ["x3 = 0.1"]


def test_term_blocks() -> None:
    fit = fit_of("factor_slope")
    block = fit.wald_test(term=["C(g)", "C(g):x1"])
    text = fit.wald_test("C(g)[T.b], C(g)[T.c], C(g)[T.b]:x1, C(g)[T.c]:x1")
    assert block.statistic == pytest.approx(text.statistic, rel=RTOL_EXACT)
    assert block.df[0] == 4
    assert fit.wald_test(term="C( g ):x1").df[0] == 2  # whitespace in the term is ignored
    aliased = fit_of("aliased")  # x4 = x1 + x2 is aliased
    for term in ("x4", ["x3", "x4"]):
        with pytest.raises(OptionError, match="term 'x4' has no estimable coefficient"):
            aliased.wald_test(term=term)
    assert aliased.wald_test(term=["x1", "x3"]).df[0] == 2
    with pytest.raises(OptionError, match="close matches: C\\(g\\):x1"):
        fit.wald_test(term="C(g):x2")


# ------------------------------------------------------------------ errors

def test_errors_name_the_offending_input() -> None:
    fit = fit_of("main")
    cases = [
        (lambda: fit.wald_test("x1 = x5"), "unknown coefficient 'x5'; close matches: x3, x2, x1"),
        (lambda: fit.wald_test("x1 * x2 = 0"), "not linear in the coefficients"),
        (lambda: fit.wald_test("x1 = x2, 2*x1 = 2*x2"), "linearly dependent.*'2\\*x1 - 2\\*x2 = 0'"),
        (lambda: fit.wald_test("x1 = 0", test="Wald"), "test must be one of"),
        (lambda: fit.wald_test("x1 = 0", rhs=1.0), "rhs= applies to a matrix"),
        (lambda: fit.wald_test(np.ones((1, 4))), "shape \\(q, 6\\)"),
        (lambda: fit.wald_test(np.zeros((1, 6))), "row\\(s\\) \\[0\\] of zeros"),
        (lambda: fit.wald_test(np.eye(6)[:2], [1.0, 2.0, 3.0]), "rhs must be a number or 2"),
        (lambda: fit.wald_test(pd.DataFrame({"x9": [1.0]})), "column\\(s\\) \\['x9'\\]"),
        (lambda: fit.wald_test(), "a hypothesis is needed"),
        (lambda: fit.wald_test("x1 = 0", term="x1"), "not both"),
        (lambda: fit.wald_test(term="nope"), "term 'nope' is not a term"),
        (lambda: fit.t_test("x1", level=1.5), "level"),
        (lambda: fit_of("aliased").wald_test("x4 = 0"), "aliased coefficient\\(s\\) x4"),
        (lambda: fit_of("aliased").t_test("x1 + x4 = 1"), "aliased coefficient\\(s\\) x4"),
    ]
    for call, message in cases:
        with pytest.raises(OptionError, match=message):
            call()


def test_more_restrictions_than_coefficients() -> None:
    fit = ar.attnreg("y ~ x1", data=DATA)
    with pytest.raises(OptionError, match="linearly dependent"):
        fit.wald_test(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))


def test_pcr_untestable_directions_and_ridge_note() -> None:
    pcr = ar.attnreg("y ~ x1 + x2 + x3", data=DATA, method="pcr", k=1)
    with pytest.raises(OptionError, match="not testable under PCR with k = 1"):
        pcr.wald_test("x1 = 0, x2 = 0")
    one = pcr.wald_test("x1 = 0")
    assert np.isfinite(one.statistic) and "k = 1 components" in str(one)
    ridge = ar.attnreg("y ~ x1 + x2 + x3", data=DATA, method="ridge", lam=1.0)
    wt = ridge.wald_test("x1 = x2")
    assert wt.df[1] == pytest.approx(ridge.df_resid) and "Conditional on lambda" in str(wt)
    assert not float(ridge.df_resid).is_integer()


def test_singular_robust_covariance_warns() -> None:
    """HC0 with fewer nonzero residuals than coefficients: the covariance is singular."""
    df = pd.DataFrame({"y": [1.0, 2.5, 2.9, 4.0, 6.0], "x1": [0.0, 1.0, 2.0, 3.0, 5.0],
                       "g": ["a", "a", "a", "b", "c"]})  # rows of b and c are fitted exactly
    fit = ar.attnreg("y ~ C(g) + x1", data=df).with_vcov("HC0")
    assert np.isfinite(fit.wald_test("x1 = 0").statistic)
    with pytest.warns(InferenceWarning, match="singular"):
        wt = fit.wald_test(np.eye(4))
    assert np.isnan(wt.statistic) and np.isnan(wt.p_value)


# ------------------------------------------------------------------ scale

def test_extreme_column_scales_do_not_change_the_test() -> None:
    """x1 × 2^600 and x3 × 2^-600: covariance entries leave float64, the test does not."""
    base = fit_of("main").with_vcov("HC1")
    df = DATA.assign(x1=DATA.x1 * 2.0**600, x3=DATA.x3 * 2.0**-600)
    fit = ar.attnreg("y ~ C(g) + x1 + x2 + x3", data=df).with_vcov("HC1")
    hyp_base = "x1 - x2 = 0.3, x3 = 0.1, x1 + x3 = 0"
    hyp = "2^600 x1 - x2 = 0.3, 2^-600 x3 = 0.1, 2^600 x1 + 2^-600 x3 = 0"
    hyp = hyp.replace("2^600", repr(2.0**600)).replace("2^-600", repr(2.0**-600))
    a, b = base.wald_test(hyp_base), fit.wald_test(hyp)
    assert b.statistic == pytest.approx(a.statistic, rel=1e-9)
    assert b.table["Std. Error"].to_numpy() == pytest.approx(a.table["Std. Error"], rel=1e-9)
    # restrictions in the scaled coefficients' own units: Cov(R b) itself leaves float64
    for power in (600, -600):
        scaled = ar.attnreg("y ~ C(g) + x1 + x2 + x3",
                            data=DATA.assign(x1=DATA.x1 * 2.0**power)).with_vcov("HC1")
        assert scaled.wald_test("x1 = 0, x3 = 0").statistic == pytest.approx(
            base.wald_test("x1 = 0, x3 = 0").statistic, rel=1e-9)
    t = fit.t_test(hyp.split(",")[1])
    assert t.table.iloc[0]["t value"] == pytest.approx(
        base.t_test("x3 = 0.1").table.iloc[0]["t value"], rel=1e-9)


# ------------------------------------------------------------------ results

def test_results_print_pickle_and_are_frozen() -> None:
    fit = fit_of("main").with_vcov("HC3")
    wt = fit.wald_test("x1 = x2, x3 = 0")
    text = str(wt)
    assert "Covariance: heteroskedasticity-robust HC3" in text
    assert "x1 - x2 = 0" in text and "x3 = 0" in text
    assert "F-statistic: 5.463 on 2 and 54 DF,  p-value: 0.006906" in text
    assert "Chi-squared:" in str(fit.wald_test("x1 = x2", test="Chisq"))
    frame = wt.to_frame()
    assert frame.columns.tolist() == ["statistic", "df1", "df2", "p.value", "test"]
    assert frame.loc[0, "df2"] == 54
    tt = fit.t_test("x1 - x2 = 0", level=0.9)
    assert "90 % confidence intervals:" in str(tt)
    assert tt.to_frame().columns.tolist()[-2:] == ["5 %", "95 %"]
    assert "<table>" in wt._repr_html_() and "<table>" in tt._repr_html_()
    for obj in (wt, tt):
        back = pickle.loads(pickle.dumps(obj))
        assert str(back) == str(obj)
        pd.testing.assert_frame_equal(back.to_frame(), obj.to_frame())
    assert isinstance(wt, WaldTest) and isinstance(tt, TTest)
    with pytest.raises(dataclasses.FrozenInstanceError):
        wt.statistic = 0.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        tt.level = 0.5  # type: ignore[misc]


# ------------------------------------------------------------------ the parser

NAMES = ["(Intercept)", "C(g)[T.b]", "C(g)[T.c]", "x1", "x10", "x1:x2", "np.log(x2)",
         "I(x1 ** 2)", "I(x1 - x2)", "bs(x, df=3)[0]", "C(h, Sum)[S.a b]", "x2"]


def test_parser_names_with_operators_commas_and_spaces() -> None:
    R, r = parse_restrictions(NAMES, "I(x1**2) + I(x1 - x2) = x10, bs(x, df=3)[0] = 1,"
                                     " C(h,Sum)[S.a b] = 2*x1:x2, Intercept - x1 = 0.5")
    rows = {format_restriction(NAMES, R[i], float(r[i])) for i in range(4)}
    assert rows == {"-x10 + I(x1 ** 2) + I(x1 - x2) = 0", "bs(x, df=3)[0] = 1",
                    "-2*x1:x2 + C(h, Sum)[S.a b] = 0", "(Intercept) - x1 = 0.5"}
    R, r = parse_restrictions(NAMES, "x10 = 2 x1, 3 = x1 * 2 + x2 / 4, -x1 - -x2")
    assert R[0].tolist() == [0, 0, 0, -2, 1, 0, 0, 0, 0, 0, 0, 0]
    assert R[1, [3, 11]].tolist() == [-2.0, -0.25] and r[1] == -3.0
    assert R[2, [3, 11]].tolist() == [-1.0, 1.0] and r[2] == 0.0


@pytest.mark.parametrize(("text", "message"), [
    ("x3 = 0", "unknown coefficient 'x3'; close matches: x2, x1"),
    ("C(g)[T.d] = 0",
     "unknown coefficient 'C\\(g\\)\\[T.d\\]'; close matches: C\\(g\\)\\[T.c\\], C\\(g\\)\\[T.b\\]"),
    ("x1 x2", "two coefficients follow each other"),
    ("x1*x2", "not linear"),
    ("x1 = x2 = 0", "more than one '='"),
    ("x1 =", "right side of a restriction is empty"),
    ("x1, , x2", "empty restriction"),
    ("x1 - x1", "restricts no coefficient"),
    ("x1 +", "ends with an operator"),
    ("x1 / 0", "division by zero"),
    ("x1 = 0 2", "unexpected '2'"),
])
def test_parser_errors(text: str, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        parse_restrictions(NAMES, text)


def test_parser_does_not_split_a_longer_word() -> None:
    with pytest.raises(OptionError, match="unknown coefficient 'x1e'"):
        parse_restrictions(["x1", "e"], "x1e = 0")
    with pytest.raises(OptionError, match="unknown coefficient 'x12'"):
        parse_restrictions(["x1"], "x12 = 0")


def test_parser_rejects_non_text() -> None:
    with pytest.raises(OptionError, match="string of restrictions or a list"):
        parse_restrictions(NAMES, [1, 2])  # type: ignore[list-item]


_NAME = st.sampled_from(NAMES)
_COEF = st.integers(-9, 9).filter(bool).map(float) | st.sampled_from([0.5, -0.25, 1.5e-3, 2e5])


@st.composite
def _combination(draw: Any) -> tuple[dict[int, float], float, str]:
    """A random restriction, written with random spacing and coefficient styles."""
    picked = draw(st.lists(st.integers(0, len(NAMES) - 1), min_size=1, max_size=4, unique=True))
    coefs = {j: draw(_COEF) for j in picked}
    const = draw(st.sampled_from([0.0, 1.0, -2.5, 1e-4]))
    parts = []
    for j, c in coefs.items():
        style = draw(st.sampled_from(["{c}*{n}", "{c} {n}", "{n}*{c}", "{c} * {n}"]))
        sign = "-" if c < 0 else "+"
        mag = repr(abs(c))
        term = (NAMES[j] if abs(c) == 1.0 and draw(st.booleans())
                else style.format(c=mag, n=NAMES[j]))
        parts.append(f"{sign} {term}")
    text = " ".join(parts)
    if draw(st.booleans()):  # the constant on the left instead, or omitted when zero
        text = f"{text} + {-const!r} = 0"
    elif const != 0.0 or draw(st.booleans()):
        text = f"{text} = {const!r}"
    return coefs, const, text


@settings(max_examples=150, deadline=None)
@given(st.lists(_combination(), min_size=1, max_size=4))
def test_parser_reproduces_random_combinations(combos: list[Any]) -> None:
    R, r = parse_restrictions(NAMES, ", ".join(text for _, _, text in combos))
    assert R.shape == (len(combos), len(NAMES))
    for i, (coefs, const, _) in enumerate(combos):
        want = np.zeros(len(NAMES))
        for j, c in coefs.items():
            want[j] = c
        assert R[i].tolist() == want.tolist()
        assert r[i] == const
        # the canonical text reads back to the same row
        R2, r2 = parse_restrictions(NAMES, format_restriction(NAMES, R[i], float(r[i])))
        assert R2[0].tolist() == R[i].tolist() and r2[0] == r[i]
