"""summary() of a GLM against R's print(summary(glm(...))) from "Coefficients:" on.

R's factor coefficients are named ``gb`` where patsy says ``C(g)[T.b]`` (and patsy puts
factor terms first): the table is put in R's order and names before it is printed.
"""

from __future__ import annotations

import dataclasses

import pytest

from attnreg.report.sections import Coefficients
from attnreg.report.summary import Summary
from tests.glm._reference import cases, fit_case, r_order

NAMES = sorted(cases())


def _from_coefficients(summary: Summary, names: list[str], order) -> str:
    sections = []
    for s in summary.sections:
        if isinstance(s, Coefficients):
            table = s.table.iloc[order].set_axis(names, axis=0)
            s = dataclasses.replace(s, table=table)
        sections.append(s)
    text = str(dataclasses.replace(summary, sections=tuple(sections)))
    return text[text.index("Coefficients:"):]


@pytest.mark.parametrize("name", NAMES)
def test_summary_prints_as_r(name: str) -> None:
    ref = cases()[name]["r"]
    fit = fit_case(cases()[name], control="R")
    text = _from_coefficients(fit.summary(), ref["names"], r_order(fit, ref["names"]))
    assert text == ref["summary"] + "\n"


def test_summary_numbers_and_call() -> None:
    case = cases()["binomial_logit_mtcars"]
    fit = fit_case(case)
    s = fit.summary()
    assert list(s.table.columns) == ["Estimate", "Std. Error", "z value", "Pr(>|z|)"]
    assert str(s).splitlines()[2].startswith("attnreg(formula = am ~ wt, data = data, "
                                             "method = 'glm', family = 'binomial'")
    gauss = fit_case(cases()["gamma_log"]).summary()
    assert list(gauss.table.columns)[2:] == ["t value", "Pr(>|t|)"]
