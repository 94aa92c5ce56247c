"""Hat values and weighted residuals, as R's hatvalues() and weighted.residuals() give them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import attnreg as ar


def test_hat_values_and_weighted_residuals_match_statsmodels() -> None:
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.normal(size=40), "z": rng.normal(size=40),
                       "w": rng.uniform(0.5, 2.0, 40)}, index=[f"r{i}" for i in range(40)])
    df["y"] = 1 + df.x - df.z + rng.normal(size=40)
    fit = ar.attnreg("y ~ x + z", df, weights="w")
    ref = sm.WLS(df.y, sm.add_constant(df[["x", "z"]]), weights=df.w).fit()
    X, w = sm.add_constant(df[["x", "z"]]).to_numpy(), df.w.to_numpy()
    hat = w * np.einsum("ij,ji->i", X, np.linalg.solve(X.T @ (w[:, None] * X), X.T))
    np.testing.assert_allclose(fit.hat_values.to_numpy(), hat, rtol=1e-10)  # w x'(X'WX)^-1 x
    np.testing.assert_allclose(fit.weighted_resid.to_numpy(), np.sqrt(df.w) * ref.resid,
                               rtol=1e-9)
    assert list(fit.hat_values.index) == list(df.index)


def test_rows_of_weight_zero_have_no_hat_value_as_in_r() -> None:
    ref = json.loads((Path(__file__).parents[1] / "reference" / "zero_weights.json").read_text())
    fit = ar.attnreg("y ~ x", pd.DataFrame(ref["data"]), weights="w")
    np.testing.assert_allclose(fit.hat_values.to_numpy(), ref["hat"], rtol=1e-9)
    assert fit.weighted_resid.size == ref["nobs"] == 27
    assert fit.hat_values.sum() == pytest.approx(2.0, rel=1e-12)
