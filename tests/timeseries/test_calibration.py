"""Calibration tests of forecast intervals: Kupiec, Christoffersen and Berkowitz LR tests against
hand computations, scipy's G-tests and statsmodels' AR(1) likelihood; ``fc.calibration()``."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from numpy.testing import assert_allclose
from scipy import stats

import attnreg as ar
from attnreg.exceptions import DataError, OptionError
from attnreg.timeseries.calibration import (berkowitz, christoffersen, kupiec,
                                            pit_histogram)
from attnreg.timeseries.scores import forecast_scores
from tests.conftest import RTOL_EXACT, RTOL_SM

# 10 forecasts, 3 misses; transitions: 00 ×4, 01 ×2, 10 ×2, 11 ×1 (9 pairs)
HITS = [0, 0, 1, 1, 0, 0, 0, 1, 0, 0]


def test_kupiec_by_hand() -> None:
    # LR_uc = -2 [3 ln 0.1 + 7 ln 0.9 - 3 ln 0.3 - 7 ln 0.7]
    by_hand = -2.0 * (3 * math.log(0.1) + 7 * math.log(0.9) - 3 * math.log(0.3)
                      - 7 * math.log(0.7))
    res = kupiec(HITS, 0.1)
    assert_allclose(res.statistic, by_hand, rtol=RTOL_EXACT)
    assert_allclose(res.p_value, stats.chi2.sf(by_hand, 1), rtol=RTOL_EXACT)
    # the same statistic is the G-test of the counts (7, 3) against (9, 1)
    g = stats.power_divergence([7, 3], f_exp=[9.0, 1.0], lambda_="log-likelihood").statistic
    assert_allclose(res.statistic, g, rtol=RTOL_EXACT)
    # no miss at all: LR = -2 n ln(1 - p)
    assert_allclose(kupiec([0] * 20, 0.05).statistic, -40.0 * math.log(0.95), rtol=RTOL_EXACT)


#: Kupiec (1995), Table 3 (reproduced in Jorion, Value at Risk, Table 6-3): the numbers of
#: misses N in T observations NOT rejected at 5 % for a miss probability p, "a < N < b".
KUPIEC_TABLE = {(0.01, 510): (1, 11), (0.01, 1000): (4, 17),
                (0.025, 255): (2, 12), (0.025, 510): (6, 21), (0.025, 1000): (15, 36),
                (0.05, 255): (6, 21), (0.05, 510): (16, 36), (0.05, 1000): (37, 65),
                (0.10, 255): (16, 36), (0.10, 510): (38, 65), (0.10, 1000): (81, 120)}


@pytest.mark.parametrize(("p", "T"), sorted(KUPIEC_TABLE))
def test_kupiec_reproduces_the_published_non_rejection_regions(p: float, T: int) -> None:
    # (the table's p = 0.01, T = 255 entry "N < 7" leaves out the lower end: at N = 0,
    # LR = -2 T ln(0.99) = 5.13 > 3.84 rejects, so that entry is not checked)
    a, b = KUPIEC_TABLE[(p, T)]
    kept = [N for N in range(T // 4)
            if kupiec(np.r_[np.ones(N), np.zeros(T - N)], p).p_value > 0.05]
    assert (kept[0], kept[-1]) == (a + 1, b - 1)
    assert kept == list(range(a + 1, b))


def test_christoffersen_by_hand() -> None:
    # π01 = 2/6, π11 = 1/3, π = 3/9: the chain is exactly independent, LR_ind = 0
    ind, cc = christoffersen(HITS, 0.1)
    assert abs(ind.statistic) < 1e-12  # exact zero up to rounding of logs
    assert_allclose(cc.statistic, kupiec(HITS, 0.1).statistic, rtol=RTOL_EXACT)
    # clustered misses: 00 ×5, 01 ×1, 11 ×2, 10 ×1 (9 pairs)
    hits = [0, 0, 0, 0, 0, 0, 1, 1, 1, 0]
    n00, n01, n10, n11 = 5, 1, 1, 2
    pi01, pi11, pi = n01 / (n00 + n01), n11 / (n10 + n11), (n01 + n11) / 9
    by_hand = -2.0 * ((n00 + n10) * math.log(1 - pi) + (n01 + n11) * math.log(pi)
                      - n00 * math.log(1 - pi01) - n01 * math.log(pi01)
                      - n10 * math.log(1 - pi11) - n11 * math.log(pi11))
    ind, cc = christoffersen(hits, 0.1)
    assert_allclose(ind.statistic, by_hand, rtol=RTOL_EXACT)
    g = stats.chi2_contingency([[n00, n01], [n10, n11]], correction=False,
                               lambda_="log-likelihood")[0]
    assert_allclose(ind.statistic, g, rtol=RTOL_EXACT)
    assert_allclose(cc.statistic, by_hand + kupiec(hits, 0.1).statistic, rtol=RTOL_EXACT)
    assert_allclose(cc.p_value, stats.chi2.sf(cc.statistic, 2), rtol=RTOL_EXACT)
    # a miss never followed by a miss: π11 = 0, 0 ln 0 = 0
    assert np.isfinite(christoffersen([0, 1, 0, 0, 1, 0], 0.2)[0].statistic)


def test_berkowitz_against_statsmodels_ar1_likelihood() -> None:
    rng = np.random.default_rng(4)
    z = np.empty(300)
    z[0] = 0.0
    for t in range(1, 300):
        z[t] = 0.3 + 0.4 * (z[t - 1] - 0.3) + 1.2 * rng.standard_normal()
    res = berkowitz(stats.norm.cdf(z), likelihood="conditional")
    ols = sm.OLS(z[1:], sm.add_constant(z[:-1])).fit()  # llf: Gaussian, σ² = RSS / n
    by_sm = 2.0 * (ols.llf - stats.norm.logpdf(z[1:]).sum())
    assert_allclose(res.statistic, by_sm, rtol=RTOL_SM)
    assert_allclose(res.p_value, stats.chi2.sf(by_sm, 3), rtol=RTOL_SM)
    assert_allclose(res.rho, ols.params[1], rtol=RTOL_SM)
    assert_allclose(res.mu, ols.params[0] / (1.0 - ols.params[1]), rtol=RTOL_SM)
    assert_allclose(res.sigma2, ols.ssr / 299, rtol=RTOL_SM)
    assert res.p_value < 1e-6  # mean 0.3, AR 0.4, sd 1.2 against N(0, 1) iid


def test_berkowitz_by_hand_on_four_values() -> None:
    z = np.array([0.5, -1.0, 0.25, 1.5])
    # regression of (-1, 0.25, 1.5) on (1, z_{t-1}) with z_{t-1} = (0.5, -1, 0.25)
    X = np.column_stack([np.ones(3), z[:-1]])
    b = np.linalg.solve(X.T @ X, X.T @ z[1:])
    s2 = float(np.sum((z[1:] - X @ b) ** 2)) / 3
    ll1 = -1.5 * (math.log(2 * math.pi * s2) + 1.0)
    ll0 = sum(-0.5 * math.log(2 * math.pi) - 0.5 * v * v for v in z[1:])
    assert_allclose(berkowitz(stats.norm.cdf(z), "conditional").statistic, -2.0 * (ll0 - ll1),
                    rtol=1e-9)  # Φ then Φ⁻¹ loses a few digits
    with pytest.raises(DataError, match=r"at least 4 values in \[0, 1\] \(no NaN\)"):
        berkowitz([0.2, 0.5, 1.5, 0.3])
    with pytest.raises(OptionError, match="likelihood must be 'exact' or 'conditional'"):
        berkowitz([0.2, 0.5, 0.7, 0.3], likelihood="full")


@pytest.mark.parametrize(("seed", "n"), [(4, 300), (5, 40), (6, 8)])
def test_berkowitz_exact_likelihood_equals_statsmodels_arima(seed: int, n: int) -> None:
    """Berkowitz's exact AR(1) likelihood against statsmodels' Kalman-filter ARIMA(1, 0, 0).

    Both maximise numerically; at the optimum the likelihood is flat, so the maximised
    log likelihoods (and the LR) agree to about 1e-8 while the parameters agree only to
    the optimisers' tolerance (1e-4 here).
    """
    from statsmodels.tsa.arima.model import ARIMA

    rng = np.random.default_rng(seed)
    z = np.empty(n)
    z[0] = 0.3
    for t in range(1, n):
        z[t] = 0.3 + 0.4 * (z[t - 1] - 0.3) + 1.2 * rng.standard_normal()
    res = berkowitz(stats.norm.cdf(z))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # statsmodels' convergence chatter on short series
        fit = ARIMA(z, order=(1, 0, 0), trend="c").fit()
    by_sm = 2.0 * (fit.llf - stats.norm.logpdf(z).sum())
    assert_allclose(res.statistic, by_sm, rtol=1e-7)  # two numerical optima, see above
    assert_allclose([res.mu, res.rho, res.sigma2], fit.params, atol=1e-4)  # see above


def test_pit_histogram() -> None:
    hist = pit_histogram([0.05, 0.15, 0.16, 0.95, np.nan], bins=2)
    assert hist["count"].tolist() == [3, 1]
    assert_allclose(hist["density"], [1.5, 0.5], rtol=RTOL_EXACT)


def _ar1(seed: int = 0, n: int = 220) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    e, y = rng.standard_normal(n), np.zeros(n)
    for t in range(1, n):
        y[t] = 0.5 * y[t - 1] + e[t]
    return pd.DataFrame({"y": y})


@pytest.mark.parametrize("interval", ["gaussian", "empirical", "aci"])
def test_calibration_of_forecasts(interval: str) -> None:
    fh = ar.forecast("y ~ lag(y, h)", _ar1(), start=60, horizon=[1, 2], interval=interval)
    cal = fh.calibration()
    assert cal.table.index.tolist() == [1, 2]
    for h in (1, 2):
        part = fh.at_horizon(h)
        table = forecast_scores(part).dropna(subset=["miss"])
        miss, p = table["miss"].to_numpy(), 1.0 - 0.9
        assert_allclose(cal.table.loc[h, "uc_lr"], kupiec(miss, p).statistic, rtol=RTOL_EXACT)
        assert_allclose(cal.table.loc[h, "cc_p"], christoffersen(miss, p)[1].p_value,
                        rtol=RTOL_EXACT)
        assert_allclose(cal.table.loc[h, "berkowitz_lr"],
                        berkowitz(table["pit"].to_numpy()).statistic, rtol=RTOL_EXACT)
        assert_allclose(cal.table.loc[h, "coverage"], part.evaluation["coverage"],
                        rtol=RTOL_EXACT)
        assert cal.histogram(h)["count"].sum() == len(table)
    text = str(cal)
    assert "Kupiec" in text and "Berkowitz" in text and "h = 2" in text
    assert pickle.loads(pickle.dumps(cal)).table.equals(cal.table)


def test_calibration_single_horizon() -> None:
    fc = ar.forecast("y ~ lag(y, 1)", _ar1(1), start=60, interval="gaussian")
    assert fc.calibration().table.index.tolist() == [1]
    assert fc.calibration().histogram(bins=5)["count"].sum() == fc.plan.n_forecasts


def test_calibration_errors() -> None:
    data = _ar1(2, n=120)
    with pytest.raises(OptionError, match="need forecast intervals: call forecast"):
        ar.forecast("y ~ lag(y, 1)", data, start=60).calibration()
    few = ar.forecast("y ~ lag(y, h)", data, start=60, horizon=[1, 2], interval="empirical",
                      min_errors=56)
    with pytest.raises(DataError, match="horizon 2 has 3 forecasts with an interval; "
                                        "calibration needs at least 4"):
        few.calibration()
