"""Fixed-effects IV, ``y ~ x | firm + year | d ~ z``: y, x, d and z demeaned on the fixed
effects equal the dummy-variable IV fit ``y ~ x + C(firm) + C(year) | d ~ z`` (coefficients,
covariances with the residual df counting the absorbed levels, diagnostics), and pyfixest."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError
from tests.conftest import RTOL_EXACT, RTOL_SM

FE = "y ~ x1 + x2 | firm + year | d ~ z1 + z2"
DV = "y ~ x1 + x2 + C(firm) + C(year) | d ~ z1 + z2"
VCOV = {"classical": {}, "HC1": {"vcov": "HC1"}, "cluster": {"vcov": "cluster", "cluster": "firm"}}


def panel(seed: int = 3, n: int = 360) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    firm, year = rng.integers(0, 24, n), rng.integers(2000, 2009, n)
    a, b = rng.normal(size=24)[firm], rng.normal(size=2009)[year]
    x1, x2, z1, z2 = (rng.normal(size=n) for _ in range(4))
    u = rng.normal(size=n) * (0.5 + np.abs(x1))
    d = 0.8 * z1 + 0.5 * z2 + 0.3 * x1 + a + rng.normal(size=n) + 0.6 * u
    y = 0.5 * x1 - 0.2 * x2 + 1.5 * d + a + b + u
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "d": d, "z1": z1, "z2": z2,
                         "firm": firm, "year": year, "w": rng.uniform(0.5, 2, n)})


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("vcov", list(VCOV))
def test_equals_the_dummy_variable_fit(vcov: str, weighted: bool) -> None:
    df, w = panel(), ("w" if weighted else None)
    fe = ar.attnreg(FE, df, weights=w, **VCOV[vcov])
    dv = ar.attnreg(DV, df, weights=w, **VCOV[vcov])
    names = ["x1", "x2", "d"]
    assert fe.names == names
    assert fe.df_resid == dv.df_resid == len(df) - 3 - (24 + 9 - 1)
    assert_allclose(fe.coef, dv.coef[names], rtol=RTOL_EXACT)
    assert_allclose(fe.std_err, dv.std_err[names], rtol=RTOL_EXACT)
    assert_allclose(fe.vcov, dv.vcov.loc[names, names], rtol=RTOL_EXACT)
    assert_allclose(fe.resid, dv.resid, rtol=RTOL_EXACT, atol=RTOL_EXACT)
    assert_allclose([fe.sigma, fe.r_squared, fe.adj_r_squared],
                    [dv.sigma, dv.r_squared, dv.adj_r_squared], rtol=RTOL_EXACT)
    assert_allclose(fe.diagnostics().to_numpy(), dv.diagnostics().to_numpy(), rtol=RTOL_EXACT,
                    equal_nan=True)


@pytest.mark.parametrize("method", ["liml", "fuller"])
def test_k_class_estimators_equal_the_dummy_variable_fit(method: str) -> None:
    df = panel()
    fe = ar.attnreg(FE, df, method=method, vcov="HC1")
    dv = ar.attnreg(DV, df, method=method, vcov="HC1")
    assert_allclose(fe.coef, dv.coef[fe.names], rtol=RTOL_EXACT)
    assert_allclose(fe.std_err, dv.std_err[fe.names], rtol=RTOL_EXACT)


def test_coefficients_equal_pyfixest() -> None:
    pf = pytest.importorskip("pyfixest")
    df = panel()
    ref = pf.feols("y ~ x1 + x2 | firm + year | d ~ z1 + z2", data=df)
    fit = ar.attnreg(FE, df)
    assert_allclose(fit.coef[["x1", "x2", "d"]].to_numpy(), ref.coef()[["x1", "x2", "d"]].to_numpy(),
                    rtol=RTOL_SM)


def test_fixed_effects_show_in_the_summary() -> None:
    fit = ar.attnreg(FE, panel())
    assert fit.frame.fixed_effects == ("firm", "year") and fit.frame.n_absorbed == 32
    assert "Fixed effects absorbed: firm, year (32 parameters)" in str(fit.summary())


def test_a_missing_fixed_effect_and_a_regressor_absorbed_by_them_are_refused() -> None:
    df = panel().astype({"firm": float})
    df.loc[4, "firm"] = np.nan
    with pytest.raises(DataError, match=r"fixed effect 'firm' has missing values in the rows used"):
        ar.attnreg(FE, df)
    with pytest.raises(DataError, match=r"'size' is constant within the fixed effects firm, year "
                                        r"\(absorbed by them\)"):
        ar.attnreg("y ~ x1 + size | firm + year | d ~ z1 + z2",
                   panel().assign(size=lambda f: f.firm * 2.0))


@pytest.mark.parametrize("vcov", ["HC1", "cluster"])
def test_weak_instrument_report_and_ar_set_equal_the_dummy_variable_fit(vcov: str) -> None:
    df = panel()
    fe = ar.attnreg("y ~ x1 + x2 | firm + year | d ~ z1 + z2", df, **VCOV[vcov])
    dv = ar.attnreg("y ~ x1 + x2 + C(firm) + C(year) | d ~ z1 + z2", df, **VCOV[vcov])
    a, b = fe.weak_instruments(), dv.weak_instruments()
    for field in ("partial_r2", "f_classical", "f_robust", "sw_f", "cragg_donald_f", "kp_rk_wald",
                  "kp_rk_wald_f", "kp_rk_lm", "effective_f", "effective_f_cv"):
        assert_allclose(getattr(a, field), getattr(b, field), rtol=RTOL_EXACT, err_msg=field)
    assert a.df == b.df
    sa, sb = fe.anderson_rubin(0.99), dv.anderson_rubin(0.99)
    assert sa.shape == sb.shape == "interval"
    assert_allclose([sa.lower, sa.upper], [sb.lower, sb.upper], rtol=RTOL_EXACT)


def test_etable_marks_the_absorbed_fixed_effects() -> None:
    rng = np.random.default_rng(7)
    n = 400
    df = pd.DataFrame({"g": rng.integers(0, 8, n), "z1": rng.normal(size=n),
                       "z2": rng.normal(size=n), "x": rng.normal(size=n)})
    u = rng.normal(size=n)
    df["d"] = df.z1 + df.z2 + 0.5 * u + rng.normal(size=n)
    df["y"] = df.d + df.x + 0.2 * df.g + u
    iv_fe = ar.attnreg("y ~ x | g | d ~ z1 + z2", df)
    ols_fe = ar.attnreg("y ~ x + d | g", df)
    iv = ar.attnreg("y ~ x | d ~ z1 + z2", df)
    table = ar.etable([iv_fe, ols_fe, iv]).table
    assert table.loc[("g FE", "fixed_effects")].tolist() == ["Yes", "Yes", "No"]
