"""Prediction, attention and first stages of a fixed-effects IV fit ``y ~ x | firm + year |
d ~ z`` equal those of the dummy-variable IV fit ``y ~ x + C(firm) + C(year) | d ~ z``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, InferenceWarning, OptionError
from tests.conftest import ATOL_IDENTITY, RTOL_EXACT

FE = "y ~ x1 + x2 | firm + year | d ~ z1 + z2"
DV = "y ~ x1 + x2 + C(firm) + C(year) | d ~ z1 + z2"


def panel(seed: int = 5, n: int = 240) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    firm, year = rng.integers(0, 12, n), rng.integers(2000, 2006, n)
    a, b = rng.normal(size=12)[firm], rng.normal(size=2006)[year]
    x1, x2, z1, z2 = (rng.normal(size=n) for _ in range(4))
    u = rng.normal(size=n) * (0.5 + np.abs(x1))
    d = 0.8 * z1 + 0.5 * z2 + 0.3 * x1 + a + rng.normal(size=n) + 0.6 * u
    y = 0.5 * x1 - 0.2 * x2 + 1.5 * d + a + b + u
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "d": d, "z1": z1, "z2": z2,
                         "firm": firm, "year": year, "w": rng.uniform(0.5, 2, n)})


def new_rows() -> pd.DataFrame:
    """Rows the fit has not seen: new regressor values, levels it has."""
    return panel(seed=11, n=9).drop(columns="y")


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_predict_adds_the_fixed_effects_as_the_dummy_variable_fit(weighted: bool) -> None:
    df, w = panel(), ("w" if weighted else None)
    fe, dv = ar.attnreg(FE, df, weights=w), ar.attnreg(DV, df, weights=w)
    new = new_rows()
    assert_allclose(fe.predict(new).to_numpy(), dv.predict(new).to_numpy(), rtol=RTOL_EXACT)
    assert_allclose(fe.predict(df).to_numpy(), dv.fitted.to_numpy(), rtol=RTOL_EXACT)
    assert list(fe.predict(new).index) == list(new.index)


def test_predict_gives_nan_for_a_new_level_or_a_missing_value() -> None:
    fit, new = ar.attnreg(FE, panel()), new_rows()
    new.loc[0, "firm"], new.loc[1, "x1"] = 99, np.nan
    with pytest.warns(InferenceWarning, match=r"fixed effect 'firm' has level\(s\) not in the "
                                              r"fit \(99\); their predictions are NaN"):
        pred = fit.predict(new)
    assert np.isnan(pred.iloc[:2]).all() and np.isfinite(pred.iloc[2:]).all()
    with pytest.raises(DataError, match=r"newdata has no fixed-effect column 'year'; the fit "
                                        r"absorbed firm, year"):
        fit.predict(new_rows().drop(columns="year"))


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_attention_equals_the_dummy_variable_iv_weights(weighted: bool) -> None:
    df, w = panel(), ("w" if weighted else None)
    fe, dv = ar.attnreg(FE, df, weights=w), ar.attnreg(DV, df, weights=w)
    new = new_rows()
    a, b = fe.attention(new), dv.attention(new)
    assert a.weights.shape == (len(new), len(df))
    assert_allclose(a.weights, b.weights, rtol=0, atol=ATOL_IDENTITY)
    assert_allclose(a.weights @ df.y.to_numpy(), fe.predict(new).to_numpy(), rtol=RTOL_EXACT)
    assert_allclose(a.predictions, fe.predict(new).to_numpy(), rtol=RTOL_EXACT)
    own, ref = fe.attention(), dv.attention()  # the training rows: weights and leverages
    assert_allclose(own.weights, ref.weights, rtol=0, atol=ATOL_IDENTITY)
    assert_allclose(own.self_weights, ref.self_weights, rtol=0, atol=ATOL_IDENTITY)
    assert_allclose(own.weights @ df.y.to_numpy(), fe.fitted.to_numpy(), rtol=RTOL_EXACT)


def test_attention_refuses_an_unseen_level() -> None:
    new = new_rows()
    new.loc[0, "year"] = 1990
    with (pytest.warns(InferenceWarning, match="not in the fit"),
          pytest.raises(DataError, match=r"newdata has rows with a missing value or a "
                                         r"fixed-effect level not in the fit; drop them first")):
        ar.attnreg(FE, panel()).attention(new)
    with pytest.raises(OptionError, match=r"attention\(\) is the view of 2SLS, however: "
                                          r"method='liml'"):
        ar.attnreg(FE, panel(), method="liml").attention()


@pytest.mark.parametrize("vcov", [{}, {"vcov": "HC1"}, {"vcov": "cluster", "cluster": "firm"}],
                         ids=["classical", "HC1", "cluster"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_first_stage_is_the_fixed_effects_first_stage(vcov: dict[str, str], weighted: bool) -> None:
    df, w = panel(), ("w" if weighted else None)
    fe, dv = ar.attnreg(FE, df, weights=w, **vcov), ar.attnreg(DV, df, weights=w, **vcov)
    got, ref = fe.first_stage["d"], dv.first_stage["d"]
    assert type(got).__name__ == "FixedEffectsResults"
    names = ["x1", "x2", "z1", "z2"]
    assert list(got.coef.index) == names
    assert_allclose(got.coef.to_numpy(), ref.coef[names].to_numpy(), rtol=RTOL_EXACT)
    assert_allclose(got.resid.to_numpy(), ref.resid.to_numpy(), rtol=0, atol=ATOL_IDENTITY)
    if not vcov:  # robust: the fixed-effects fit's small-sample factor is fixest's (ssc)
        assert_allclose(got.std_err.to_numpy(), ref.std_err[names].to_numpy(), rtol=RTOL_EXACT)


def test_fixef_are_the_dummy_coefficients() -> None:
    df = panel()
    fe, dv = ar.attnreg(FE, df), ar.attnreg(DV, df)
    firm = fe.fixef()["firm"]
    steps = (firm - firm.iloc[0]).iloc[1:]
    assert_allclose(steps.to_numpy(), dv.coef[[f"C(firm)[T.{k}]" for k in steps.index]].to_numpy(),
                    rtol=RTOL_EXACT)
    with pytest.raises(OptionError, match=r"fixef\(\) needs an IV fit with absorbed fixed effects"):
        ar.attnreg("y ~ x1 | d ~ z1 + z2", df).fixef()


@pytest.mark.parametrize("fes", [["firm"], ["firm", "year", "region"]], ids=["one", "three"])
def test_attention_with_one_or_three_fixed_effects(fes: list[str]) -> None:
    df = panel().assign(region=lambda f: (f.firm * 7 + f.year) % 4)
    fe = ar.attnreg(f"y ~ x1 + x2 | {' + '.join(fes)} | d ~ z1 + z2", df)
    dv = ar.attnreg(f"y ~ x1 + x2 + {' + '.join(f'C({v})' for v in fes)} | d ~ z1 + z2", df)
    new = new_rows().assign(region=lambda f: (f.firm * 7 + f.year) % 4)
    assert_allclose(fe.attention(new).weights, dv.attention(new).weights, rtol=0, atol=ATOL_IDENTITY)
    assert_allclose(fe.attention().self_weights, dv.attention().self_weights, rtol=0,
                    atol=ATOL_IDENTITY)
    assert_allclose(fe.predict(new).to_numpy(), dv.predict(new).to_numpy(), rtol=RTOL_EXACT)


def test_attention_has_no_level_limit() -> None:
    """Thousands of levels: the fixed effects' own weights come from exact sparse solves (no
    G × G matrix); the votes still reproduce the predictions and the dummies' leverage."""
    rng = np.random.default_rng(3)
    n = 6000
    df = panel(n=n).assign(firm=rng.integers(0, 2500, n))
    fit = ar.attnreg(FE, df)
    new = df.head(7).drop(columns="y")
    att = fit.attention(new)
    assert_allclose(att.weights @ df["y"].to_numpy(), fit.predict(new).to_numpy(),
                    rtol=RTOL_EXACT, atol=RTOL_EXACT)
    assert int(fit.frame.fe.offsets[-1]) > 2000


@pytest.mark.parametrize("vcov", [{"vcov": "cluster", "cluster": "firm + year"},
                                  {"vcov": "HAC", "maxlags": 2},
                                  {"vcov": "cluster", "cluster": "firm", "type": "HC0"}],
                         ids=["two-way", "HAC", "cluster-HC0"])
def test_first_stage_keeps_every_covariance_and_its_options(vcov: dict[str, object]) -> None:
    """The fixed-effects first stage is the fixed-effects fit of d under the IV fit's own
    covariance, options and (multi-way) clusters included."""
    df = panel()
    got = ar.attnreg(FE, df, **vcov).first_stage["d"]
    ref = ar.attnreg("d ~ x1 + x2 + z1 + z2 | firm + year", df, **vcov)
    assert_allclose(got.std_err.to_numpy(), ref.std_err.to_numpy(), rtol=RTOL_EXACT)
