"""attention_over_time: bucket sums of each forecast's weights against fits on the data observed
at its origin, the single-forecast view, and invariance to data after the origin."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.timeseries.views import AttentionOverTime, attention_over_time
from tests.conftest import ATOL_IDENTITY

FORMULA = "y ~ lag(y, 1) + lag(x, 1) + lag(z, 2)"


def buckets_by_hand(weights: pd.Series, origin: pd.Period, edges=(4, 20, 40)) -> tuple[list, list]:
    """Signed sums and absolute shares by age (origin − period + 1, in quarters), by loops."""
    sums, absolute = [0.0] * (len(edges) + 1), [0.0] * (len(edges) + 1)
    for label, w in weights.items():
        age = (origin - label).n + 1
        b = next((i for i, e in enumerate(edges) if age <= e), len(edges))
        sums[b] += w
        absolute[b] += abs(w)
    total = sum(absolute)
    return sums, [a / total for a in absolute]


@pytest.mark.parametrize(("method", "options"), [("ols", {}), ("ridge", {"lam": 1.5}),
                                                 ("pcr", {"k": 2})])
def test_against_a_fit_on_the_data_observed_at_the_origin(series, method, options) -> None:
    fc = ar.forecast(FORMULA, series, method=method, start="2010Q1", **options)
    att = attention_over_time(fc)
    for origin in [pd.Period("2009Q4", "Q"), pd.Period("2014Q2", "Q"), pd.Period("2022Q1", "Q")]:
        fit = ar.attnreg(FORMULA, series.loc[:origin], method=method, **options)
        target = origin + 1
        w = fit.attention(series.loc[:target]).weights.iloc[-1]  # the query for the target
        assert_allclose(fit.predict(series.loc[:target]).iloc[-1],
                        fc.forecasts.loc[target, "forecast"], rtol=1e-9)
        sums, shares = buckets_by_hand(w, origin)
        assert_allclose(att.weight.loc[origin].to_numpy(), sums, rtol=1e-8, atol=1e-12)
        assert_allclose(att.share.loc[origin].to_numpy(), shares, rtol=1e-8, atol=1e-12)
    assert_allclose(att.weight.sum(axis=1), 1.0, atol=ATOL_IDENTITY)  # with an intercept
    assert_allclose(att.share.sum(axis=1), 1.0, atol=ATOL_IDENTITY)
    assert (att.weight.to_numpy() < 0).any()  # signed: linear attention is not convex
    assert att.kind == "linear" and att.buckets == "age"


def test_agrees_with_attention_shares_and_refit_every(series) -> None:
    fc = ar.forecast(FORMULA, series, method="ridge", start="2010Q1", refit_every=4)
    att = attention_over_time(fc, buckets=(4, 20))
    shares = fc.attention_shares((4, 20))  # Σ|ω| on the model's most recent training rows
    refit = fc.plan.refit
    assert refit.sum() < refit.size
    # at a refit the model's last training row is the origin: the two views agree
    assert_allclose(att.share["1-4"].to_numpy()[refit], shares["last_4"].to_numpy()[refit],
                    rtol=1e-10)
    # between refits ages count from the origin, so the last 4 periods hold fewer model rows
    assert np.all(att.share["1-4"].to_numpy()[~refit] < shares["last_4"].to_numpy()[~refit])
    for i in (1, 2, 3, 6):  # bucket the single-forecast view of forecast i by hand
        target = fc.forecasts.index[i]
        w = fc.attention(target).weights.iloc[0]
        sums, shares_i = buckets_by_hand(w, fc.plan.origin_labels[i], edges=(4, 20))
        assert_allclose(att.weight.iloc[i].to_numpy(), sums, rtol=1e-9, atol=1e-12)
        assert_allclose(att.share.iloc[i].to_numpy(), shares_i, rtol=1e-9, atol=1e-12)


def test_decades(series) -> None:
    fc = ar.forecast(FORMULA, series, start="2010Q1")
    att = attention_over_time(fc, origins=["2012Q3", "2020Q4"], buckets="decade")
    assert list(att.weight.columns) == ["2000s", "2010s", "2020s"]
    for origin in att.weight.index:
        w = fc.attention(origin + 1).weights.iloc[0]
        decade = (w.index.year // 10 * 10).astype(str) + "s"
        ref = w.groupby(decade).sum().reindex(att.weight.columns, fill_value=0.0)
        assert_allclose(att.weight.loc[origin].to_numpy(), ref.to_numpy(), rtol=1e-12, atol=1e-14)
    assert att.weight.loc[pd.Period("2012Q3", "Q"), "2020s"] == 0.0  # not yet observed


@pytest.mark.filterwarnings("ignore:softmax attention fit did not converge")
@pytest.mark.parametrize(("method", "kw"), [
    ("ols", {}), ("ridge", {}), ("pcr", {}), ("ridge", {"scheme": "rolling", "window": 30}),
    ("softmax", {"refit_every": 3, "heads": 2, "max_iter": 15, "seed": 1})])
def test_future_perturbation_invariance(series, method, kw) -> None:
    start = "2018Q1" if method == "softmax" else "2010Q1"
    base = attention_over_time(ar.forecast(FORMULA, series, method=method, start=start, **kw))
    cut = pd.Period("2019Q2", freq="Q")
    noisy = series.copy()
    later = noisy.index > cut
    noisy.loc[later] = noisy.loc[later] * 3.0 + 7.0
    moved = attention_over_time(ar.forecast(FORMULA, noisy, method=method, start=start, **kw))
    past = base.weight.index <= cut
    assert past.sum() >= 3 and (~past).sum() >= 3
    for table in ("weight", "share"):
        a, b = getattr(base, table), getattr(moved, table)
        assert_allclose(b.loc[past].to_numpy(), a.loc[past].to_numpy(), rtol=1e-12, atol=1e-14)
        assert not np.allclose(b.loc[~past].to_numpy(), a.loc[~past].to_numpy())
    if method == "softmax":
        assert base.kind == "softmax"
        assert_allclose(base.weight.to_numpy(), base.share.to_numpy(), rtol=1e-12)  # convex


def test_selection_errors_and_pickle(series) -> None:
    fc = ar.forecast(FORMULA, series, start="2010Q1")
    one = attention_over_time(fc, origins="2015Q1")
    assert one.weight.shape == (1, 4)
    span = attention_over_time(fc, origins=slice("2015Q1", "2016Q4"))
    assert span.weight.index.astype(str).tolist() == [f"{y}Q{q}" for y in (2015, 2016)
                                                      for q in range(1, 5)]
    back = pickle.loads(pickle.dumps(span))
    assert isinstance(back, AttentionOverTime) and back.share.equals(span.share)
    with pytest.raises(OptionError, match="'1990Q1' is not a forecast origin"):
        attention_over_time(fc, origins="1990Q1")
    with pytest.raises(OptionError, match="buckets must be increasing positive integers"):
        attention_over_time(fc, buckets=(20, 4))
    with pytest.raises(OptionError, match="is empty"):
        attention_over_time(fc, origins=slice("2016Q1", "2015Q1"))
    plain = series.reset_index(drop=True)
    fr = ar.forecast(FORMULA, plain, start=60)
    with pytest.raises(OptionError, match="buckets='decade' needs dated rows"):
        attention_over_time(fr, buckets="decade")
    assert attention_over_time(fr, origins=59).weight.shape == (1, 4)


def test_several_horizons_and_iterated(series) -> None:
    fh = ar.forecast("y ~ lag(y, h) + lag(x, h)", series, start="2010Q1", horizon=[1, 3])
    alone = ar.forecast("y ~ lag(y, 3) + lag(x, 3)", series, start="2010Q1", horizon=3)
    a, b = attention_over_time(fh, horizon=3), attention_over_time(alone)
    assert_allclose(a.weight.to_numpy(), b.weight.to_numpy(), rtol=1e-10, atol=1e-14)
    # at h = 3 the origin is 3 quarters before the target; age 1 is the origin's own quarter
    origin = pd.Period("2015Q1", "Q")
    fit = ar.attnreg("y ~ lag(y, 3) + lag(x, 3)", series.loc[:origin])
    w = fit.attention(series.loc[:origin + 3]).weights.iloc[-1]
    sums, _ = buckets_by_hand(w, origin)
    assert_allclose(a.weight.loc[origin].to_numpy(), sums, rtol=1e-8, atol=1e-12)
    with pytest.raises(OptionError, match="choose one with horizon="):
        attention_over_time(fh)
    it = ar.forecast("y ~ lag(y, 1) + lag(y, 2)", series, start="2010Q1", horizon=[1, 2],
                     strategy="iterated")
    with pytest.raises(OptionError, match="use strategy='direct'"):
        attention_over_time(it, horizon=2)


def test_the_method_on_the_results_is_the_function(series) -> None:
    fc = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", series, start=series.index[60])
    by_method = fc.attention_over_time(buckets=(2, 10))
    by_function = attention_over_time(fc, None, (2, 10))
    pd.testing.assert_frame_equal(by_method.weight, by_function.weight)
    pd.testing.assert_frame_equal(by_method.share, by_function.share)
    assert list(by_method.weight.columns) != list(fc.attention_over_time().weight.columns)
