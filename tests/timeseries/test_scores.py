"""Density and interval scores of forecasts: the scoring rules against ``scoringrules``, the
predictive distribution each interval type implies, and ``fc.evaluate(scores=...)``."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import scoringrules as sr
from numpy.testing import assert_allclose
from scipy import stats

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.timeseries.evaluation import diebold_mariano
from attnreg.timeseries.scores import (crps_ensemble, crps_normal, crps_t,
                                       diebold_mariano_scores, forecast_scores, interval_score,
                                       log_score_normal, log_score_t, pinball_loss)
from tests.conftest import RTOL_EXACT, RTOL_SM


def _ar1(seed: int = 0, n: int = 160) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    e, y = rng.standard_normal(n), np.zeros(n)
    for t in range(1, n):
        y[t] = 0.2 + 0.6 * y[t - 1] + e[t]
    return pd.DataFrame({"y": y, "x": rng.standard_normal(n)})


def test_scoring_rules_equal_scoringrules() -> None:
    rng = np.random.default_rng(1)
    y, mu, sigma = rng.normal(size=50), rng.normal(size=50), rng.uniform(0.3, 3.0, 50)
    assert_allclose(crps_normal(y, mu, sigma), sr.crps_normal(y, mu, sigma), rtol=RTOL_EXACT)
    assert_allclose(log_score_normal(y, mu, sigma), sr.logs_normal(y, mu, sigma),
                    rtol=RTOL_EXACT)
    members = rng.normal(size=(50, 37))
    assert_allclose(crps_ensemble(y, members), sr.crps_ensemble(y, members), rtol=RTOL_EXACT)
    lo, up = mu - sigma, mu + sigma
    assert_allclose(interval_score(y, lo, up, 0.2), sr.interval_score(y, lo, up, 0.2),
                    rtol=RTOL_EXACT)
    # scoringrules' quantile CRPS of the two bounds is 2/|Q| Σ PB = the SUM of the two
    # pinball losses, twice their mean (our "pinball")
    mean_pb = 0.5 * (pinball_loss(y, lo, 0.1) + pinball_loss(y, up, 0.9))
    ref = sr.crps_quantile(y, np.column_stack([lo, up]), np.array([0.1, 0.9]))
    assert_allclose(2.0 * mean_pb, ref, rtol=RTOL_EXACT)


def test_student_t_scores_equal_scoringrules() -> None:
    rng = np.random.default_rng(11)
    y, mu, sigma = rng.normal(size=60), rng.normal(size=60), rng.uniform(0.3, 3.0, 60)
    df = np.concatenate([rng.uniform(1.2, 5.0, 20), rng.uniform(5.0, 60.0, 30),
                         np.array([2.0, 3.0, 7.5, 19.0, 40.0, 150.0, 400.0, 1e3, 1e4, 3.0])])
    assert_allclose(crps_t(y, df, mu, sigma), sr.crps_t(y, df, mu, sigma), rtol=RTOL_EXACT)
    assert_allclose(log_score_t(y, df, mu, sigma), sr.logs_t(y, df, mu, sigma), rtol=RTOL_EXACT)
    assert np.isinf(crps_t(np.zeros(2), np.array([0.5, 1.0]), np.zeros(2), np.ones(2))).all()


def _sm_prediction(fc: ar.timeseries.forecast_results.ForecastResults) -> tuple[np.ndarray, ...]:
    """statsmodels' prediction sd and residual df of every origin's OLS fit, refitted."""
    import statsmodels.api as sm

    d, p = fc.plan.design, fc.plan
    sd, df = np.empty(p.n_forecasts), np.empty(p.n_forecasts)
    for i in range(p.n_forecasts):  # one independent fit per origin
        rows = slice(int(p.train_start[i]), int(p.train_stop[i]))
        fit = sm.OLS(d.y[rows], d.X[rows]).fit()
        pr = fit.get_prediction(d.X[p.targets[i]][None, :])
        sd[i], df[i] = float(pr.se_obs[0]), fit.df_resid
    return sd, df


@pytest.mark.parametrize("strategy", ["direct", "iterated"])
def test_one_step_gaussian_intervals_are_scored_with_their_student_t(strategy: str) -> None:
    """At h = 1 the printed interval is forecast ± t_ν · sd: the scores, PIT and miss rate are
    those of that t (the interval is exactly its central 80 %), not of a normal."""
    fc = ar.forecast("y ~ lag(y, 1)", _ar1(7, n=90), start=40, interval="gaussian", level=0.8,
                     strategy=strategy, horizon=1 if strategy == "direct" else [1, 2])
    fc = fc.at_horizon(1)
    sd, df = _sm_prediction(fc)
    y, m = fc.forecasts["actual"].to_numpy(), fc.predictions
    assert_allclose(fc.df_path, df, rtol=RTOL_EXACT)
    table = forecast_scores(fc)
    assert_allclose(table["crps"], sr.crps_t(y, df, m, sd), rtol=RTOL_SM)
    assert_allclose(table["log"], sr.logs_t(y, df, m, sd), rtol=RTOL_SM)
    assert_allclose(table["pit"], stats.t.cdf((y - m) / sd, df), rtol=RTOL_SM)
    # the scored distribution puts (1 - level) / 2 below the printed lower bound
    assert_allclose(stats.t.cdf((fc.lower - m) / sd, df), 0.1, rtol=RTOL_SM)
    assert not np.allclose(table["crps"], crps_normal(y, m, (fc.upper - fc.lower)
                                                      / (2.0 * stats.norm.ppf(0.9))))
    pickle.loads(pickle.dumps(fc))


def test_one_step_ridge_scores_use_its_effective_residual_df() -> None:
    fc = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", _ar1(8, n=90), method="ridge", lam=3.0,
                     start=40, interval="gaussian")
    assert fc.df_path is not None
    assert not np.allclose(fc.df_path, np.round(fc.df_path))  # effective df, not n - p
    y, m = fc.forecasts["actual"].to_numpy(), fc.predictions
    s = (fc.upper - fc.lower) / (2.0 * stats.t.ppf(0.95, fc.df_path))
    assert_allclose(forecast_scores(fc)["crps"], sr.crps_t(y, fc.df_path, m, s),
                    rtol=RTOL_EXACT)


def test_gaussian_predictive_is_the_models_sigma_beyond_one_step() -> None:
    """At h > 1 (direct) the interval is forecast ± z σ: the implied sd is σ itself."""
    fc = ar.forecast("y ~ lag(y, 2) + lag(x, 2)", _ar1(), start=60, horizon=2,
                     interval="gaussian", level=0.8)
    table = forecast_scores(fc)
    y, m, s = fc.forecasts["actual"].to_numpy(), fc.predictions, fc.sigma_path
    assert_allclose(table["crps"], sr.crps_normal(y, m, s), rtol=RTOL_EXACT)
    assert_allclose(table["log"], sr.logs_normal(y, m, s), rtol=RTOL_EXACT)
    assert_allclose(table["pit"], stats.norm.cdf((y - m) / s), rtol=RTOL_EXACT)
    assert_allclose(table["interval"], sr.interval_score(y, fc.lower, fc.upper, 0.2),
                    rtol=RTOL_EXACT)


def _pools(fc: ar.timeseries.forecast_results.ForecastResults) -> list[np.ndarray]:
    """Past errors observed at each origin, by a plain loop over the forecasts."""
    p, err = fc.plan, fc.forecasts["error"].to_numpy()
    assert p.target_pos is not None and p.origin_pos is not None
    return [err[p.target_pos <= p.origin_pos[i]] for i in range(p.n_forecasts)]


@pytest.mark.parametrize("interval", ["empirical", "aci"])
def test_ensemble_scores_use_the_past_errors_observed_by_each_origin(interval: str) -> None:
    fc = ar.forecast("y ~ lag(y, 3)", _ar1(2), start=50, horizon=3, interval=interval,
                     min_errors=15)
    table = forecast_scores(fc)
    y, m = fc.forecasts["actual"].to_numpy(), fc.predictions
    pools = _pools(fc)
    has = ~np.isnan(fc.lower)
    assert [p.size >= 15 for p in pools] == has.tolist()
    for i in np.flatnonzero(has):
        crps = sr.crps_ensemble(y[i], m[i] + pools[i])
        assert_allclose(table["crps"].iloc[i], crps, rtol=RTOL_EXACT)
        below = np.count_nonzero(pools[i] < y[i] - m[i])
        assert table["pit"].iloc[i] == (below + 0.5) / (pools[i].size + 1)
    assert table.loc[~has, ["crps", "pit", "interval", "miss"]].isna().all().all()
    assert table["log"].isna().all()  # an ensemble has no density


def test_evaluate_is_the_mean_of_the_scores_per_horizon() -> None:
    fh = ar.forecast("y ~ lag(y, h) + lag(x, h)", _ar1(3), start=60, horizon=[1, 4],
                     interval="gaussian")
    out = fh.evaluate(scores=["crps", "log", "interval", "pinball"])
    assert out.index.tolist() == [1, 4]
    assert out.columns.tolist() == ["n_scored", "crps", "log", "interval", "pinball"]
    for h in (1, 4):
        part = fh.at_horizon(h)
        y, lo, up = part.forecasts["actual"].to_numpy(), part.lower, part.upper
        if h == 1:  # the t of the one-step prediction interval
            s = (up - lo) / (2.0 * stats.t.ppf(0.95, part.df_path))
            crps = sr.crps_t(y, part.df_path, part.predictions, s)
        else:
            s = (up - lo) / (2.0 * stats.norm.ppf(0.95))
            crps = sr.crps_normal(y, part.predictions, s)
        assert_allclose(out.loc[h, "crps"], crps.mean(), rtol=RTOL_EXACT)
        pb = sr.crps_quantile(y, np.column_stack([lo, up]), np.array([0.05, 0.95])) / 2.0
        assert_allclose(out.loc[h, "pinball"], pb.mean(), rtol=RTOL_EXACT)
        assert_allclose(part.evaluate("interval")["interval"].iloc[0], out.loc[h, "interval"],
                        rtol=RTOL_EXACT)
    pickle.loads(pickle.dumps(out))


def test_evaluate_errors() -> None:
    fc = ar.forecast("y ~ lag(y, 1)", _ar1(), start=100)
    with pytest.raises(OptionError, match="need forecast intervals: call forecast"):
        fc.evaluate()
    fc = ar.forecast("y ~ lag(y, 1)", _ar1(), start=100, interval="gaussian")
    with pytest.raises(OptionError, match="scores must name some of"):
        fc.evaluate(scores=["crps", "brier"])


def test_diebold_mariano_on_scores() -> None:
    data = _ar1(6, n=200)
    kw = dict(start=60, min_errors=20)
    aci = ar.forecast("y ~ lag(y, 1)", data, interval="aci", aci_gamma=0.02, **kw)
    gauss = ar.forecast("y ~ lag(y, 1)", data, interval="gaussian", **kw)
    res = diebold_mariano_scores(aci, gauss, "interval")
    s_a, s_g = forecast_scores(aci)["interval"], forecast_scores(gauss)["interval"]
    d = (s_a - s_g).dropna().to_numpy()
    assert res.n_obs == d.size == 200 - 60 - 20  # ACI scores once 20 errors are known
    # h = 1 with HLN: exactly the one-sample t-test of the differentials
    t = stats.ttest_1samp(d, 0.0)
    assert_allclose([res.statistic, res.p_value], [t.statistic, t.pvalue], rtol=RTOL_EXACT)
    # h = 3: as diebold_mariano on "errors" whose squares are the (nonnegative) CRPS values
    fa = ar.forecast("y ~ lag(y, 3)", data, horizon=3, interval="empirical", **kw)
    fg = ar.forecast("y ~ lag(y, 3)", data, horizon=3, interval="gaussian", **kw)
    both = pd.concat([forecast_scores(fa)["crps"], forecast_scores(fg)["crps"]], axis=1).dropna()
    ref = diebold_mariano(np.sqrt(both.iloc[:, 0]), np.sqrt(both.iloc[:, 1]), h=3)
    res3 = diebold_mariano_scores(fa, fg, "crps", alternative="two-sided")
    assert_allclose([res3.statistic, res3.p_value], [ref.statistic, ref.p_value],
                    rtol=1e-9)  # sqrt then square: a few ulps per term
    with pytest.raises(OptionError, match="share 0 target dates with a 'log' score"):
        diebold_mariano_scores(fa, fg, "log")
    with pytest.raises(OptionError, match="score must be one of"):
        diebold_mariano_scores(fa, fg, "mse")


def test_giacomini_white_on_scores() -> None:
    from attnreg.timeseries.compare import giacomini_white
    from attnreg.timeseries.score_tests import giacomini_white_scores

    data = _ar1(9, n=200)
    kw = dict(start=60, min_errors=20)
    aci = ar.forecast("y ~ lag(y, 1)", data, interval="aci", aci_gamma=0.02, **kw)
    gauss = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", data, interval="gaussian", **kw)
    for score in ("crps", "interval", "pinball"):
        d = (forecast_scores(aci)[score] - forecast_scores(gauss)[score]).dropna().to_numpy()
        for conditional in (True, False):
            res = giacomini_white_scores(aci, gauss, score, conditional=conditional)
            ref = giacomini_white(d, h=1, conditional=conditional)
            assert_allclose([res.statistic, res.p_value], [ref.statistic, ref.p_value],
                            rtol=RTOL_EXACT)
    with pytest.raises(OptionError, match="score must be one of"):
        giacomini_white_scores(aci, gauss, "mae")
