"""The formula front end: R's dot, transforms, scope, missing values, subsets, labels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.formula.design import expand_dot


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 30
    return pd.DataFrame({"y": rng.normal(size=n), "a": rng.uniform(1, 2, n),
                         "b c": rng.normal(size=n), "g": rng.choice(["u", "v", "w"], n)},
                        index=pd.Index([f"row{i}" for i in range(n)], name="id"))


def test_dot_expands_to_other_columns(frame: pd.DataFrame) -> None:
    assert expand_dot("y ~ .", frame) == "y ~ (a + Q('b c') + g)"
    assert expand_dot("np.log(a) ~ . - g", frame) == "np.log(a) ~ (y + Q('b c') + g) - g"
    fit = ar.attnreg("y ~ .", data=frame)
    assert fit.names == ["(Intercept)", "g[T.v]", "g[T.w]", "a", "Q('b c')"]
    assert expand_dot("y ~ a + I(a * 2.5)", frame) == "y ~ a + I(a * 2.5)"


def test_dot_excludes_weights_column(frame: pd.DataFrame) -> None:
    frame = frame.assign(w=1.0)
    fit = ar.attnreg("y ~ .", data=frame, weights="w")
    assert "w" not in fit.names


def test_transforms_interactions_and_caller_scope(frame: pd.DataFrame) -> None:
    shift = 10.0  # noqa: F841  (a name from the caller's scope, used inside the formula)

    fit = ar.attnreg("y ~ np.log(a) + I(a**2 + shift) + C(g):a", data=frame)
    assert fit.aliased == []
    assert {"C(g)[u]:a", "C(g)[v]:a", "C(g)[w]:a"} <= set(fit.names)
    X = fit.design.X
    assert_allclose(X[:, fit.names.index("np.log(a)")], np.log(frame["a"]))
    assert_allclose(X[:, fit.names.index("I(a ** 2 + shift)")], frame["a"] ** 2 + 10.0)


def test_stateful_transforms_reuse_training_state(frame: pd.DataFrame) -> None:
    fit = ar.attnreg("y ~ center(a)", data=frame)
    new = frame.iloc[:3]
    X_new, _ = fit.design.rebuild(new)
    assert_allclose(X_new[:, 1], new["a"] - frame["a"].mean())  # training mean, not new data's
    assert_allclose(fit.predict(new), fit.fitted.iloc[:3])


def test_categorical_levels_survive_prediction(frame: pd.DataFrame) -> None:
    fit = ar.attnreg("y ~ a + C(g)", data=frame)
    new = pd.DataFrame({"a": [1.5, 1.5], "g": ["w", "u"]}, index=["p", "q"])
    pred = fit.predict(new)
    coef = fit.coef
    assert_allclose(pred["p"] - pred["q"], coef["C(g)[T.w]"])
    assert list(pred.index) == ["p", "q"]


def test_missing_values_dropped_and_reported(frame: pd.DataFrame) -> None:
    frame.loc[["row3", "row8"], "a"] = np.nan
    fit = ar.attnreg("y ~ a", data=frame)
    assert fit.nobs == 28
    assert list(fit.design.dropped_labels) == ["row3", "row8"]
    assert "row3" not in fit.fitted.index and list(fit.resid.index) == list(fit.fitted.index)
    assert "(2 observations deleted due to missingness)" in str(fit.summary())
    pred = fit.predict(frame)  # missing predictors give a missing prediction, as in R
    assert np.isnan(pred["row3"]) and np.isfinite(pred["row4"])


def test_subset_mask_and_expression(frame: pd.DataFrame) -> None:
    by_expr = ar.attnreg("y ~ a", data=frame, subset="a > 1.5")
    by_mask = ar.attnreg("y ~ a", data=frame, subset=(frame["a"] > 1.5).to_numpy())
    manual = ar.attnreg("y ~ a", data=frame[frame["a"] > 1.5])
    assert_allclose(by_expr.coef, manual.coef)
    assert_allclose(by_mask.coef, manual.coef)
    assert by_expr.design.n_subset_excluded == int((frame["a"] <= 1.5).sum())


def test_dict_data_and_row_labels(frame: pd.DataFrame) -> None:
    fit = ar.attnreg("y ~ a", data={"y": frame["y"].to_numpy(), "a": frame["a"].to_numpy()})
    assert list(fit.fitted.index) == list(range(30))
    labelled = ar.attnreg("y ~ a", data=frame)
    assert labelled.fitted.index.equals(frame.index)
    assert list(labelled.attention().weights.columns) == list(frame.index)


def test_no_intercept_and_intercept_only(frame: pd.DataFrame) -> None:
    assert ar.attnreg("y ~ a - 1", data=frame).names == ["a"]
    only = ar.attnreg("y ~ 1", data=frame)
    assert_allclose(only.coef.iloc[0], frame["y"].mean())
    assert_allclose(only.std_err.iloc[0], frame["y"].std() / np.sqrt(30))
    assert_allclose(only.attention().weights.to_numpy(), 1 / 30)


def test_subset_applies_after_the_formula_is_evaluated(frame: pd.DataFrame) -> None:
    """As R's model.frame: lags see the rows outside the subset."""
    fit = ar.attnreg("y ~ lag(a, 1)", data=frame, subset=np.arange(30) >= 10)
    assert fit.nobs == 20  # row 10's lag is row 9's a, not missing
    assert_allclose(fit.design.X[0, 1], frame["a"].iloc[9])
    assert fit.design.n_subset_excluded == 10 and len(fit.design.dropped_labels) == 0


@pytest.mark.parametrize("formula", [
    "y ~ x1 + np.log(x2) + C(g)",
    "y ~ x1 * C(g) + I(x2 ** 2) - 1",
    "np.log(x2) ~ center(x1) + g:x1",
])
def test_public_patsy_route_equals_fast_builder(mixed_frame: pd.DataFrame, formula: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    # the fast builder relies on patsy private helpers; without them the public dmatrices
    # route must give the same design, rows, labels and fit
    from attnreg.formula import design

    data = mixed_frame.copy()
    data.loc[data.index[[3, 10]], "x1"] = np.nan
    data.loc[data.index[7], "g"] = None
    fast = ar.attnreg(formula, data)
    monkeypatch.setattr(design, "_model_arrays", design._model_arrays_public)
    public = ar.attnreg(formula, data)
    assert public.design.column_names == fast.design.column_names
    assert public.design.row_labels.equals(fast.design.row_labels)
    assert list(public.design.dropped_labels) == list(fast.design.dropped_labels)
    assert_allclose(public.design.X, fast.design.X, rtol=0, atol=0)
    assert_allclose(public.coef.to_numpy(), fast.coef.to_numpy(), rtol=1e-13)
    assert_allclose(public.predict(data.iloc[:5]), fast.predict(data.iloc[:5]), rtol=1e-13)
