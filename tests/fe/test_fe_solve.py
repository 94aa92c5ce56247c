"""Exact solves with the fixed effects' normal equations at sizes a dense pseudo-inverse
cannot take (20,000 levels), against an independent exact route.

The reference is a sparse LU of the whole D'WD (never its Schur complement), with fixest's
references grounded (one level of the second fixed effect per connected component, from
:func:`attnreg.fe.effects.components`, and the first level of each further one): for a
right-hand side d₀ in the range of D'WD any solution gives d₀'x and D x of the pseudo-inverse.
The hat values also meet the identity Σ h = trace of the projection = rank of the dummies.
Both routes are backward-stable direct solves of well-conditioned systems: RTOL_EXACT.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy import stats

import attnreg as ar
from attnreg.exceptions import OptionError, RankDeficiencyWarning
from attnreg.fe.demean import FixedEffects, demean
from attnreg.fe.effects import components
from attnreg.fe.solve import LevelSolver
from tests.conftest import RTOL_EXACT


def big_movers(n_workers: int = 14_000, n_firms: int = 6_500, periods: int = 4,
               seed: int = 5) -> pd.DataFrame:
    """A worker–firm–year panel with 10 % moves: over 20,000 worker and firm levels."""
    rng = np.random.default_rng(seed)
    worker = np.repeat(np.arange(n_workers), periods)
    firm = rng.integers(0, n_firms, n_workers)[worker]
    move = rng.random(worker.size) < 0.1
    firm[move] = rng.integers(0, n_firms, move.sum())
    x1, x2 = rng.normal(size=(2, worker.size))
    e = rng.normal(size=worker.size) * (1.0 + np.abs(x1))
    return pd.DataFrame({"y": x1 - x2 + 0.01 * worker + 0.05 * firm + e, "x1": x1, "x2": x2,
                         "worker": worker, "firm": firm, "year": np.tile(np.arange(periods),
                                                                         n_workers),
                         "w": rng.uniform(0.5, 2.0, worker.size)})


def reference_solve(fe: FixedEffects, w: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """A solution of D'WD x = rhs by a sparse LU of the grounded whole system."""
    D = fe.dummies
    A = sp.csc_matrix(D.T @ sp.diags(w) @ D)
    o = fe.offsets
    _, labels = components(fe)
    _, first = np.unique(labels, return_index=True)
    grounded = np.concatenate([o[1] + first, o[2:-1]])
    keep = np.setdiff1d(np.arange(int(o[-1])), grounded)
    x = np.zeros_like(rhs)
    x[keep] = spla.splu(A[keep][:, keep]).solve(rhs[keep])
    return x


def indicators(fe: FixedEffects, rows: np.ndarray) -> np.ndarray:
    d = np.zeros((int(fe.offsets[-1]), rows.size))
    for k, code in enumerate(fe.codes):
        d[code[rows] + fe.offsets[k], np.arange(rows.size)] = 1.0
    return d


def test_hat_values_of_two_fixed_effects_with_20000_levels() -> None:
    df = big_movers()
    fit = ar.attnreg("y ~ x1 + x2 | worker + firm", df, weights="w")
    fe = fit.absorbed.fe
    assert sum(fe.n_levels) > 20_000 and fe.n_levels[1] > 6_000  # beyond a dense G × G
    h = fit.hat_values.to_numpy()
    np.testing.assert_allclose(h.sum(), fit.edf, rtol=RTOL_EXACT)  # trace of the hat matrix
    rows = np.random.default_rng(0).choice(fe.n_obs, 40, replace=False)
    d = indicators(fe, rows)
    own = np.einsum("ij,ij->j", d, reference_solve(fe, df.w.to_numpy(), d))
    Xt = fit.design.X
    w = df.w.to_numpy()
    gram = Xt.T @ (w[:, None] * Xt)
    h_slopes = w[rows] * np.einsum("ij,ji->i", Xt[rows], np.linalg.solve(gram, Xt[rows].T))
    np.testing.assert_allclose(h[rows], w[rows] * own + h_slopes, rtol=RTOL_EXACT)


@pytest.mark.parametrize("terms", ["worker + firm", "worker + firm + year"])
def test_fixed_effects_projection_and_quadratic_with_20000_levels(terms: str) -> None:
    df = big_movers()
    fe = FixedEffects.from_columns([df[c] for c in terms.split(" + ")], terms.split(" + "))
    w = df.w.to_numpy()
    solver = LevelSolver(fe, w)
    _, labels = components(fe)
    largest = np.flatnonzero(labels[fe.codes[1]] == np.bincount(labels).argmax())
    rows = np.random.default_rng(1).choice(largest, 6, replace=False)
    codes = [c[rows] for c in fe.codes]
    codes[1] = np.roll(codes[1], 1)  # level pairs no row has (estimable: one component)
    d = np.zeros((int(fe.offsets[-1]), rows.size))
    for k, code in enumerate(codes):
        d[code + fe.offsets[k], np.arange(rows.size)] = 1.0
    x = reference_solve(fe, w, d)
    np.testing.assert_allclose(solver.quadratic(codes), np.einsum("ij,ij->j", d, x),
                               rtol=RTOL_EXACT)
    got, ref = solver.projection(codes), fe.dummies @ x
    np.testing.assert_allclose(got, ref, rtol=RTOL_EXACT, atol=RTOL_EXACT * np.abs(ref).max())
    back = pickle.loads(pickle.dumps(solver))  # the factor is rebuilt after unpickling
    np.testing.assert_allclose(back.quadratic(codes), solver.quadratic(codes), rtol=RTOL_EXACT)


def test_cluster_robust_intervals_with_20000_levels_run_on_the_exact_solve() -> None:
    df = big_movers()
    fit = ar.attnreg("y ~ x1 + x2 | worker + firm", df, vcov="cluster", cluster="firm")
    new = df.sample(5, random_state=3)
    got = fit.predict(new, interval="confidence")
    assert np.isfinite(got.to_numpy()).all() and (got.upr > got.lwr).all()
    classical = fit.with_vcov("classical").predict(new, interval="confidence")
    np.testing.assert_allclose(got.fit, classical.fit, rtol=RTOL_EXACT)


def test_three_fixed_effects_on_a_mover_graph_equal_the_dummy_fit() -> None:
    rng = np.random.default_rng(2)
    df = big_movers(n_workers=150, n_firms=30).assign(
        region=lambda d: rng.integers(0, 4, len(d)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        fe = ar.attnreg("y ~ x1 + x2 | worker + firm + region", df, weights="w",
                        vcov="cluster", cluster="firm", ssc="dummy")
        dummy = ar.attnreg("y ~ x1 + x2 + C(worker) + C(firm) + C(region)", df, weights="w",
                           vcov="cluster", cluster="firm")
    np.testing.assert_allclose(fe.hat_values, dummy.hat_values, rtol=RTOL_EXACT,
                               atol=RTOL_EXACT)
    new = df.sample(8, random_state=4)
    for kind, options in (("classical", {}), ("HC1", {}), ("cluster", {"cluster": "firm"})):
        got = fe.with_vcov(kind, ssc="dummy", **options).predict(new, interval="confidence")
        ref = dummy.with_vcov(kind, **options).predict(new, interval="confidence")
        np.testing.assert_allclose(got.to_numpy(), ref.to_numpy(), rtol=RTOL_EXACT,
                                   err_msg=kind)


@pytest.mark.parametrize("weighted", [False, True])
def test_two_way_demeaning_by_the_schur_solve_reaches_the_rounding_floor(weighted: bool) -> None:
    df = big_movers(n_workers=400, n_firms=60)
    fe = FixedEffects.from_columns([df.worker, df.firm], ["worker", "firm"])
    w = df.w.to_numpy() if weighted else None
    V = df[["y", "x1", "x2"]].to_numpy()
    before = V.copy()
    out = demean(V, fe, w, method="schur")
    np.testing.assert_array_equal(V, before)
    assert out.converged and out.iterations == 0 and np.all(out.orthogonality <= out.floor)
    D = fe.dummies.toarray()  # the dummy-variable least squares, dense: 1,600 × 460
    root = np.sqrt(np.ones(len(df)) if w is None else w)[:, None]
    coef = np.linalg.lstsq(root * D, root * V, rcond=None)[0]
    np.testing.assert_allclose(out.resid, V - D @ coef, atol=RTOL_EXACT * np.abs(V).max())
    np.testing.assert_allclose(D @ out.effects, V - out.resid, atol=RTOL_EXACT * np.abs(V).max())
    assert demean(V, fe, w, method="auto").iterations == 0  # 60 firms: the exact solve
    assert demean(V, fe, w).iterations > 0  # CGLS stays the default of demean itself
    fit = ar.attnreg("y ~ x1 + x2 | worker + firm", df)
    assert fit.absorbed.converged and fit.absorbed.iterations == 0
    with pytest.raises(OptionError, match=r"method must be one of .*however: method='lu'"):
        demean(V, fe, method="lu")


def test_nested_fixed_effects_fall_back_to_conjugate_gradients() -> None:
    df = big_movers(n_workers=120, n_firms=24).assign(industry=lambda d: d.firm % 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        fe = ar.attnreg("y ~ x1 + x2 | worker + firm + industry", df, weights="w")
        dummy = ar.attnreg("y ~ x1 + x2 + C(worker) + C(firm) + C(industry)", df,
                           weights="w")
    assert not fe._level_solver.exact  # firms nested in industries: S grounded is singular
    np.testing.assert_allclose(fe.hat_values, dummy.hat_values, rtol=RTOL_EXACT,
                               atol=RTOL_EXACT)
    new = df.sample(6, random_state=5)
    # fixest counts one redundant level per further fixed effect, fewer than nesting makes:
    # the residual df differ, so the standard errors of the predictions are compared
    for kind, scale in (("classical", "sigma"), ("HC0", None)):
        half = []
        for fit in (fe.with_vcov(kind), dummy.with_vcov(kind)):
            band = fit.predict(new, interval="confidence")
            q = stats.t.ppf(0.975, fit.df_resid) * (getattr(fit, scale) if scale else 1.0)
            half.append((band.upr - band.fit).to_numpy() / q)
        np.testing.assert_allclose(half[0], half[1], rtol=RTOL_EXACT, err_msg=kind)
    plain = ar.attnreg("y ~ x1 + x2 | worker + firm + year", df)
    assert plain._level_solver.exact  # the further fixed effect shares only a constant


@pytest.mark.parametrize("nested", [False, True], ids=["crossed", "nested"])
def test_three_way_demeaning_by_the_schur_solve(nested: bool) -> None:
    """Three fixed effects: the Schur complement on all but the largest's levels solves the
    demeaning exactly (no CGLS iteration) and equals the dense dummy-variable least squares;
    with firms nested in industries it is singular and the solve still reaches the floor."""
    df = big_movers(n_workers=400, n_firms=60).assign(year=lambda d: d.index % 4)
    third = (df.firm % 6) if nested else df.year
    fe = FixedEffects.from_columns([df.worker, df.firm, third], ["worker", "firm", "third"])
    w = df.w.to_numpy()
    V = df[["y", "x1", "x2"]].to_numpy()
    out = demean(V, fe, w, method="auto")
    assert out.converged and np.all(out.orthogonality <= 16 * out.floor)
    if not nested:
        assert out.iterations == 0
    D = fe.dummies.toarray()
    root = np.sqrt(w)[:, None]
    coef = np.linalg.lstsq(root * D, root * V, rcond=None)[0]
    np.testing.assert_allclose(out.resid, V - D @ coef, atol=RTOL_EXACT * np.abs(V).max())


def test_three_fixed_effects_whose_schur_complement_is_exactly_singular() -> None:
    """Two rows alone in their worker and firm levels, with two year levels of their own:
    eliminating the worker leaves those years' block of S exactly 0 after grounding (SuperLU
    refuses it), so the solve falls back to conjugate gradients and stays exact."""
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"worker": rng.integers(0, 6, 60), "firm": rng.integers(0, 4, 60),
                       "year": rng.integers(0, 3, 60)})
    df = pd.concat([df, pd.DataFrame({"worker": [50, 50], "firm": [40, 40],
                                      "year": [30, 31]})], ignore_index=True)
    df["x"] = rng.normal(size=len(df))
    df["y"] = df.x + 0.3 * df.worker + rng.normal(size=len(df))
    fe = FixedEffects.from_columns([df.worker, df.firm, df.year])
    assert not LevelSolver(fe).exact
    V = df[["y", "x"]].to_numpy()
    out = demean(V, fe, method="schur")
    D = fe.dummies.toarray()
    coef = np.linalg.lstsq(D, V, rcond=None)[0]
    np.testing.assert_allclose(out.resid, V - D @ coef, atol=RTOL_EXACT * np.abs(V).max())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        fit = ar.attnreg("y ~ x | worker + firm + year", df)
        dummy = ar.attnreg("y ~ x + C(worker) + C(firm) + C(year)", df)
    np.testing.assert_allclose(fit.coef, dummy.coef["x"], rtol=RTOL_EXACT)
    np.testing.assert_allclose(fit.hat_values, dummy.hat_values, rtol=RTOL_EXACT,
                               atol=RTOL_EXACT)


@pytest.mark.parametrize("threaded", [False, True], ids=["one-thread", "threaded"])
@pytest.mark.parametrize("table", [True, False], ids=["counted", "sparse"])
@pytest.mark.parametrize("weighted", [False, True])
def test_schur_blocks_by_counting_and_the_dense_factor(table: bool, weighted: bool,
                                                       threaded: bool,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """fixest's simple design with three fixed effects: the blocks of D'WD counted per pair
    of fixed effects (dense tables, or sparse sums of duplicates) equal the sparse products of
    the dummies, its grounded Schur complement is dense and factored by Cholesky (on one BLAS
    thread, or on all of them as above :data:`THREADED_LEVELS` levels), and the demeaning
    equals the dense dummy-variable least squares."""
    import attnreg.fe.levelgram as levelgram
    from attnreg.fe.levelgram import DenseCholesky, rest_gram

    if not table:
        monkeypatch.setattr(levelgram, "DENSE_TABLE", 0)
    if threaded:
        monkeypatch.setattr(levelgram, "THREADED_LEVELS", 0)
    rng = np.random.default_rng(11)
    n = 3_000
    codes = [rng.integers(0, 150, n), rng.integers(0, 30, n), rng.integers(0, 6, n)]
    fe = FixedEffects.from_columns(codes, ["a", "b", "c"])
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    wd = np.ones(n) if w is None else w
    D = fe.dummies
    A = (D.T @ sp.diags(wd) @ D).toarray()
    o = fe.offsets
    schur = LevelSolver(fe, w).schur
    assert schur is not None
    np.testing.assert_allclose(schur.cross.toarray(), A[o[0]:o[1], o[1]:], rtol=RTOL_EXACT)
    for dense in (True, False):
        got = rest_gram(fe.codes[1:], fe.n_levels[1:], w, dense=dense)
        got = got if dense else got.toarray()
        np.testing.assert_allclose(got, A[o[1]:, o[1]:], rtol=RTOL_EXACT)
    assert isinstance(schur._factor, DenseCholesky) and not schur.singular
    V = rng.normal(size=(n, 2)) + 0.01 * codes[0][:, None]
    out = demean(V, fe, w, method="auto")
    assert out.iterations == 0 and np.all(out.orthogonality <= out.floor)
    root = np.sqrt(wd)[:, None]
    coef = np.linalg.lstsq(root * D.toarray(), root * V, rcond=None)[0]
    np.testing.assert_allclose(out.resid, V - D @ coef, atol=RTOL_EXACT * np.abs(V).max())


def test_thousands_of_dense_rest_levels_are_factored_by_cholesky() -> None:
    """fixest's simple design with two fixed effects at 1e7 rows has 500,000 and 10,000
    levels: the grounded Schur complement on the second is dense, and its sparse LU fills in
    completely (SuperLU ran out of memory there). Here 4,200 levels (more than the 4,000 the
    dense factor once stopped at) under 8,400 of 20 rows each: the dense Cholesky factor,
    and the demeaning at the rounding floor with no iteration."""
    from attnreg.fe.levelgram import DenseCholesky

    rng = np.random.default_rng(3)
    n_big, n_small = 8_400, 4_200
    big = np.repeat(np.arange(n_big), 20)
    small = rng.integers(0, n_small, big.size)
    fe = FixedEffects.from_columns([big, small], ["a", "b"])
    schur = LevelSolver(fe).schur
    assert schur is not None and schur.free.size > 4_000
    assert isinstance(schur._factor, DenseCholesky) and not schur.singular
    V = rng.normal(size=(big.size, 2)) + 0.1 * small[:, None] / n_small
    out = demean(V.copy(), fe, method="auto")
    assert out.iterations == 0 and np.all(out.orthogonality <= out.floor)
    x = LevelSolver(fe).solve(np.asarray(fe.dummies.T @ V))  # D'D x = D'V, to rounding
    D = fe.dummies
    np.testing.assert_allclose(D.T @ (D @ x), D.T @ V, atol=RTOL_EXACT * np.abs(D.T @ V).max())


@pytest.mark.parametrize("gives_up", [False, True], ids=["iterated", "factor-after"])
@pytest.mark.parametrize("weighted", [False, True])
def test_two_fixed_effects_with_many_rest_levels_iterate_on_the_schur_complement(
        gives_up: bool, weighted: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above ITERATE_FROM free levels (here lowered to 10) two fixed effects are solved by
    conjugate gradients on their Schur complement, never formed (fixest's simple design at
    1e7 rows: 10,000 levels, 5 times faster than its dense factor); when the iterations
    would cost more than the factor, the factor takes over. Either way the demeaning equals
    the dense dummy-variable least squares, and S x = b holds to rounding."""
    import attnreg.fe.solve as solve

    monkeypatch.setattr(solve, "ITERATE_FROM", 10)  # the budget: as of large designs, or 1
    monkeypatch.setattr(solve, "iteration_budget", lambda *args: 1 if gives_up else 60)
    rng = np.random.default_rng(12)
    n = 3_000
    codes = [rng.integers(0, 150, n), rng.integers(0, 40, n)]
    fe = FixedEffects.from_columns(codes, ["a", "b"])
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    wd = np.ones(n) if w is None else w
    D = fe.dummies
    V = rng.normal(size=(n, 3)) + 0.01 * codes[0][:, None] + 0.02 * codes[1][:, None]
    solver = LevelSolver(fe, w)
    schur = solver.schur
    assert schur is not None and solver.exact
    A, b = sp.csr_matrix(D.T @ sp.diags(wd) @ D), np.asarray(D.T @ (wd[:, None] * V))
    x = solver.solve(b)
    assert ("_factor" in schur.__dict__) == gives_up  # the factor only when CG gave up
    np.testing.assert_allclose(A @ x, b, atol=RTOL_EXACT * np.abs(b).max())
    out = demean(V, fe, w, method="auto")
    assert out.iterations == 0 and np.all(out.orthogonality <= out.floor)
    root = np.sqrt(wd)[:, None]
    coef = np.linalg.lstsq(root * D.toarray(), root * V, rcond=None)[0]
    np.testing.assert_allclose(out.resid, V - D @ coef, atol=RTOL_EXACT * np.abs(V).max())


def test_connected_components_are_found_once_per_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The degrees of freedom (redundant levels) and the grounding of the exact solve share
    one search of the first two fixed effects' connected components."""
    import importlib

    demean_module = importlib.import_module("attnreg.fe.demean")  # not the function
    calls = []
    search = demean_module.connected_components

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return search(*args, **kwargs)

    monkeypatch.setattr(demean_module, "connected_components", counted)
    df = big_movers(n_workers=200, n_firms=40)
    fit = ar.attnreg("y ~ x1 + x2 | worker + firm + year", df)
    assert fit.absorbed.iterations == 0 and len(calls) == 1
    n, labels = fit.absorbed.fe.pair_components(0, 1)
    assert n == components(fit.absorbed.fe)[0] == fit.absorbed.n_redundant - 1
    assert labels.shape == (sum(fit.absorbed.fe.n_levels[:2]),)


def test_references_from_the_shared_components_equal_a_fresh_search() -> None:
    """fixest's references of two fixed effects (the first level of the second in each
    connected component), from the components cached on the fixed effects, in both orders,
    equal a fresh search of the graph (the helper other modules call)."""
    from attnreg.fe.solve import _first_per_component

    df = big_movers(n_workers=300, n_firms=200)
    worker, firm = df.worker.to_numpy().copy(), df.firm.to_numpy().copy()
    worker[:40], firm[:40] = 10_000 + np.arange(40) // 4, 5_000 + np.arange(40) // 8  # islands
    fe = FixedEffects.from_columns([worker, firm])
    n0, n1 = fe.n_levels
    np.testing.assert_array_equal(fe.first_per_component(0, 1),
                                  _first_per_component(fe.codes[0], fe.codes[1], n0, n1))
    np.testing.assert_array_equal(fe.first_per_component(1, 0),
                                  _first_per_component(fe.codes[1], fe.codes[0], n1, n0))
    assert fe.first_per_component(0, 1).size == components(fe)[0] > 1
