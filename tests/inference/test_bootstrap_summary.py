"""The bootstrap's report holds its numbers: the summary's statistics and tables are the
bootstrap's own, and its HTML, LaTeX and Markdown are well formed and show them."""

from __future__ import annotations

import pickle
import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.report.figures import BootstrapSetup, BootstrapTestResult
from tests.report.renderings import check_renderings


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=60), "g": np.repeat(np.arange(15), 4)})
    df["y"] = 0.2 * df.x + rng.normal(size=60)
    return df


def test_wild_cluster_summary_holds_the_draws_and_the_test(data) -> None:
    bs = ar.attnreg("y ~ x", data).bootstrap(cluster="g", seed=0, reps=99, hypothesis="x = 0")
    s = bs.summary()
    stats = s.statistics
    assert (stats["kind"], stats["cluster"], stats["n_clusters"]) == ("wild", "g", 15)
    assert (stats["reps"], stats["seed"], stats["weights"]) == (bs.reps, 0, "rademacher")
    assert stats["enumerated"] is False and stats["se_type"] == bs.se_type
    test = bs.test
    assert test is not None
    assert (stats["test_statistic"], stats["test_p_value"]) == (test.statistic, test.p_value)
    assert (stats["test_name"], stats["hypothesis"], stats["n_draws"]) == ("WCR", "x = 0", 99)
    assert isinstance(stats["test_statistic"], float)
    estimates, intervals = s.tables
    pd.testing.assert_series_equal(estimates["Boot. SE"], bs.std_err, check_names=False)
    pd.testing.assert_series_equal(estimates["Boot. p"], bs.p_value, check_names=False)
    np.testing.assert_array_equal(intervals.to_numpy(),
                                  np.hstack([bs.percentile, bs.studentized]))
    assert isinstance(s.sections[0], BootstrapSetup)
    assert isinstance(s.sections[-1], BootstrapTestResult)
    back = pickle.loads(pickle.dumps(s))  # a summary pickles with its sections
    assert str(back) == str(s) and back.statistics.keys() == stats.keys()
    check_renderings(bs, [test.statistic, test.p_value],
                     [*bs.std_err, *bs.percentile.to_numpy().ravel()], ["WCR bootstrap test"])


def test_bootstrap_test_lines_are_its_section(data) -> None:
    bs = ar.attnreg("y ~ x", data).bootstrap(reps=49, seed=2, weights="webb",
                                           hypothesis=["x = 0", "Intercept = 0"])
    assert bs.test is not None
    lines = str(bs).splitlines()
    assert lines[-2:] == bs.test.lines() and "Wald F" in lines[-1]
    assert bs.summary().statistics["form"] == "F"


@pytest.mark.parametrize("kind", ["pairs", "residual"])
def test_summary_without_a_test(data, kind) -> None:
    bs = ar.attnreg("y ~ x", data).bootstrap(kind, reps=29, seed=1)
    stats = bs.summary().statistics
    assert (stats["kind"], stats["reps"], stats["n_failed"]) == (kind, 29, bs.n_failed)
    assert "test_statistic" not in stats and stats["cluster"] is None
    check_renderings(bs, [], bs.std_err)
