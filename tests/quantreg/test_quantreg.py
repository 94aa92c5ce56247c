"""Quantile regression: the LP optimum (vs scipy's HiGHS), identities (weights as repeated rows,
equivariance), options and their errors, prediction, crossing, the bootstrap, pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.optimize import linprog

import attnreg as ar
from attnreg.exceptions import DataError, OptionError
from attnreg.quantreg.solver import check_loss, rq_fit
from tests.conftest import RTOL_EXACT


def _data(n: int = 200, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.uniform(0, 4, n), "x2": rng.standard_normal(n)})
    df["y"] = 1 + 2 * df.x1 - df.x2 + (1 + 0.5 * df.x1) * rng.standard_normal(n)
    return df


def _lp(X: np.ndarray, y: np.ndarray, tau: float) -> np.ndarray:
    """min τ1'u + (1−τ)1'v  s.t.  Xb + u − v = y, u, v ≥ 0 (HiGHS simplex)."""
    n, p = X.shape
    c = np.concatenate([np.zeros(p), np.full(n, tau), np.full(n, 1 - tau)])
    A = np.hstack([X, np.eye(n), -np.eye(n)])
    bounds = [(None, None)] * p + [(0, None)] * (2 * n)
    res = linprog(c, A_eq=A, b_eq=y, bounds=bounds, method="highs-ds")
    assert res.status == 0
    return np.asarray(res.x[:p])


@pytest.mark.parametrize("tau", [0.05, 0.3, 0.5, 0.8])
def test_solution_is_the_lp_optimum(tau: float) -> None:
    df = _data()
    X = np.column_stack([np.ones(len(df)), df.x1, df.x2])
    fit = rq_fit(X, df.y.to_numpy(), tau)
    ref = _lp(X, df.y.to_numpy(), tau)
    assert fit.vertex and fit.basis.size == 3
    assert_allclose(fit.coef, ref, rtol=1e-7)  # HiGHS's own feasibility tolerance is 1e-7
    assert_allclose(np.abs(df.y.to_numpy() - X @ fit.coef)[fit.basis], 0, atol=1e-12)
    assert fit.objective <= check_loss(df.y.to_numpy() - X @ ref, tau) * (1 + RTOL_EXACT)


def test_integer_weights_equal_repeated_rows() -> None:
    df = _data(150, seed=2)
    w = np.resize([1.0, 2.0, 3.0], len(df))
    weighted = ar.attnreg("y ~ x1 + x2", df.assign(w=w), method="quantreg", tau=0.3, weights="w")
    repeated = ar.attnreg("y ~ x1 + x2", df.loc[df.index.repeat(w.astype(int))],
                          method="quantreg", tau=0.3)
    assert weighted.fits[0].vertex and repeated.fits[0].vertex
    assert_allclose(weighted.coef.to_numpy(), repeated.coef.to_numpy(), rtol=RTOL_EXACT)


def test_equivariance_in_y() -> None:
    df = _data()
    fit = ar.attnreg("y ~ x1 + x2", df, method="quantreg", tau=0.3)
    flipped = ar.attnreg("y ~ x1 + x2", df.assign(y=-3 * df.y + 2 * df.x1), method="quantreg",
                         tau=0.7)
    expected = -3 * fit.coef.iloc[:, 0].to_numpy() + np.array([0.0, 2.0, 0.0])
    assert_allclose(flipped.coef.iloc[:, 0].to_numpy(), expected, rtol=RTOL_EXACT)


def test_several_tau_predict_and_are_sorted() -> None:
    df = _data()
    q = ar.attnreg("y ~ x1 + x2", df, method="quantreg", tau=[0.9, 0.1, 0.5, 0.5])
    assert q.taus == (0.1, 0.5, 0.9)
    new = df.iloc[:4].assign(x1=[0.5, 1.0, np.nan, 3.0])
    pred = q.predict(new)
    assert pred.shape == (4, 3) and list(pred.columns) == [0.1, 0.5, 0.9]
    X = np.column_stack([np.ones(4), new.x1, new.x2])
    assert_allclose(pred.to_numpy(), X @ q.coef.to_numpy(), rtol=RTOL_EXACT)
    assert np.isnan(pred.iloc[2]).all()
    single = ar.attnreg("y ~ x1 + x2", df, method="quantreg", tau=0.5)
    assert_allclose(single.predict(new).iloc[:, 0], pred[0.5], rtol=RTOL_EXACT)
    assert_allclose(q.fitted.to_numpy() + q.resid.to_numpy(), np.tile(df.y.to_numpy()[:, None],
                                                                      3), rtol=RTOL_EXACT)


def test_crossing_is_reported() -> None:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"x": rng.uniform(-1, 1, 60)})
    df["y"] = rng.standard_normal(60) * np.abs(df.x) ** 3
    q = ar.attnreg("y ~ x + I(x**2)", df, method="quantreg", tau=[0.45, 0.5, 0.55],
                   se="iid")
    fitted = q.fitted.to_numpy()
    crossed = int(np.sum((np.diff(fitted, axis=1) < 0).any(axis=1)))
    assert q.crossing == crossed > 0
    assert f"cross at {crossed} training row(s)" in str(q.summary())
    ok = ar.attnreg("y ~ x1", _data(), method="quantreg", tau=0.5, se="iid")
    assert ok.crossing == 0 and "crossing" not in str(ok.summary())


def test_bootstrap_is_reproducible_and_near_nid() -> None:
    df = _data(400, seed=3)
    q = ar.attnreg("y ~ x1 + x2", df, method="quantreg", tau=0.5, se="boot", seed=7,
                   replicates=100)
    a, b = q.coef_table()["Std. Error"], q.coef_table()["Std. Error"]
    assert_allclose(a, b, rtol=0)  # same seed, same draws
    other = q.coef_table(se="boot").pipe(lambda t: t)  # the fit's seed again
    assert_allclose(other["Std. Error"], a, rtol=0)
    nid = q.coef_table(se="nid")["Std. Error"]
    assert np.all(np.abs(np.log(a / nid)) < np.log(1.5))  # sampling noise of 100 replicates


def test_result_pickles() -> None:
    q = ar.attnreg("y ~ x1 + x2", _data(), method="quantreg", tau=[0.25, 0.75], se="iid")
    back = pickle.loads(pickle.dumps(q))
    assert_allclose(back.coef.to_numpy(), q.coef.to_numpy(), rtol=0)
    assert str(back.summary()) == str(q.summary())


@pytest.mark.parametrize(("options", "match"), [
    ({"tau": 1.0}, r"tau must be in \(0, 1\) \(exclusive\), however: tau=1.0"),
    ({"tau": "median"}, r"tau must be a number in \(0, 1\)"),
    ({"se": "hc1"}, r"se must be one of 'nid', 'iid', 'ker', 'boot', 'rank' or None \(R's "
                    r"default: 'rank' below 1001 rows, else 'nid'\), however: se='hc1'"),
    ({"alpha": 0.1}, r"unknown option\(s\) for method 'quantreg': alpha; valid: tau, se"),
    ({"lam": 1.0}, r"option\(s\) lam do not apply to method 'quantreg'"),
    ({"replicates": 1}, r"replicates must be an integer >= 2"),
    ({"hs": "yes"}, r"hs must be True or False"),
])
def test_options_are_checked_before_any_work(options: dict, match: str) -> None:
    with pytest.raises(OptionError, match=match):
        ar.attnreg("y ~ x1 + x2", _data(), method="quantreg", **options)


def test_summary_se_and_tau_errors() -> None:
    q = ar.attnreg("y ~ x1", _data(), method="quantreg", tau=0.5)
    with pytest.raises(OptionError, match=r"tau=0.3 was not fitted; fitted: 0.5"):
        q.vcov(tau=0.3)
    with pytest.raises(OptionError, match=r"se='rank' gives confidence intervals, not a "
                                          r"covariance .* pass vcov\(se='nid'\)"):
        q.vcov(se="rank")
    with pytest.raises(OptionError, match=r"alpha must be in \(0, 1\), however: alpha=1.5"):
        q.summary(se="rank", alpha=1.5)
    assert "Std. Error" in str(q.summary(se="ker"))


def test_registry_declares_the_method() -> None:
    from attnreg import methods

    est = methods.get_method("quantreg")
    assert est.family == "quantreg" and est.capabilities.weights
    assert not est.capabilities.vcov and not est.capabilities.rolling
    assert "quantreg" in methods.method_names("weights")
    q = ar.attnreg("y ~ x1", _data(), method="quantreg", tau=0.5)
    X = np.column_stack([np.ones(3), [0.0, 1.0, 2.0]])
    assert_allclose(est.predict_design(q, X), X @ q.coef.iloc[:, 0].to_numpy(), rtol=RTOL_EXACT)
    many = ar.attnreg("y ~ x1", _data(), method="quantreg", tau=[0.2, 0.8])
    with pytest.raises(OptionError, match=r"predicts one quantile; the fit has tau=\[0.2, 0.8\]"):
        est.predict_design(many, X)


@pytest.mark.parametrize("tau", [0.1, 0.5, 0.9])
def test_preprocessing_gives_the_full_problem_s_vertex(monkeypatch, tau: float) -> None:
    from attnreg.quantreg import preprocess

    rng = np.random.default_rng(11)
    n = 30_000
    X = np.column_stack([np.ones(n), rng.uniform(0, 4, n), rng.standard_normal(n)])
    y = X @ [1.0, 2.0, -1.0] + (1 + 0.5 * X[:, 1]) * rng.standard_normal(n)
    sizes: list[int] = []
    solve = preprocess.interior_point

    def spy(Xs: np.ndarray, ys: np.ndarray, t: float) -> tuple[np.ndarray, int]:
        sizes.append(Xs.shape[0])
        return solve(Xs, ys, t)

    monkeypatch.setattr(preprocess, "interior_point", spy)
    reduced = rq_fit(X, y, tau)
    assert sizes and max(sizes) < n // 2  # only reduced problems were solved
    monkeypatch.setattr(preprocess, "PREPROCESS_MIN_ROWS", 10**9)
    full = rq_fit(X, y, tau)
    assert max(sizes) == n
    assert reduced.vertex and full.vertex
    assert_allclose(reduced.coef, full.coef, rtol=RTOL_EXACT)


def test_a_rank_deficient_design_names_the_aliased_column() -> None:
    df = _data().assign(z=lambda d: 2 * d.x1 - d.x2)
    with pytest.raises(DataError, match=r"full-rank design: column\(s\) 'z' are linear "
                                        r"combinations of earlier columns; drop them"):
        ar.attnreg("y ~ x1 + x2 + z", df, method="quantreg")
    with pytest.raises(DataError, match=r"at least as many rows as coefficients, however: "
                                        r"2 rows, 3 coefficients"):
        ar.attnreg("y ~ x1 + x2", df.head(2), method="quantreg")


def test_summary_keeps_numbers_and_renders_every_format() -> None:
    q = ar.attnreg("y ~ x1 + x2", _data(), method="quantreg", tau=[0.25, 0.75], se="ker")
    s = q.summary()
    table = q.coef_table(0.25, se="ker")
    assert_allclose(s.table.to_numpy(), table.to_numpy(), rtol=0)  # the first tau's table
    assert_allclose(table["t value"], table["Value"] / table["Std. Error"], rtol=RTOL_EXACT)
    md = s.to_markdown()
    assert "tau: [1] 0.25" in md and "tau: [1] 0.75" in md and md.count("| x2") == 2
    assert s._repr_html_().count("<table>") == 2 and s.to_latex().count("tabular}") == 4


@pytest.mark.parametrize("tau", [0.25, 0.5, 0.8])
def test_degenerate_discrete_data_reach_an_optimal_vertex(tau: float) -> None:
    rng = np.random.default_rng(4)
    n = 300
    X = np.column_stack([np.ones(n), rng.integers(0, 5, n), rng.integers(0, 3, n)]).astype(float)
    y = rng.poisson(2 + X[:, 1], n).astype(float)
    fit = rq_fit(X, y, tau)
    best = check_loss(y - X @ _lp(X, y, tau), tau)
    zero = np.abs(y - X @ fit.coef) < 1e-9  # integer data: residuals are 0 or at least ~0.01
    assert fit.basis.size == 3 and np.linalg.matrix_rank(X[zero]) == 3  # a vertex
    assert_allclose(fit.objective, best, rtol=RTOL_EXACT)
