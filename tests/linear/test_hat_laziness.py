"""Hat values are computed only where a statistic reads them (HC2, HC3, influence, ...)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from numpy.testing import assert_allclose

import attnreg as ar
import attnreg.linear.results as results_module
from attnreg.linear import decompositions, filters
from tests.conftest import ATOL_IDENTITY, RTOL_SM

FORMULA = "y ~ x1 + x2 + C(g)"


@pytest.fixture(scope="module")
def big_frame() -> pd.DataFrame:
    """Enough rows that the summary samples its query rows (m < n)."""
    rng = np.random.default_rng(11)
    n = 3000
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(1, 3, n),
                       "g": rng.choice(list("abcdef"), n), "firm": rng.integers(0, 60, n),
                       "w": rng.uniform(0.5, 2.0, n)})
    df["y"] = 1 + df.x1 - 0.5 * df.x2 + rng.normal(size=n) * (1 + df.x2)
    return df


@pytest.fixture
def hat_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the passes that compute every row's hat value (the summary's largest leverage
    made as costly as on a wide design, so that it samples rows)."""
    import attnreg.report.linear as report_linear

    monkeypatch.setattr(report_linear, "EXACT_LEVERAGE_BUDGET", 0)
    calls: list[int] = []
    real = results_module.hat_and_weight_stats

    def spy(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(results_module, "hat_and_weight_stats", spy)
    return calls


@pytest.mark.parametrize(("kind", "options"), [
    ("classical", {}), ("HC0", {}), ("HC1", {}), ("HAC", {"maxlags": 3}),
    ("cluster", {"cluster": "firm"}), ("cluster", {"cluster": "firm", "type": "CR2"}),
])
def test_no_hat_values_for_summaries_that_do_not_need_them(
        big_frame: pd.DataFrame, hat_calls: list[int], kind: str, options: dict[str, Any]) -> None:
    fit = ar.attnreg(FORMULA, big_frame).with_vcov(kind, **options)
    text = str(fit.summary())
    _ = fit.std_err, fit.conf_int(), fit.vcov
    assert hat_calls == []
    assert "evenly spaced rows" in text  # the summary sampled its query rows


def test_the_largest_leverage_is_exact_when_affordable(big_frame: pd.DataFrame) -> None:
    """Below the budget the summary's largest leverage is every row's, not a sample's."""
    fit = ar.attnreg(FORMULA, big_frame)
    text = str(fit.summary())
    top = fit.hat_values.idxmax()
    assert f"max {ar.report.fmt_g(fit.hat_values.max())} (row {top})" in text
    assert "sampled rows" not in text and "evenly spaced rows" in text


@pytest.mark.parametrize("kind", ["HC2", "HC3"])
def test_hat_values_computed_and_correct_for_hc2_hc3(big_frame: pd.DataFrame,
                                                    hat_calls: list[int], kind: str) -> None:
    fit = ar.attnreg(FORMULA, big_frame).with_vcov(kind)
    str(fit.summary())
    assert hat_calls == [1]  # one pass, shared by the covariance and any later use
    ref = smf.ols(FORMULA, big_frame).fit(cov_type=kind)
    assert_allclose(fit.std_err.to_numpy(), ref.bse.to_numpy(), rtol=RTOL_SM)
    hat = ref.get_influence().hat_matrix_diag
    assert_allclose(fit.hat_values.to_numpy(), hat, atol=ATOL_IDENTITY)
    assert hat_calls == [1]


@pytest.mark.parametrize("u_mode", ["stored", "lazy"])
@pytest.mark.parametrize(("method", "options", "weights"), [
    ("ols", {}, None), ("ridge", {"lam": 3.0}, None), ("pcr", {"k": 4}, None),
    ("ols", {}, "w"), ("ridge", {"lam": 3.0}, "w"),
])
def test_query_pass_equals_the_full_pass(big_frame: pd.DataFrame, monkeypatch: pytest.MonkeyPatch,
                                         u_mode: str, method: str, options: dict[str, Any],
                                         weights: str | None) -> None:
    if u_mode == "lazy":
        monkeypatch.setattr(decompositions, "LAZY_U_MIN_CELLS", 0)
    fit = ar.attnreg(FORMULA, big_frame, method=method, weights=weights, **options)
    assert fit.spectrum.U.is_stored == (u_mode == "stored")
    rows = np.array([0, 5, 17, 1000, 2999])
    h, neg, lev = filters.query_weight_stats(fit.spectrum, fit.filtered.f, rows)
    h_all, neg_ref, lev_ref = filters.hat_and_weight_stats(fit.spectrum, fit.filtered.f, rows)
    assert_allclose(h, h_all[rows], atol=ATOL_IDENTITY)
    assert_allclose(neg, neg_ref, atol=ATOL_IDENTITY)
    assert_allclose(lev, lev_ref, atol=ATOL_IDENTITY)


def test_sampled_summary_leverage(big_frame: pd.DataFrame) -> None:
    fit = ar.attnreg(FORMULA, big_frame)
    hat = fit.sampled_hat_values()
    _, _, m = fit.sampled_weight_stats()
    assert len(hat) == m < fit.nobs
    ref = smf.ols(FORMULA, big_frame).fit().get_influence().hat_matrix_diag
    assert_allclose(hat.to_numpy(), ref[hat.index.to_numpy()], atol=ATOL_IDENTITY)
    section = next(s for s in fit.summary().sections if type(s).__name__ == "AttentionSummary")
    assert section.leverage_mean == pytest.approx(ref.mean(), rel=RTOL_SM)  # tr(H)/n
    # under the budget the largest leverage is every row's (exact), not the sample's
    assert section.n_leverage == fit.nobs
    assert section.leverage_max == pytest.approx(ref.max(), rel=RTOL_SM)
