"""The forecast summaries show every density score and calibration test: each number is the
one of fc.evaluate(), fc.calibration(), fc.quantile_evaluation() and diebold_mariano_scores
(themselves tested against scoringrules and hand computations), and the text is pinned."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.datasets import macrodata

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.timeseries.scores import diebold_mariano_scores

#: one-horizon rows of the density table and the calibration columns they show
TESTS = {"Berkowitz LR, chi2(3)": "berkowitz", "Kupiec LR uc, chi2(1)": "uc",
         "Christoffersen LR ind, chi2(1)": "ind", "Christoffersen LR cc, chi2(2)": "cc"}


@pytest.fixture(scope="module")
def macro() -> pd.DataFrame:
    df = macrodata.load_pandas().data
    df.index = pd.period_range("1959Q1", periods=len(df), freq="Q")
    return df


@pytest.fixture(scope="module")
def gaussian(macro: pd.DataFrame) -> ar.ForecastResults:
    return ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="1990Q1",
                       interval="gaussian")


@pytest.fixture(scope="module")
def empirical(macro: pd.DataFrame) -> ar.ForecastResults:
    return ar.forecast("infl ~ lag(infl, 1)", macro, start="1990Q1", interval="empirical",
                       min_errors=10)


def test_one_horizon_summary_shows_every_score_and_test(gaussian, empirical) -> None:
    table = gaussian.summary(benchmark=empirical).tables[2]
    scores, cal = gaussian.evaluate().loc[1], gaussian.calibration().table.loc[1]
    for label, key in (("CRPS", "crps"), ("Log score", "log"), ("Interval score", "interval"),
                       ("Pinball loss (interval bounds)", "pinball")):
        assert table.loc[label, "Estimate"] == scores[key]
        assert np.isnan(table.loc[label, "p-value"])
    for label, key in TESTS.items():
        assert table.loc[label, "Estimate"] == cal[f"{key}_lr"]
        assert table.loc[label, "p-value"] == cal[f"{key}_p"]
    dm = diebold_mariano_scores(gaussian, empirical, "crps")
    row = table.loc["Diebold-Mariano (HLN) on CRPS, vs benchmark"]
    assert (row["Estimate"], row["p-value"]) == (dm.statistic, dm.p_value)
    assert len(table) == 9


def test_without_benchmark_no_dm_and_no_log_score_for_ensembles(empirical, macro) -> None:
    s = empirical.summary()
    table = s.tables[2]
    assert "Log score" not in table.index  # an ensemble of past errors has no density
    assert not any(label.startswith("Diebold") for label in table.index)
    assert table.loc["CRPS", "Estimate"] == empirical.evaluate().loc[1, "crps"]
    assert "summary(benchmark=other forecasts with intervals) adds" in str(s)
    plain = ar.forecast("infl ~ lag(infl, 1)", macro, start="2000Q1")
    assert len(plain.summary().tables) == 1 and "Density" not in str(plain.summary())


def test_quantile_forecasts_show_the_pinball_loss_per_tau(macro) -> None:
    q = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="1990Q1",
                    method="quantreg", tau=[0.1, 0.5, 0.9], interval="quantile", level=0.8)
    table = q.summary().tables[2]
    pinball = q.quantile_evaluation().loc[1, "pinball"]
    for tau in (0.1, 0.5, 0.9):
        assert table.loc[f"Pinball loss, tau = {tau:g}", "Estimate"] == pinball[tau]
    cal = q.calibration().table.loc[1]
    assert table.loc["Kupiec LR uc, chi2(1)", "p-value"] == cal["uc_p"]
    assert table.loc["CRPS", "Estimate"] == q.evaluate().loc[1, "crps"]


def test_horizons_summary_shows_every_score_and_test(macro) -> None:
    kw = dict(start="1990Q1", horizon=[1, 4], interval="aci", aci_gamma=0.05)
    fh = ar.forecast("infl ~ lag(infl, h)", macro, **kw)
    bench = ar.forecast("infl ~ lag(infl, h) + lag(unemp, h)", macro, **kw)
    _, scores, tests = fh.summary(benchmark=bench).tables
    ev, cal = fh.evaluate(), fh.calibration().table
    for h in (1, 4):
        row, trow = scores.loc[f"h = {h}"], tests.loc[f"h = {h}"]
        assert row["n"] == ev.loc[h, "n_scored"]
        assert [row[c] for c in ("CRPS", "Interval", "Pinball")] == [
            ev.loc[h, k] for k in ("crps", "interval", "pinball")]
        for head, key in (("uc", "uc"), ("ind", "ind"), ("cc", "cc"), ("Berk.", "berkowitz")):
            assert (trow[f"LR {head}"], trow[f"Pr({head})"]) == (cal.loc[h, f"{key}_lr"],
                                                                cal.loc[h, f"{key}_p"])
        dm = diebold_mariano_scores(fh, bench, "crps", horizon=h)
        assert (trow["DM CRPS"], trow["Pr(DM)"]) == (dm.statistic, dm.p_value)
    assert "Log" not in scores.columns  # adaptive intervals: ensembles, no density


def test_benchmark_without_intervals_is_refused(gaussian, macro) -> None:
    plain = ar.forecast("infl ~ lag(infl, 1)", macro, start="1990Q1")
    with pytest.raises(OptionError, match=r"density scores and calibration need forecast "
                                          r"intervals: call forecast\(\.\.\., interval="):
        gaussian.summary(benchmark=plain)


def test_density_summary_text(gaussian, empirical, snapshot) -> None:
    snapshot("forecast_density_summary.txt", str(gaussian.summary(benchmark=empirical)))
