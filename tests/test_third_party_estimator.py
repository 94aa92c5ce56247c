"""A least-squares estimator registered from outside the package gets every operation.

The estimator below is the one in docs/guide/estimators.md: numpy's ``lstsq`` computes the
coefficients, :func:`attnreg.linear.handover.least_squares_results` hands them over, and
:func:`attnreg.methods.register` adds the method (removed again after the module, so the
registry other tests see is unchanged); it declares its rule (unpenalised least squares), so
the chunked fit applies too. Each operation is one test item comparing the
third-party fit with the built-in OLS on the same data: the numbers to RTOL_EXACT, the
printed text equal once the method's name and call are swapped.
"""

from __future__ import annotations

import ast
import dataclasses
import pickle
import re
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import DataError, OptionError
from attnreg.linear.handover import least_squares_results
from attnreg.linear.rules import least_squares_rule
from attnreg.methods import METHODS, Capabilities, Estimator, get_method, register
from tests.conftest import REPO, RTOL_EXACT

#: forecasts and rolling fits of the built-in OLS take the rank-one updating path, the
#: third-party method refits every window: they agree to the updating path's accuracy
RTOL_INCREMENTAL = 1e-8
#: entries that are 0 up to rounding (a residual of an exact fit, an off-diagonal weight)
ATOL_ZERO = 1e-12


# ------------------------------------------------------------------ the third-party estimator

def check_lstsq(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """No options: refuse whatever is given."""
    if options:
        raise OptionError(f"method {name!r} takes no options, however: {', '.join(sorted(options))}")
    return {}


def fit_lstsq(name: str, design: Any, options: dict[str, Any], call: str) -> Any:
    """Least squares by numpy; attnreg builds the rest from the coefficients."""
    coef = np.linalg.lstsq(design.X, design.y, rcond=None)[0]
    return least_squares_results(design, coef, method=name, call=call)


def predict_lstsq(result: Any, X: np.ndarray) -> np.ndarray:
    """Predictions for design rows (the intercept column included)."""
    return X @ np.nan_to_num(result.coef.to_numpy())


LSTSQ = Estimator("lstsq", "third-party", "least squares by numpy's lstsq",
                  Capabilities(vcov=True, rolling=True, linear=True, attention=True),
                  check_lstsq, fit_lstsq, predict_lstsq, rule=least_squares_rule("lstsq"))


@contextmanager
def registered(estimator: Estimator) -> Iterator[str]:
    """``estimator`` registered inside the block, the registry as it was after it."""
    before = dict(METHODS)
    register(estimator)
    try:
        yield estimator.name
    finally:
        METHODS.clear()
        METHODS.update(before)


@pytest.fixture(scope="module")
def lstsq() -> Iterator[str]:
    with registered(LSTSQ) as name:
        yield name


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    rng = np.random.default_rng(24)
    n = 80
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "g": rng.choice(list("abcdefgh"), n)},
                      index=pd.period_range("2000Q1", periods=n, freq="Q"))
    df["t"] = np.arange(n) // 2
    df["y"] = 1.0 + df.x1 - 0.5 * df.x2 + rng.normal(size=n) * (1 + df.x1.abs())
    return df


FORMULA = "y ~ x1 + x2"


@pytest.fixture(scope="module")
def fits(lstsq: str, data: pd.DataFrame) -> tuple[Any, Any]:
    return ar.attnreg(FORMULA, data), ar.attnreg(FORMULA, data, method=lstsq)


def as_ols(text: str) -> str:
    """The third-party fit's text with the built-in method's name and call."""
    return text.replace(", method = 'lstsq'", "").replace("lstsq", "ols")


def same(a: Any, b: Any) -> None:
    """Equal numbers to RTOL_EXACT (frames and series by label, text exactly)."""
    if isinstance(a, (pd.DataFrame, pd.Series)):
        pd.testing.assert_index_equal(a.index, b.index)
        if isinstance(a, pd.DataFrame):
            pd.testing.assert_index_equal(a.columns, b.columns)
            for col in a.columns:
                same(a[col], b[col])
            return
        if a.dtype.kind in "fiucb":
            assert_allclose(b.to_numpy(float), a.to_numpy(float), rtol=RTOL_EXACT, atol=ATOL_ZERO)
        else:
            assert [as_ols(str(v)) for v in b] == [str(v) for v in a]
        return
    if isinstance(a, str):
        assert as_ols(b) == a
        return
    assert_allclose(np.asarray(b, float), np.asarray(a, float), rtol=RTOL_EXACT, atol=ATOL_ZERO)


# ------------------------------------------------------------------ one item per operation

def _vcovs(fit: Any) -> list[pd.DataFrame]:
    kinds: list[tuple[str, dict[str, Any]]] = [(k, {}) for k in (
        "classical", "HC0", "HC1", "HC2", "HC3", "HC4", "HC4m", "HC5", "HAC")]
    kinds += [("cluster", {"cluster": "g"}), ("cluster", {"cluster": "g", "type": "CR2"}),
              ("cluster", {"cluster": ["g", "t"]}), ("DK", {"time": "t"})]
    return [fit.with_vcov(kind, **opts).vcov for kind, opts in kinds]


def _wald(fit: Any) -> list[Any]:
    w = fit.wald_test("x1 = 0, x2 = 0")
    return [w.statistic, w.p_value, *w.df, str(w)]


def _t_test(fit: Any) -> pd.DataFrame:
    return fit.t_test("x1 = x2").table


def _anova(fit: Any, data: pd.DataFrame) -> pd.DataFrame:
    small = ar.attnreg("y ~ x1", data, method=fit.method)
    return pd.concat([ar.anova(fit).table, ar.anova(small, fit).table])


def _etable(fit: Any) -> str:
    """The table with its whitespace collapsed (the column is as wide as the method's label)."""
    text = " ".join(str(ar.etable([fit])).split()).replace("lstsq", "OLS")
    return re.sub(r"([=-])\1{3,}", r"\1", text)  # rules as wide as the table: one character


def _bootstrap(kind: str) -> Callable[[Any], pd.Series]:
    return lambda fit: fit.bootstrap(kind, reps=49, seed=3).std_err


def _influence(fit: Any) -> pd.DataFrame:
    return fit.influence().assign(rstudent=fit.rstudent(), dfbeta=fit.dfbeta().iloc[:, 1])


def _diagnostics(fit: Any) -> str:
    return str(fit.diagnostics())


def _predict(fit: Any, data: pd.DataFrame) -> pd.DataFrame:
    new = data.head(5)
    return pd.concat([fit.predict(new, interval="confidence"),
                      fit.predict(new, interval="prediction", level=0.9)], axis=1,
                     keys=["confidence", "prediction"]).droplevel(0, axis=1).set_axis(
        ["fit", "lwr", "upr", "fit_p", "lwr_p", "upr_p"], axis=1)


def _attention(fit: Any, data: pd.DataFrame) -> pd.DataFrame:
    return fit.attention(data.head(3)).weights


def _pickle(fit: Any) -> list[Any]:
    back = pickle.loads(pickle.dumps(fit))
    return [back.coef, back.vcov, str(back.summary())]


def _forecast(method: str, data: pd.DataFrame) -> pd.DataFrame:
    return ar.forecast("y ~ lag(y, 1) + lag(x1, 1)", data, method=method, start="2012Q1",
                       interval="gaussian").forecasts


def _iterated(method: str, data: pd.DataFrame) -> pd.DataFrame:
    return ar.forecast("y ~ lag(y, 1)", data, method=method, start="2012Q1", horizon=[1, 3],
                       strategy="iterated").forecasts


def _rolling(method: str, data: pd.DataFrame) -> pd.DataFrame:
    return ar.rolling(FORMULA, data, window=30, method=method).coef


def _chunked(method: str, data: pd.DataFrame) -> list[Any]:
    fit = ar.attnreg(FORMULA, data.drop(columns="g"), method=method, chunk_rows=16)
    return [fit.coef, fit.with_vcov("HC1").std_err, str(fit.summary())]


def _sklearn(method: str, data: pd.DataFrame) -> list[Any]:
    X, y = data[["x1", "x2"]].to_numpy(), data["y"].to_numpy()
    model = ar.AttnRegressor(method=method).fit(X, y)
    return [model.coef_, model.intercept_, model.predict(X[:5]), str(model.summary())]


ON_FIT: dict[str, Callable[..., Any]] = {
    "summary": lambda fit: str(fit.summary()),
    "with_vcov": _vcovs,
    "wald_test": _wald,
    "t_test": _t_test,
    "anova": _anova,
    "tidy": lambda fit: fit.tidy(conf_int=True),
    "glance": lambda fit: fit.glance(),
    "augment": lambda fit: fit.augment(),
    "etable": lambda fit: _etable(fit),
    "bootstrap-residual": _bootstrap("residual"),
    "bootstrap-wild": _bootstrap("wild"),
    "bootstrap-pairs": _bootstrap("pairs"),
    "influence": _influence,
    "diagnostics": _diagnostics,
    "predict": _predict,
    "attention": _attention,
    "pickle": _pickle,
}
ON_METHOD: dict[str, Callable[[str, pd.DataFrame], Any]] = {
    "forecast": _forecast, "forecast-iterated": _iterated, "rolling": _rolling,
    "chunked": _chunked, "AttnRegressor": _sklearn,
}
NEEDS_DATA = {"anova", "predict", "attention"}


def _compare(a: Any, b: Any, rtol: float = RTOL_EXACT) -> None:
    if isinstance(a, list):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _compare(x, y, rtol)
    elif rtol == RTOL_EXACT:
        same(a, b)
    else:
        assert_allclose(np.asarray(b, float), np.asarray(a, float), rtol=rtol)


@pytest.mark.parametrize("operation", list(ON_FIT))
def test_an_operation_on_the_fit_equals_the_built_in_ols(operation: str, fits: tuple[Any, Any],
                                                         data: pd.DataFrame) -> None:
    op = ON_FIT[operation]
    args = (data,) if operation in NEEDS_DATA else ()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. a mislabelled fit warns: no warning at all
        _compare(op(fits[0], *args), op(fits[1], *args))


@pytest.mark.parametrize("operation", list(ON_METHOD))
def test_an_operation_on_the_method_equals_the_built_in_ols(operation: str, lstsq: str,
                                                            data: pd.DataFrame) -> None:
    op = ON_METHOD[operation]
    ours, theirs = op("ols", data), op(lstsq, data)
    if isinstance(ours, pd.DataFrame):  # the forecasts' frames: numbers, columns by name
        pd.testing.assert_index_equal(ours.columns, theirs.columns)
        ours = [ours[c] for c in ours.columns if ours[c].dtype.kind == "f"]
        theirs = [theirs[c] for c in theirs.columns if theirs[c].dtype.kind == "f"]
    else:
        _compare(ours[-1], theirs[-1])  # the summary's text
        ours, theirs = ours[:-1], theirs[:-1]
    _compare(ours, theirs, RTOL_INCREMENTAL)


def test_the_registry_is_restored_after_the_block() -> None:
    other = dataclasses.replace(LSTSQ, name="lstsq_again")
    with registered(other):
        assert get_method("lstsq_again") is other
    with pytest.raises(OptionError, match=r"method must be one of .*method='lstsq_again'"):
        get_method("lstsq_again")


# ------------------------------------------------------------------ the guide's page

GUIDE = REPO / "docs" / "guide" / "estimators.md"
DEFINITIONS = ("check_lstsq", "fit_lstsq", "predict_lstsq", "LSTSQ")


def _definitions(source: str) -> dict[str, str]:
    """The estimator's functions and declaration in ``source``, type hints left out."""
    out = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            node.returns = None
            for arg in node.args.args:
                arg.annotation = None
            out[node.name] = ast.dump(node)
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = ast.dump(node)
    return {name: out[name] for name in DEFINITIONS if name in out}


def test_the_guide_page_registers_this_estimator_and_runs() -> None:
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), flags=re.S)
    ours = _definitions(Path(__file__).read_text())
    assert _definitions("\n".join(blocks)) == ours and len(ours) == len(DEFINITIONS)
    before = dict(METHODS)
    METHODS.pop(LSTSQ.name, None)  # the page registers it (the module's fixture may have)
    namespace: dict[str, Any] = {"__name__": "__guide__"}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for index, code in enumerate(blocks):
                exec(compile(code, f"{GUIDE.name} block {index}", "exec"), namespace)
    finally:
        METHODS.clear()
        METHODS.update(before)
    assert "Residual standard error" in str(namespace["fit"].summary())


# ------------------------------------------------------------------ the hand-over is checked

def test_coefficients_of_another_problem_are_refused(lstsq: str, data: pd.DataFrame) -> None:
    fit = ar.attnreg(FORMULA, data, method=lstsq)
    with pytest.raises(OptionError, match=r"coefficients method 'lstsq' handed over do not "
                                          r"solve its least-squares problem.*np\.linalg\.lstsq"):
        least_squares_results(fit.design, fit.coef.to_numpy() + 0.1, method=lstsq)
    with pytest.raises(OptionError, match=r"2 coefficient\(s\) for a design of 3 columns "
                                          r"\(\(Intercept\), x1, x2\)"):
        least_squares_results(fit.design, [1.0, 2.0], method=lstsq)


def test_a_rank_deficient_design_needs_nan_for_the_aliased_columns(
        lstsq: str, data: pd.DataFrame) -> None:
    frame = data.assign(x3=data.x1 + data.x2)
    with pytest.warns(Warning, match="not defined because of singularities"), \
            pytest.raises(OptionError, match=r"rank deficient: x3 .* hand over NaN for them"):
        ar.attnreg("y ~ x1 + x2 + x3", frame, method=lstsq)  # lstsq: the minimum-norm solution


def test_a_wide_design_is_refused(lstsq: str, data: pd.DataFrame) -> None:
    with pytest.raises(DataError, match=r"n_obs \(3\) must exceed .* method 'lstsq'"):
        ar.attnreg(FORMULA, data.head(3), method=lstsq)
