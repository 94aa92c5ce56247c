"""Careless input: every case either gives the right answer or a clear error, never a silent
wrong one (index alignment, time order, numeric coercion, factor rules, names, raw errors)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm

import attnreg as ar
from attnreg.exceptions import DataError, FormulaError, OptionError


@pytest.fixture
def df() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 60
    out = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n),
                        "w": rng.uniform(0.5, 2.0, n)},
                       index=pd.Index([f"r{i}" for i in range(n)]))
    out["y"] = 1 + 2 * out.x - out.z + rng.normal(size=n)
    return out


def _wls(df: pd.DataFrame, w: np.ndarray, rows: slice | np.ndarray = slice(None)) -> np.ndarray:
    X = sm.add_constant(df[["x"]].to_numpy()[rows])
    return sm.WLS(df.y.to_numpy()[rows], X, weights=w).fit().params


# ----------------------------------------------------------------- Series align on the index

def test_weights_series_in_another_order_is_aligned_on_the_index(df):
    w = df.w.sample(frac=1.0, random_state=3)  # same labels, shuffled
    fit = ar.attnreg("y ~ x", df, weights=w)
    np.testing.assert_allclose(fit.coef.to_numpy(), _wls(df, df.w.to_numpy()), rtol=1e-10)


def test_weights_series_with_extra_labels_is_aligned(df):
    w = pd.concat([df.w, pd.Series([9.0], index=["extra"])]).iloc[::-1]
    fit = ar.attnreg("y ~ x", df, weights=w)
    np.testing.assert_allclose(fit.coef.to_numpy(), _wls(df, df.w.to_numpy()), rtol=1e-10)


def test_weights_series_missing_labels_is_an_error(df):
    w = df.w.iloc[3:]
    with pytest.raises(DataError, match=r"weights is a Series with no entry for 3 row\(s\).*'r0'"):
        ar.attnreg("y ~ x", df, weights=w)


def test_weights_series_with_duplicated_labels_is_an_error(df):
    w = pd.concat([df.w, df.w.iloc[:1]])
    with pytest.raises(DataError, match="weights is a Series with duplicated index label 'r0'"):
        ar.attnreg("y ~ x", df, weights=w)


def test_series_cannot_align_on_duplicated_data_index(df):
    dup = df.set_axis(["a"] * len(df), axis=0)
    with pytest.raises(DataError, match="data has duplicated index label 'a'"):
        ar.attnreg("y ~ x", dup, weights=df.w)


def test_array_weights_stay_positional(df):
    fit = ar.attnreg("y ~ x", df, weights=df.w.to_numpy())
    np.testing.assert_allclose(fit.coef.to_numpy(), _wls(df, df.w.to_numpy()), rtol=1e-10)


def test_subset_series_in_another_order_is_aligned(df):
    mask = (df.x > 0).iloc[::-1]
    fit = ar.attnreg("y ~ x", df, subset=mask)
    assert list(fit.fitted.index) == list(df.index[df.x > 0])
    keep = (df.x > 0).to_numpy()
    np.testing.assert_allclose(fit.coef.to_numpy(), _wls(df, np.ones(keep.sum()), keep),
                               rtol=1e-10)


def test_subset_series_missing_labels_is_an_error(df):
    with pytest.raises(DataError, match="subset is a Series with no entry"):
        ar.attnreg("y ~ x", df, subset=(df.x > 0).iloc[:-1])


@pytest.mark.parametrize("subset, match", [
    ("x + 1", r"subset expression 'x \+ 1' must be True/False for each row.*float64"),
    ("1", "must give one True/False per row"),
])
def test_non_boolean_subset_expression_is_an_error(df, subset, match):
    with pytest.raises(OptionError, match=match):
        ar.attnreg("y ~ x", df, subset=subset)


def test_subset_with_missing_values_is_an_error(df):
    mask = pd.Series(df.x > 0, dtype="boolean")
    mask.iloc[4] = pd.NA
    with pytest.raises(DataError, match="subset is missing at row 'r4'"):
        ar.attnreg("y ~ x", df, subset=mask)


# ----------------------------------------------------------------- time operators need order

@pytest.fixture
def quarterly() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    y = np.zeros(80)
    for t in range(1, 80):
        y[t] = 0.6 * y[t - 1] + rng.normal()
    return pd.DataFrame({"y": y}, index=pd.period_range("1990Q1", periods=80, freq="Q"))


def test_lag_on_a_shuffled_frame_is_an_error(quarterly):
    shuffled = quarterly.sample(frac=1.0, random_state=2)
    with pytest.raises(DataError, match="time index is not sorted"):
        ar.attnreg("y ~ lag(y)", shuffled)
    with pytest.raises(DataError, match="time index is not sorted"):
        ar.rolling("y ~ lag(y)", shuffled, window=30)
    sorted_fit = ar.attnreg("y ~ lag(y)", shuffled.sort_index())
    assert sorted_fit.coef["lag(y)"] == pytest.approx(ar.attnreg("y ~ lag(y)", quarterly)
                                                      .coef["lag(y)"], rel=1e-12)


@pytest.mark.parametrize("operator", ["lag(y)", "diff(y)", "lags(y, 1, 2)"])
def test_time_operators_on_gapped_or_duplicated_indexes_are_errors(quarterly, operator):
    gapped = quarterly.drop(quarterly.index[10])
    with pytest.raises(DataError, match="gap at position 10"):
        ar.attnreg(f"y ~ {operator}", gapped)
    doubled = pd.concat([quarterly.iloc[:5], quarterly.iloc[4:]])
    with pytest.raises(DataError, match="duplicated at position 5"):
        ar.attnreg(f"y ~ {operator}", doubled)
    shuffled_range = quarterly.reset_index(drop=True).iloc[::-1]
    with pytest.raises(DataError, match="not sorted"):
        ar.attnreg(f"y ~ {operator}", shuffled_range)


def test_unordered_index_is_fine_without_time_operators(quarterly):
    shuffled = quarterly.assign(x=np.arange(80.0)).sample(frac=1.0, random_state=2)
    assert ar.attnreg("y ~ x", shuffled).nobs == 80


def test_rolling_checks_the_time_index_without_lags(quarterly):
    data = quarterly.assign(x=np.arange(80.0)).iloc[::-1]
    with pytest.raises(DataError, match="time index is not sorted"):
        ar.rolling("y ~ x", data, window=30)


# ----------------------------------------------------------------- numeric columns are doubles

@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32", "uint64", "Int64", "UInt32", "float32"])
def test_integer_columns_are_evaluated_as_float64(dtype):
    rng = np.random.default_rng(4)
    info = np.iinfo(dtype.lower()) if "int" in dtype.lower() else None
    top = 100 if info is None else min(int(info.max), 5_000_000_000)
    x = rng.integers(top // 2, top, 40)
    data = pd.DataFrame({"x": pd.array(x, dtype=dtype)})
    data["y"] = (x.astype(np.float64) / top) ** 2 + rng.normal(size=40) * 0.01
    fit = ar.attnreg("y ~ I(x**2)", data)
    u = x.astype(np.float64) / top  # the same fit on a well-scaled column, slope scaled back
    expected = np.linalg.lstsq(np.column_stack([np.ones(40), u**2]), data.y.to_numpy(),
                               rcond=None)[0] / [1.0, float(top) ** 2]
    np.testing.assert_allclose(fit.coef.to_numpy(), expected, rtol=1e-7)
    assert data["x"].dtype == dtype  # the caller's frame is untouched


def test_int64_square_does_not_wrap_around():
    x = np.array([3_000_000_000, 4_000_000_000, 5_000_000_000, 3_500_000_000] * 5, dtype=np.int64)
    data = pd.DataFrame({"x": x, "y": np.arange(20.0)})
    fit = ar.attnreg("y ~ I(x**2)", data)
    col = fit.design.X[:, 1]
    np.testing.assert_array_equal(col, x.astype(np.float64) ** 2)
    assert (col > 0).all()


def test_object_column_of_python_numbers_is_numeric(df):
    data = df.assign(x=df.x.astype(object))
    np.testing.assert_allclose(ar.attnreg("y ~ x", data).coef.to_numpy(),
                               ar.attnreg("y ~ x", df).coef.to_numpy(), rtol=1e-12)


@pytest.mark.parametrize("stray", ["n/a", "oops", "1,5"])
def test_numbers_stored_as_text_with_a_stray_string_are_an_error(df, stray):
    data = df.assign(x=df.x.astype(object))
    data.loc["r3", "x"] = stray
    for method in ("ols", "ridge"):
        with pytest.raises(DataError, match=rf"data column 'x' is text.*mostly numbers \(59 of 60\)"
                                            rf".*{stray!r} at row 'r3'.*pd.to_numeric.*C\(x\)"):
            ar.attnreg("y ~ x", data, method=method)


def test_numbers_stored_as_strings_are_an_error(df):
    data = df.assign(x=df.x.map(str))
    with pytest.raises(DataError, match=r"'x' is text.*numbers stored as text"):
        ar.attnreg("y ~ x", data)


def test_c_forces_a_text_column_to_be_a_factor():
    data = pd.DataFrame({"g": ["1", "2", "3"] * 10, "y": np.arange(30.0)})
    fit = ar.attnreg("y ~ C(g)", data)
    assert fit.names == ["(Intercept)", "C(g)[T.2]", "C(g)[T.3]"]


@pytest.mark.parametrize("make, kind", [
    (lambda n: pd.date_range("2000", periods=n), "date-time"),
    (lambda n: pd.date_range("2000", periods=n, tz="Europe/Paris"), "date-time"),
    (lambda n: pd.to_timedelta(np.arange(n), unit="D"), "time span"),
    (lambda n: pd.period_range("2000-01", periods=n, freq="M"), "period"),
])
def test_datetime_like_columns_are_an_error(df, make, kind):
    data = df.assign(d=make(len(df)))
    with pytest.raises(DataError, match=rf"data column 'd' is a {kind}.*numeric time trend.*C\(d\)"):
        ar.attnreg("y ~ d", data, method="ridge")


def test_datetime_in_c_is_a_factor():
    data = pd.DataFrame({"d": pd.to_datetime(["2000-01-01", "2001-01-01"] * 10),
                         "y": np.arange(20.0)})
    assert len(ar.attnreg("y ~ C(d)", data).coef) == 2


def test_complex_column_is_an_error(df):
    with pytest.raises(DataError, match="data column 'c' is complex"):
        ar.attnreg("y ~ c", df.assign(c=df.x + 1j))


def test_identifier_like_text_column_must_be_wrapped_in_c():
    data = pd.DataFrame({"id": [f"id{i}" for i in range(40)], "y": np.arange(40.0)})
    with pytest.raises(DataError, match=r"'id' has 40 distinct values in 40 rows.*C\(id\)"):
        ar.attnreg("y ~ id", data, method="ridge")
    assert len(ar.attnreg("y ~ C(id)", data, method="ridge").coef) == 40


def test_small_factors_are_never_refused_for_their_levels():
    data = pd.DataFrame({"g": list("abcdefghi") * 2, "y": np.arange(18.0)})
    assert ar.attnreg("y ~ g", data).nobs == 18


def test_pandas_string_dtype_with_na_is_a_factor_with_missing_rows(df):
    g = pd.array(["a", "b", "c"] * 20, dtype="string")
    g[5] = pd.NA
    fit = ar.attnreg("y ~ x + g", df.assign(g=g))
    assert fit.nobs == 59 and "r5" not in fit.fitted.index
    ref = ar.attnreg("y ~ x + g", df.assign(g=np.array(["a", "b", "c"] * 20, dtype=object))
                     .drop(index="r5"))
    np.testing.assert_allclose(fit.coef.to_numpy(), ref.coef.to_numpy(), rtol=1e-12)


def test_convert_dtypes_frame_fits_like_the_original(df):
    data = df.copy()
    data.loc["r2", "x"] = np.nan
    a = ar.attnreg("y ~ x + z", data)
    b = ar.attnreg("y ~ x + z", data.convert_dtypes())
    np.testing.assert_allclose(a.coef.to_numpy(), b.coef.to_numpy(), rtol=1e-12)
    assert a.nobs == b.nobs == 59


# ----------------------------------------------------------------- factors and names

def test_one_level_factor_is_an_error(df):
    with pytest.raises(DataError, match=r"factor 'C\(g\)' has one level \('a'\)"):
        ar.attnreg("y ~ x + C(g)", df.assign(g="a"))
    with pytest.raises(DataError, match="factor 'g' has one level"):
        ar.attnreg("y ~ x + g", df.assign(g="a"), method="ridge")


def test_duplicate_column_names_are_an_error(df):
    data = pd.concat([df[["y", "x"]], df[["z"]].rename(columns={"z": "x"})], axis=1)
    with pytest.raises(DataError, match="more than one column named 'x'"):
        ar.attnreg("y ~ x", data)
    with pytest.raises(DataError, match="more than one column named 'x'"):
        ar.attnreg("y ~ .", data)


@pytest.mark.parametrize("name", ["my x", "x.1", "1x", "class"])
def test_unquoted_awkward_names_suggest_q(df, name):
    data = df.rename(columns={"x": name})
    with pytest.raises(FormulaError, match=rf"is not a valid Python expression.*Q\('{name}'\)"):
        ar.attnreg(f"y ~ {name}", data)
    assert ar.attnreg(f"y ~ Q('{name}')", data).coef.size == 2


def test_dot_over_integer_column_labels(df):
    data = pd.DataFrame({0: df.y.to_numpy(), 1: df.x.to_numpy(), 2: df.z.to_numpy()})
    fit = ar.attnreg("Q('0') ~ .", data)
    ref = ar.attnreg("y ~ x + z", df)
    np.testing.assert_allclose(fit.coef.to_numpy(), ref.coef.to_numpy(), rtol=1e-12)
    with pytest.raises(FormulaError, match=r"has no response left of '~'.*Q\('name'\)"):
        ar.attnreg("0 ~ .", data)


def test_nan_weight_with_na_raise_blames_the_weights(df):
    w = df.w.to_numpy().copy()
    w[4] = np.nan
    with pytest.raises(DataError, match="first is row 'r4' in weights"):
        ar.attnreg("y ~ x", df, weights=w, na_action="raise")


# ----------------------------------------------------------------- prediction

def test_predict_with_a_text_column_where_the_fit_had_numbers(df):
    fit = ar.attnreg("y ~ x", df)
    new = pd.DataFrame({"x": ["a", "b"]})
    with pytest.raises(DataError, match=r"newdata column 'x' is text.*'a' at row 0.*used it as a number"):
        fit.predict(new)
    with pytest.raises(DataError, match="newdata column 'x' is a date-time"):
        fit.predict(pd.DataFrame({"x": pd.date_range("2000", periods=2)}))


def test_predict_accepts_int_columns_and_a_dict_of_scalars(df):
    fit = ar.attnreg("y ~ x + I(x**2)", df)
    one = fit.predict({"x": 3})
    assert one.shape == (1,)
    expected = fit.coef.iloc[0] + 3 * fit.coef.iloc[1] + 9 * fit.coef.iloc[2]
    assert one.iloc[0] == pytest.approx(expected, rel=1e-12)
    ints = fit.predict(pd.DataFrame({"x": np.array([3_000_000_000], dtype=np.int64)}))
    assert np.isfinite(ints.iloc[0]) and ints.iloc[0] > 0


def test_predict_keeps_factor_columns_in_newdata_as_factors():
    data = pd.DataFrame({"g": [f"g{i % 30}" for i in range(300)], "y": np.arange(300.0)})
    fit = ar.attnreg("y ~ g", data)
    new = pd.DataFrame({"g": [f"g{i}" for i in range(30)]})  # 30 levels in 30 rows: fine here
    assert fit.predict(new).shape == (30,)


@pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")
def test_softmax_predict_gives_nan_for_rows_with_missing_values(df):
    fit = ar.attnreg("y ~ x + z", df, method="softmax", heads=1, seed=0, max_iter=5,
                     progress=False)
    new = df.head(4).copy()
    new.loc["r1", "x"] = np.nan
    pred = fit.predict(new)
    assert np.isnan(pred["r1"]) and np.isfinite(pred.drop("r1")).all()
    np.testing.assert_allclose(pred.drop("r1").to_numpy(),
                               fit.predict(new.drop(index="r1")).to_numpy(), rtol=1e-12)


def test_explain_top_zero_names_top(df):
    w = ar.attnreg("y ~ x", df).attention(df.head(1))
    with pytest.raises(OptionError, match="top must be a positive integer, however: top=0"):
        w.explain(0, top=0)


# ----------------------------------------------------------------- forecasts beyond the data

def test_forecast_lags_beyond_the_data(quarterly):
    with pytest.raises(DataError, match="lags and differences need more than the 80 rows"):
        ar.forecast("y ~ lag(y, 90)", quarterly, horizon=1)


def test_forecast_horizon_beyond_the_data(quarterly):
    with pytest.raises(OptionError, match="horizon=80 leaves nothing to forecast: data has 80 rows"):
        ar.forecast("y ~ lag(y, 80)", quarterly, horizon=80)


def test_integer_codes_inside_c_keep_their_level_names():
    data = pd.DataFrame({"cyl": np.array([4, 6, 8] * 10, dtype=np.int64), "y": np.arange(30.0)})
    fit = ar.attnreg("y ~ C(cyl)", data)
    assert fit.names == ["(Intercept)", "C(cyl)[T.6]", "C(cyl)[T.8]"]
    assert fit.predict(pd.DataFrame({"cyl": [8, 4]})).to_numpy() == pytest.approx(
        [fit.coef.iloc[0] + fit.coef.iloc[2], fit.coef.iloc[0]], rel=1e-12)
    nullable = data.assign(cyl=pd.array([4, 6, 8] * 9 + [4, 6, None], dtype="Int64"))
    assert ar.attnreg("y ~ C(cyl)", nullable).nobs == 29


# ----------------------------------------------------------------- zero weights, as R's lm()

def _r_zero_weights() -> dict:
    import json
    from pathlib import Path

    return json.loads((Path(__file__).parents[1] / "reference" / "zero_weights.json").read_text())


def test_zero_weights_match_r():
    ref = _r_zero_weights()
    data = pd.DataFrame(ref["data"])
    fit = ar.attnreg("y ~ x", data, weights="w")
    np.testing.assert_allclose(fit.coef.to_numpy(), ref["coef"], rtol=1e-10)
    np.testing.assert_allclose(fit.std_err.to_numpy(), ref["std_err"], rtol=1e-10)
    assert fit.sigma == pytest.approx(ref["sigma"], rel=1e-10)
    assert fit.r_squared == pytest.approx(ref["r_squared"], rel=1e-10)
    assert (fit.nobs, fit.df_resid) == (ref["nobs"], ref["df_resid"])
    assert list(fit.fitted.index) == list(data.index)  # every row, in data order
    np.testing.assert_allclose(fit.fitted.to_numpy(), ref["fitted"], rtol=1e-10)
    np.testing.assert_allclose(fit.resid.to_numpy(), ref["resid"], rtol=1e-9)
    np.testing.assert_allclose(fit.influence()["hat"].to_numpy(), ref["hat"], rtol=1e-9)
    ours = str(fit.summary()).split("Weighted Residuals:")[1].split("\n\n")[0]
    theirs = ref["summary"].split("Weighted Residuals:")[1].split("\n\n")[0]
    assert ours == theirs


def test_all_zero_weights_is_an_error(df):
    with pytest.raises(DataError, match="every weight is zero"):
        ar.attnreg("y ~ x", df, weights=np.zeros(len(df)))
    with pytest.raises(DataError, match="weights must be finite and non-negative; row 'r2'"):
        ar.attnreg("y ~ x", df, weights=np.where(np.arange(len(df)) == 2, -1.0, 1.0))


def test_predict_with_a_missing_factor_value_gives_nan(df):
    data = df.assign(g=np.array(["a", "b", "c"] * 20, dtype=object))
    fit = ar.attnreg("y ~ x + g", data)
    new = data.head(4).copy()
    new.loc["r2", "g"] = np.nan
    new.loc["r3", "x"] = np.nan
    pred = fit.predict(new)
    assert pred[["r2", "r3"]].isna().all()
    np.testing.assert_allclose(pred[["r0", "r1"]].to_numpy(), fit.fitted[["r0", "r1"]].to_numpy(),
                               rtol=1e-12)
    band = fit.predict(new, interval="prediction")
    assert band.loc[["r2", "r3"]].isna().all().all() and band.loc[["r0", "r1"]].notna().all().all()


def test_compare_refuses_what_is_not_a_fit(df):
    with pytest.raises(OptionError, match=r"fits\[1\] is int"):
        ar.compare([ar.attnreg("y ~ x", df), 2])


def test_attention_chunk_size_must_be_positive(df):
    with pytest.raises(OptionError, match="chunk_size must be a positive integer"):
        ar.attnreg("y ~ x", df).attention(df.head(2), chunk_size=0)
