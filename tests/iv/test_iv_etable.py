"""IV fits in ``etable`` and ``glance``: fixest's first-stage rows (``ivf``, ``ivwald``, one per
endogenous regressor) and the effective F, next to OLS fits; the first-stage F statistics
against statsmodels' F test of the excluded instruments in the first-stage OLS fit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.report.etable_stats import format_number
from tests.conftest import RTOL_SM

SM_COV = {"classical": {}, "HC1": {"cov_type": "HC1"},
          "cluster": {"cov_type": "cluster", "cov_kwds": {"groups": None}}}


def data(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "z1": rng.normal(size=n),
                       "z2": rng.normal(size=n), "z3": rng.normal(size=n),
                       "u": rng.normal(size=n), "g": rng.integers(0, 20, n)})
    df["d"] = df.z1 + 0.5 * df.z2 + df.u + rng.normal(size=n) * (1 + np.abs(df.x))
    df["e_2"] = df.z3 + 0.5 * df.z2 + df.u + rng.normal(size=n)
    df["y"] = 1 + 0.5 * df.x + 2 * df.d + df.u
    return df


@pytest.mark.parametrize("vcov", list(SM_COV))
def test_first_stage_f_is_the_f_test_of_the_instruments(vcov: str) -> None:
    df = data()
    given = {} if vcov == "classical" else {"vcov": vcov}
    if vcov == "cluster":
        given["cluster"] = "g"
    fs = ar.attnreg("y ~ x | d ~ z1 + z2", df, **given).first_stage_f()
    XZ = sm.add_constant(df[["x", "z1", "z2"]])
    R = np.zeros((2, 4))
    R[0, 2] = R[1, 3] = 1.0
    kw = {k: dict(v, groups=df.g) if k == "cov_kwds" else v for k, v in SM_COV[vcov].items()}
    ref = sm.OLS(df.d, XZ).fit(**kw).wald_test(R, use_f=True, scalar=True).statistic
    classical = sm.OLS(df.d, XZ).fit().wald_test(R, use_f=True, scalar=True).statistic
    assert_allclose(fs.loc["d", "ivwald"], float(np.squeeze(ref)), rtol=RTOL_SM)
    assert_allclose(fs.loc["d", "ivf"], float(np.squeeze(classical)), rtol=RTOL_SM)


def test_iv_and_ols_fits_in_one_table() -> None:
    df = data()
    ols = ar.attnreg("y ~ x + d", df)
    one = ar.attnreg("y ~ x | d ~ z1 + z2", df, vcov="HC1")
    two = ar.attnreg("y ~ x | d + e_2 ~ z1 + z2 + z3", df)
    t = ar.etable([ols, one, two])
    rows = [r for r, part in t.table.index if part == "statistic"]
    assert rows == ["Observations", "R2", "Adj. R2", "Residual std. error",
                    "F-test (1st stage), d", "F-test (1st stage), e_2", "Wald (1st stage), d",
                    "Wald (1st stage), e_2", "Effective F"]
    cell = t.table.xs("statistic", level="part")
    f1, f2 = one.first_stage_f(), two.first_stage_f()
    assert cell.loc["F-test (1st stage), d"].tolist() == [
        "", format_number(f1.loc["d", "ivf"], 3), format_number(f2.loc["d", "ivf"], 3)]
    assert cell.loc["F-test (1st stage), e_2"].tolist() == ["", "", format_number(f2.loc["e_2", "ivf"], 3)]
    assert cell.loc["Wald (1st stage), d", "(2)"] == format_number(f1.loc["d", "ivwald"], 3)
    assert f1.loc["d", "ivwald"] != f1.loc["d", "ivf"]  # HC1: the robust test
    assert cell.loc["Effective F"].tolist() == [
        "", format_number(one.weak_instruments().effective_f, 3), ""]
    assert r"$F$-test (1st stage), e\_2" in t.to_latex()


def test_rows_by_name_and_none_without_iv_fits() -> None:
    df = data()
    ols, iv = ar.attnreg("y ~ x + d", df), ar.attnreg("y ~ x | d ~ z1 + z2", df)
    rows = [r for r, part in ar.etable([ols]).table.index if part == "statistic"]
    assert rows == ["Observations", "R2", "Adj. R2", "Residual std. error"]
    t = ar.etable([ols, iv], stats=["nobs", "ivf", "ivwald", "effective_f"])
    assert [r for r, part in t.table.index if part == "statistic"] == [
        "Observations", "F-test (1st stage), d", "Wald (1st stage), d", "Effective F"]
    assert t.table.loc[("Wald (1st stage), d", "statistic")].tolist() == [
        "", format_number(iv.first_stage_f().loc["d", "ivf"], 3)]  # classical: Wald = F


def test_glance_carries_the_first_stage_statistics() -> None:
    df = data()
    one = ar.attnreg("y ~ x | d ~ z1 + z2", df, vcov="HC1")
    g = one.glance()
    fs = one.first_stage_f()
    assert list(g.columns[-3:]) == ["ivf.d", "ivwald.d", "effective.f"]
    assert g["ivf.d"].iloc[0] == fs.loc["d", "ivf"] and g["ivwald.d"].iloc[0] == fs.loc["d", "ivwald"]
    assert g["effective.f"].iloc[0] == one.weak_instruments().effective_f
    two = ar.attnreg("y ~ x | d + e_2 ~ z1 + z2 + z3", df).glance()
    assert list(two.columns[-4:]) == ["ivf.d", "ivwald.d", "ivf.e_2", "ivwald.e_2"]
