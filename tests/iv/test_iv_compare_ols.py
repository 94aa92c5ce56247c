"""``fit.attention(new).compare_ols()``: the 2SLS weights next to the OLS weights of the same
formula; each set reproduces its own predictions (OLS against statsmodels), with and without
weights and fixed effects, and ``top_rows`` lists the rows the instruments re-weight most."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.iv.attention import tsls_attention
from tests.conftest import ATOL_IDENTITY, RTOL_EXACT, RTOL_SM


def data(n: int = 150, seed: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "z1": rng.normal(size=n), "z2": rng.normal(size=n),
                       "u": rng.normal(size=n), "g": rng.choice(list("abcde"), n),
                       "w": rng.uniform(0.5, 2.0, n)},
                      index=pd.Index([f"r{i}" for i in range(n)], name="id"))
    df["d"] = df.z1 + 0.5 * df.z2 + df.u + rng.normal(size=n)
    df["y"] = 1 + 0.5 * df.x + 2 * df.d + df.u + (df.g == "a")
    return df


def sm_ols(df: pd.DataFrame, new: pd.DataFrame, weighted: bool, dummies: bool) -> np.ndarray:
    """statsmodels' OLS (WLS) prediction of y on [1, x, d] (and the dummies of g)."""
    def design(f: pd.DataFrame) -> pd.DataFrame:
        X = sm.add_constant(f[["x", "d"]], has_constant="add")
        if dummies:
            X = X.join(pd.get_dummies(f.g, prefix="g", drop_first=True, dtype=float)
                       .reindex(columns=[f"g_{c}" for c in "bcde"], fill_value=0.0))
        return X
    fit = sm.WLS(df.y, design(df), weights=df.w if weighted else 1.0).fit()
    return np.asarray(fit.predict(design(new)))


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("formula", ["y ~ x | d ~ z1 + z2", "y ~ x | g | d ~ z1 + z2"],
                         ids=["plain", "fixed-effects"])
def test_both_weight_sets_reproduce_their_predictions(formula: str, weighted: bool) -> None:
    df = data()
    new = data(n=6, seed=9)
    fit = ar.attnreg(formula, df, weights="w" if weighted else None)
    c = fit.attention(new).compare_ols()
    y = df.y.to_numpy()
    assert c.tsls.shape == c.ols.shape == (6, len(df))
    assert_allclose(c.tsls @ y, fit.predict(new).to_numpy(), rtol=RTOL_EXACT)
    assert_allclose(c.tsls_predictions, fit.predict(new).to_numpy(), rtol=RTOL_EXACT)
    ref = sm_ols(df, new, weighted, dummies="| g |" in formula)
    assert_allclose(c.ols @ y, ref, rtol=RTOL_SM)
    assert_allclose(c.ols_predictions, ref, rtol=RTOL_SM)
    assert_allclose(c.difference, c.tsls - c.ols, rtol=0, atol=ATOL_IDENTITY)


def test_ols_weights_of_the_training_rows_are_the_hat_matrix() -> None:
    df = data()
    c = ar.attnreg("y ~ x | d ~ z1 + z2", df).attention().compare_ols()
    assert_allclose(c.ols, c.ols.T, rtol=0, atol=ATOL_IDENTITY)  # symmetric in query and key
    assert_allclose(np.trace(c.ols), 3.0, rtol=RTOL_EXACT)  # trace = number of coefficients
    assert not np.allclose(c.tsls, c.tsls.T)  # 2SLS weights are not symmetric


def test_top_rows_are_the_largest_changes() -> None:
    df = data()
    c = ar.attnreg("y ~ x | d ~ z1 + z2", df).attention(df.iloc[[3, 7]]).compare_ols()
    top = c.top_rows(1, k=4)
    assert list(top.columns) == ["tsls", "ols", "difference"] and top.shape == (4, 3)
    d = np.abs(c.difference[1])
    assert_allclose(np.abs(top.difference.to_numpy()), np.sort(d)[::-1][:4], rtol=0, atol=0)
    rows = [df.index.get_loc(r) for r in top.index]
    assert top.index.name == "id" and all(r.startswith("r") for r in top.index)
    assert_allclose(top.tsls.to_numpy(), c.tsls[1, rows], rtol=0, atol=0)
    with pytest.raises(OptionError, match=r"k must be from 1 to the 150 training rows, however: k=0"):
        c.top_rows(0, k=0)
    with pytest.raises(OptionError, match=r"prediction must index one of the 2 predictions, "
                                          r"however: prediction=2"):
        c.top_rows(2)


def test_weights_made_without_the_fit_cannot_compare() -> None:
    rng = np.random.default_rng(0)
    X, D, Z, y = (rng.normal(size=(40, k)) for k in (1, 1, 2, 1))
    att = tsls_attention(np.hstack([X, D])[:2], y[:, 0], X, D, Z)
    with pytest.raises(OptionError, match=r"compare_ols\(\) needs the OLS weights: take the "
                                          r"attention from the fit"):
        att.compare_ols()
