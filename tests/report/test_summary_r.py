"""The printed summary of an OLS fit is R's ``print(summary(lm(...)))``, character for character.

Each case in tests/reference/summaries/ holds the data (CSV) and the text R 4.2 printed
(see make_summaries.R and the README there). The ``Call:`` block is the one part that
differs by design: R shows ``lm(...)``, attnreg its own call. Everything from the
residuals block to the end of R's text (the blank line after the F statistic) must match
exactly, spaces, tabs and trailing blanks included; attnreg's text then goes on with its
attention block.
"""

from __future__ import annotations

import json
import math
import warnings
import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.report import rformat, rprint
from attnreg.exceptions import RankDeficiencyWarning
from attnreg.linear.results import LinearResults

from tests.conftest import REPO

SUMMARIES = REPO / "tests" / "reference" / "summaries"
CASES: dict = json.loads((SUMMARIES / "cases.json").read_text())["cases"]


def _data(name: str) -> pd.DataFrame:
    frame = pd.read_csv(SUMMARIES / f"{name}.csv", dtype={"row": str},
                        keep_default_na=False, na_values=[""])
    return frame.set_index("row")


def _fit(name: str) -> LinearResults:
    case = CASES[name]
    with warnings.catch_warnings():  # the aliased case warns; R says so in the summary
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        return ar.attnreg(case["formula"], _data(name), weights=case["weights"])


def _after_call(text: str) -> str:
    """The text from the residuals block on (the Call block dropped)."""
    start = text.index("Residuals:\n")
    if text[:start].endswith("Weighted "):
        start -= len("Weighted ")
    return text[start:]


def test_every_case_is_recorded() -> None:
    assert len(CASES) >= 17
    for name in CASES:
        assert (SUMMARIES / f"{name}.txt").is_file() and (SUMMARIES / f"{name}.csv").is_file()


@pytest.mark.parametrize("name", sorted(CASES))
def test_summary_is_r_character_for_character(name: str) -> None:
    fit = _fit(name)
    ours = str(fit.summary())
    theirs = (SUMMARIES / f"{name}.txt").read_text()
    assert ours.startswith(f"\nCall:\n{fit.call}\n\n")
    assert theirs.startswith("\nCall:\n")
    r_body, our_body = _after_call(theirs), _after_call(ours)
    r_lines = r_body.splitlines()
    assert our_body.splitlines()[:len(r_lines)] == r_lines
    assert our_body.startswith(r_body)  # the same line ends, and the blank line after F


def test_cases_cover_the_formatting_rules() -> None:
    """The golden files exercise each rule the renderer implements (so none goes untested)."""
    texts = {name: (SUMMARIES / f"{name}.txt").read_text() for name in CASES}
    everything = "\n".join(texts.values())
    assert "Weighted Residuals:" in texts["mtcars_wls"]
    assert "Weighted" not in texts["mtcars_equal_weights"]  # equal weights: plain residuals
    assert "(1 not defined because of singularities)" in texts["aliased"]
    assert "deleted due to missingness" in texts["airquality"]
    assert "Signif. codes" not in texts["noise"]  # no p-value below 0.1: no stars
    assert "Mazda RX4 Wag" in texts["mtcars_head"]  # 5 residual df: residuals by name
    assert "<2e-16" in everything and "< 2e-16" in everything and "< 2.2e-16" in everything
    assert "e-06" in texts["near_exact"]  # scientific quantiles
    assert texts["long_name"].count("Pr(>|t|)") == 1  # the table wraps at 80 columns
    assert "F-statistic:  13.5 on" in texts["mtcars_head"]  # formatC pads to 5


def test_residual_quantiles_zapsmall_rounds_digits_to_nearest() -> None:
    # R's zapsmall(q, 5) rounds to 5 - log10(max|q|) decimals, rounded to an integer:
    # 3.815 here, so 4 decimals (ceiling would give 3 and print 0.503)
    q = np.array([-15.27431, -5.26172, 0.50318, 4.11984, 15.32131])
    assert rprint.print_named_vector(rprint._zapsmall(q, 5), list("abcde"), 4)[1] == (
        "-15.2743  -5.2617   0.5032   4.1198  15.3213 ")


def test_t_values_are_formatted_as_one_column() -> None:
    table = pd.DataFrame({"Estimate": [1.0, 2.0, 3.0, 4.0], "Std. Error": [0.1] * 4,
                          "t value": [57.5441, 17.7512, 11.8692, 4.7301],
                          "Pr(>|t|)": [1e-20, 1e-10, 1e-8, 1e-4]},
                         index=["a", "b", "c", "d"])
    lines, _ = rprint.print_coefmat(table)
    assert [line.split()[3] for line in lines[1:]] == ["57.54", "17.75", "11.87", "4.73"]


def test_f_statistic_is_padded_as_format_c() -> None:
    assert rformat.format_c(255.0) == "  255"
    assert rformat.format_c(0.107) == "0.107"
    assert rformat.format_c(1.0) == "    1"
    assert rformat.format_c(float("nan")) == "  NaN"


@pytest.mark.parametrize(("x", "digits", "expected"), [
    (0.15, 1, 0.1), (0.25, 1, 0.2), (2.675, 2, 2.67), (-0.5032, 3.815, -0.5032),
    (1234.5678, -2, 1200.0), (0.0, 3, 0.0), (2.5, 0, 2.0), (123.456, 2.5, 123.456),
])
def test_r_round_matches_r(x: float, digits: float, expected: float) -> None:
    # R 4.2: round(0.15, 1) is 0.1 (0.15 is below 0.15 in binary), round(2.5) is 2
    assert rformat.r_round(x, digits) == expected


@pytest.mark.parametrize(("values", "digits", "expected"), [
    ([9996.0], 3, ["9996"]), ([123456789.0], 7, ["123456789"]), ([1e-20], 4, ["1e-20"]),
    ([0.0465, 0.5], 3, ["0.0465", "0.5000"]), ([1e5, 1.5e-5], 4, ["1.0e+05", "1.5e-05"]),
    ([-0.0, 1.25], 4, ["0.00", "1.25"]), ([float("nan"), 2.0], 4, ["NA", " 2"]),
    ([1e100, 1.0], 2, ["1e+100", " 1e+00"]),
])
def test_r_format_matches_r(values: list[float], digits: int, expected: list[str]) -> None:
    # values printed by R 4.2's format(x, digits = digits)
    assert rformat.r_format(values, digits) == expected


def test_attention_block_prints_numpy_row_labels_plainly() -> None:
    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"x": rng.normal(size=40)}, index=np.arange(10, 50))
    frame["y"] = frame["x"] + rng.normal(size=40)
    frame.loc[48, "x"] = 9.0  # the row of largest leverage
    line = next(s for s in str(ar.attnreg("y ~ x", frame).summary()).splitlines()
            if "leverage" in s)
    assert line.endswith("(row 48)")
    named = str(_fit("mtcars").summary())
    assert "(row 'Maserati Bora')" in named


def test_golden_numbers_are_the_fit() -> None:
    """Independent check of the text's source: the numbers R printed are attnreg's numbers."""
    fit = _fit("swiss")
    text = (SUMMARIES / "swiss.txt").read_text()
    row = next(s for s in text.splitlines() if s.startswith("Education")).split()
    assert float(row[1]) == pytest.approx(fit.coef["Education"], rel=5e-4)
    assert float(row[3]) == pytest.approx(fit.t_value["Education"], abs=5e-3)
    assert math.isclose(float(row[4]), fit.p_value["Education"], rel_tol=5e-3)


# ---------------------------------------------------------------- the routines, against R

FORMAT: dict = json.loads((SUMMARIES / "format.json").read_text())


def _num(values: list) -> np.ndarray:
    return np.array([np.nan if v is None else float(v) for v in values])


def test_round_and_signif_are_r_bit_for_bit() -> None:
    r, s = FORMAT["round"], FORMAT["signif"]
    ours = [rformat.r_round(x, d) for x, d in zip(_num(r["x"]), _num(r["digits"]), strict=True)]
    assert ours == _num(r["value"]).tolist()
    ours = [rformat.r_signif(x, int(d)) for x, d in zip(_num(s["x"]), s["digits"], strict=True)]
    assert ours == _num(s["value"]).tolist()


def test_format_is_r_format() -> None:
    for case in FORMAT["format"]:
        assert rformat.r_format(_num(case["x"]), case["digits"][0]) == case["text"], case


def test_format_c_and_format_pval_are_r() -> None:
    fc = FORMAT["formatC"]
    assert [rformat.format_c(x) for x in _num(fc["x"])] == fc["text"]
    for case in FORMAT["format_pval"]:
        p = _num(case["p"])
        assert rformat.format_pval(p, 3) == case["text3"]
        assert rformat.format_pval(p, 4) == case["text4"]


def test_print_coefmat_is_r_print_coefmat() -> None:
    for case in FORMAT["coefmat"]:
        rows = np.array([_num(r) for r in case["table"]])
        table = pd.DataFrame(rows, columns=["Estimate", "Std. Error", "t value", "Pr(>|t|)"],
                             index=[f"b{i + 1}" for i in range(len(rows))])
        lines, starred = rprint.print_coefmat(table)
        if starred:
            lines += ["---", rprint.SIGNIF_LEGEND]
        assert lines == case["text"]
