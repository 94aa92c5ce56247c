"""NaN-aware center / standardize / scale inside formulas (R's scale() semantics)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import patsy
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.formula.transforms import _Center, _Scale, _Standardize

from tests.conftest import REPO, RTOL_R

#: R 4.2's scale() of a vector with a missing value (tests/reference/make_summaries.R)
R_SCALE = json.loads((REPO / "tests" / "reference" / "summaries" / "scale.json").read_text())


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    n = 40
    return pd.DataFrame({"y": rng.normal(size=n), "x": rng.normal(3, 2, n),
                         "z": rng.uniform(0, 5, n)}, index=[f"r{i}" for i in range(n)])


@pytest.mark.parametrize("term", ["center(x)", "standardize(x)", "standardize(x, ddof=1)",
                                  "standardize(x, center=False)"])
def test_equals_patsy_without_missing_values(frame: pd.DataFrame, term: str) -> None:
    ours = ar.attnreg(f"y ~ {term} + z", frame)
    X_patsy = patsy.dmatrix(f"{term} + z", frame, return_type="matrix")
    assert_allclose(ours.design.X, np.asarray(X_patsy), rtol=1e-12, atol=1e-12)
    new = frame.iloc[:5] * 1.5
    _, X_new = patsy.dmatrices(f"y ~ {term} + z", frame)
    X_new_rebuilt = patsy.build_design_matrices([X_new.design_info], new)[0]
    assert_allclose(ours.design.rebuild(new)[0], np.asarray(X_new_rebuilt), rtol=1e-12)


def test_missing_values_ignored_as_in_r(frame: pd.DataFrame) -> None:
    data = frame.copy()
    data.loc[data.index[[2, 9]], "x"] = np.nan
    before = data.copy()
    fit = ar.attnreg("y ~ scale(x) + center(z)", data)
    assert fit.nobs == 38
    x = data["x"].to_numpy()
    kept = ~np.isnan(x)
    # R: scale(x) uses colMeans(x, na.rm = TRUE) and sd(x, na.rm = TRUE)
    expect = (x[kept] - np.nanmean(x)) / np.nanstd(x, ddof=1)
    assert_allclose(fit.design.X[:, 1], expect, rtol=1e-13)
    z = data["z"].to_numpy()
    assert_allclose(fit.design.X[:, 2], (z - z.mean())[kept], rtol=1e-12)
    pd.testing.assert_frame_equal(data, before)
    # prediction reuses the training statistics, not those of the new rows
    new = pd.DataFrame({"x": [np.nanmean(x)], "z": [z.mean()]})
    assert_allclose(fit.predict(new).iloc[0], fit.coef["(Intercept)"], rtol=1e-12)


def test_patsy_center_alone_would_drop_every_row(frame: pd.DataFrame) -> None:
    # the reason these transforms exist: patsy's own center() propagates one NaN everywhere
    data = frame.copy()
    data.loc[data.index[0], "x"] = np.nan
    _, X = patsy.dmatrices("y ~ center(x)", data, NA_action="drop")
    assert X.shape[0] == 0
    assert ar.attnreg("y ~ center(x)", data).nobs == len(data) - 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.one_of(st.floats(-1e3, 1e3), st.just(float("nan"))), min_size=3, max_size=40),
       st.integers(1, 39))
@example([np.nan] + [3.607395168078133e-308] * 3, 1)  # a constant column after an empty chunk
@example([0.0, 0.0, 6.078354127576571e-161], 1)  # squares of the deviations are subnormal
@example([0.0, 0.0, 3.225760637203956e-189], 1)  # ... or zero, after a chunk with no spread
@example([1e160, -1e160, 3e159], 2)  # squares of the deviations overflow
def test_chunked_memorisation_equals_one_pass(values: list[float], cut: int) -> None:
    x = np.asarray(values)
    if np.sum(~np.isnan(x)) < 2:
        return
    cut = min(cut, x.size - 1)
    one, two = _Standardize(), _Standardize()
    one.memorize_chunk(x)
    two.memorize_chunk(x[:cut])
    two.memorize_chunk(x[cut:])
    assert_allclose(two.transform(x, ddof=1), one.transform(x, ddof=1), rtol=1e-9, atol=1e-9)
    c = _Center()
    c.memorize_chunk(x[:cut])
    c.memorize_chunk(x[cut:])
    assert_allclose(c.transform(x), x - np.nanmean(x), rtol=1e-9, atol=1e-9)


def test_constant_column_scales_to_nan_as_in_r() -> None:
    s = _Standardize()
    x = np.full(5, 682.9540042280289)
    s.memorize_chunk(x)
    assert np.isnan(s.transform(x)).all()  # R: scale(rep(c, 5)) is NaN (0 / 0)


def _r_vector(key: str) -> np.ndarray:
    return np.array([np.nan if v is None else v for v in R_SCALE[key]], dtype=float)


@pytest.mark.parametrize(("kwargs", "key"), [({}, "scale"),
                                             ({"center": False}, "scale_center_false"),
                                             ({"scale": False}, "scale_scale_false")])
def test_scale_is_r_scale(kwargs: dict, key: str) -> None:
    """R's scale() divides by the sample SD (n - 1); center=FALSE by the RMS on n - 1."""
    x = _r_vector("x")
    s = _Scale()
    s.memorize_chunk(x, **kwargs)
    assert_allclose(s.transform(x, **kwargs), _r_vector(key), rtol=RTOL_R, equal_nan=True)


def test_scale_in_a_formula_uses_the_training_sd_on_new_rows() -> None:
    x = _r_vector("x")
    frame = pd.DataFrame({"x": x, "y": np.arange(x.size, dtype=float)})
    fit = ar.attnreg("y ~ scale(x)", frame)
    assert_allclose(fit.design.X[:, 1], _r_vector("scale")[~np.isnan(x)], rtol=RTOL_R)
    new = pd.DataFrame({"x": [R_SCALE["center"] + R_SCALE["sd"]]})
    assert_allclose(fit.design.rebuild(new)[0][0, 1], 1.0, rtol=RTOL_R)
    # standardize keeps patsy's population SD, a factor sqrt((n - 1) / n) apart
    n = int(np.sum(~np.isnan(x)))
    z = ar.attnreg("y ~ standardize(x)", frame).design.X[:, 1]
    assert_allclose(z * np.sqrt((n - 1) / n), fit.design.X[:, 1], rtol=RTOL_R)


def test_scale_with_given_center_and_scale() -> None:
    x = _r_vector("x")
    assert_allclose(_one_pass(x, center=2.0, scale=4.0), (x - 2.0) / 4.0, equal_nan=True)
    ok = ~np.isnan(x)
    rms = np.sqrt(np.sum((x[ok] - 2.0) ** 2) / (ok.sum() - 1))  # R: scale(x, center = 2)
    assert_allclose(_one_pass(x, center=2.0), (x - 2.0) / rms, rtol=1e-13, equal_nan=True)


def _one_pass(x: np.ndarray, **kwargs: object) -> np.ndarray:
    s = _Scale()
    s.memorize_chunk(x, **kwargs)
    return s.transform(x, **kwargs)
