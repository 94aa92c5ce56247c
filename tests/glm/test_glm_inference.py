"""GLM inference against R (tests/reference/glm_inference_r.json, made by
make_glm_inference.R): analysis of deviance."""

from __future__ import annotations

import json
import pickle
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import InferenceWarning, OptionError
from tests.conftest import RTOL_R

FIXTURE = Path(__file__).resolve().parents[1] / "reference" / "glm_inference_r.json"
CASES = ("logit", "poisson_offset", "gamma_log")
TESTS = ("none", "Chisq", "LRT", "F")


@cache
def fixture() -> dict[str, Any]:
    return json.loads(FIXTURE.read_text())


def _fit(name: str, which: str) -> Any:
    case = fixture()["cases"][name]
    data = pd.DataFrame(fixture()["data"])
    return ar.attnreg(case[which], data, method="glm", family=case["family"],
                      link=case["link"], offset=case["offset"])


def _check(table: Any, ref: dict[str, Any]) -> None:
    assert list(table.table.index) == ref["rows"]
    assert list(table.table.columns) == ref["columns"]
    for col in ref["columns"]:
        want = np.array([np.nan if v is None else v for v in ref["values"][col]], dtype=float)
        np.testing.assert_allclose(table.table[col].to_numpy(dtype=float), want, rtol=RTOL_R,
                                   equal_nan=True, err_msg=col)


@pytest.mark.filterwarnings("ignore:using F test")
@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("name", CASES)
def test_sequential_matches_r(name: str, test: str) -> None:
    ref = fixture()["cases"][name]["sequential"][test]
    out = ar.anova(_fit(name, "big"), test=None if test == "none" else test)
    _check(out, ref)
    assert str(out).rstrip("\n").split("\n") == ref["printed"]


@pytest.mark.filterwarnings("ignore:using F test")
@pytest.mark.parametrize("test", TESTS)
@pytest.mark.parametrize("name", CASES)
def test_nested_matches_r(name: str, test: str) -> None:
    ref = fixture()["cases"][name]["nested"][test]
    out = ar.anova(_fit(name, "small"), _fit(name, "big"),
                   test=None if test == "none" else test)
    _check(out, ref)
    assert str(out).rstrip("\n").split("\n") == ref["printed"]


def test_method_and_pickle() -> None:
    fit = _fit("gamma_log", "big")
    out = fit.anova(test="Chisq")
    assert out.kind == "sequential"
    again = pickle.loads(pickle.dumps(out))
    pd.testing.assert_frame_equal(again.table, out.table)


def test_f_on_fixed_dispersion_warns() -> None:
    with pytest.warns(InferenceWarning, match="F test with a 'binomial' family"):
        ar.anova(_fit("logit", "big"), test="F")


def test_errors() -> None:
    with pytest.raises(OptionError, match="test must be one of"):
        ar.anova(_fit("logit", "big"), test="Rao")
    with pytest.raises(OptionError, match="fit 2 is poisson/log but fit 1 is binomial/logit"):
        ar.anova(_fit("logit", "big"), _fit("poisson_offset", "big"))
    with pytest.raises(OptionError, match="type 2 and 3 tables are not available for GLMs"):
        ar.anova(_fit("logit", "big"), type=2)
