"""The forecast reports hold their numbers: the setting, the tuning path and the accuracy
tables are the forecasts' own, and the HTML, LaTeX and Markdown are well formed and show them."""

from __future__ import annotations

import pickle
import numpy as np
import pandas as pd
import pytest
from statsmodels.datasets import macrodata

import attnreg as ar
from tests.report.renderings import check_renderings


@pytest.fixture(scope="module")
def macro() -> pd.DataFrame:
    df = macrodata.load_pandas().data
    df.index = pd.period_range("1959Q1", periods=len(df), freq="Q")
    return df


def test_one_horizon_summary(macro) -> None:
    fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, method="ridge",
                     start="2000Q1", interval="empirical", level=0.8)
    s = fc.summary()
    stats, f = s.statistics, fc.forecasts
    assert (stats["method"], stats["scheme"], stats["horizon"]) == ("ridge", "recursive", 1)
    assert (stats["n_forecasts"], stats["first_target"]) == (len(f), str(f.index[0]))
    assert stats["first_n_train"] == f["n_train"].iloc[0] and stats["refit_every"] == 1
    assert (stats["interval"], stats["level"]) == ("empirical", 0.8)
    assert stats["parameter"] == "lambda" and stats["over"] == "origins"
    assert stats["tuning_min"] == np.nanmin(fc.tuning_path)
    assert stats["tuning_max"] == np.nanmax(fc.tuning_path)
    accuracy, intervals, _density = s.tables
    e = fc.evaluation
    assert accuracy.loc["MSFE", "Estimate"] == e.msfe
    assert accuracy.loc["Clark-West, vs mean", "p-value"] == e.cw_p_value
    assert intervals.loc["empirical intervals", "Coverage"] == e.coverage
    back = pickle.loads(pickle.dumps(s))  # a summary pickles with its sections
    assert str(back) == str(s) and back.statistics.keys() == stats.keys()
    check_renderings(fc.summary(), [stats["tuning_min"], stats["tuning_median"]],
                     [e.msfe, e.oos_r2, e.coverage])


def test_one_horizon_summary_estimated_once(macro) -> None:
    fc = ar.forecast("infl ~ lag(infl, 1)", macro, start="2005Q1", refit_every=1000)
    stats = fc.summary().statistics
    assert stats["refit_every"] is None and "estimated once" in str(fc.summary())
    assert "tuning_min" not in stats and stats["interval"] is stats["level"] is None


def test_horizons_summary(macro) -> None:
    fh = ar.forecast("infl ~ lag(infl, h)", macro, start="1990Q1", horizon=[1, 4],
                     interval="gaussian", method="pcr")
    s = fh.summary()
    stats = s.statistics
    assert stats["horizons"] == (1, 4) and stats["strategy"] == "direct"
    assert (stats["interval"], stats["parameter"]) == ("gaussian", "k")
    tune = np.concatenate([p.tuning_path for p in fh.parts])
    assert stats["tuning_median"] == np.nanmedian(tune)
    np.testing.assert_array_equal(s.table["MSFE"].to_numpy(), fh.evaluation["msfe"].to_numpy())
    check_renderings(s, [stats["tuning_max"]], fh.evaluation["oos_r2"])


def test_calibration_summary(macro) -> None:
    fc = ar.forecast("infl ~ lag(infl, 1)", macro, start="1990Q1", interval="empirical",
                     level=0.8)
    cal = fc.calibration()
    s = cal.summary()
    assert s.statistics == {"level": 0.8, "interval": "empirical"}
    assert s.table["Pr(uc)"].iloc[0] == cal.table["uc_p"].iloc[0]
    check_renderings(s, [], [cal.table["uc_lr"].iloc[0]], ["80% empirical"])


def test_leakage_audit_summary(macro) -> None:
    audit = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro,
                        start="2000Q1").leakage_audit()
    s = audit.summary()
    stats = s.statistics
    assert (stats["oos_r2_honest"], stats["oos_r2_leaky"], stats["oos_r2_full_sample"]) == (
        audit.oos_r2_honest, audit.oos_r2_leaky, audit.oos_r2_full_sample)
    assert stats["oos_r2_gain"] == audit.oos_r2_gain
    assert stats["n_forecasts"] == len(audit.forecasts)
    assert stats["rms_change"] == np.sqrt(np.mean(audit.forecasts["difference"] ** 2))
    assert str(audit) == str(s).strip("\n")
    check_renderings(audit, [audit.oos_r2_honest, audit.oos_r2_gain, stats["rms_change"]])


def test_summaries_show_density_scores_and_calibration(macro) -> None:
    """The density tables carry the mean CRPS and the Kupiec / Christoffersen p-values, the
    numbers of fc.evaluate() and fc.calibration()."""
    fh = ar.forecast("infl ~ lag(infl, h)", macro, start="1990Q1", horizon=[1, 4],
                     interval="aci", aci_gamma=0.05)
    _, scores_table, tests = fh.summary().tables
    cal, scores = fh.calibration().table, fh.evaluate()
    for h in (1, 4):
        assert scores_table.loc[f"h = {h}", "CRPS"] == scores.loc[h, "crps"]
        row = tests.loc[f"h = {h}"]
        assert (row["Pr(uc)"], row["Pr(cc)"]) == (cal.loc[h, "uc_p"], cal.loc[h, "cc_p"])
    one = fh.at_horizon(1).summary()
    density = one.tables[2]
    assert density.loc["CRPS", "Estimate"] == scores.loc[1, "crps"]
    assert density.loc["Christoffersen LR cc, chi2(2)", "p-value"] == cal.loc[1, "cc_p"]
    assert "Christoffersen independence and conditional coverage" in str(one)
