"""method="softmax" on a predictor multiplied by 1e±300: the fit equals the fit on the
unscaled column (standardisation that cannot overflow or underflow)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import ConvergenceWarning
from attnreg.softmax.results import SoftmaxResults
from tests.conftest import RTOL_EXACT


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 40
    x1, x2 = rng.normal(size=n), rng.normal(size=n)
    return pd.DataFrame({"y": x1 - x2 + 0.3 * rng.normal(size=n), "x1": x1, "x2": x2})


def _fit(df: pd.DataFrame) -> SoftmaxResults:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy overflow warnings (RuntimeWarning)
        warnings.simplefilter("ignore", ConvergenceWarning)  # few iterations on purpose
        return ar.attnreg("y ~ x1 + x2", df, method="softmax", heads=1, seed=0, max_iter=3)


@pytest.mark.parametrize("factor", [1e300, 1e-300])
def test_scaled_predictor_gives_the_same_fit(factor: float) -> None:
    # x2 * 1e300 gave sd = inf (its squares overflow), a constant standardised column,
    # numpy overflow warnings and R² -0.02; x2 * 1e-300 gave sd = 0 and a column ignored
    df = _frame()
    base = _fit(df)
    scaled_df = df.assign(x2=df.x2 * factor)
    scaled = _fit(scaled_df)
    # the standardised columns agree to rounding, so the fits agree to far below RTOL_EXACT
    assert_allclose(scaled.fitted.to_numpy(), base.fitted.to_numpy(), rtol=RTOL_EXACT)
    assert scaled.r_squared == pytest.approx(base.r_squared, rel=RTOL_EXACT)
    assert_allclose(scaled.predict(scaled_df.iloc[:5]).to_numpy(),
                    base.predict(df.iloc[:5]).to_numpy(), rtol=RTOL_EXACT)
