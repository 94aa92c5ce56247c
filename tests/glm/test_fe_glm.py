"""GLMs with absorbed fixed effects (the IRLS of attnreg.glm.fe_irls): equal to the
dummy-variable GLM (itself equal to R's glm: tests/glm/test_glm_r.py) and to pyfixest's fepois."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.linalg import solve_triangular

import attnreg as ar
from attnreg.fe.demean import FixedEffects
from attnreg.exceptions import DataError, OptionError
from attnreg.glm.families import FAMILIES
from attnreg.glm import fe_order, fe_steps
from attnreg.glm.fe_irls import fe_irls, perfectly_fitted
from attnreg.glm.links import LINKS
from tests.conftest import RTOL_EXACT

#: pyfixest stops its demeaning and IRLS at tolerances (set to 1e-12 here); its coefficients
#: then carry about 8 digits on these data
RTOL_PYFIXEST = 1e-6


@pytest.fixture(scope="module")
def panel() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 2500
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n),
                       "g": rng.integers(0, 50, n), "h": rng.integers(0, 20, n),
                       "exposure": rng.uniform(0.5, 3, n), "w": rng.integers(1, 4, n) * 1.0})
    a, b = rng.normal(size=50) * 0.5, rng.normal(size=20) * 0.5
    eta = a[df.g] + b[df.h]
    df["y"] = rng.poisson(df.exposure * np.exp(0.3 * df.x - 0.2 * df.z + eta))
    df["yb"] = (rng.random(n) < 1 / (1 + np.exp(-(0.5 * df.x - 0.3 * df.z + eta)))) * 1.0
    df["gx"] = df.g * 0.1  # constant within g: absorbed by the fixed effect
    return df


def _fit(df: pd.DataFrame, response: str, columns: list[str], family: str, link: str,
         weights: Any = None, offset: Any = None) -> Any:
    fe = FixedEffects.from_columns([df.g.to_numpy(), df.h.to_numpy()])
    n = len(df)
    wt = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    off = np.zeros(n) if offset is None else np.asarray(offset, dtype=float)
    return fe_irls(df[columns].to_numpy(), df[response].to_numpy(float), wt, off, fe,
                   FAMILIES[family], LINKS[link])


def _dummy(df: pd.DataFrame, formula: str, **options: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ar.attnreg(formula + " + C(g) + C(h)", df, **options)


def _se(fit: Any) -> np.ndarray:
    inv = solve_triangular(fit.r, np.eye(fit.r.shape[0]))
    return np.sqrt(np.diag(inv @ inv.T))


@pytest.mark.parametrize(("response", "family", "link", "method"), [
    ("y", "poisson", "log", "poisson"), ("yb", "binomial", "logit", "logit"),
    ("yb", "binomial", "probit", "probit"), ("yb", "binomial", "cloglog", "glm")])
def test_equals_the_dummy_variable_glm(panel: pd.DataFrame, response: str, family: str,
                                       link: str, method: str) -> None:
    fit = _fit(panel, response, ["x", "z"], family, link)
    extra = {"family": family, "link": link} if method == "glm" else {}
    dummy = _dummy(panel, f"{response} ~ x + z", method=method, **extra)
    assert_allclose(fit.coef, dummy.coef[["x", "z"]], rtol=RTOL_EXACT)
    assert_allclose(_se(fit), dummy.std_err[["x", "z"]], rtol=RTOL_EXACT)
    assert_allclose(fit.deviance, dummy.deviance, rtol=RTOL_EXACT)
    assert_allclose(fit.mu, dummy.fitted, rtol=RTOL_EXACT, atol=RTOL_EXACT)
    assert fit.iter_r == dummy.fit.iter_r and fit.converged and fit.demeaned


def test_weights_and_offset(panel: pd.DataFrame) -> None:
    off = np.log(panel.exposure.to_numpy())
    fit = _fit(panel, "y", ["x", "z"], "poisson", "log", weights=panel.w, offset=off)
    dummy = _dummy(panel, "y ~ x + z", method="poisson", weights="w",
                   offset="np.log(exposure)")
    assert_allclose(fit.coef, dummy.coef[["x", "z"]], rtol=RTOL_EXACT)
    assert_allclose(_se(fit), dummy.std_err[["x", "z"]], rtol=RTOL_EXACT)
    assert_allclose(fit.deviance, dummy.deviance, rtol=RTOL_EXACT)


def test_a_regressor_absorbed_by_the_fixed_effects_is_aliased(panel: pd.DataFrame) -> None:
    fit = _fit(panel, "y", ["x", "gx", "z"], "poisson", "log")
    assert fit.aliased.tolist() == [1] and fit.kept.tolist() == [0, 2]
    assert_allclose(fit.coef, _fit(panel, "y", ["x", "z"], "poisson", "log").coef,
                    rtol=RTOL_EXACT)


def test_levels_with_only_zeros_are_dropped_repeatedly() -> None:
    g = np.array([0, 0, 1, 1, 2, 2, 3, 3, 3, 4, 4, 4])
    h = np.array([0, 1, 1, 0, 2, 2, 2, 0, 1, 0, 1, 2])
    fe = FixedEffects.from_columns([g, h])
    y = np.array([0, 0, 1, 2, 0, 3, 1, 1, 0, 2, 0, 1.0])
    assert perfectly_fitted(y, fe, "poisson").tolist() == [1, 1] + [0] * 10
    # g = 0 is all 0 and g = 2 all 1; once they go, h = 2 keeps rows 6 (0) and 11 (0) only
    yb = np.array([0, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 0.0])
    assert perfectly_fitted(yb, fe, "binomial").tolist() == \
        [1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 1]


def _perfectly_fitted_by_rounds(y: np.ndarray, fe: FixedEffects, family: str) -> np.ndarray:
    """The reference: every level counted again in every round."""
    drop = np.zeros(y.size, dtype=bool)
    while True:
        found = np.zeros(y.size, dtype=bool)
        for codes, n in zip(fe.codes, fe.n_levels, strict=True):
            live = ~drop
            count = np.bincount(codes[live], minlength=n)
            total = np.bincount(codes[live], weights=y[live], minlength=n)
            bad = (count > 0) & (total == 0)
            if family == "binomial":
                bad |= (count > 0) & (total == count)
            found |= live & bad[codes]
        if not found.any():
            return drop
        drop |= found


@pytest.mark.parametrize("family", ["poisson", "binomial"])
@pytest.mark.parametrize("seed", range(4))
def test_perfectly_fitted_levels_counted_again_only_where_rows_left(family: str,
                                                                     seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 300
    fe = FixedEffects.from_columns([rng.integers(0, 60, n), rng.integers(0, 25, n),
                                    rng.integers(0, 8, n)])
    y = (rng.random(n) < 0.15) * 1.0  # mostly 0: levels of all 0 (and all 1), in cascades
    if family == "poisson":
        y *= rng.integers(1, 4, n)
    got = perfectly_fitted(y, fe, family)
    assert got.any()
    np.testing.assert_array_equal(got, _perfectly_fitted_by_rounds(y, fe, family))


def test_equals_pyfixest_fepois(panel: pd.DataFrame) -> None:
    pf = pytest.importorskip("pyfixest")
    zeros = panel.assign(y=np.where(panel.g == 7, 0, panel.y))  # level 7: only zeros
    fe = FixedEffects.from_columns([zeros.g.to_numpy(), zeros.h.to_numpy()])
    drop = perfectly_fitted(zeros.y.to_numpy(float), fe, "poisson")
    assert drop.sum() == (zeros.g == 7).sum()
    kept = zeros[~drop]
    fit = _fit(kept, "y", ["x", "z"], "poisson", "log")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = pf.fepois("y ~ x + z | g + h", data=zeros, vcov="iid", fixef_tol=1e-12,
                        iwls_tol=1e-12)
    assert len(kept) == ref._N  # pyfixest drops the same rows
    assert_allclose(fit.coef, ref.coef().to_numpy(), rtol=RTOL_PYFIXEST)
    # fixest's default small-sample factor (n − 1)/(n − K), K = the slopes and the fixed
    # effects' free levels (G1 + G2 − 1 for two connected fixed effects)
    n, k = len(kept), 2 + kept.g.nunique() + kept.h.nunique() - 1
    assert_allclose(_se(fit) * np.sqrt((n - 1) / (n - k)), ref.se().to_numpy(),
                    rtol=RTOL_PYFIXEST)


# ------------------------------------------------------------------------------ from formulas

@pytest.mark.parametrize(("formula", "options"), [
    ("y ~ x + z", {"method": "poisson", "offset": "np.log(exposure)"}),
    ("y ~ x + z", {"method": "poisson", "weights": "w", "vcov": "HC1"}),
    ("y ~ x + z", {"method": "poisson", "vcov": "cluster", "cluster": "g"}),
    ("yb ~ x + z", {"method": "logit"}),
    ("yb ~ x + z", {"method": "probit", "vcov": "HC0"}),
    ("exposure ~ x + z", {"method": "glm", "family": "Gamma", "link": "log"}),
])
def test_formula_equals_the_dummy_variable_glm(panel: pd.DataFrame, formula: str,
                                               options: dict[str, Any]) -> None:
    fit = ar.attnreg(formula + " | g + h", panel, **options)
    dummy = _dummy(panel, formula, **options)
    names = ["x", "z"]
    assert list(fit.coef.index) == names
    assert_allclose(fit.coef, dummy.coef[names], rtol=RTOL_EXACT)
    assert_allclose(fit.std_err, dummy.std_err[names], rtol=RTOL_EXACT)
    for name in ("deviance", "null_deviance", "aic", "dispersion"):
        assert_allclose(getattr(fit, name), getattr(dummy, name), rtol=RTOL_EXACT, err_msg=name)
    assert (fit.df_resid, fit.df_null) == (dummy.df_resid, dummy.df_null)
    assert_allclose(fit.p_value, dummy.p_value[names], rtol=RTOL_EXACT, atol=1e-300)


def test_summary_reports_the_effects_and_the_rows_removed(panel: pd.DataFrame) -> None:
    zeros = panel.assign(y=np.where(panel.g == 7, 0, panel.y))
    fit = ar.attnreg("y ~ x + z | g + h", zeros, method="poisson")
    n7 = int((zeros.g == 7).sum())
    assert fit.nobs == len(zeros) - n7 and fit.absorbed.n_perfect == n7
    text = str(fit.summary())
    assert (f"  (Fixed effects: g (49 levels), h (20 levels); {n7} observations removed "
            "(levels fitted perfectly))") in text
    dummy = _dummy(zeros[zeros.g != 7], "y ~ x + z", method="poisson")
    assert_allclose(fit.coef, dummy.coef[["x", "z"]], rtol=RTOL_EXACT)
    with pytest.raises(DataError, match="levels whose responses are all 0"):
        ar.attnreg("y ~ x + z | g + h", zeros, method="poisson", separation="error")


@pytest.mark.parametrize("call", [
    lambda f, df: f.predict(df.head()), lambda f, df: f.attention(),
    lambda f, df: f.margins(), lambda f, df: f.anova(), lambda f, df: f.confint(),
    lambda f, df: f.predict(se_fit=True)])
def test_what_needs_the_effects_is_refused(panel: pd.DataFrame, call: Any) -> None:
    fit = ar.attnreg("y ~ x + z | g + h", panel, method="poisson")
    with pytest.raises(OptionError, match="absorbed fixed effects needs the fixed effects"):
        call(fit, panel)


def test_training_predictions_and_wald_intervals(panel: pd.DataFrame) -> None:
    fit = ar.attnreg("y ~ x + z | g + h", panel, method="poisson")
    dummy = _dummy(panel, "y ~ x + z", method="poisson")
    assert_allclose(fit.predict(type="response"), dummy.fitted, rtol=RTOL_EXACT)
    assert_allclose(fit.confint(method="wald"), dummy.confint(method="wald").loc[["x", "z"]],
                    rtol=RTOL_EXACT)
    with pytest.raises(OptionError, match="control='R'"):
        ar.attnreg("y ~ x + z | g + h", panel, method="poisson", control="R")


def test_rows_without_a_fixed_effect_are_left_out_and_reported(panel: pd.DataFrame) -> None:
    holes = panel.assign(h=panel.h.astype(float))
    holes.loc[[5, 17], "h"] = np.nan
    fit = ar.attnreg("y ~ x + z | g + h", holes, method="poisson")
    assert fit.nobs == len(panel) - 2
    assert "rows without a fixed effect left out: h 2" in str(fit.summary())
    dummy = _dummy(holes.dropna(subset=["h"]), "y ~ x + z", method="poisson")
    assert_allclose(fit.coef, dummy.coef[["x", "z"]], rtol=RTOL_EXACT)


def test_etable_marks_the_absorbed_fixed_effects(panel: pd.DataFrame) -> None:
    fe = ar.attnreg("y ~ x + z | g + h", panel, method="poisson")
    plain = ar.attnreg("y ~ x + z", panel, method="poisson")
    table = ar.etable([fe, plain]).table
    rows = {label: table.loc[(label, "fixed_effects")].tolist() for label in ("g FE", "h FE")}
    assert rows == {"g FE": ["Yes", "No"], "h FE": ["Yes", "No"]}


@pytest.mark.parametrize(("response", "family", "link"), [
    ("y", "poisson", "log"), ("yb", "binomial", "logit")])
def test_normal_equation_steps_reach_the_exact_steps_optimum(
        panel: pd.DataFrame, response: str, family: str, link: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Far from the optimum the steps solve the eliminated normal equations; the reported fit
    comes from exact steps and equals the fit that takes exact steps only."""

    calls = {"normal": 0}
    normal_step = fe_steps.Steps.normal_step

    def counted(self: Any, eta: Any, mu: Any) -> Any:
        calls["normal"] += 1
        return normal_step(self, eta, mu)

    monkeypatch.setattr(fe_steps.Steps, "normal_step", counted)
    fast = _fit(panel, response, ["x", "z"], family, link)
    assert calls["normal"] >= 3
    monkeypatch.setattr(fe_steps.Steps, "normal_step", lambda self, eta, mu: None)
    exact = _fit(panel, response, ["x", "z"], family, link)
    assert_allclose(fast.coef, exact.coef, rtol=RTOL_EXACT)
    assert_allclose(fast.r, exact.r, rtol=RTOL_EXACT, atol=RTOL_EXACT * np.abs(exact.r).max())
    assert_allclose(fast.eta, exact.eta, rtol=RTOL_EXACT, atol=RTOL_EXACT)
    assert fast.iter_r == exact.iter_r and fast.converged


def test_the_exact_aliasing_check_runs_only_when_a_column_may_be_aliased(
        panel: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    import attnreg.glm.fe_irls as fe_irls_module

    checked: list[int] = []
    exact_check = fe_irls_module._aliased

    def spy(*args: Any) -> Any:
        out = exact_check(*args)
        checked.append(len(out))
        return out

    monkeypatch.setattr(fe_irls_module, "_aliased", spy)
    _fit(panel, "y", ["x", "z"], "poisson", "log")
    assert checked == []  # clearly estimable: the normal equations decide
    fit = _fit(panel, "y", ["x", "gx", "z"], "poisson", "log")
    assert checked == [1] and fit.aliased.tolist() == [1]  # gx is constant within g


def test_three_fixed_effects_with_weights_and_offset_form_one_factor_per_normal_step(
        panel: pd.DataFrame, monkeypatch: pytest.MonkeyPatch) -> None:
    """The aliasing check reads the first step's normal equations and the final exact step
    refines with the last step's factor: one Schur complement per normal-equation step, and
    the fit still equals the dummy-variable GLM."""
    import attnreg.fe.reweight as rw

    counts = {"normal": 0, "factor": 0}
    normal_step, factor = fe_steps.Steps.normal_step, rw.ReweightedDemeaner._factor

    def stepped(self: Any, eta: Any, mu: Any) -> Any:
        out = normal_step(self, eta, mu)
        counts["normal"] += out is not None
        return out

    def factored(self: Any, w: Any) -> Any:
        counts["factor"] += 1
        return factor(self, w)

    monkeypatch.setattr(fe_steps.Steps, "normal_step", stepped)
    monkeypatch.setattr(rw.ReweightedDemeaner, "_factor", factored)
    df = panel.assign(k=np.arange(len(panel)) % 7)
    fe = FixedEffects.from_columns([df.g.to_numpy(), df.h.to_numpy(), df.k.to_numpy()])
    off = np.log(df.exposure.to_numpy())
    fit = fe_irls(df[["x", "z"]].to_numpy(), df.y.to_numpy(float), df.w.to_numpy(), off, fe,
                  FAMILIES["poisson"], LINKS["log"])
    assert counts["normal"] >= 3 and counts["factor"] == counts["normal"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dummy = ar.attnreg("y ~ x + z + C(g) + C(h) + C(k)", df, method="poisson",
                           weights="w", offset="np.log(exposure)")
    assert_allclose(fit.coef, dummy.coef[["x", "z"]], rtol=RTOL_EXACT)
    assert_allclose(_se(fit), dummy.std_err[["x", "z"]], rtol=RTOL_EXACT)
    assert_allclose(fit.deviance, dummy.deviance, rtol=RTOL_EXACT)
    assert fit.iter_r == dummy.fit.iter_r and fit.demeaned


@pytest.mark.parametrize(("scale", "factors"), [(1, 1), (1000, 2)])
def test_the_aliasing_check_reads_the_first_steps_normal_equations(
        panel: pd.DataFrame, scale: int, factors: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first step's working weights differ from the prior weights by at most their spread
    (Poisson: W/wt = y + 0.1); within the margin the first step's normal equations decide
    (no factor of their own), beyond it those with the prior weights do (one factor more)."""
    import attnreg.fe.reweight as rw

    monkeypatch.setattr(fe_steps, "ESTIMABLE_FLOOR", 1e-3)  # y·1000: a spread of 1e5
    calls: list[int] = []
    factor = rw.ReweightedDemeaner._factor
    monkeypatch.setattr(rw.ReweightedDemeaner, "_factor",
                        lambda self, w: calls.append(1) or factor(self, w))
    fe = FixedEffects.from_columns([panel.g.to_numpy(), panel.h.to_numpy()])
    y = panel.y.to_numpy(float) * scale
    n = len(y)
    steps = fe_steps.Steps(panel[["x", "z"]].to_numpy(), y, np.ones(n), np.zeros(n), fe,
                                  FAMILIES["poisson"], LINKS["log"])
    eta = np.log(y + 0.1)  # R's start
    assert steps.clearly_estimable(eta, np.exp(eta), 1e-7) and len(calls) == factors


@pytest.mark.parametrize("presorted", [False, True])
def test_rows_sorted_by_the_largest_fixed_effect_give_the_fit_of_the_rows_as_given(
        panel: pd.DataFrame, presorted: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The steps run on the rows sorted by g's level (the fixed effect with the most
    levels); every per-row result comes back in the rows' own order and equals the fit of
    the unsorted rows. Rows already in that order are not sorted again."""
    import attnreg.glm.fe_irls as fe_irls_module

    df = panel.sort_values("g", kind="stable") if presorted else panel
    fe = FixedEffects.from_columns([df.g.to_numpy(), df.h.to_numpy()])
    assert (fe_order.by_largest(fe) is None) == presorted
    sorted_fit = _fit(df, "y", ["x", "z"], "poisson", "log", offset=np.log(df.exposure))
    monkeypatch.setattr(fe_irls_module, "by_largest", lambda fe: None)
    given = _fit(df, "y", ["x", "z"], "poisson", "log", offset=np.log(df.exposure))
    assert_allclose(sorted_fit.coef, given.coef, rtol=RTOL_EXACT)
    assert_allclose(sorted_fit.r, given.r, rtol=RTOL_EXACT)
    for name in ("eta", "mu", "working_weights", "demeaned_x"):
        assert_allclose(getattr(sorted_fit, name), getattr(given, name), rtol=RTOL_EXACT,
                        atol=RTOL_EXACT * np.abs(getattr(given, name)).max(), err_msg=name)
    assert (sorted_fit.iter, sorted_fit.iter_r) == (given.iter, given.iter_r)


def test_the_working_response_is_written_where_the_steps_read_it(panel: pd.DataFrame) -> None:
    """z goes straight into the first column of [z, X] (no copy), and a z from elsewhere is
    copied there."""

    fe = FixedEffects.from_columns([panel.g.to_numpy(), panel.h.to_numpy()])
    X, y, n = panel[["x", "z"]].to_numpy(), panel.y.to_numpy(float), len(panel)
    steps = fe_steps.Steps(X, y, np.ones(n), np.zeros(n), fe, FAMILIES["poisson"],
                                  LINKS["log"])
    eta = np.log(y + 0.1)
    z, _ = steps._working(eta, np.exp(eta))
    P = steps.stacked(z)
    assert z.base is P and np.shares_memory(z, P)
    np.testing.assert_array_equal(P[:, 1:], X)
    other = z + 1.0
    np.testing.assert_array_equal(steps.stacked(other)[:, 0], other)


def test_the_sorted_rows_are_gathered_where_the_steps_stack_them(panel: pd.DataFrame) -> None:
    """X's rows in the sorted order go straight into the last columns of [z, X] (used in
    place), and the exact steps' residuals alternate between two arrays."""

    X = panel[["x", "z"]].to_numpy()
    order = np.argsort(panel.g.to_numpy(), kind="stable")
    stack = fe_order.gathered(X, order)
    np.testing.assert_array_equal(stack[:, 1:], X[order])
    fe = FixedEffects.from_columns([panel.g.to_numpy(), panel.h.to_numpy()]).reordered(order)
    y, n = panel.y.to_numpy(float)[order], len(panel)
    steps = fe_steps.Steps(stack[:, 1:], y, np.ones(n), np.zeros(n), fe,
                                  FAMILIES["poisson"], LINKS["log"])
    eta = np.log(y + 0.1)
    z, _ = steps._working(eta, np.exp(eta))
    assert steps.stacked(z) is stack  # no copy of X
    first, second, third = (steps._buffer((n, 3)) for _ in range(3))
    assert first is not second and third is first
    moved = fe_steps.Steps(np.ascontiguousarray(stack[:, 1:]), y, np.ones(n),
                                  np.zeros(n), fe, FAMILIES["poisson"], LINKS["log"])
    assert moved.stacked(z) is not stack  # X on its own: stacked in an array of its own


def test_the_steps_run_on_one_blas_thread_and_restore_it(panel: pd.DataFrame,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    # the package's thread policy: the row passes are the threads, BLAS runs on one inside
    # them (two of each on two cores: 1.42 s against 1.22 s at 1e6 rows, three fixed effects)
    import threadpoolctl

    import attnreg.glm.fe_fit as fe_fit_module

    def blas_threads() -> list[int]:
        return [int(i["num_threads"]) for i in threadpoolctl.threadpool_info()
                if i["user_api"] == "blas"]

    seen: list[list[int]] = []
    real = fe_fit_module.fe_irls

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(blas_threads())
        return real(*args, **kwargs)

    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = blas_threads()
        monkeypatch.setattr(fe_fit_module, "fe_irls", spy)
        ar.attnreg("y ~ x + z | g + h", panel, method="poisson")
        assert seen and seen[0] and all(n == 1 for n in seen[0])
        assert blas_threads() == before
