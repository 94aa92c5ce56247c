"""``attnreg("y ~ x | firm + year", df)`` equals the dummy-variable fit ``y ~ x + C(firm) + C(year)``.

By the Frisch–Waugh–Lovell theorem OLS on the demeaned design has the dummy-variable fit's
slopes, residuals and sandwich meats; the fixed-effects results put back its degrees of
freedom, leverages, R² and fitted values. The reference is attnreg's own dense fit with
``C()`` dummies (a QR of the N × (p + G) design), on a well-connected panel and on a sparse
worker–firm "mover" graph. Both sides are backward stable and the demeaning stops at the
rounding floor of the level sums, hence RTOL_EXACT (1e-10).
"""

from __future__ import annotations

import importlib

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import ConvergenceWarning, DataError, FormulaError, InferenceWarning
from attnreg.exceptions import OptionError
from attnreg.exceptions import RankDeficiencyWarning
from attnreg.fe.results import FixedEffectsResults
from tests.conftest import RTOL_EXACT

SLOPES = ["x1", "x2"]


def fe_panel(seed: int = 0, n: int = 600) -> pd.DataFrame:
    """A well-connected firm × year panel with heteroskedastic errors."""
    rng = np.random.default_rng(seed)
    firm, year = rng.integers(0, 40, n), rng.integers(0, 8, n)
    x1 = rng.normal(size=n) + 0.05 * firm
    x2 = rng.normal(size=n) + 0.1 * year
    e = rng.normal(size=n) * (0.5 + np.abs(x1))
    y = 0.5 * x1 - 2.0 * x2 + 0.02 * firm + np.sin(year) + e
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "firm": firm, "year": year,
                         "w": rng.uniform(0.5, 2.0, n)})


def fe_movers(seed: int = 1, n_workers: int = 300, periods: int = 5) -> pd.DataFrame:
    """A worker–firm panel in which 5 % of worker-years are at another firm: a sparse graph
    (and, by chance, several connected components)."""
    rng = np.random.default_rng(seed)
    worker = np.repeat(np.arange(n_workers), periods)
    firm = rng.integers(0, 50, n_workers)[worker]
    move = rng.random(worker.size) < 0.05
    firm[move] = rng.integers(0, 50, move.sum())
    x1, x2 = rng.normal(size=(2, worker.size))
    y = x1 - x2 + 0.01 * worker + 0.05 * firm + rng.normal(size=worker.size)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "firm": worker, "year": firm,
                         "w": rng.uniform(0.5, 2.0, worker.size)})


def fits(df: pd.DataFrame, weighted: bool = False, **options: object):
    w = "w" if weighted else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        fe = ar.attnreg("y ~ x1 + x2 | firm + year", df, weights=w, **options)
        dummy = ar.attnreg("y ~ x1 + x2 + C(firm) + C(year)", df, weights=w,
                           **{k: v for k, v in options.items() if k != "ssc"})
    return fe, dummy


def assert_same(fe: FixedEffectsResults, dummy: object, names: list[str] = SLOPES) -> None:
    for attr in ("coef", "std_err", "t_value", "p_value"):
        np.testing.assert_allclose(getattr(fe, attr)[names].to_numpy(),
                                   getattr(dummy, attr)[names].to_numpy(), rtol=RTOL_EXACT,
                                   err_msg=attr)
    for attr in ("df_resid", "sigma", "r_squared", "adj_r_squared", "rss", "df_inference"):
        np.testing.assert_allclose(getattr(fe, attr), getattr(dummy, attr), rtol=RTOL_EXACT,
                                   err_msg=attr)


#: HC2 and HC3 on the panel only: the mover graph has levels with a single row (leverage 1)
VCOVS = [("classical", {}), ("HC0", {}), ("HC1", {}), ("HC2", {}), ("HC3", {}),
         ("cluster", {"cluster": "firm"}), ("cluster", {"cluster": "year", "type": "HC0"}),
         ("cluster", {"cluster": "firm + year", "fix": False}),
         ("DK", {"time": "year"}), ("HAC", {"maxlags": 2})]


@pytest.mark.parametrize("data", ["panel", "movers"])
@pytest.mark.parametrize("weighted", [False, True])
def test_equals_the_dummy_variable_fit_under_every_covariance(data: str, weighted: bool) -> None:
    df = fe_panel() if data == "panel" else fe_movers()
    fe, dummy = fits(df, weighted)
    assert isinstance(fe, FixedEffectsResults)
    assert fe.names == SLOPES
    for kind, options in VCOVS if data == "panel" else VCOVS[:3] + VCOVS[5:]:  # no HC2, HC3
        assert_same(fe.with_vcov(kind, ssc="dummy", **options), dummy.with_vcov(kind, **options))
    np.testing.assert_allclose(fe.hat_values, dummy.hat_values, rtol=RTOL_EXACT, atol=RTOL_EXACT)
    np.testing.assert_allclose(fe.fitted, dummy.fitted, rtol=RTOL_EXACT)
    np.testing.assert_allclose(fe.resid, dummy.resid, atol=RTOL_EXACT * df.y.abs().max())
    np.testing.assert_allclose([fe.aic, fe.bic, fe.loglik], [dummy.aic, dummy.bic, dummy.loglik],
                               rtol=RTOL_EXACT)


def test_three_fixed_effects_leverage_and_intervals() -> None:
    df = fe_panel().assign(plant=lambda d: np.random.default_rng(4).integers(0, 6, len(d)))
    fe = ar.attnreg("y ~ x1 + x2 | firm + year + plant", df, vcov="HC3")
    dummy = ar.attnreg("y ~ x1 + x2 + C(firm) + C(year) + C(plant)", df, vcov="HC3")
    assert_same(fe, dummy)
    np.testing.assert_allclose(fe.hat_values, dummy.hat_values, rtol=RTOL_EXACT)
    new = df.head(5)
    np.testing.assert_allclose(fe.with_vcov("classical").predict(new, interval="prediction"),
                               dummy.with_vcov("classical").predict(new, interval="prediction"),
                               rtol=RTOL_EXACT)


def test_vcov_at_the_fit_and_classical_hc1_do_not_depend_on_ssc() -> None:
    df = fe_panel()
    fe, dummy = fits(df, vcov="HC1")
    assert_same(fe, dummy)
    for kind in ("classical", "HC1"):
        np.testing.assert_allclose(fe.with_vcov(kind, ssc="fixest").std_err,
                                   fe.with_vcov(kind, ssc="dummy").std_err, rtol=RTOL_EXACT)


def test_mover_graph_counts_its_connected_components() -> None:
    df = fe_movers()
    fe, dummy = fits(df)
    lone = pd.concat([df, df.iloc[[0]].assign(year=999)], ignore_index=True)  # a one-row firm
    fe_lone, dummy_lone = fits(lone)
    assert fe_lone.hat_values.iloc[-1] == 1.0  # exactly: its own dummy fits it
    np.testing.assert_allclose(fe_lone.hat_values, dummy_lone.hat_values, atol=RTOL_EXACT)
    assert fe.absorbed.n_redundant > 1  # several components: not fixest's "one per extra FE"
    assert fe.edf == dummy.edf  # the dummy fit's rank, exactly


def test_within_r_squared_is_the_r_squared_of_the_demeaned_fit() -> None:
    df = fe_panel()
    fe, _ = fits(df)
    only = ar.attnreg("y ~ C(firm) + C(year)", df)  # RSS of y on the fixed effects alone
    within = 1.0 - fe.rss / only.rss
    np.testing.assert_allclose(fe.within_r_squared, within, rtol=RTOL_EXACT)
    n_fe = 40 + 8 - 1
    adj = 1.0 - (1.0 - within) * (fe.nobs - n_fe) / (fe.nobs - n_fe - 2)
    np.testing.assert_allclose(fe.adj_within_r_squared, adj, rtol=RTOL_EXACT)


def test_interacted_fixed_effects_equal_the_dummies_of_the_pairs() -> None:
    df = fe_panel().assign(industry=lambda d: d.firm % 5)
    df["iy"] = df.industry.astype(str) + "_" + df.year.astype(str)
    fe = ar.attnreg("y ~ x1 + x2 | industry^year + firm", df)
    with pytest.warns(RankDeficiencyWarning):  # firm is nested in industry: 4 more aliases
        dummy = ar.attnreg("y ~ x1 + x2 + C(iy) + C(firm)", df)
    assert fe.absorbed.fe.n_levels[0] == df.iy.nunique()
    assert_same(fe, dummy)


def test_regressor_collinear_with_the_fixed_effects_is_aliased() -> None:
    df = fe_panel().assign(size=lambda d: 1.5 * d.firm + 2.0, firm_id=lambda d: d.firm * 1.0)
    with pytest.warns(RankDeficiencyWarning, match="size"):
        fe = ar.attnreg("y ~ x1 + size + x2 | firm + year", df)
    assert np.isnan(fe.coef["size"]) and np.isnan(fe.std_err["size"])
    assert fe.aliased == ["size"]
    _, dummy = fits(df)
    assert_same(fe, dummy)
    with pytest.warns(RankDeficiencyWarning, match="firm_id"):  # the FE is the regressor
        same = ar.attnreg("y ~ x1 + x2 + firm_id | firm", df)
    ref = ar.attnreg("y ~ x1 + x2 + C(firm)", df)
    assert_same(same, ref)


@pytest.mark.parametrize("kind", ["str", "uint64", "category", "float"])
def test_fixed_effects_of_any_dtype(kind: str) -> None:
    df = fe_panel()
    base, _ = fits(df)
    other = df.copy()
    if kind == "str":
        other["firm"] = "f" + other.firm.astype(str)
    elif kind == "uint64":
        other["firm"] = other.firm.astype(np.uint64) + np.uint64(2**63 + 7)  # beyond int64
    elif kind == "category":
        other["year"] = pd.Categorical(other.year.astype(str))
    else:
        other["year"] = other.year * 0.5
    fe, _ = fits(other)
    np.testing.assert_allclose(fe.coef, base.coef, rtol=RTOL_EXACT)
    np.testing.assert_allclose(fe.std_err, base.std_err, rtol=RTOL_EXACT)


def test_missing_fixed_effect_rows_are_dropped_and_counted() -> None:
    df = fe_panel()
    df["year"] = df.year.astype(float)
    df.loc[df.index[[3, 10, 11]], "year"] = np.nan
    df.loc[df.index[20], "firm"] = None
    df["firm"] = df.firm.astype(object)
    fe, _ = fits(df)
    assert fe.nobs == len(df) - 4
    assert fe.absorbed.n_missing == {"firm": 1, "year": 3}
    keep = df.dropna(subset=["firm", "year"]).astype({"firm": int})
    ref, dummy = fits(keep)
    np.testing.assert_allclose(fe.coef, ref.coef, rtol=RTOL_EXACT)
    assert_same(fe, dummy)
    assert "Rows without a fixed effect, left out: firm 1, year 3" in str(fe.summary())
    with pytest.raises(DataError, match=r"fixed effect 'year' is missing in row 3"):
        ar.attnreg("y ~ x1 | firm + year", df, na_action="raise")


def test_single_level_fixed_effect_is_the_intercept() -> None:
    df = fe_panel().assign(one="all")
    fe = ar.attnreg("y ~ x1 + x2 | one", df)
    ols = ar.attnreg("y ~ x1 + x2", df)
    assert_same(fe, ols)


def test_predictions_add_the_fixed_effects_with_the_dummy_fit_intervals() -> None:
    df = fe_panel()
    fe, dummy = fits(df, weighted=True)
    new = df.sample(25, random_state=1)
    for interval in ("none", "confidence", "prediction"):
        got, ref = fe.predict(new, interval=interval), dummy.predict(new, interval=interval)
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=RTOL_EXACT)
    np.testing.assert_allclose(fe.predict(), dummy.fitted, rtol=RTOL_EXACT)
    new.loc[new.index[0], "firm"] = 999
    with pytest.warns(InferenceWarning, match=r"fixed effect 'firm' has 1 level\(s\) not in the fit: 999"):
        out = fe.predict(new)
    assert np.isnan(out.iloc[0]) and np.isfinite(out.iloc[1:]).all()
    with pytest.raises(DataError, match=r"'firm' has 1 level.*999.*unseen='nan'"):
        fe.predict(new, unseen="error")
    with pytest.raises(OptionError, match=r"cluster \(HC0, HC1\) covariances, however the fit uses 'HAC'"):
        fe.with_vcov("HAC").predict(new.iloc[1:], interval="confidence")


@pytest.mark.parametrize("data", ["panel", "movers"])
def test_robust_prediction_intervals_equal_the_dummy_fit(data: str) -> None:
    df = fe_panel() if data == "panel" else fe_movers()
    fe, dummy = fits(df, weighted=True)
    new = df.sample(12, random_state=2)
    kinds = [("HC0", {}), ("HC1", {}), ("cluster", {"cluster": "firm"}),
             ("cluster", {"cluster": "firm + year", "fix": False, "type": "HC0"})]
    if data == "panel":  # the mover graph has rows of leverage 1
        kinds += [("HC2", {}), ("HC3", {})]
    for kind, options in kinds:
        got = fe.with_vcov(kind, ssc="dummy", **options).predict(new, interval="confidence")
        ref = dummy.with_vcov(kind, **options).predict(new, interval="confidence")
        np.testing.assert_allclose(got.to_numpy(), ref.to_numpy(), rtol=RTOL_EXACT,
                                   err_msg=kind)
    # fixest's convention differs from the dummy fit's by one factor on every variance
    fixest = fe.with_vcov("cluster", cluster="firm")
    ratio = fixest.std_err["x1"] / fe.with_vcov("cluster", cluster="firm", ssc="dummy").std_err["x1"]
    got = fixest.predict(new, interval="confidence")
    ref = dummy.with_vcov("cluster", cluster="firm").predict(new, interval="confidence")
    np.testing.assert_allclose(got["upr"] - got["fit"], (ref["upr"] - ref["fit"]) * ratio,
                               rtol=RTOL_EXACT)


def test_singletons_are_kept_by_default_and_removed_repeatedly_by_option() -> None:
    df = fe_panel()
    # firm 100 has one row; once it goes, year 50's other row (firm 101, alone) goes too
    extra = pd.DataFrame({"y": [1.0, 2.0, 3.0], "x1": [0.1, 0.2, 0.3], "x2": [0.5, -0.5, 1.0],
                          "firm": [100, 101, 101], "year": [50, 50, 51], "w": 1.0})
    df = pd.concat([df, extra], ignore_index=True)
    kept = ar.attnreg("y ~ x1 + x2 | firm + year", df)
    assert kept.nobs == len(df) and kept.absorbed.n_singletons == 0
    fe = ar.attnreg("y ~ x1 + x2 | firm + year", df, fixef_rm="singleton")
    assert fe.absorbed.n_singletons == 3 and fe.nobs == len(df) - 3
    ref, _ = fits(df.iloc[:-3])
    assert_same(fe, ref)
    assert "Singletons removed: 3 row(s)" in str(fe.summary())


def test_fixef_reproduces_the_fitted_values_with_fixest_references() -> None:
    df = fe_panel()
    fe, dummy = fits(df)
    effects = fe.fixef()
    assert list(effects) == ["firm", "year"] and len(effects["firm"]) == 40
    assert effects["year"].iloc[0] == 0.0  # the second fixed effect's first level
    part = effects["firm"].loc[df.firm].to_numpy() + effects["year"].loc[df.year].to_numpy()
    np.testing.assert_allclose(df[SLOPES].to_numpy() @ fe.coef.to_numpy() + part, dummy.fitted,
                               rtol=RTOL_EXACT)
    # the dummy fit's coefficients are the same effects relative to the reference levels
    np.testing.assert_allclose(effects["firm"].iloc[1:] - effects["firm"].iloc[0],
                               dummy.coef.filter(like="C(firm)").to_numpy(), rtol=1e-8,
                               atol=RTOL_EXACT)  # differences of effects of order one


def test_pickles_and_tests_on_slopes() -> None:
    fe, dummy = fits(fe_panel(), vcov="cluster", cluster="firm", ssc="dummy")
    back = pickle.loads(pickle.dumps(fe))
    np.testing.assert_array_equal(back.std_err, fe.std_err)
    np.testing.assert_array_equal(back.predict(fe_panel().head(3)), fe.predict(fe_panel().head(3)))
    wald, ref = fe.wald_test("x1 = 0, x2 = -2"), dummy.wald_test("x1 = 0, x2 = -2")
    np.testing.assert_allclose([wald.statistic, wald.p_value], [ref.statistic, ref.p_value],
                               rtol=RTOL_EXACT)
    t, tref = fe.t_test("x1 - x2 = 2"), dummy.t_test("x1 - x2 = 2")
    np.testing.assert_allclose(t.table.to_numpy(), tref.table.to_numpy(), rtol=RTOL_EXACT)


def test_anova_of_nested_models_with_the_same_fixed_effects() -> None:
    df = fe_panel()
    small, big = (ar.attnreg(f"y ~ {x} | firm + year", df) for x in ("x1", "x1 + x2"))
    ref = ar.anova(ar.attnreg("y ~ x1 + C(firm) + C(year)", df),
                   ar.attnreg("y ~ x1 + x2 + C(firm) + C(year)", df)).table
    np.testing.assert_allclose(ar.anova(small, big).table.to_numpy(), ref.to_numpy(),
                               rtol=RTOL_EXACT)


def test_demeaning_short_of_the_data_accuracy_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    # fixed effects of more levels than the exact solve takes: CGLS, stopped after 2 steps
    monkeypatch.setattr(importlib.import_module("attnreg.fe.demean"), "SCHUR_MAX_LEVELS", 0)
    df = fe_movers().assign(plant=lambda d: np.random.default_rng(5).integers(0, 3, len(d)))
    with pytest.warns(ConvergenceWarning, match="demeaning on the fixed effects stopped"):
        fe = ar.attnreg("y ~ x1 + x2 | firm + year + plant", df, fixef_iter=2)
    assert not fe.absorbed.converged and fe.absorbed.iterations == 2
    assert "The demeaning reached a relative accuracy of" in str(fe.summary())
    full = ar.attnreg("y ~ x1 + x2 | firm + year + plant", df)
    assert full.absorbed.converged and "demeaning reached" not in str(full.summary())
    with pytest.raises(OptionError, match="fixef_iter must be a positive integer"):
        ar.attnreg("y ~ x1 | firm", df, fixef_iter=0)


def test_errors_name_the_argument() -> None:
    df = fe_panel()
    with pytest.raises(OptionError, match="method 'ols', however: method='ridge'"):
        ar.attnreg("y ~ x1 | firm", df, method="ridge")
    with pytest.raises(OptionError, match="ssc must be one of 'fixest', 'dummy'"):
        ar.attnreg("y ~ x1 | firm", df, ssc="stata")
    with pytest.raises(OptionError, match="fixef_rm must be one of 'none', 'singleton'"):
        ar.attnreg("y ~ x1 | firm", df, fixef_rm="singletons")
    with pytest.raises(DataError, match="the data have no column 'plant'"):
        ar.attnreg("y ~ x1 | plant", df)
    with pytest.raises(FormulaError, match=r"varying slopes \('firm\[x2\]'\)"):
        ar.attnreg("y ~ x1 | firm[x2]", df)
    with pytest.raises(DataError, match="no regressor besides the fixed effects"):
        ar.attnreg("y ~ 1 | firm", df)
    fit = ar.attnreg("y ~ x1 | firm", df)
    for view in (fit.diagnostics, lambda: fit.embedding):
        with pytest.raises(OptionError, match="absorbed fixed effects is not available yet"):
            view()


def test_robust_prediction_intervals_with_one_fixed_effect() -> None:
    df = fe_panel()
    fe = ar.attnreg("y ~ x1 + x2 | firm", df, vcov="cluster", cluster="year", ssc="dummy")
    dummy = ar.attnreg("y ~ x1 + x2 + C(firm)", df, vcov="cluster", cluster="year")
    new = df.sample(9, random_state=3)
    np.testing.assert_allclose(fe.predict(new, interval="prediction").to_numpy(),
                               dummy.predict(new, interval="prediction").to_numpy(),
                               rtol=RTOL_EXACT)


def test_wild_cluster_bootstrap_equals_the_dummy_fit() -> None:
    fe, dummy = fits(fe_panel(), ssc="dummy")
    got = fe.bootstrap(kind="wild", cluster="firm", reps=19, seed=0, hypothesis="x1 = 0.5")
    ref = dummy.bootstrap(kind="wild", cluster="firm", reps=19, seed=0, hypothesis="x1 = 0.5")
    np.testing.assert_allclose(got.std_err, ref.std_err[SLOPES], rtol=RTOL_EXACT)
    np.testing.assert_allclose(got.p_value, ref.p_value[SLOPES], rtol=RTOL_EXACT)
    np.testing.assert_allclose([got.test.statistic, got.test.p_value],
                               [ref.test.statistic, ref.test.p_value], rtol=RTOL_EXACT)


def test_interacted_levels_label_fixef_and_predictions() -> None:
    df = fe_panel().assign(industry=lambda d: d.firm % 5)
    df["iy"] = df.industry.astype(str) + "_" + df.year.astype(str)
    fe = ar.attnreg("y ~ x1 + x2 | industry^year + firm", df)
    with pytest.warns(RankDeficiencyWarning):
        dummy = ar.attnreg("y ~ x1 + x2 + C(iy) + C(firm)", df)
    effects = fe.fixef()["industry^year"]
    assert list(effects.index.names) == ["industry", "year"]
    assert len(effects) == df.iy.nunique() and effects.index.is_monotonic_increasing
    new = df.sample(10, random_state=5)
    np.testing.assert_allclose(fe.predict(new), dummy.predict(new), rtol=RTOL_EXACT)
    new.loc[new.index[0], "year"] = 99
    with pytest.warns(InferenceWarning, match=r"'industry\^year' has 1 level\(s\) not in the fit"):
        out = fe.predict(new)
    assert np.isnan(out.iloc[0]) and np.isfinite(out.iloc[1:]).all()
