"""CR2 (Bell–McCaffrey) with absorbed fixed effects equals the dummy-variable fit's.

The reference is attnreg's dense fit ``y ~ x1 + x2 + C(firm) + C(year)`` with
``type="CR2"``, itself tested against clubSandwich's ``vcovCR`` (tests/inference/vcov/test_cluster.py);
the fixed-effects fit builds each cluster's block of the full hat matrix from the demeaned
regressors and exact sparse solves with D'WD. Both are backward stable on these
well-conditioned data, hence RTOL_EXACT (1e-10). The clubSandwich fixture of a fixed-effects
model itself is tested in tests/fe/test_fe_cr2_r.py.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import attnreg as ar
import attnreg.fe.cr2 as fe_cr2
from attnreg.exceptions import OptionError, RankDeficiencyWarning
from tests.conftest import RTOL_EXACT
from tests.fe.test_fe_fit import assert_same, fe_movers, fe_panel, fits


def assert_same_vcov(fe: object, dummy: object) -> None:
    names = fe.names  # type: ignore[attr-defined]
    np.testing.assert_allclose(fe.vcov.to_numpy(),  # type: ignore[attr-defined]
                               dummy.vcov.loc[names, names].to_numpy(),  # type: ignore[attr-defined]
                               rtol=RTOL_EXACT)
    assert_same(fe, dummy, names)


@pytest.mark.parametrize("data", ["panel", "movers"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("cluster", ["firm", "year"])
def test_cr2_equals_the_dummy_variable_fit(data: str, weighted: bool, cluster: str) -> None:
    # 60 workers: the dense reference's CR2 grows with the square of its rank
    df = fe_panel() if data == "panel" else fe_movers(n_workers=60)
    fe, dummy = fits(df, weighted)
    got = fe.with_vcov("cluster", cluster=cluster, type="CR2")
    ref = dummy.with_vcov("cluster", cluster=cluster, type="CR2")
    assert_same_vcov(got, ref)
    assert got.vcov_spec.label(got) == ref.vcov_spec.label(ref)


@pytest.mark.parametrize("weighted", [False, True])
def test_cr2_at_the_fit_with_three_and_one_fixed_effects(weighted: bool) -> None:
    df = fe_panel(3).assign(plant=lambda d: np.random.default_rng(4).integers(0, 6, len(d)))
    w = "w" if weighted else None
    for fe_part, dummies in [("firm + year + plant", "C(firm) + C(year) + C(plant)"),
                             ("firm", "C(firm)")]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RankDeficiencyWarning)
            fe = ar.attnreg(f"y ~ x1 + x2 | {fe_part}", df, weights=w, vcov="cluster",
                            cluster="firm", type="CR2")
            dummy = ar.attnreg(f"y ~ x1 + x2 + {dummies}", df, weights=w, vcov="cluster",
                               cluster="firm", type="CR2")
        assert_same_vcov(fe, dummy)


def test_cr2_does_not_depend_on_ssc_and_pickles() -> None:
    fe, dummy = fits(fe_panel(), vcov="cluster", cluster="year", type="CR2")
    again = pickle.loads(pickle.dumps(fe))
    np.testing.assert_allclose(again.std_err, dummy.std_err[fe.names], rtol=RTOL_EXACT)
    dummy_ssc = fe.with_vcov("cluster", cluster="year", type="CR2", ssc="dummy")
    np.testing.assert_allclose(dummy_ssc.std_err, fe.std_err, rtol=RTOL_EXACT)
    assert "CR2's adjustment of each cluster's residuals (no G/(G - 1)" in str(fe.summary())


@pytest.mark.parametrize("data", ["panel", "movers"])
@pytest.mark.parametrize("weighted", [False, True])
def test_satterthwaite_df_and_htz_tests_equal_the_dummy_fit(data: str, weighted: bool) -> None:
    df = fe_panel() if data == "panel" else fe_movers(n_workers=60)
    fe, dummy = fits(df, weighted)
    for cluster in ("firm", "year"):
        got = fe.with_vcov("cluster", cluster=cluster, type="CR2", df="satterthwaite")
        ref = dummy.with_vcov("cluster", cluster=cluster, type="CR2", df="satterthwaite")
        np.testing.assert_allclose(got.df_coef, ref.df_coef[got.names], rtol=RTOL_EXACT)
        np.testing.assert_allclose(got.p_value, ref.p_value[got.names], rtol=RTOL_EXACT)
        wg, wr = got.wald_test("x1 = 0.5, x2 = -2"), ref.wald_test("x1 = 0.5, x2 = -2")
        np.testing.assert_allclose([wg.statistic, *wg.df, wg.p_value],
                                   [wr.statistic, *wr.df, wr.p_value], rtol=RTOL_EXACT)
        fg, fr = got.f_test, ref.wald_test("x1 = 0, x2 = 0")  # the slopes' joint test
        np.testing.assert_allclose([fg.statistic, fg.df2], [fr.statistic, fr.df[1]],
                                   rtol=RTOL_EXACT)


def test_cr2_refuses_a_cluster_too_large(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fe_cr2, "MAX_CLUSTER_ROWS", 50)
    fit = ar.attnreg("y ~ x1 | firm", fe_panel(), vcov="cluster", cluster="year", type="CR2")
    with pytest.raises(OptionError, match=r"largest cluster has \d+ rows \(at most 50\)"):
        _ = fit.std_err


def test_cr2_with_a_fixed_effect_nested_in_another() -> None:
    """industry nested in firm leaves the Schur complement singular: the solves with D'WD
    run by conjugate gradients, still to the dummy fit's digits."""
    df = fe_panel(5).assign(plant=lambda d: np.random.default_rng(6).integers(0, 5, len(d)))
    df["industry"] = df.firm % 7
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        fe = ar.attnreg("y ~ x1 + x2 | firm + year + plant + industry", df, weights="w",
                        vcov="cluster", cluster="industry", type="CR2", df="satterthwaite")
        dummy = ar.attnreg("y ~ x1 + x2 + C(firm) + C(year) + C(plant) + C(industry)", df,
                           weights="w", vcov="cluster", cluster="industry", type="CR2",
                           df="satterthwaite")
    assert not fe._level_solver.exact
    # the vcov and df only: the nested levels are counted in df_resid (fixest's convention)
    np.testing.assert_allclose(fe.vcov.to_numpy(),
                               dummy.vcov.loc[fe.names, fe.names].to_numpy(), rtol=RTOL_EXACT)
    np.testing.assert_allclose(fe.df_coef, dummy.df_coef[fe.names], rtol=RTOL_EXACT)
