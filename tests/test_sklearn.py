"""The scikit-learn wrapper: estimator checks, pipelines, cross-validation, DataFrames, pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

sklearn = pytest.importorskip("sklearn")

from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

import attnreg as ar  # noqa: E402
from attnreg.exceptions import OptionError  # noqa: E402
from attnreg.sklearn import AttnRegressor  # noqa: E402
from tests.conftest import ATOL_IDENTITY, RTOL_EXACT  # noqa: E402

NEEDS_N_GT_P = ("OLS needs more rows than coefficients; this check fits 30 features on the "
                "27 rows with non-zero weight")
TUNED_BY_ROWS = ("GCV and LOO count rows, so a weight of 2 is not a repeated row for the chosen "
                 "lambda / k (with a fixed lambda or k the check passes: see "
                 "test_weights_are_frequencies_with_fixed_tuning)")
NO_WEIGHTS = "sample_weight is supported by ols, ridge and pcr only"
SOFTMAX_OPTIONS = {"heads": 1}


def _expected_failures(estimator: AttnRegressor) -> dict[str, str]:
    failures: dict[str, str] = {}
    fixed = (estimator.method == "ridge" and isinstance(estimator.lam, float)) or (
        estimator.method == "pcr" and isinstance(estimator.k, int))
    if estimator.method == "ols":
        failures["check_sample_weight_equivalence_on_dense_data"] = NEEDS_N_GT_P
    elif not fixed:
        failures["check_sample_weight_equivalence_on_dense_data"] = TUNED_BY_ROWS
    if estimator.method not in ("ols", "ridge", "pcr"):
        failures.update({name: NO_WEIGHTS for name in (
            "check_sample_weights_pandas_series", "check_sample_weights_not_an_array",
            "check_sample_weights_list", "check_sample_weights_shape",
            "check_sample_weights_not_overwritten", "check_sample_weight_equivalence_on_dense_data")})
    return failures


ESTIMATORS = [AttnRegressor(), AttnRegressor(method="ridge"), AttnRegressor(method="pcr"),
              AttnRegressor(method="ridge", lam="loo", fit_intercept=False),
              AttnRegressor(method="ridge", lam=1.0),
              AttnRegressor(method="softmax", options=SOFTMAX_OPTIONS)]

if tuple(int(p) for p in sklearn.__version__.split(".")[:2]) >= (1, 6):
    from sklearn.utils.estimator_checks import parametrize_with_checks

    @parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)
    def test_sklearn_estimator_checks(estimator, check) -> None:
        import torch

        torch.set_num_threads(1)
        check(estimator)


@pytest.fixture
def data() -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(3)
    X = pd.DataFrame(rng.normal(size=(120, 4)), columns=["a", "b", "c", "d"])
    y = 1.0 + 2.0 * X["a"].to_numpy() - X["b"].to_numpy() + 0.3 * rng.normal(size=120)
    return X, y


@pytest.mark.parametrize("method", ["ols", "ridge", "pcr"])
def test_matches_the_formula_fit(data, method: str) -> None:
    X, y = data
    model = AttnRegressor(method=method).fit(X, y)
    fit = ar.attnreg("y ~ a + b + c + d", data=X.assign(y=y), method=method)
    np.testing.assert_allclose(model.predict(X), fit.fitted, rtol=RTOL_EXACT)
    np.testing.assert_allclose(model.coef_, fit.coef.to_numpy()[1:], rtol=RTOL_EXACT)
    assert model.intercept_ == pytest.approx(fit.coef.iloc[0], rel=RTOL_EXACT)
    assert list(model.feature_names_in_) == ["a", "b", "c", "d"]


def test_pipeline_cross_validation_and_grid_search(data) -> None:
    X, y = data
    scores = cross_val_score(make_pipeline(StandardScaler(), AttnRegressor(method="ridge")), X, y, cv=4)
    assert scores.shape == (4,) and scores.min() > 0.8
    grid = GridSearchCV(AttnRegressor(method="pcr"), {"k": [1, 2, 3, 4]}, cv=3).fit(X, y)
    assert grid.best_params_["k"] >= 2  # two predictors matter
    assert grid.best_estimator_.result_.selection.value == grid.best_params_["k"]


def test_dual_view_summary_and_weights(data) -> None:
    X, y = data
    model = AttnRegressor().fit(X, y)
    w = model.attention(X.iloc[:3])
    np.testing.assert_allclose(w.weights.to_numpy() @ y, model.predict(X.iloc[:3]), rtol=1e-9)
    assert "Residual standard error" in str(model.summary())
    assert model.attention().weights.shape == (120, 120)


def test_sample_weight_is_weighted_least_squares(data) -> None:
    X, y = data
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=len(y))
    model = AttnRegressor().fit(X, y, sample_weight=w)
    fit = ar.attnreg("y ~ a + b + c + d", data=X.assign(y=y, w=w), weights="w")
    np.testing.assert_allclose(model.coef_, fit.coef.to_numpy()[1:], rtol=RTOL_EXACT)
    w[:5] = 0.0  # zero weight: the row is dropped, as in R
    dropped = AttnRegressor().fit(X.iloc[5:], y[5:], sample_weight=w[5:])
    np.testing.assert_allclose(AttnRegressor().fit(X, y, sample_weight=w).coef_, dropped.coef_,
                               rtol=RTOL_EXACT)


def test_pickle_keeps_predictions_and_the_result(data) -> None:
    X, y = data
    for model in (AttnRegressor(method="ridge"),
                  AttnRegressor(method="softmax", options=SOFTMAX_OPTIONS, random_state=1)):
        model.fit(X, y)
        back = pickle.loads(pickle.dumps(model))
        np.testing.assert_array_equal(back.predict(X), model.predict(X))
        assert str(back.summary()) == str(model.summary())
        np.testing.assert_array_equal(back.attention(X.iloc[:3]).weights,
                                      model.attention(X.iloc[:3]).weights)


def test_softmax_and_block_fit_and_predict(data) -> None:
    import torch

    torch.set_num_threads(1)
    X, y = data
    soft = AttnRegressor(method="softmax", options=SOFTMAX_OPTIONS, random_state=0).fit(X, y)
    again = AttnRegressor(method="softmax", options=SOFTMAX_OPTIONS, random_state=0).fit(X, y)
    np.testing.assert_array_equal(soft.predict(X), again.predict(X))  # seeded
    assert soft.score(X, y) > 0.8
    block = AttnRegressor(method="block", random_state=0,
                          options={"d_model": 16, "pca_components": 20, "max_epochs": 5})
    assert block.fit(X.to_numpy(), y).predict(X.to_numpy()[:7]).shape == (7,)


def test_errors_are_clear(data) -> None:
    X, y = data
    with pytest.raises(OptionError, match="method must be one of"):
        AttnRegressor(method="lasso").fit(X, y)
    with pytest.raises(OptionError, match="options do not apply"):
        AttnRegressor(options={"heads": 2}).fit(X, y)
    with pytest.raises(OptionError, match="lam applies to method 'ridge' only"):
        AttnRegressor(lam=1.0).fit(X, y)
    with pytest.raises(OptionError, match="sample_weight is not supported"):
        AttnRegressor(method="softmax").fit(X, y, sample_weight=np.ones(len(y)))
    with pytest.raises(ValueError, match="all weights are zero"):
        AttnRegressor().fit(X, y, sample_weight=np.zeros(len(y)))
    with pytest.raises(ValueError, match="NaN"):
        AttnRegressor().fit(X.assign(a=np.nan), y)


@pytest.mark.parametrize("estimator", [AttnRegressor(method="pcr", k=3),
                                       AttnRegressor(method="pcr", k=3, standardize=False),
                                       AttnRegressor(method="ridge", lam=0.5, standardize=False)],
                         ids=repr)
def test_weights_are_frequencies_with_fixed_tuning(estimator: AttnRegressor) -> None:
    """A weight of 2 is a repeated row (scikit-learn's check, 30 features on 27 rows: wide)."""
    from sklearn.utils.estimator_checks import check_sample_weight_equivalence_on_dense_data

    check_sample_weight_equivalence_on_dense_data(type(estimator).__name__, estimator)


@pytest.mark.parametrize("method", ["logit", "poisson", "quantreg"])
def test_every_registered_family_predicts_through_the_wrapper(method: str) -> None:
    """Families other than the spectral and torch ones (no seed= option): predictions are the
    registry's, equal to the fit's own fitted values."""
    rng = np.random.default_rng(5)
    X = rng.normal(size=(150, 2))
    y = (X[:, 0] + rng.normal(size=150) > 0).astype(float) + (method == "quantreg") * X[:, 1]
    model = AttnRegressor(method=method, random_state=3).fit(X, y)
    fitted = model.result_.fitted
    expected = np.asarray(fitted).reshape(-1)
    np.testing.assert_allclose(model.predict(X), expected, rtol=RTOL_EXACT, atol=ATOL_IDENTITY)
