"""Every result pickles, deep-copies and cloudpickles, and predicts the same bits afterwards."""

from __future__ import annotations

import copy
import multiprocessing
import pickle
import sys
import threading
import types
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_array_equal

import attnreg as ar
from attnreg.exceptions import DataError, FormulaError, FormulaPicklingError

cloudpickle = pytest.importorskip("cloudpickle")

#: every transform a formula offers, and a function of this module (stored by reference)
FORMULA = ("y ~ np.log(x) + C(g) + center(z) + standardize(w) + scale(u) + lag(v, 1)"
           " + cube(x)")


def cube(values: Any) -> Any:
    """A user function at module level: pickle stores it by reference."""
    return values**3


def _pickle(obj: Any) -> Any:
    return pickle.loads(pickle.dumps(obj))


def _cloudpickle(obj: Any) -> Any:
    return pickle.loads(cloudpickle.dumps(obj))  # cloudpickle's output loads with pickle


ROUND_TRIPS: dict[str, Callable[[Any], Any]] = {
    "pickle": _pickle, "deepcopy": copy.deepcopy, "cloudpickle": _cloudpickle}
round_trips = pytest.mark.parametrize("round_trip", ROUND_TRIPS.values(), ids=ROUND_TRIPS.keys())


def make_data(n: int = 80, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.uniform(1.0, 3.0, n), "z": rng.normal(size=n),
                       "w": rng.normal(2.0, 3.0, n), "u": rng.normal(size=n),
                       "v": rng.normal(size=n), "g": rng.choice(["a", "b", "c"], n)})
    df["y"] = (1.0 + np.log(df.x) + 0.5 * df.z - 0.2 * df.w + (df.g == "b")
               + 0.3 * rng.normal(size=n))
    df["yp"] = np.exp(0.2 * df["y"])
    df.index = pd.period_range("1990Q1", periods=n, freq="Q")
    return df


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    return make_data()


@pytest.fixture(scope="module")
def newdata() -> pd.DataFrame:
    """Rows never seen in the fit: other values, the same factor levels (lag: first row NaN)."""
    return make_data(12, seed=7)


def _env(names: dict[str, Any]) -> Any:
    """A formula scope holding exactly ``names``."""
    import patsy

    return patsy.EvalEnvironment([names])


def assert_same_series(a: pd.Series | pd.DataFrame, b: pd.Series | pd.DataFrame) -> None:
    """Equal bit for bit (NaN where NaN) with the same labels."""
    assert_array_equal(np.asarray(a), np.asarray(b), strict=True)
    assert a.index.equals(b.index)


# ---------------------------------------------------------------- linear fits
@round_trips
@pytest.mark.parametrize("method", ["ols", "ridge", "pcr"])
def test_linear_fit_round_trip(data, newdata, round_trip, method) -> None:
    fit = ar.attnreg(FORMULA, data, method=method)
    back = round_trip(fit)
    assert_same_series(back.predict(newdata), fit.predict(newdata))
    assert_same_series(back.predict(newdata, interval="prediction"),
                       fit.predict(newdata, interval="prediction"))
    assert_same_series(back.fitted, fit.fitted)
    assert str(back.summary()) == str(fit.summary())
    assert_same_series(back.attention(newdata).weights, fit.attention(newdata).weights)
    assert_same_series(back.with_vcov("HC3").std_err, fit.with_vcov("HC3").std_err)
    if method != "ols":
        assert back.selection.value == fit.selection.value


@round_trips
def test_patsy_spline_transforms_round_trip(data, newdata, round_trip) -> None:
    """patsy's own stateful transforms (knots memorised) are stored too."""
    fit = ar.attnreg("y ~ bs(x, df=4) + cr(z, df=3, constraints='center') + C(g, Sum)", data)
    assert_same_series(round_trip(fit).predict(newdata), fit.predict(newdata))


def test_loaded_fit_checks_new_data_as_before(data, newdata) -> None:
    back = _pickle(ar.attnreg(FORMULA, data))
    with pytest.raises(FormulaError, match="newdata has no column 'u'"):
        back.predict(newdata.drop(columns="u"))
    with pytest.raises(DataError, match="level 'd' not seen when fitting"):
        back.predict(newdata.assign(g="d"))


def test_stores_the_names_the_formula_uses_not_the_callers_scope(data) -> None:
    lock = threading.Lock()  # noqa: F841 - in the caller's scope; pickle cannot store a lock
    big = np.zeros(1_000_000)
    fit = ar.attnreg("y ~ x + cube(z)", data)
    saved = pickle.dumps(fit)
    assert len(saved) < big.nbytes
    back = pickle.loads(saved)
    namespace = back.design.eval_env.namespace
    assert namespace["cube"] is cube
    for name in ("lock", "big", "data", "np", "pd"):
        assert name not in namespace


def test_a_function_missing_when_loading_is_a_clear_error(data) -> None:
    module = types.ModuleType("attnreg_pickle_probe")

    def triple(values: Any) -> Any:
        return 3 * values

    triple.__module__, triple.__qualname__ = module.__name__, "triple"
    module.triple = triple  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    try:
        saved = pickle.dumps(ar.attnreg("y ~ x + triple(z)", data, eval_env=_env({"triple": triple})))
        del module.triple  # type: ignore[attr-defined]
        with pytest.raises(FormulaError, match=r"uses 'triple', saved as a reference to "
                                               r"attnreg_pickle_probe\.triple"):
            pickle.loads(saved)
    finally:
        del sys.modules[module.__name__]


# ---------------------------------------------------------------- functions without a name
def test_local_function_needs_cloudpickle(data, newdata) -> None:
    def shift(values: Any) -> Any:
        return values + 1.0

    fit = ar.attnreg("y ~ x + shift(z)", data)
    with pytest.raises(FormulaPicklingError,
                       match=r"uses 'shift', a function defined inside a function .*cloudpickle"):
        pickle.dumps(fit)
    with pytest.raises(pickle.PicklingError):  # what code catching pickle's errors expects
        pickle.dumps(fit)
    back = _cloudpickle(fit)
    assert_same_series(back.predict(newdata), fit.predict(newdata))
    assert_same_series(copy.deepcopy(fit).predict(newdata), fit.predict(newdata))


def test_function_of_main_is_stored_by_value_by_cloudpickle(data, newdata) -> None:
    """As cloudpickle does for a notebook's functions; plain pickle stores the reference."""
    main = sys.modules["__main__"]

    def halve(values: Any) -> Any:
        return values / 2

    halve.__module__, halve.__qualname__ = "__main__", "halve"
    main.halve = halve  # type: ignore[attr-defined]
    try:
        fit = ar.attnreg("y ~ x + halve(z)", data, eval_env=_env({"halve": halve}))
        by_reference, by_value = pickle.dumps(fit), cloudpickle.dumps(fit)
        assert_same_series(pickle.loads(by_reference).predict(newdata), fit.predict(newdata))
    finally:
        del main.halve  # type: ignore[attr-defined]
    with pytest.raises(FormulaError, match=r"'halve', saved as a reference to __main__\.halve"):
        pickle.loads(by_reference)
    assert_same_series(pickle.loads(by_value).predict(newdata), fit.predict(newdata))


def test_lambda_needs_cloudpickle(data, newdata) -> None:
    square = lambda values: values**2  # noqa: E731, F841 - the case under test (used by the formula)
    fit = ar.attnreg("y ~ x + square(z)", data, method="ridge")
    with pytest.raises(FormulaPicklingError, match=r"'y ~ x \+ square\(z\)'.*'square', a lambda"):
        pickle.dumps(fit)
    assert_same_series(_cloudpickle(fit).predict(newdata), fit.predict(newdata))


# ---------------------------------------------------------------- softmax and networks
@round_trips
def test_softmax_fit_round_trip(data, newdata, round_trip) -> None:
    fit = ar.attnreg("y ~ np.log(x) + center(z) + C(g)", data, method="softmax", heads=1,
                     max_iter=20, seed=0)
    back = round_trip(fit)
    assert_same_series(back.predict(newdata), fit.predict(newdata))
    assert str(back.summary()) == str(fit.summary())
    assert_same_series(back.attention(newdata).weights, fit.attention(newdata).weights)
    assert_same_series(back.attention().weights, fit.attention().weights)


@round_trips
@pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")
def test_network_fit_round_trip(data, newdata, round_trip) -> None:
    fit = ar.attnreg("np.log(yp) ~ x + cube(z) + standardize(w)", data, method="block",
                     max_epochs=2, seed=0)
    back = round_trip(fit)
    assert_same_series(back.predict(newdata), fit.predict(newdata))
    assert str(back.summary()) == str(fit.summary())
    assert_same_series(back.permutation_importance(newdata, n_repeats=2),
                       fit.permutation_importance(newdata, n_repeats=2))


# ---------------------------------------------------------------- forecasts and rolling fits
@round_trips
@pytest.mark.parametrize("method", ["ols", "softmax"])
@pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")
def test_forecast_round_trip(data, round_trip, method) -> None:
    options = {"heads": 1, "max_iter": 10, "seed": 0} if method == "softmax" else {}
    fc = ar.forecast("y ~ lag(y, 1) + lag(np.log(x), 1) + C(g)", data, method=method, start="2008Q1",
                     refit_every=4, known=["g"], **options)
    back = round_trip(fc)
    assert_same_series(back.forecasts, fc.forecasts)
    assert str(back.summary()) == str(fc.summary())
    target = fc.forecasts.index[-1]
    assert_same_series(back.attention(target).weights, fc.attention(target).weights)
    assert_same_series(round_trip(fc.attention(target)).weights, fc.attention(target).weights)


@round_trips
def test_rolling_round_trip(data, round_trip) -> None:
    roll = ar.rolling("y ~ lag(z, 1) + w", data, window=30)
    back = round_trip(roll)
    assert_same_series(back.coef, roll.coef)
    assert_same_series(back.std_err, roll.std_err)
    assert repr(back) == repr(roll)


# ---------------------------------------------------------------- pieces of results
@round_trips
def test_summary_attention_and_selection_round_trip(data, newdata, round_trip) -> None:
    fit = ar.attnreg("y ~ x + z + w", data, method="ridge", lam="loo")
    summary = fit.summary()
    assert str(round_trip(summary)) == str(summary)
    assert round_trip(summary)._repr_html_() == summary._repr_html_()
    att = fit.attention(newdata)
    assert_same_series(round_trip(att).diagnostics, att.diagnostics)
    sel = round_trip(fit.selection)
    assert sel.value == fit.selection.value
    assert_array_equal(sel.scores, fit.selection.scores)


@round_trips
@pytest.mark.parametrize("method", ["ridge", "softmax"])
@pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")
def test_sklearn_estimator_round_trip(data, round_trip, method) -> None:
    pytest.importorskip("sklearn")
    from attnreg.sklearn import AttnRegressor

    X, y = data[["x", "z", "w"]].to_numpy(), data["y"].to_numpy()
    options = {"heads": 1, "max_iter": 10} if method == "softmax" else None
    model = AttnRegressor(method=method, options=options).fit(X, y)
    back = round_trip(model)
    assert_array_equal(back.predict(X[:5]), model.predict(X[:5]), strict=True)
    assert str(back.summary()) == str(model.summary())
    assert_array_equal(back.attention(X[:2]).weights, model.attention(X[:2]).weights)


# ---------------------------------------------------------------- across processes
def _fit_in_worker(formula: str) -> tuple[Any, pd.Series]:
    fit = ar.attnreg(formula, make_data())
    return fit, fit.predict(make_data(12, seed=7))


def test_fit_returned_from_a_process_pool(newdata) -> None:
    """A fit made in a fresh interpreter comes back whole (modules and functions by name)."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        fit, predicted = pool.submit(_fit_in_worker, FORMULA).result(timeout=120)
    assert_same_series(fit.predict(newdata), predicted)
    assert "cube(x)" in str(fit.summary())
