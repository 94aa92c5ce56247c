"""Edges of the calibration tests: PIT values of exactly 0 or 1 (Berkowitz clips them into
(0, 1)) and likelihood-ratio statistics that are 0 (never printed as −0)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats

import attnreg as ar
from attnreg.exceptions import DataError, InferenceWarning
from attnreg.timeseries.calibration import berkowitz, christoffersen, kupiec
from attnreg.timeseries.scores import forecast_scores
from tests.conftest import RTOL_EXACT

EPS = 2.0**-53  # the documented clip: the spacing of float64 just below 1


def _is_plus_zero(x: float) -> bool:
    return x == 0.0 and math.copysign(1.0, x) == 1.0


def test_kupiec_at_the_exact_rate_is_zero_not_minus_zero() -> None:
    res = kupiec([0] * 9 + [1], 0.1)  # 1 miss in 10 at p = 0.1: π̂ = p, LR = -2 (a - a)
    assert _is_plus_zero(res.statistic) and f"{res.statistic:f}" == "0.000000"
    assert res.p_value == 1.0


def test_christoffersen_without_dependence_is_zero_not_minus_zero() -> None:
    # transitions 00 ×2, 01 ×2, 11 ×2, 10 ×2: π01 = π11 = π = 1/2, LR_ind = -2 (a - a)
    ind, cc = christoffersen([0, 0, 0, 1, 1, 1, 0, 1, 0], 0.5)
    assert _is_plus_zero(ind.statistic) and ind.p_value == 1.0
    assert cc.statistic >= 0.0 and f"{ind.statistic:f}" == "0.000000"


def test_berkowitz_clips_pit_of_zero_and_one() -> None:
    rng = np.random.default_rng(0)
    pit = stats.norm.cdf(rng.standard_normal(40))
    pit[[5, 17]] = [1.0, 0.0]  # outcomes beyond the float64 resolution of the tails
    with pytest.warns(InferenceWarning, match=r"2 PIT value\(s\) equal to 0 or 1 .* clipped to "
                                              r"\[2\*\*-53, 1 - 2\*\*-53\]"):
        res = berkowitz(pit)
    by_hand = berkowitz(np.clip(pit, EPS, 1 - EPS))  # the documented clip, done by hand
    assert_allclose(res.statistic, by_hand.statistic, rtol=RTOL_EXACT)
    assert np.isfinite(res.statistic) and res.p_value < 1e-6  # |z| = 8.2 twice: rejected
    assert_allclose(stats.norm.ppf(1 - EPS), 8.2095, rtol=1e-4)  # |z| after the clip
    with pytest.raises(DataError, match=r"PIT values must be a 1-D sequence of at least 4 "
                                        r"values in \[0, 1\] \(no NaN\)"):
        berkowitz([0.2, np.nan, 0.5, 0.7])


def test_calibration_of_a_forecast_with_a_pit_of_one() -> None:
    rng = np.random.default_rng(1)
    y = np.zeros(160)
    for t in range(1, 160):
        y[t] = 0.5 * y[t - 1] + rng.standard_normal()
    y[130] = 60.0  # some 50 sd above its forecast: Φ(z) rounds to 1.0
    fc = ar.forecast("y ~ lag(y, 1)", pd.DataFrame({"y": y}), start=60, interval="gaussian")
    assert (forecast_scores(fc)["pit"] == 1.0).sum() == 1
    with pytest.warns(InferenceWarning, match="1 PIT value"):
        cal = fc.calibration()
        by_hand = berkowitz(np.clip(forecast_scores(fc)["pit"].dropna().to_numpy(), EPS, 1 - EPS))
    assert_allclose(cal.table.loc[1, "berkowitz_lr"], by_hand.statistic, rtol=RTOL_EXACT)
    assert np.isfinite(cal.table.loc[1, "berkowitz_p"])
