"""Growth-at-risk: quantile regression in the forecast loop.

References: R's ``quantreg::rq(method = "br")`` refitted at every origin
(tests/reference/make_gar_forecast.R), the ``scoringrules`` package's quantile CRPS, hand
computations of the hit rates and Kupiec's statistic, and the no-look-ahead rules (the
forecasts made by an origin do not move when later rows change; look-ahead terms refused).
"""

from __future__ import annotations

import itertools
import json
import pickle
import re
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pytest
import scoringrules as sr
from numpy.testing import assert_allclose, assert_array_equal
from scipy import integrate, stats

import attnreg as ar
from attnreg.exceptions import DataError, LeakageError, OptionError
from attnreg.timeseries.quantile_density import (crps_quantile_density, quantile_cdf,
                                                 quantile_logpdf, rearrange)
from attnreg.timeseries.scores import forecast_scores
from tests.conftest import REPO, RTOL_EXACT, RTOL_R

TAUS = [0.05, 0.25, 0.5, 0.75, 0.95]
RTOL_QUAD = 1e-8  # scipy's quad on piecewise smooth integrands split at their kinks


@cache
def reference() -> dict[str, Any]:
    with open(REPO / "tests" / "reference" / "gar_forecast_r.json", encoding="utf-8") as fh:
        return dict(json.load(fh))


def _data() -> pd.DataFrame:
    return pd.DataFrame(reference()["data"])


def _run(name: str, data: pd.DataFrame | None = None, **kw: Any) -> Any:
    r = reference()["runs"][name]
    h = r["horizon"]
    scheme = {} if r["window"] is None else {"scheme": "rolling", "window": r["window"]}
    return ar.forecast(f"gdp ~ lag(nfci, {h}) + lag(gdp, {h})",
                       _data() if data is None else data, method="quantreg",
                       tau=reference()["taus"], horizon=h, start=r["start"], **scheme, **kw)


@pytest.fixture(scope="module")
def gar() -> Any:
    return _run("recursive_h4", interval="quantile", level=0.9)


def test_header_names_the_versions() -> None:
    header = reference()["header"]
    assert header["r"].startswith("R version") and header["packages"]["quantreg"]
    assert reference()["taus"] == TAUS


@pytest.mark.parametrize("name", ["recursive_h4", "rolling_h1"])
def test_every_origin_refits_rq_as_r(name: str) -> None:
    r = reference()["runs"][name]
    fc = _run(name)
    assert fc.forecasts.index.tolist() == r["targets"]
    assert fc.taus == tuple(TAUS)
    assert_allclose(fc.quantile_path, np.array(r["quantiles"]), rtol=RTOL_R)
    table = fc.forecasts[[f"q{t:g}" for t in TAUS]].to_numpy()
    assert_allclose(table, np.array(r["quantiles"]), rtol=RTOL_R)


def test_point_forecast_is_the_median_and_the_interval_the_outer_pair(gar: Any) -> None:
    raw = gar.quantile_path
    crossed = np.flatnonzero(np.any(np.diff(raw, axis=1) < 0, axis=1))
    assert crossed.tolist() == [16, 17, 18, 19]  # as R: the τ = 0.75 forecast below the median
    q = np.sort(raw, axis=1)  # rearranged (sorted) before the median and the interval
    assert_array_equal(gar.predictions, q[:, 2])
    assert_array_equal(gar.lower, q[:, 0])
    assert_array_equal(gar.upper, q[:, 4])
    y = gar.forecasts["actual"].to_numpy()
    coverage = np.mean((y >= q[:, 0]) & (y <= q[:, 4]))
    assert gar.evaluation["coverage"] == pytest.approx(coverage, rel=RTOL_EXACT)


def test_forecasts_made_by_an_origin_ignore_later_rows() -> None:
    honest = _run("recursive_h4")
    cut = 110  # rows after position 110 replaced: forecasts from origins <= 110 stay
    changed = _data()
    rng = np.random.default_rng(5)
    changed.loc[cut + 1:, ["gdp", "nfci"]] = rng.normal(size=(len(changed) - cut - 1, 2)) * 5
    moved = _run("recursive_h4", data=changed)
    origins = honest.forecasts["origin"].to_numpy()
    early = origins <= cut
    assert early.sum() == cut - 76 + 1  # first origin 76 (target 80, h = 4)
    assert_array_equal(moved.quantile_path[early], honest.quantile_path[early])
    assert not np.allclose(moved.quantile_path[~early], honest.quantile_path[~early])


def test_a_look_ahead_term_is_refused_for_quantile_forecasts() -> None:
    term = "lag(nfci - nfci.mean(), 4)"
    with pytest.raises(LeakageError, match=re.escape(f"term {term!r} looks ahead")):
        ar.forecast(f"gdp ~ {term} + lag(gdp, 4)", _data(), method="quantreg", tau=TAUS,
                    horizon=4, start=80)
    with pytest.raises(LeakageError, match=r"term 'nfci' is lagged 0 period\(s\) but the "
                                           r"horizon is 4"):
        ar.forecast("gdp ~ nfci + lag(gdp, 4)", _data(), method="quantreg", tau=TAUS,
                    horizon=4, start=80)


def test_density_scores_are_the_quantile_crps_and_the_interpolated_density(gar: Any) -> None:
    table = forecast_scores(gar)
    y, q = gar.forecasts["actual"].to_numpy(), np.sort(gar.quantile_path, axis=1)
    taus = np.array(TAUS)
    # the CRPS of the interpolated distribution, by numerical integration for two forecasts
    for row in (0, 40):
        edges = sorted([*q[row], y[row]])
        crps = sum(integrate.quad(lambda x, r=row: (quantile_cdf(np.array([x]), q[r:r + 1], taus)[0]
                                                    - (x >= y[r])) ** 2, a, b)[0]
                   for a, b in itertools.pairwise([-np.inf, *edges, np.inf]))
        assert table["crps"].iloc[row] == pytest.approx(crps, rel=RTOL_QUAD)
    # as for every interval: the mean pinball loss of the bounds as the 5 % and 95 % quantiles
    assert_allclose(table["pinball"], sr.crps_quantile(y, q[:, [0, 4]], taus[[0, 4]]) / 2.0,
                    rtol=RTOL_EXACT)
    assert_allclose(table["interval"], sr.interval_score(y, q[:, 0], q[:, 4], 0.1),
                    rtol=RTOL_EXACT)
    # inside the fitted quantiles the density is uniform between neighbours: by hand
    row = int(np.flatnonzero((y > q[:, 1]) & (y < q[:, 2]))[0])
    density = (0.5 - 0.25) / (q[row, 2] - q[row, 1])
    assert table["log"].iloc[row] == pytest.approx(-np.log(density), rel=RTOL_EXACT)
    cdf = 0.25 + (y[row] - q[row, 1]) * density
    assert table["pit"].iloc[row] == pytest.approx(cdf, rel=RTOL_EXACT)
    scores = gar.evaluate()
    assert scores.loc[4, "n_scored"] == len(y)
    assert_allclose(scores.loc[4, ["crps", "log"]].to_numpy(dtype=float),
                    [table["crps"].mean(), table["log"].mean()], rtol=RTOL_EXACT)


def test_quantile_scores_are_scored_without_an_interval() -> None:
    fc = _run("rolling_h1")
    assert fc.lower is None
    scores = fc.evaluate(["crps", "log"])
    y = fc.forecasts["actual"].to_numpy()
    q = np.sort(fc.quantile_path, axis=1)
    expected = crps_quantile_density(y, q, np.array(TAUS)).mean()
    assert scores.loc[1, "crps"] == pytest.approx(expected, rel=RTOL_EXACT)
    logs = -quantile_logpdf(y, q, np.array(TAUS)).mean()
    assert scores.loc[1, "log"] == pytest.approx(logs, rel=RTOL_EXACT)


def test_quantile_evaluation_hit_rates_and_kupiec_by_hand(gar: Any) -> None:
    table = gar.quantile_evaluation()
    assert table.index.tolist() == [(4, t) for t in TAUS]
    y, q = gar.forecasts["actual"].to_numpy(), gar.quantile_path
    n = y.size
    for k, tau in enumerate(TAUS):
        x = int(np.sum(y < q[:, k]))
        row = table.loc[(4, tau)]
        assert row["hit_rate"] == x / n
        loss = np.where(y >= q[:, k], tau * (y - q[:, k]), (1 - tau) * (q[:, k] - y))
        assert row["pinball"] == pytest.approx(loss.mean(), rel=RTOL_EXACT)
        pi = x / n
        lr = -2 * (x * np.log(tau) + (n - x) * np.log(1 - tau)
                   - x * np.log(pi) - (n - x) * np.log(1 - pi))
        assert row["kupiec_lr"] == pytest.approx(lr, rel=RTOL_EXACT)
        assert row["kupiec_p"] == pytest.approx(stats.chi2.sf(lr, 1), rel=RTOL_EXACT)


def test_calibration_and_summary_of_quantile_intervals(gar: Any) -> None:
    cal = gar.calibration()
    y, q = gar.forecasts["actual"].to_numpy(), np.sort(gar.quantile_path, axis=1)
    inside = np.mean((y >= q[:, 0]) & (y <= q[:, 4]))
    assert cal.table.loc[4, "coverage"] == pytest.approx(inside, rel=RTOL_EXACT)
    assert_allclose(cal.pit[4], quantile_cdf(y, q, np.array(TAUS)), rtol=RTOL_EXACT)
    text = str(gar.summary())
    assert "the forecasts of tau = 0.05 and 0.95" in text
    assert "4 of 80 forecasts had crossing quantiles" in text  # rows 16-19, as R's


def test_several_horizons_and_pickle() -> None:
    fh = ar.forecast("gdp ~ lag(nfci, h) + lag(gdp, h)", _data(), method="quantreg",
                     tau=TAUS, horizon=[1, 4], start=80, interval="quantile")
    four = reference()["runs"]["recursive_h4"]
    assert_allclose(fh.at_horizon(4).quantile_path, np.array(four["quantiles"]), rtol=RTOL_R)
    assert fh.quantile_evaluation().index.get_level_values("horizon").unique().tolist() == [1, 4]
    assert fh.evaluate().index.tolist() == [1, 4]
    back = pickle.loads(pickle.dumps(fh))
    assert_array_equal(back.at_horizon(1).quantile_path, fh.at_horizon(1).quantile_path)


def test_crossing_quantiles_are_rearranged_for_the_density() -> None:
    q = np.array([[0.0, -1.0, 2.0]])  # τ = 0.25 forecast below the τ = 0.1 one
    taus = np.array([0.1, 0.25, 0.9])
    ordered = rearrange(q)
    assert ordered.tolist() == [[-1.0, 0.0, 2.0]]
    assert quantile_cdf(np.array([0.0]), ordered, taus)[0] == pytest.approx(0.25)
    assert np.exp(quantile_logpdf(np.array([1.0]), ordered, taus))[0] == pytest.approx(
        (0.9 - 0.25) / 2.0, rel=RTOL_EXACT)


def test_interval_quantile_needs_the_pair_of_the_level() -> None:
    with pytest.raises(OptionError, match=r"interval='quantile' at level=0.8 takes the "
                                          r"forecasts of tau 0.1 and 0.9, however the fitted "
                                          r"tau are \[0.05, 0.25, 0.5, 0.75, 0.95\]"):
        ar.forecast("gdp ~ lag(nfci, 1) + lag(gdp, 1)", _data(), method="quantreg",
                    tau=TAUS, start=100, interval="quantile", level=0.8)
    with pytest.raises(OptionError, match=r"interval='quantile' takes two forecast quantiles "
                                          r"of a quantile method .* not method 'ols'"):
        ar.forecast("gdp ~ lag(nfci, 1) + lag(gdp, 1)", _data(), start=100,
                    interval="quantile")


def test_one_tau_has_no_density_and_ols_no_quantile_scores() -> None:
    one = ar.forecast("gdp ~ lag(nfci, 1) + lag(gdp, 1)", _data(), method="quantreg",
                      tau=0.5, start=100)
    assert one.quantile_path.shape == (60, 1)
    assert_array_equal(one.predictions, one.quantile_path[:, 0])
    with pytest.raises(OptionError, match=r"need at least two tau, however: tau=\[0.5\]"):
        one.evaluate()
    ols = ar.forecast("gdp ~ lag(nfci, 1) + lag(gdp, 1)", _data(), start=100)
    with pytest.raises(OptionError, match=r"quantile scores need quantile forecasts .* not "
                                          r"method 'ols'"):
        ols.quantile_evaluation()
    with pytest.raises(DataError, match=r"horizon 1 has 0 forecasts with an interval"):
        ar.forecast("gdp ~ lag(nfci, 1) + lag(gdp, 1)", _data(), method="quantreg",
                    tau=TAUS, start=100).calibration()


def test_ahead_refits_every_tau_at_the_last_row() -> None:
    data = _data()
    fc = _run("rolling_h1", interval="quantile", level=0.9)
    out = fc.ahead()
    assert out.index.tolist() == [(1, 160)]
    # by hand: the last 60 rows' regressions (rolling window), at the regressors of row 160
    rows = data.iloc[100:]
    X = np.column_stack([np.ones(60), data["nfci"].iloc[99:159], data["gdp"].iloc[99:159]])
    q = []
    for tau in TAUS:
        fit = ar.attnreg("y ~ x1 + x2", pd.DataFrame({"y": rows["gdp"].to_numpy(),
                                                    "x1": X[:, 1], "x2": X[:, 2]}),
                         method="quantreg", tau=tau)
        q.append(fit.coef.iloc[:, 0] @ [1.0, data["nfci"].iloc[159], data["gdp"].iloc[159]])
    q = np.sort(q)
    assert_allclose(out[["forecast", "lower", "upper"]].to_numpy()[0], q[[2, 0, 4]],
                    rtol=RTOL_EXACT)
    assert out["n_train"].iloc[0] == 60
    median_only = _run("rolling_h1").ahead(interval="empirical")
    assert median_only["forecast"].iloc[0] == pytest.approx(q[2], rel=RTOL_EXACT)
    with pytest.raises(OptionError, match=r"interval must be 'gaussian' or 'empirical', however"):
        ar.forecast("gdp ~ lag(nfci, 1) + lag(gdp, 1)", data, start=100).ahead("quantile")
