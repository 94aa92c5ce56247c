"""The forecast summary says what each origin re-estimates, from the method's declarations
(a spectral rule and its tuning parameter, or the whole fit), never from its name."""

from __future__ import annotations

import pandas as pd
import pytest
from statsmodels.datasets import macrodata

import attnreg as ar
from attnreg.timeseries.fcsummary import refitted


@pytest.mark.parametrize(("method", "note"), [
    ("ols", "centring, scaling, spectrum"),
    ("ridge", "centring, scaling, spectrum, lambda"),
    ("pcr", "centring, scaling, spectrum, k"),
    ("poisson", "all parameters of method 'poisson'"),
    ("softmax", "all parameters of method 'softmax', warm-started at the previous origin's"),
])
def test_what_each_origin_re_estimates(method: str, note: str) -> None:
    assert refitted(method) == note


def test_a_quantile_forecast_does_not_claim_a_spectrum() -> None:
    df = macrodata.load_pandas().data
    df.index = pd.period_range("1959Q1", periods=len(df), freq="Q")
    q = ar.forecast("infl ~ lag(infl, 1)", df, start="2000Q1", method="quantreg", tau=0.5)
    text = str(q.summary())
    assert "spectrum" not in text and "(all parameters of method 'quantreg'" in text
    ols = str(ar.forecast("infl ~ lag(infl, 1)", df, start="2000Q1").summary())
    assert "(centring, scaling, spectrum)." in ols
