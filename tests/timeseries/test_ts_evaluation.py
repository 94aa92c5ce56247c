"""Forecast-evaluation statistics of attnreg.timeseries.evaluation against hand computations."""

from __future__ import annotations

import doctest
import math

import numpy as np
import pytest
import statsmodels.api as sm
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose
from scipy import stats
from statsmodels.tsa.stattools import diebold_mariano_test

from attnreg.exceptions import DataError, OptionError
from attnreg.timeseries import evaluation
from attnreg.timeseries.evaluation import (
    clark_west,
    diebold_mariano,
    mae,
    msfe,
    msfe_ratio,
    oos_r2,
    rmse,
)
from tests.conftest import RTOL_EXACT

ACTUAL = np.array([1.0, -0.5, 2.0, 0.3, -1.2, 0.8, 1.5, -0.1])
MODEL = np.array([0.7, -0.2, 1.4, 0.6, -0.8, 0.5, 1.1, 0.2])
BENCH = np.full(8, 0.35)


def autocov(x: list[float], k: int) -> float:
    """gamma_k with divisor n, written out as a plain sum."""
    n, mean = len(x), sum(x) / len(x)
    return sum((x[t] - mean) * (x[t - k] - mean) for t in range(k, n)) / n


def test_losses_by_hand() -> None:
    errors = ACTUAL - MODEL
    assert msfe(ACTUAL, MODEL) == pytest.approx(sum(e * e for e in errors) / 8, rel=RTOL_EXACT)
    assert rmse(ACTUAL, MODEL) == pytest.approx(math.sqrt(msfe(ACTUAL, MODEL)), rel=RTOL_EXACT)
    assert mae(ACTUAL, MODEL) == pytest.approx(sum(abs(e) for e in errors) / 8, rel=RTOL_EXACT)
    ratio = sum(e * e for e in errors) / sum((a - 0.35) ** 2 for a in ACTUAL)
    assert msfe_ratio(ACTUAL, MODEL, BENCH) == pytest.approx(ratio, rel=RTOL_EXACT)
    assert oos_r2(ACTUAL, MODEL, BENCH) == pytest.approx(1 - ratio, rel=RTOL_EXACT)


@pytest.mark.parametrize(("h", "loss"), [(1, "squared"), (2, "squared"), (3, "absolute")])
def test_diebold_mariano_by_hand(h: int, loss: str) -> None:
    rng = np.random.default_rng(h)
    e_m, e_b = list(rng.standard_normal(15)), list(1.5 * rng.standard_normal(15))
    L = (lambda e: e * e) if loss == "squared" else abs
    d = [L(a) - L(b) for a, b in zip(e_m, e_b, strict=True)]
    n = len(d)
    lrv = autocov(d, 0) + 2 * sum(autocov(d, k) for k in range(1, h))
    dm = (sum(d) / n) / math.sqrt(lrv / n)
    hln = dm * math.sqrt((n + 1 - 2 * h + h * (h - 1) / n) / n)
    res = diebold_mariano(e_m, e_b, h=h, loss=loss)  # type: ignore[arg-type]
    assert res.kernel == "rectangular" and res.h == h and res.n_obs == n
    assert res.statistic == pytest.approx(hln, rel=RTOL_EXACT)
    assert res.p_value == pytest.approx(2 * stats.t.sf(abs(hln), n - 1), rel=RTOL_EXACT)
    plain = diebold_mariano(e_m, e_b, h=h, loss=loss, hln=False)  # type: ignore[arg-type]
    assert plain.statistic == pytest.approx(dm, rel=RTOL_EXACT)
    assert plain.p_value == pytest.approx(2 * stats.norm.sf(abs(dm)), rel=RTOL_EXACT)
    assert res.mean_loss_diff == pytest.approx(sum(d) / n, rel=RTOL_EXACT)


def test_diebold_mariano_h1_is_a_t_test_of_the_loss_differential() -> None:
    rng = np.random.default_rng(3)
    e_m, e_b = rng.standard_normal(30), 1.3 * rng.standard_normal(30)
    t = stats.ttest_1samp(e_m**2 - e_b**2, 0.0)
    n = e_m.size
    # divisor n in DM's variance against n - 1 in the t-test ...
    plain = diebold_mariano(e_m, e_b, hln=False)
    assert plain.statistic == pytest.approx(t.statistic * math.sqrt(n / (n - 1)), rel=RTOL_EXACT)
    # ... which is exactly what the HLN factor sqrt((n - 1) / n) undoes at h = 1
    hln = diebold_mariano(e_m, e_b, hln=True)
    assert hln.statistic == pytest.approx(t.statistic, rel=RTOL_EXACT)
    assert hln.p_value == pytest.approx(t.pvalue, rel=RTOL_EXACT)


@pytest.mark.parametrize("hln", [False, True])
def test_diebold_mariano_matches_statsmodels_at_h1(hln: bool) -> None:
    rng = np.random.default_rng(4)
    y = rng.standard_normal(50)
    fa, fb = y + rng.standard_normal(50), y + 1.2 * rng.standard_normal(50)
    ref = diebold_mariano_test(y, fa, fb, lags=0, harvey_adj=hln)
    res = diebold_mariano(y - fa, y - fb, h=1, hln=hln)
    assert res.statistic == pytest.approx(ref.statistic, rel=RTOL_EXACT)
    assert res.p_value == pytest.approx(ref.pvalue, rel=RTOL_EXACT)


def test_bartlett_fallback_when_the_rectangular_variance_is_not_positive() -> None:
    rng = np.random.default_rng(5)
    n, h = 40, 2
    swing = np.where(np.arange(n) % 2 == 0, 0.5, -0.5) + 0.01 * rng.standard_normal(n)
    e_b = np.ones(n)
    e_m = 1.0 + swing  # d_t = swing_t alternates: gamma_0 + 2 gamma_1 < 0
    res = diebold_mariano(e_m, e_b, h=h, loss="absolute")
    assert res.kernel == "bartlett" and res.long_run_variance > 0
    d = list(swing)
    assert res.long_run_variance == pytest.approx(autocov(d, 0) + autocov(d, 1), rel=RTOL_EXACT)
    # statsmodels' DM uses Newey–West (Bartlett) weights 1 - k/(lags + 1) throughout
    y = np.zeros(n)
    ref = diebold_mariano_test(y, y - e_m, y - e_b, lags=h - 1, criterion="mad",
                               harvey_adj=True, horizon=h)
    assert res.statistic == pytest.approx(ref.statistic, rel=RTOL_EXACT)
    assert res.p_value == pytest.approx(ref.pvalue, rel=RTOL_EXACT)


def test_diebold_mariano_is_antisymmetric() -> None:
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal(25), rng.standard_normal(25)
    ab, ba = diebold_mariano(a, b, h=3), diebold_mariano(b, a, h=3)
    assert ab.statistic == pytest.approx(-ba.statistic, rel=RTOL_EXACT)
    assert ab.p_value == pytest.approx(ba.p_value, rel=RTOL_EXACT)
    less = diebold_mariano(a, b, h=3, alternative="less")
    greater = diebold_mariano(b, a, h=3, alternative="greater")
    assert less.p_value == pytest.approx(greater.p_value, rel=RTOL_EXACT)
    assert less.p_value + diebold_mariano(a, b, h=3, alternative="greater").p_value == \
        pytest.approx(1.0, rel=RTOL_EXACT)


@pytest.mark.parametrize("h", [1, 3])
def test_clark_west_by_hand(h: int) -> None:
    rows = zip(ACTUAL, MODEL, BENCH, strict=True)
    f = [(a - b) ** 2 - ((a - m) ** 2 - (b - m) ** 2) for a, m, b in rows]
    n = len(f)
    lrv = autocov(f, 0) + 2 * sum((1 - k / h) * autocov(f, k) for k in range(1, h))
    stat = (sum(f) / n) / math.sqrt(lrv / n)
    res = clark_west(ACTUAL, MODEL, BENCH, h=h)
    assert res.statistic == pytest.approx(stat, rel=RTOL_EXACT)
    assert res.p_value == pytest.approx(stats.norm.sf(stat), rel=RTOL_EXACT)
    assert res.mean_adj_diff == pytest.approx(sum(f) / n, rel=RTOL_EXACT)


@pytest.mark.parametrize("h", [1, 4])
def test_clark_west_is_the_newey_west_t_statistic_of_a_constant(h: int) -> None:
    rng = np.random.default_rng(7)
    y = rng.standard_normal(60)
    m, b = 0.6 * y + 0.5 * rng.standard_normal(60), np.zeros(60)
    f = (y - b) ** 2 - ((y - m) ** 2 - (b - m) ** 2)
    ref = sm.OLS(f, np.ones_like(f)).fit(cov_type="HAC",
                                        cov_kwds={"maxlags": h - 1, "use_correction": False})
    assert clark_west(y, m, b, h=h).statistic == pytest.approx(ref.tvalues[0], rel=RTOL_EXACT)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(-100, 100), st.floats(-100, 100), st.floats(-100, 100)),
                min_size=2, max_size=40))
def test_oos_r2_is_one_minus_the_msfe_ratio(rows: list[tuple[float, float, float]]) -> None:
    y, f, b = (np.array(c) for c in zip(*rows, strict=True))
    if np.sum((y - b) ** 2) == 0:
        return
    assert_allclose(oos_r2(y, f, b), 1.0 - msfe_ratio(y, f, b), rtol=RTOL_EXACT, atol=1e-12)
    assert_allclose(rmse(y, f) ** 2, msfe(y, f), rtol=RTOL_EXACT, atol=1e-300)


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: msfe([1.0, 2.0], [1.0]), DataError, "one length"),
    (lambda: msfe([1.0], [1.0]), DataError, "at least 2"),
    (lambda: mae([1.0, np.nan], [1.0, 2.0]), DataError, "NaN or inf"),
    (lambda: diebold_mariano([1.0, 2.0], [0.0, 1.0], loss="huber"), OptionError, "loss must"),
    (lambda: diebold_mariano([1.0, 2.0], [0.0, 1.0], alternative="x"), OptionError, "alternative"),
    (lambda: diebold_mariano([1.0, 2.0, 3.0], [0.0, 1.0, 2.0], h=3), OptionError, "h must be"),
    (lambda: diebold_mariano([1.0, 2.0], [1.0, 2.0]), DataError, "zero variance"),
    (lambda: clark_west([1.0, 2.0], [1.0, 2.0], [1.0, 2.0], h=0), OptionError, "h must be"),
    (lambda: clark_west([1.0, 2.0], [0.0, 0.0], [0.0, 0.0]), DataError, "zero variance"),
])
def test_errors(call, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_docstring_examples() -> None:
    result = doctest.testmod(evaluation)
    assert result.attempted > 0 and result.failed == 0
