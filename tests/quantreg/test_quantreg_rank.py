"""Rank-inversion intervals of quantile regression against R's ``summary(rq(...), se = "rank")``
(tests/reference/make_quantreg_rank.R): the bounds at several τ, with and without an intercept,
with ``iid = FALSE`` and prior weights; R's warnings; the printout; R's default ``se``."""

from __future__ import annotations

import json
import pickle
import re
import warnings
from functools import cache
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy import stats
from scipy.optimize import linprog

import attnreg as ar
from attnreg.exceptions import InferenceWarning
from attnreg.quantreg.rank import rank_intervals
from tests.conftest import REPO, RTOL_EXACT, RTOL_R
from tests.report.renderings import check_renderings


@cache
def reference() -> dict[str, Any]:
    with open(REPO / "tests" / "reference" / "quantreg_rank_r.json", encoding="utf-8") as fh:
        return dict(json.load(fh))


def _frame(design: str) -> pd.DataFrame:
    return pd.DataFrame(reference()["designs"][design])


def _fit(case: dict[str, Any]) -> Any:
    formula = case["formula"].replace("^", "**")  # R's I(x^2) is Python's I(x**2)
    return ar.attnreg(formula, _frame(case["design"]), method="quantreg", tau=case["tau"],
                      weights="w" if case["weighted"] else None)


def _nonunique(case: dict[str, Any]) -> bool:
    return any("nonunique" in w for w in np.atleast_1d(case["warnings"]))


# Where R's walk differs, checked against the rank test computed by an exact LP below:
# - stackloss (integer data) at the median: the restricted fits are degenerate (several optimal
#   bases, the same rank scores) and R's bound for Air.Flow interpolates from a breakpoint of
#   the basis its simplex happens to hold (0.514, ours 0.528; the statistic is 1.588 on both);
# - engel's income and income² at the median: rows repeated in the data cross zero together,
#   and R's simplex flips one of them; its interval then contains b = 0.7173 for income, which
#   the rank test rejects (|T| = 1.664 > 1.651 by the exact LP).
DEGENERATE = {("stack", 0.5), ("engel", 0.5, "foodexp ~ income - 1 + I(income^2)")}


def _degenerate(case: dict[str, Any]) -> bool:
    return bool({(case["design"], case["tau"]),
                 (case["design"], case["tau"], case["formula"])} & DEGENERATE)


def _xmax(values: list[float]) -> np.ndarray:
    """R's unbounded side, .Machine$double.xmax, written with 15 digits, reads as ±inf."""
    big = np.finfo(float).max
    return np.clip(np.asarray(values, dtype=float), -big, big)


CASES = reference()["cases"]
IDS = [f"{c['design']}-{c['formula']}-tau{c['tau']}-{'iid' if c['iid'] else 'nid'}"
       f"{'-weighted' if c['weighted'] else ''}" for c in CASES]


def test_header_names_the_versions() -> None:
    header = reference()["header"]
    assert header["r"].startswith("R version") and header["packages"]["quantreg"]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_bounds_equal_summary_rq_rank(case: dict[str, Any]) -> None:
    if _nonunique(case):
        pytest.skip("R's simplex found one of several solutions")
    if _degenerate(case):
        pytest.skip("degenerate restricted fits: R's bound depends on its simplex path")
    fit = _fit(case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InferenceWarning)  # "percent fis <=0", tested below
        table = fit.coef_table(se="rank", iid=case["iid"])
    assert list(table.columns) == ["coefficients", "lower bd", "upper bd"]
    assert [n.replace(" ** ", "^") for n in table.index] == case["names"]
    assert_allclose(table["coefficients"], case["coef"], rtol=RTOL_R)
    assert_allclose(table["lower bd"], _xmax(case["lower"]), rtol=RTOL_R)
    assert_allclose(table["upper bd"], _xmax(case["upper"]), rtol=RTOL_R)


def test_the_cases_cover_what_r_does() -> None:
    compared = [c for c in CASES
                if not _nonunique(c) and not _degenerate(c)]
    assert len(compared) >= 20
    assert {c["iid"] for c in compared} == {True, False}
    assert any(c["weighted"] for c in compared)
    assert any("- 1" in c["formula"] for c in compared)  # without an intercept
    assert len({c["tau"] for c in compared}) >= 5


@pytest.mark.parametrize("case", [c for c in CASES if not c["iid"] and c["warnings"]
                                  and not _nonunique(c)],
                         ids=lambda c: f"{c['formula']}-tau{c['tau']}")
def test_crossing_densities_warn_as_r(case: dict[str, Any]) -> None:
    message = str(np.atleast_1d(case["warnings"])[0])
    with pytest.warns(InferenceWarning, match=rf"^{message}: the fitted quantiles"):
        _fit(case).coef_table(se="rank", iid=False)


def _rank_statistic(X: np.ndarray, y: np.ndarray, j: int, b: float, tau: float) -> float:
    """``T(b)`` from the dual of the restricted fit solved as an LP by HiGHS (an independent
    solver): ``max (y − b x_j)'a`` s.t. ``Z'a = (1 − τ) Z'1``, ``0 ≤ a ≤ 1``."""
    Z, xj = np.delete(X, j, axis=1), X[:, j]
    n = len(y)
    dual = linprog(-(y - b * xj), A_eq=Z.T, b_eq=(1 - tau) * Z.sum(axis=0), bounds=[(0, 1)] * n,
                   method="highs").x
    q = 1.0 / np.diag(np.linalg.inv(X.T @ X))[j]  # a test reference, not a solve path
    return float(xj @ (dual - (1 - tau))) / np.sqrt(q * tau * (1 - tau))


@pytest.mark.parametrize("case", [c for c in CASES if _degenerate(c) and c["iid"]],
                         ids=lambda c: f"{c['design']}-tau{c['tau']}")
def test_degenerate_cases_accept_inside_the_interval(case: dict[str, Any]) -> None:
    """Every b between the estimate and a bound (but the last fifth, where the bound interpolates) is
    accepted by the rank test computed by an exact LP."""
    fit = _fit(case)
    table = fit.coef_table(se="rank")
    X, y, tau = fit.design.X, fit.design.y, case["tau"]
    cutoff = stats.t.ppf(0.95, len(y) - X.shape[1])
    for j, (coef, lo, hi) in enumerate(table.to_numpy()):
        for b in np.concatenate([np.linspace(coef, lo, 12)[1:-2], np.linspace(coef, hi, 12)[1:-2]]):
            assert abs(_rank_statistic(X, y, j, b, tau)) < cutoff


def test_repeated_rows_r_accepts_what_the_rank_test_rejects() -> None:
    case = next(c for c in CASES if _degenerate(c) and c["design"] == "engel" and c["iid"])
    fit = _fit(case)
    ours, r_lower = fit.coef_table(se="rank")["lower bd"].iloc[0], case["lower"][0]
    assert r_lower < 0.7173 < ours  # between the two lower bounds of income, rejected:
    cutoff = stats.t.ppf(0.95, fit.nobs - 2)
    assert abs(_rank_statistic(fit.design.X, fit.design.y, 0, 0.7173, 0.5)) > cutoff


def _coefficients_on(lines: list[str]) -> list[str]:
    first = lines.index("Coefficients:")
    return lines[first:]


@pytest.mark.parametrize(("name", "formula", "design", "tau", "options"), [
    ("one", "foodexp ~ income", "engel", 0.5, {"se": "rank"}),
    ("nid_iid", "y ~ x1 + x2", "sim300", 0.9, {"se": "rank", "iid": False}),
    ("default", "foodexp ~ income", "engel", 0.5, {}),
    ("one_coef", "foodexp ~ income - 1", "engel", 0.5, {"se": "rank"}),
    ("unbounded", "y ~ x", "tiny", 0.5, {"se": "rank"}),
])
def test_summary_text_is_print_summary_rq(name: str, formula: str, design: str, tau: float,
                                          options: dict[str, Any]) -> None:
    fit = ar.attnreg(formula, _frame(design), method="quantreg", tau=tau)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", InferenceWarning)
        text = str(fit.summary(**options)).splitlines()
    assert _coefficients_on(text) == _coefficients_on(reference()["text"][name])


def test_summary_of_several_tau_is_print_summary_rq() -> None:
    fit = ar.attnreg("foodexp ~ income", _frame("engel"), method="quantreg", tau=[0.25, 0.75],
                     se="rank")
    expected = [line for line in reference()["text"]["many"] if not line.startswith("Call:")]
    assert [line for line in str(fit.summary()).splitlines()
            if not line.startswith("Call:")] == expected


def test_default_se_is_r_s_rank_below_1001_rows_and_nid_above() -> None:
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.uniform(0, 4, 1001)})
    df["y"] = 1 + df.x + rng.standard_normal(1001)
    small = ar.attnreg("y ~ x", df.head(1000), method="quantreg")
    large = ar.attnreg("y ~ x", df, method="quantreg")
    assert (small.se, small.summary_se, large.summary_se) == (None, "rank", "nid")
    assert list(small.coef_table().columns) == ["coefficients", "lower bd", "upper bd"]
    assert "Std. Error" in large.coef_table().columns
    # vcov() has no rank form: R's summary(covariance = TRUE) gives "nid"
    pd.testing.assert_frame_equal(small.vcov(), small.vcov(se="nid"))
    chosen = ar.attnreg("y ~ x", df.head(200), method="quantreg", se="iid")
    assert chosen.summary_se == "iid" and "Std. Error" in str(chosen.summary())


def test_intervals_are_equivariant_in_the_response() -> None:
    """``y → c y + X g`` (c > 0) maps every interval to ``c [lo, hi] + g``: the rank scores of
    the restricted fits do not change (Koenker 2005, Theorem 2.3)."""
    rng = np.random.default_rng(7)
    n = 150
    X = np.column_stack([np.ones(n), rng.uniform(0, 4, n), rng.standard_normal(n)])
    y = X @ [1.0, 2.0, -1.0] + (1 + 0.5 * X[:, 1]) * rng.standard_normal(n)
    g, c = np.array([0.5, -1.0, 2.0]), 3.0
    fit = ar.attnreg("y ~ x1 + x2", pd.DataFrame({"y": y, "x1": X[:, 1], "x2": X[:, 2]}),
                     method="quantreg", tau=0.3)
    coef = fit.coef.iloc[:, 0].to_numpy()
    base = rank_intervals(X, y, coef, 0.3)
    moved = rank_intervals(X, c * y + X @ g, c * coef + g, 0.3)
    assert_allclose(moved, c * base + g[:, None], rtol=RTOL_EXACT, atol=RTOL_EXACT)
    assert np.all(base[:, 0] < coef) and np.all(coef < base[:, 1])


def test_a_wider_level_gives_wider_intervals() -> None:
    fit = ar.attnreg("foodexp ~ income", _frame("engel"), method="quantreg", tau=0.5)
    narrow = fit.coef_table(se="rank", alpha=0.2)
    wide = fit.coef_table(se="rank", alpha=0.01)
    assert np.all(wide["lower bd"] < narrow["lower bd"])
    assert np.all(wide["upper bd"] > narrow["upper bd"])


def test_rank_summary_keeps_numbers_renders_and_pickles() -> None:
    fit = ar.attnreg("foodexp ~ income", _frame("engel"), method="quantreg", tau=[0.25, 0.75])
    s = fit.summary()
    for tau, table in zip(fit.taus, s.tables, strict=True):
        pd.testing.assert_frame_equal(table, fit.coef_table(tau, se="rank"))
    check_renderings(s, [], s.tables[1]["upper bd"], ["lower bd", "tau: [1] 0.75"])
    back = pickle.loads(pickle.dumps(fit))
    assert back.se is None and str(back.summary()) == str(s)


def test_a_nonunique_fit_warns_as_r() -> None:
    """Discrete data: R says "Solution may be nonunique"; the intervals depend on the solution."""
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"a": rng.integers(0, 5, 300), "b": rng.integers(0, 3, 300)})
    df["y"] = rng.poisson(2 + df.a)
    fit = ar.attnreg("y ~ a + b", df, method="quantreg", tau=0.5)
    assert not fit.fits[0].vertex
    with pytest.warns(InferenceWarning) as record:
        fit.coef_table(se="rank")
    messages = [str(w.message) for w in record]
    assert any(m.startswith("tau=0.5: the solution may be nonunique") for m in messages)
    assert any(re.match(r"the rank-inversion paths met \d+ degenerate restricted fit\(s\) "
                        r".* not verified optimal", m) for m in messages)
