"""Separation inside Poisson GLMs with absorbed fixed effects, beyond the all-zero levels:
ppmlhdfe's iterative rectifier on its published examples (guides/separation_primer.md and
guides/csv/fe1.csv - fe3.csv of sergiocorreia/ppmlhdfe), against the linear program on the
dummy-variable design and the dummy-variable GLM with the separated rows dropped."""

from __future__ import annotations

import io
import pickle

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, SeparationWarning
from attnreg.fe.demean import FixedEffects
from attnreg.glm.fe_separation import rectifier
from attnreg.glm.separation import find_separation
from tests.conftest import RTOL_R

# ppmlhdfe's guides/csv/fe1.csv, fe2.csv and fe3.csv (two fixed effects i and j)
FE1 = """y,x1,x2,i,j
2,0,0,2,1
0,0,0,4,2
0,0,0,1,1
1,1,0,4,3
0,0,1,2,2
0,0,0,2,2
1,0,0,5,4
0,1,2,2,3
1,0,0,1,1
0,0,0,2,2
0,2,0,1,3
0,0,0,1,3
0,1,0,2,2
0,0,1,5,2
0,0,1,2,4
0,0,0,1,2
0,0,0,1,1
2,0,0,1,2
"""
FE2 = "y,x1,i,j\n0,-3,1,2\n0,0,1,8\n0,0,1,10\n0,10,1,10\n0,5,2,2\n1,3,3,9\n2,2,3,9\n3,2,2,8\n"
FE3 = ("y,x1,i,j\n0,0,1,1\n0,3,1,1\n0,-2,1,1\n0,2,1,3\n0,2,1,5\n0,0,1,6\n0,7,4,1\n0,1,4,4\n"
       "0,2,4,5\n0,1,6,1\n0,-2,8,4\n0,3,8,6\n1,-5,1,1\n1,1,1,3\n5,-2,6,3\n7,2,1,3\n")
FRAMES = {"fe1": FE1, "fe2": FE2, "fe3": FE3}


def _frame(name: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(FRAMES[name]))


def _lp_rows(df: pd.DataFrame, xs: list[str]) -> list[int]:
    """The separated rows by the linear program on the dummy-variable design."""
    dummies = pd.get_dummies(df[["i", "j"]].astype(str), drop_first=True).to_numpy(float)
    X = np.column_stack([np.ones(len(df)), df[xs].to_numpy(float), dummies])
    names = [f"c{k}" for k in range(X.shape[1])]
    return sorted(find_separation(X, df["y"].to_numpy(float), "poisson", names, df.index).rows)


def test_the_primer_example_separated_by_the_fixed_effects_alone() -> None:
    """No level is all zeros, yet observation 3 is separated (the primer's sep(ir) example)."""
    y = np.array([0.0, 1, 0, 0, 1])
    fe = FixedEffects.from_columns([np.array([1, 1, 2, 2, 2]), np.array([1, 1, 1, 2, 2])])
    got = rectifier(np.zeros((5, 0)), y, fe)
    assert got.converged and np.flatnonzero(got.separated).tolist() == [2]


@pytest.mark.parametrize("name", sorted(FRAMES))
def test_the_rectifier_finds_the_rows_the_linear_program_finds(name: str) -> None:
    df = _frame(name)
    xs = [c for c in df.columns if c.startswith("x")]
    fe = FixedEffects.from_columns([df["i"].to_numpy(), df["j"].to_numpy()])
    got = rectifier(df[xs].to_numpy(float), df["y"].to_numpy(float), fe)
    assert got.converged
    assert np.flatnonzero(got.separated).tolist() == _lp_rows(df, xs)


def test_fe1_separated_by_regressors_is_dropped_and_equals_the_dummy_fit() -> None:
    """fe1: no fixed-effect level is all zeros; four rows are separated through x1, x2 and
    the fixed effects together."""
    df = _frame("fe1")
    with pytest.warns(SeparationWarning, match=r"4 observation\(s\) separated by x1, x2 \(with "
                                               r"the fixed effects\).*dropped"):
        fit = ar.attnreg("y ~ x1 + x2 | i + j", df, method="poisson")
    separated = _lp_rows(df, ["x1", "x2"])
    assert sorted(fit.separation.rows) == separated and fit.separation.dropped
    kept = df.drop(index=separated)
    with pytest.warns(ar.exceptions.RankDeficiencyWarning):
        dummies = ar.attnreg("y ~ x1 + x2 + C(i) + C(j)", kept, method="poisson",
                             separation="none")
    assert_allclose(fit.coef["x1"], dummies.coef["x1"], rtol=RTOL_R)
    assert_allclose(fit.std_err["x1"], dummies.std_err["x1"], rtol=RTOL_R)
    assert_allclose([fit.deviance, fit.aic], [dummies.deviance, dummies.aic], rtol=RTOL_R)
    assert np.isnan(fit.coef["x2"]) and np.isnan(dummies.coef["x2"])  # aliased once dropped
    assert "4 observations separated by x1, x2, removed before the fit" in str(fit.summary())
    assert str(pickle.loads(pickle.dumps(fit)).summary()) == str(fit.summary())


def test_error_mode_refuses_and_names_the_rows() -> None:
    with pytest.raises(DataError, match=r"4 observation\(s\) separated by x1, x2 \(with the "
                                        r"fixed effects\)"):
        ar.attnreg("y ~ x1 + x2 | i + j", _frame("fe1"), method="poisson", separation="error")


def test_no_separation_runs_no_rectifier(monkeypatch: pytest.MonkeyPatch) -> None:
    import attnreg.glm.fe_fit as fe_fit

    def fail(*args: object) -> None:
        raise AssertionError("the rectifier ran on a fit with every mean away from 0")

    monkeypatch.setattr(fe_fit, "rectifier", fail)
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"x": rng.normal(size=300), "g": np.arange(300) % 10})
    df["y"] = rng.poisson(np.exp(1 + 0.3 * df["x"]))
    fit = ar.attnreg("y ~ x | g", df, method="poisson")
    assert fit.separation is None


def _logit_panel() -> pd.DataFrame:
    """A logit panel where ``t`` is positive only on some rows with y = 1 (and 0 elsewhere)."""
    rng = np.random.default_rng(4)
    n = 400
    df = pd.DataFrame({"x": rng.normal(size=n), "g": rng.integers(0, 20, n),
                       "h": rng.integers(0, 5, n)})
    df["y"] = rng.binomial(1, 1 / (1 + np.exp(-df.x))).astype(float)
    df["t"] = 0.0
    rows = df.index[(df.y == 1) & (rng.uniform(size=n) < 0.3)]
    df.loc[rows, "t"] = rng.uniform(1, 2, len(rows)).round(3)
    return df


def test_logit_separated_by_a_regressor_equals_the_dummy_variable_fit() -> None:
    """The sparse LP on [X, D] finds the rows the in-memory LP finds on the dummy-variable
    design; the fit on the rest equals the dummy-variable logit."""
    df = _logit_panel()
    with pytest.warns(SeparationWarning, match=r"separated by t \(with the fixed effects\).*"
                                               r"exactly 0 or 1.*dropped"):
        fit = ar.attnreg("y ~ x + t | g + h", df, method="logit")
    with pytest.warns(SeparationWarning):
        dummies = ar.attnreg("y ~ x + t + C(g) + C(h)", df, method="logit")
    assert sorted(fit.separation.rows) == sorted(dummies.separation.rows)
    assert fit.nobs == dummies.nobs
    assert_allclose(fit.coef["x"], dummies.coef["x"], rtol=RTOL_R)
    assert_allclose(fit.std_err["x"], dummies.std_err["x"], rtol=RTOL_R)
    assert_allclose(fit.deviance, dummies.deviance, rtol=RTOL_R)
    assert np.isnan(fit.coef["t"])  # zero on every row left
