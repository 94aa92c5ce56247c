"""rolling(params_only=True): the full fit's coefficients, no standard errors, said plainly."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from statsmodels.regression.rolling import RollingOLS

import attnreg as ar
from attnreg.exceptions import NotComputedError, OptionError
from tests.conftest import RTOL_SM


@pytest.mark.parametrize("expanding", [False, True])
def test_params_only_coefficients_equal_the_full_fit_and_statsmodels(series, expanding) -> None:
    full = ar.rolling("y ~ x + z", series, window=25, expanding=expanding)
    only = ar.rolling("y ~ x + z", series, window=25, expanding=expanding, params_only=True)
    assert only.params_only and not full.params_only and only.engine == "updating"
    assert_array_equal(only.coef.to_numpy(), full.coef.to_numpy())  # the same numbers
    assert only.coef.index.equals(full.coef.index) and only.nobs.equals(full.nobs)
    X = np.column_stack([np.ones(len(series)), series[["x", "z"]]])
    ref = RollingOLS(series["y"].to_numpy(), X, window=len(series) if expanding else 25,
                     min_nobs=25, expanding=expanding).fit(params_only=True)
    assert_allclose(only.coef.to_numpy(), np.asarray(ref.params)[24:], rtol=RTOL_SM)


@pytest.mark.parametrize("method", ["ridge", "pcr"])
def test_params_only_refits_keep_coefficients_and_tuning(series, method) -> None:
    full = ar.rolling("y ~ x + z", series, window=30, method=method)
    only = ar.rolling("y ~ x + z", series, window=30, method=method, params_only=True)
    assert_array_equal(only.coef.to_numpy(), full.coef.to_numpy())
    assert only.tuning is not None and full.tuning is not None
    assert_array_equal(only.tuning.to_numpy(), full.tuning.to_numpy())


def test_params_only_refuses_standard_errors_and_says_how_to_get_them(series) -> None:
    only = ar.rolling("y ~ x + z", series, window=25, params_only=True)
    how = r"params_only=True: it has coefficients only\. Call rolling\(\.\.\.\) again without"
    with pytest.raises(NotComputedError, match=how):
        _ = only.std_err
    with pytest.raises(NotComputedError, match=how):
        _ = only.t_value
    assert not hasattr(only, "std_err")  # an AttributeError: getattr(..., default) works
    assert repr(only) == "<attnreg rolling (25 rows) ols fit: 66 windows, coefficients only>"
    back = pickle.loads(pickle.dumps(only))
    assert_array_equal(back.coef.to_numpy(), only.coef.to_numpy()) and back.params_only
    with pytest.raises(OptionError, match=r"params_only must be True or False.*'yes'"):
        ar.rolling("y ~ x + z", series, window=25, params_only="yes")
