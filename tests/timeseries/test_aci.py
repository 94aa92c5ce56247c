"""Adaptive conformal intervals (``interval="aci"``): the recursion against a plain
re-implementation, coverage after a variance break, and invariance to data after the origin."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.timeseries.conformal import aci_bounds
from tests.conftest import RTOL_EXACT


def _break(seed: int, n: int = 600, at: int = 300, phi: float = 0.5) -> pd.DataFrame:
    """AR(1) whose innovation sd jumps from 1 to 3 at row ``at``."""
    rng = np.random.default_rng(seed)
    e = rng.standard_normal(n) * np.where(np.arange(n) < at, 1.0, 3.0)
    y = np.zeros(n)
    for t in range(1, n):
        y[t] = phi * y[t - 1] + e[t]
    return pd.DataFrame({"y": y, "x": rng.standard_normal(n)})


def _reference(pred: np.ndarray, actual: np.ndarray, target: np.ndarray, origin: np.ndarray,
               level: float, min_errors: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """Gibbs–Candès written out: at each origin, the outcomes observed so far, then quantiles."""
    n = pred.size
    lower, upper, err = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    for i in range(n):
        seen = np.flatnonzero(target <= origin[i])
        if seen.size < min_errors:
            continue
        scored = seen[~np.isnan(err[seen])]
        a = (1 - level) + gamma * np.sum((1 - level) - err[scored])
        a = min(max(a, 0.0), 1.0)
        q = np.quantile(actual[seen] - pred[seen], [a / 2, 1 - a / 2])
        lower[i], upper[i] = pred[i] + q[0], pred[i] + q[1]
        err[i] = float(not lower[i] <= actual[i] <= upper[i])
    return lower, upper


@pytest.mark.parametrize("h", [1, 3])
def test_aci_equals_the_recursion_written_out(h: int) -> None:
    fc = ar.forecast("y ~ lag(y, h) + lag(x, h)", _break(0, n=260, at=130), start=60,
                     horizon=h, interval="aci", aci_gamma=0.05, min_errors=10)
    p = fc.plan
    assert p.target_pos is not None and p.origin_pos is not None
    y = fc.forecasts["actual"].to_numpy()
    lower, upper = _reference(fc.predictions, y, p.target_pos, p.origin_pos, 0.9, 10, 0.05)
    assert_allclose(fc.lower, lower, rtol=RTOL_EXACT)
    assert_allclose(fc.upper, upper, rtol=RTOL_EXACT)
    # the same bounds from the function on the arrays
    lo2, _, alpha = aci_bounds(fc.predictions, y, p.target_pos, p.origin_pos, 0.9, 10, 0.05)
    assert_array_equal(lo2, fc.lower)
    assert np.isnan(alpha[:9]).all() and alpha[np.isfinite(alpha)].std() > 0


def test_aci_coverage_after_a_variance_break() -> None:
    """Post-break coverage of 90 % intervals: ACI within Monte Carlo error, empirical not.

    6 AR(1) series of 600 rows, innovation sd 1 then 3 from row 300; one-step OLS forecasts
    from row 100, coverage over targets 400..599 (1200 intervals in all). Were the
    indicators independent Bernoulli(0.9), the standard error of their mean would be
    sqrt(0.9 · 0.1 / 1200) = 0.0087; ACI is allowed 3 of them (0.026). The static
    empirical intervals, whose pool still holds the pre-break errors, cover about 0.77.
    """
    n_total, se_tol = 1200, 3.0 * np.sqrt(0.9 * 0.1 / 1200)
    inside: dict[str, list[np.ndarray]] = {"empirical": [], "aci": []}
    for seed in range(6):
        data = _break(seed)
        for kind, cover in inside.items():
            f = ar.forecast("y ~ lag(y, 1)", data, start=100, interval=kind,
                            aci_gamma=0.02).forecasts.loc[400:]
            cover.append(((f["actual"] >= f["lower"]) & (f["actual"] <= f["upper"])).to_numpy())
    aci, emp = np.concatenate(inside["aci"]), np.concatenate(inside["empirical"])
    assert aci.size == emp.size == n_total
    assert abs(aci.mean() - 0.9) < se_tol
    assert abs(emp.mean() - 0.9) > se_tol


def test_aci_intervals_ignore_data_after_each_origin() -> None:
    data = _break(7, n=240, at=120)
    kw = dict(start=40, horizon=2, interval="aci", aci_gamma=0.05, min_errors=10)
    base = ar.forecast("y ~ lag(y, 2) + lag(x, 2)", data, **kw)
    for cut in (90, 150, 200):
        changed = data.copy()
        changed.iloc[cut + 1:] = changed.iloc[cut + 1:] * 5.0 + 3.0
        alt = ar.forecast("y ~ lag(y, 2) + lag(x, 2)", changed, **kw)
        early = base.plan.origin_pos <= cut  # forecasts made by the last unchanged row
        assert early.sum() > 0 and (~early).sum() > 0
        assert_array_equal(alt.lower[early], base.lower[early])
        assert_array_equal(alt.upper[early], base.upper[early])
        assert not np.allclose(alt.upper[~early], base.upper[~early], equal_nan=True)


def test_aci_option_errors_and_report() -> None:
    data = _break(1, n=200, at=100)
    for bad in (0, 1.5, "fast", True):
        with pytest.raises(OptionError, match=r"aci_gamma \(the step .*\) must be a number in"):
            ar.forecast("y ~ lag(y, 1)", data, start=80, interval="aci", aci_gamma=bad)
    with pytest.raises(OptionError, match="interval must be one of 'empirical', 'gaussian', "
                                          "'aci'"):
        ar.forecast("y ~ lag(y, 1)", data, start=80, interval="conformal")
    fc = ar.forecast("y ~ lag(y, 1)", data, start=80, interval="aci", aci_gamma=0.01)
    assert fc.plan.aci_gamma == 0.01
    assert "adaptive conformal intervals (Gibbs-Candes, step 0.01)" in str(fc.summary())
    fh = ar.forecast("y ~ lag(y, h)", data, start=80, interval="aci", horizon=[1, 2])
    assert "adaptive conformal" in str(fh.summary())
