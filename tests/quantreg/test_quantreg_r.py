"""Quantile regression against R's quantreg (tests/reference/make_quantreg.R): coefficients of
``rq(method = "br")``, standard errors of ``summary.rq(se = "iid" | "nid" | "ker")``, prior
weights, and the text of ``print(summary(...))``."""

from __future__ import annotations

import json
import warnings
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import InferenceWarning
from tests.conftest import REPO, RTOL_R, RTOL_R_VCOV


@cache
def reference() -> dict[str, Any]:
    with open(REPO / "tests" / "reference" / "quantreg_r.json", encoding="utf-8") as fh:
        return dict(json.load(fh))


def _frame(design: str) -> pd.DataFrame:
    df = pd.DataFrame(reference()["designs"][design]["data"])
    df["w"] = np.resize([1.0, 2.0, 3.0], len(df))  # the script's weights
    return df


def _fit(case: dict[str, Any], **options: Any) -> Any:
    design = reference()["designs"][case["design"]]
    return ar.attnreg(design["formula"], _frame(case["design"]), method="quantreg",
                      tau=case["tau"], weights="w" if case["weighted"] else None, **options)


CASES = reference()["cases"]
IDS = [f"{c['design']}-tau{c['tau']}{'-weighted' if c['weighted'] else ''}" for c in CASES]


def test_header_names_the_versions() -> None:
    header = reference()["header"]
    assert header["r"].startswith("R version") and header["packages"]["quantreg"]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_coefficients_equal_rq_br(case: dict[str, Any]) -> None:
    fit = _fit(case)
    assert fit.fits[0].vertex
    assert_allclose(fit.coef.iloc[:, 0].to_numpy(), case["coef"], rtol=RTOL_R)
    assert list(fit.coef.index) == case["names"]
    assert_allclose(fit.fitted.iloc[:, 0].to_numpy(), case["fitted"], rtol=RTOL_R)


@pytest.mark.parametrize("se", ["iid", "nid", "ker"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_standard_errors_equal_summary_rq(case: dict[str, Any], se: str) -> None:
    ref = case["se"][se]
    if any("nonunique" in w for w in np.atleast_1d(ref["warnings"])):
        pytest.skip("R's auxiliary fit is not unique")
    fit = _fit(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InferenceWarning)  # "non-positive fis", tested below
        table = fit.coef_table(se=se)
    assert_allclose(table["Std. Error"].to_numpy(), ref["value"], rtol=RTOL_R_VCOV)


def test_non_positive_densities_warn_as_r() -> None:
    case = next(c for c in CASES if "1 non-positive fis" in np.atleast_1d(c["se"]["nid"]["warnings"]))
    with pytest.warns(InferenceWarning, match="1 non-positive fis"):
        _fit(case).coef_table(se="nid")


def _text(fit: Any) -> list[str]:
    lines = str(fit.summary()).splitlines()
    return [line for line in lines if not line.startswith("Call:")]


@pytest.mark.parametrize(("name", "tau"), [("one", 0.5), ("many", [0.25, 0.75])])
def test_summary_text_is_print_summary_rq(name: str, tau: Any) -> None:
    fit = ar.attnreg("foodexp ~ income", _frame("engel"), method="quantreg", tau=tau, se="nid")
    expected = [line for line in reference()["text"][name] if not line.startswith("Call:")]
    assert _text(fit) == expected
    assert str(fit.summary()).splitlines()[1].startswith("Call: attnreg(formula = foodexp ~ income")
