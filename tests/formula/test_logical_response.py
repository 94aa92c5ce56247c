"""A logical response is the 0/1 regression, as R's ``lm(I(y > 0) ~ x)``: FALSE = 0, TRUE = 1.

Every fit through ``I(y > 0)`` (or a bool column) equals the fit on the float column
``(y > 0).astype(float)``, for OLS, ridge and logit; the response keeps the name as
written. (Chunked fits: tests/large/test_logical_response_chunked.py.)
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import DataError
from tests.conftest import RTOL_EXACT


def logical_data(n: int = 300, seed: int = 3) -> pd.DataFrame:
    """x, z; y continuous; b = y > 0 (bool); y01 = the same as 0.0/1.0."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n)})
    df["y"] = 0.8 * df.x - 0.3 * df.z + rng.logistic(size=n)
    df["b"] = df.y > 0
    df["y01"] = (df.y > 0).astype(float)
    return df


DATA = logical_data()


def _close(a: pd.Series, b: pd.Series) -> None:
    np.testing.assert_allclose(a.to_numpy(), b.to_numpy(), rtol=RTOL_EXACT, atol=0)


@pytest.mark.parametrize(("method", "opts"), [("ols", {}), ("ridge", {"lam": 0.5}),
                                              ("logit", {})])
@pytest.mark.parametrize("lhs", ["I(y > 0)", "b"])
def test_logical_response_is_the_zero_one_regression(lhs, method, opts) -> None:
    fit = ar.attnreg(f"{lhs} ~ x + z", DATA, method=method, **opts)
    ref = ar.attnreg("y01 ~ x + z", DATA, method=method, **opts)
    _close(fit.coef, ref.coef)
    _close(fit.std_err, ref.std_err)
    assert fit.design.response_name == lhs
    assert lhs in str(fit.summary())
    pickle.loads(pickle.dumps(fit))


def test_logical_response_through_patsy_dmatrices(monkeypatch: pytest.MonkeyPatch) -> None:
    from attnreg.formula import design

    monkeypatch.setattr(design, "_model_arrays", design._model_arrays_public)
    fit = ar.attnreg("I(y > 0) ~ x + z", DATA)
    _close(fit.coef, ar.attnreg("y01 ~ x + z", DATA).coef)
    assert fit.design.response_name == "I(y > 0)"


def test_logical_response_with_missing_values_drops_those_rows() -> None:
    df = DATA.assign(b=DATA.b.astype("boolean"))  # pandas nullable booleans
    df.loc[[4, 40, 200], "b"] = pd.NA
    fit = ar.attnreg("b ~ x", df, method="logit")
    ref = ar.attnreg("y01 ~ x", DATA.drop(index=[4, 40, 200]), method="logit")
    _close(fit.coef, ref.coef)
    assert fit.nobs == len(DATA) - 3 and list(fit.design.dropped_labels) == [4, 40, 200]


def test_a_text_response_is_still_refused() -> None:
    df = DATA.assign(s=np.where(DATA.b, "yes", "no"))
    with pytest.raises(DataError, match="the response 's' must be numeric"):
        ar.attnreg("s ~ x", df)
