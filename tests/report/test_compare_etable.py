"""``compare`` is ``etable(style="compact")``: one multi-model table, two layouts."""

from __future__ import annotations

import pandas as pd
import pytest
from statsmodels.datasets import longley

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.report import Comparison, fmt_g
from attnreg.report.etable import ETable
from tests.report.renderings import html_errors, latex_errors, markdown_errors

FORMULA = "TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR"


@pytest.fixture(scope="module")
def fits() -> list[ar.LinearResults]:
    df = longley.load_pandas().data
    return [ar.attnreg(FORMULA, df, method=m) for m in ("ols", "ridge", "pcr")]


@pytest.mark.parametrize("names", [None, ["a", "b", "c"]])
def test_compare_is_the_compact_etable(fits, names) -> None:
    c, t = ar.compare(fits, names=names), ar.etable(fits, names=names, style="compact")
    assert type(c) is ETable and Comparison is ETable and c.style == "compact"
    pd.testing.assert_frame_equal(c.table, t.table)
    pd.testing.assert_frame_equal(c.models, t.models)
    for render in (str, ETable._repr_html_, ETable.to_latex, ETable.to_markdown):
        assert render(c) == render(t)


def test_compact_cells_are_the_fits_numbers(fits) -> None:
    t = ar.etable(fits, style="compact", se="HC1", drop="Intercept")
    robust = fits[0].with_vcov("HC1")
    assert t.table.index[0] == "GNP" and "Intercept" not in t.table.index
    assert t.table.iloc[1, 0] == f"({fmt_g(robust.std_err['GNP'], 3)})"
    assert t.table.loc["R-squared", "(2) ridge"] == fmt_g(fits[1].r_squared)
    assert t.models["covariance"].tolist() == ["HC1"] * 3


def test_compact_renderings_are_well_formed(fits) -> None:
    t = ar.compare(fits)
    assert html_errors(t._repr_html_()) == [] and latex_errors(t.to_latex()) == []
    assert markdown_errors(t.to_markdown()) == []
    assert t.to_markdown().count("\n") == len(t.table) + 1  # header, rule, one line per row


def test_publication_layout_takes_names(fits) -> None:
    t = ar.etable(fits[:2], names=["OLS", "Ridge"])
    assert t.table.columns.tolist() == ["OLS", "Ridge"]
    assert str(t).splitlines()[1].split() == ["OLS", "Ridge"]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"style": "wide"}, "style must be 'publication' or 'compact'.*style='wide'"),
    ({"style": "compact", "digits": 2}, "style='compact' has fixed rows.*digits was given"),
    ({"style": "compact", "stats": ["aic"], "show": "t"}, "stats, show were given"),
    ({"names": ["a"]}, r"names must have one entry per fit \(3\).*len\(names\)=1"),
    ({"names": "abc"}, "names must be a list of column titles"),
])
def test_errors_name_the_argument(fits, kwargs, message) -> None:
    with pytest.raises(OptionError, match=message):
        ar.etable(fits, **kwargs)
