"""What a fit keeps of its data: a pickle (or a copy) keeps only the columns the formula uses
and those named when fitting, for every row; in a session, any column of the caller's frame
can still be named later."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import ColumnNotKeptError, DataError
from tests.conftest import RTOL_EXACT, RTOL_SM

N_ROWS, N_UNUSED = 2_000, 20
#: Two pickles that differ only in what a fit does not keep are the same size up to this
#: many bytes; the 20 unused float64 columns of 2,000 rows weigh 320 kB, so anything that
#: grows with them is far above it.
PICKLE_SLACK = 1_024


def _panel(n: int = N_ROWS, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    firm = rng.integers(0, 25, n)
    x = rng.normal(size=n) + 0.3 * firm
    return pd.DataFrame({"y": 1.0 + 0.5 * x + rng.normal(size=n) + 0.2 * (firm % 5),
                         "x": x, "firm": firm, "year": rng.integers(2000, 2012, n),
                         "w": rng.uniform(0.5, 2.0, n), "z": rng.normal(size=n)})


def _with_unused(frame: pd.DataFrame, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    extra = pd.DataFrame(rng.normal(size=(len(frame), N_UNUSED)), index=frame.index,
                         columns=[f"u{j}" for j in range(N_UNUSED)])
    return pd.concat([frame, extra], axis=1)


def _size(obj: object) -> int:
    return len(pickle.dumps(obj))


def _statsmodels_cluster_se(frame: pd.DataFrame) -> np.ndarray:
    """statsmodels' cluster-robust SEs of y ~ x by firm (G/(G-1)·(n-1)/(n-K), as HC1)."""
    X = sm.add_constant(frame["x"].to_numpy())
    res = sm.OLS(frame["y"].to_numpy(), X).fit(cov_type="cluster",
                                                cov_kwds={"groups": frame["firm"].to_numpy()})
    return np.asarray(res.bse)


def test_a_pickle_does_not_grow_with_unused_columns() -> None:
    narrow = _panel()[["y", "x"]]
    wide = _with_unused(narrow)
    for formula, method in (("y ~ x", "ols"), ("y ~ x", "ridge")):
        small = _size(ar.attnreg(formula, narrow, method))
        big = _size(ar.attnreg(formula, wide, method))
        assert abs(big - small) < PICKLE_SLACK, (method, small, big)
    small = _size(copy.deepcopy(ar.attnreg("y ~ x", narrow)).design)
    assert abs(_size(copy.deepcopy(ar.attnreg("y ~ x", wide)).design) - small) < PICKLE_SLACK


def test_a_forecast_pickle_does_not_grow_and_still_forecasts_ahead() -> None:
    frame = _panel(200)[["y", "x"]].set_axis(pd.period_range("1960Q1", periods=200, freq="Q"))
    wide = _with_unused(frame)
    fcs = [ar.forecast("y ~ lag(y, 1) + lag(x, 1)", d, start="2000Q1", horizon=1)
           for d in (frame, wide)]
    assert abs(_size(fcs[1]) - _size(fcs[0])) < PICKLE_SLACK
    back = pickle.loads(pickle.dumps(fcs[1]))
    pd.testing.assert_frame_equal(back.ahead(), fcs[1].ahead(), rtol=RTOL_EXACT)


def test_an_unused_column_clusters_in_a_session_and_is_refused_after_pickling() -> None:
    wide = _with_unused(_panel())
    fit = ar.attnreg("y ~ x", wide)
    se = fit.with_vcov("cluster", cluster="firm").std_err.to_numpy()
    assert_allclose(se, _statsmodels_cluster_se(wide), rtol=RTOL_SM)
    for back in (pickle.loads(pickle.dumps(fit)), copy.deepcopy(fit)):
        assert set(back.design.data.columns) == {"y", "x"}
        assert back.design.data.index.equals(wide.index)
        with pytest.raises(ColumnNotKeptError, match=r"column 'firm' was not kept by this fit.*"
                           r"cluster=df\['firm'\].*attnreg\(\.\.\., vcov='cluster', "
                           r"cluster='firm'\)"):
            back.with_vcov("cluster", cluster="firm")
        with pytest.raises(ColumnNotKeptError, match=r"'year' was not kept.*vcov='DK', time='year'"):
            back.with_vcov("DK", time="year")
        with pytest.raises(ColumnNotKeptError, match="'firm' was not kept"):
            back.with_vcov("cluster", cluster=["firm", "year"])
        assert_allclose(back.with_vcov("cluster", cluster=wide["firm"]).std_err, se,
                        rtol=RTOL_EXACT)
        assert_allclose(back.with_vcov("cluster", cluster=wide["firm"].to_numpy()).std_err, se,
                        rtol=RTOL_EXACT)


def test_columns_named_when_fitting_survive_pickling_and_the_frame_is_not_modified() -> None:
    wide = _with_unused(_panel())
    wide.loc[wide.index[:7], "y"] = np.nan  # rows dropped: positions of the fitted rows matter
    before = wide.copy(deep=True)
    fit = ar.attnreg("y ~ x", wide, weights="w", subset="z > -1.5", vcov="cluster",
                     cluster="firm")
    dk = ar.attnreg("y ~ x", wide, vcov="DK", time="year")
    pd.testing.assert_frame_equal(wide, before)
    back, back_dk = pickle.loads(pickle.dumps(fit)), pickle.loads(pickle.dumps(dk))
    assert set(back.design.data.columns) == {"y", "x", "w", "z", "firm"}
    assert set(back_dk.design.data.columns) == {"y", "x", "year"}
    assert_allclose(back.with_vcov("cluster", cluster="firm", type="HC0").std_err,
                    fit.with_vcov("cluster", cluster="firm", type="HC0").std_err, rtol=RTOL_EXACT)
    assert_allclose(back_dk.with_vcov("DK", time="year", maxlags=1).std_err,
                    dk.with_vcov("DK", time="year", maxlags=1).std_err, rtol=RTOL_EXACT)
    pd.testing.assert_frame_equal(wide, before)
    assert not np.shares_memory(back.design.data["x"].to_numpy(), wide["x"].to_numpy())


def test_careless_column_labels_pickle_without_the_unused_columns() -> None:
    wide = _with_unused(_panel()[["y", "x", "firm"]])
    numbered = wide.set_axis(range(wide.shape[1]), axis=1)  # 0: y, 1: x, 2: firm, 3…: unused
    fit = ar.attnreg("Q('0') ~ Q('1')", numbered)
    se = fit.with_vcov("cluster", cluster="2").std_err.to_numpy()
    assert_allclose(se, _statsmodels_cluster_se(wide), rtol=RTOL_SM)
    back = pickle.loads(pickle.dumps(fit))
    assert back.design.data.columns.tolist() == [0, 1]  # the caller's labels, as given
    with pytest.raises(ColumnNotKeptError, match="column '2' was not kept"):
        back.with_vcov("cluster", cluster="2")
    assert_allclose(back.with_vcov("cluster", cluster=numbered[2]).std_err, se, rtol=RTOL_EXACT)
    twice = pd.concat([wide, wide[["u0"]]], axis=1)  # two columns named u0: refused as before
    with pytest.raises(DataError, match="more than one column named 'u0'"):
        ar.attnreg("y ~ x", twice)


def test_dict_input_and_multiindex_rows() -> None:
    wide = _with_unused(_panel()[["y", "x", "firm", "year"]])
    columns = {name: wide[name].to_numpy() for name in wide.columns}
    fit = ar.attnreg("y ~ x", columns)
    se = fit.with_vcov("cluster", cluster="firm").std_err.to_numpy()
    assert_allclose(se, _statsmodels_cluster_se(wide), rtol=RTOL_SM)
    back = pickle.loads(pickle.dumps(fit))
    assert set(back.design.data.columns) == {"y", "x"}
    assert_allclose(back.with_vcov("cluster", cluster=columns["firm"]).std_err, se,
                    rtol=RTOL_EXACT)
    rows = wide.set_index(["firm", "year"], append=True)  # MultiIndex rows (row, firm, year)
    fit = ar.attnreg("y ~ x", rows)
    back = pickle.loads(pickle.dumps(fit))
    assert set(back.design.data.columns) == {"y", "x"}
    assert back.design.data.index.equals(rows.index)
    ids = pd.Series(wide["firm"].to_numpy(), index=rows.index)
    assert_allclose(back.with_vcov("cluster", cluster=ids).std_err, se, rtol=RTOL_EXACT)
    assert _size(fit) < _size(ar.attnreg("y ~ x", rows[["y", "x"]])) + PICKLE_SLACK


def test_a_glm_keeps_its_offset_and_named_cluster_and_refuses_the_others() -> None:
    rng = np.random.default_rng(3)
    frame = _with_unused(_panel(400)[["x", "firm", "year"]])
    frame["pyears"] = rng.uniform(1.0, 5.0, len(frame))
    frame["deaths"] = rng.poisson(frame["pyears"] * np.exp(0.1 * frame["x"]))
    fit = ar.attnreg("deaths ~ x", frame, method="poisson", offset="np.log(pyears)",
                     vcov="cluster", cluster="firm")
    back = pickle.loads(pickle.dumps(fit))
    assert set(back.design.data.columns) == {"deaths", "x", "pyears", "firm"}
    assert_allclose(back.with_vcov("cluster", cluster="firm").std_err,
                    fit.with_vcov("cluster", cluster="firm").std_err, rtol=RTOL_EXACT)
    with pytest.raises(ColumnNotKeptError, match=r"'year' was not kept.*cluster=df\['year'\]"):
        back.with_vcov("cluster", cluster="year")
    assert_allclose(back.with_vcov("cluster", cluster=frame["year"].to_numpy()).std_err,
                    fit.with_vcov("cluster", cluster="year").std_err, rtol=RTOL_EXACT)
