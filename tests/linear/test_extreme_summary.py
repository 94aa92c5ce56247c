"""Summaries of fits with one value near the float64 maximum: every statistic right, or
NaN / inf with a warning that says why.

References are the exact least-squares solutions of the float64 data
(:func:`tests.linear.test_offsets.exact_ols`, integer arithmetic).
"""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import ScaleWarning
from tests.conftest import RTOL_EXACT
from tests.linear.test_offsets import exact_ols


def _data(n: int, big: float, response_too: bool) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    x, e = rng.normal(size=n), rng.normal(size=n)
    x[0] = big
    return pd.DataFrame({"x": x, "y": x + e if response_too else e})


@pytest.mark.parametrize("n", [20, 50])
@pytest.mark.parametrize("big", [1e308, -1.7e308])
def test_one_huge_predictor_value(n: int, big: float) -> None:
    # the QR's Householder vector of that column (x − α e₁, up to twice 1e308) overflowed:
    # NaN coefficients, then R² −0.34 and F −24.8 were printed
    df = _data(n, big, response_too=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to warn about: every statistic is finite
        fit = ar.attnreg("y ~ x", df)
        text = str(fit.summary())
    exact = exact_ols(df[["x"]].to_numpy(), df["y"].to_numpy())
    assert np.isfinite(fit.coef.to_numpy()).all()
    assert fit.coef.iloc[0] == pytest.approx(exact["coef"][0], rel=RTOL_EXACT)  # type: ignore[index]
    assert fit.sigma == pytest.approx(exact["sigma"], rel=RTOL_EXACT)
    assert fit.r_squared == pytest.approx(exact["r_squared"], rel=RTOL_EXACT)
    assert fit.f_test.statistic == pytest.approx(exact["f"], rel=RTOL_EXACT)
    assert f"Multiple R-squared:  {fit.r_squared:.4g}" in text


def test_huge_response_value() -> None:
    # y = x + e with x = 1e308 in one row: the response was rescaled by 2^1024 (inf), and
    # then sigma, R² and F printed as inf, -inf and NaN
    df = _data(50, 1e308, response_too=True)
    with pytest.warns(ScaleWarning, match="standard errors, t and p values and intervals are NaN"):
        fit = ar.attnreg("y ~ x", df)
        sigma = fit.sigma
        se = fit.std_err.to_numpy()
    exact = exact_ols(df[["x"]].to_numpy(), df["y"].to_numpy())
    # sigma of the reported coefficients, in exact arithmetic (their intercept is the exact
    # one only to the rounding of x̄β ≈ 2e306, so sigma is checked against their residuals)
    c0, c1 = (Fraction(float(c)) for c in fit.coef)
    rss = sum((Fraction(yi) - c0 - c1 * Fraction(xi)) ** 2
              for xi, yi in zip(df["x"].tolist(), df["y"].tolist(), strict=True))
    assert sigma == pytest.approx(float(rss / (len(df) - 2)) ** 0.5, rel=RTOL_EXACT)
    assert fit.r_squared == exact["r_squared"] == 1.0  # 1 − 1e-615 in float64
    assert np.isnan(se).all()
    with pytest.warns(ScaleWarning, match=r"F statistic is about 1e616, beyond the float64 range"):
        ft = fit.f_test
    assert ft.statistic == np.inf and ft.p_value == 0.0


def test_huge_predictor_value_without_intercept() -> None:
    # rows whose hat value underflows to 0 have no attention weight at all: the summary's
    # effective number of neighbours 1 / sum(w²) is inf there, without a numpy warning
    df = _data(50, 1e308, response_too=False)
    df.loc[7, "x"] = 1e308
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = ar.attnreg("y ~ x - 1", df)
        summary = fit.summary()
    exact_r2 = 1 - sum(Fraction(v) ** 2 for v in (df["y"] - fit.fitted).tolist()) / sum(
        Fraction(v) ** 2 for v in df["y"].tolist())
    assert fit.r_squared == pytest.approx(float(exact_r2), rel=RTOL_EXACT)
    assert "effective neighbours" in str(summary)
