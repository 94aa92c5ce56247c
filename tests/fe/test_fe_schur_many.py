"""Three fixed effects whose grounded Schur complement has more than ITERATE_FROM free levels
(fixest's simple-3 design at 1e7 rows: 10,020) are solved by conjugate gradients on it first,
the factor after they give up (ITERATE_FROM lowered to 10 here). With too many levels for the
dense factor (above ITERATE_MANY_FROM, lowered here to 10 to force the route at a small size): S is
never factored (a sparse LU of it fills in and may run out of memory); conjugate gradients on
S solve it, and conjugate gradients on the whole of D'WD when they give up. Every answer
equals the dense dummy-variable least squares (numpy's lstsq, or attnreg's fit with
``C(...)`` dummies) to RTOL_EXACT: both are backward-stable solutions of well-conditioned
systems, the iterations stop at the rounding floor of S x.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

import attnreg as ar
import attnreg.fe.solve as solve
from attnreg.exceptions import RankDeficiencyWarning
from attnreg.fe.demean import FixedEffects, demean
from attnreg.fe.solve import LevelSolver
from tests.conftest import RTOL_EXACT


def _panel(nested: bool = False, n: int = 2_400, seed: int = 4) -> pd.DataFrame:
    """Workers (300), firms (40) and years (6), or firms nested in 5 industries."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"worker": rng.integers(0, 300, n), "firm": rng.integers(0, 40, n),
                       "year": rng.integers(0, 6, n), "w": rng.uniform(0.5, 2.0, n)})
    if nested:
        df["year"] = df.firm % 5
    df["x1"] = rng.normal(size=n) + 0.02 * df.worker
    df["x2"] = rng.normal(size=n) + 0.05 * df.firm
    df["y"] = df.x1 - 0.5 * df.x2 + 0.01 * df.worker + 0.1 * df.year + rng.normal(size=n)
    return df


@pytest.mark.parametrize("gives_up", [False, True], ids=["iterated", "whole-after"])
@pytest.mark.parametrize("nested", [False, True], ids=["crossed", "nested"])
@pytest.mark.parametrize("weighted", [False, True])
def test_three_fixed_effects_above_the_dense_limit_are_never_factored(
        gives_up: bool, nested: bool, weighted: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(solve, "ITERATE_MANY_FROM", 10)
    if gives_up:  # the budget: one iteration, then CG on D'WD
        monkeypatch.setattr(solve, "iteration_budget", lambda *args: 1)
        monkeypatch.setattr(solve, "ITERATE_MANY_MAX", 1)
    df = _panel(nested)
    fe = FixedEffects.from_columns([df.worker, df.firm, df.year], ["worker", "firm", "year"])
    w = df.w.to_numpy() if weighted else None
    wd = np.ones(len(df)) if w is None else w
    V = df[["y", "x1", "x2"]].to_numpy()
    D = fe.dummies
    A, b = sp.csr_matrix(D.T @ sp.diags(wd) @ D), np.asarray(D.T @ (wd[:, None] * V))
    solver = LevelSolver(fe, w)
    assert solver.schur is not None and solver.schur.bounded and solver.exact
    x = solver.solve(b)
    assert "_factor" not in solver.schur.__dict__  # never factored
    assert solver.exact != gives_up  # after giving up: CG on the whole D'WD from then on
    np.testing.assert_allclose(A @ x, b, atol=RTOL_EXACT * np.abs(b).max())
    out = demean(V.copy(), fe, w, method="auto")
    assert out.converged and np.all(out.orthogonality <= 16 * out.floor)
    root = np.sqrt(wd)[:, None]
    coef = np.linalg.lstsq(root * D.toarray(), root * V, rcond=None)[0]
    np.testing.assert_allclose(out.resid, V - D @ coef, atol=RTOL_EXACT * np.abs(V).max())


@pytest.mark.parametrize("nested", [False, True], ids=["crossed", "nested"])
def test_the_fit_above_the_dense_limit_equals_the_dummy_variable_fit(
        nested: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Coefficients, classical covariance and hat values (d'A⁺d by solves of indicator
    blocks, not by entries of S⁺) equal the dummy-variable fit's."""
    monkeypatch.setattr(solve, "ITERATE_MANY_FROM", 10)
    df = _panel(nested, n=900)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        fit = ar.attnreg("y ~ x1 + x2 | worker + firm + year", df, weights="w")
        dummy = ar.attnreg("y ~ x1 + x2 + C(worker) + C(firm) + C(year)", df, weights="w")
    schur = fit._level_solver.schur
    assert schur is not None and schur.bounded
    np.testing.assert_allclose(fit.coef, dummy.coef[["x1", "x2"]], rtol=RTOL_EXACT)
    np.testing.assert_allclose(fit.hat_values, dummy.hat_values, rtol=RTOL_EXACT,
                               atol=RTOL_EXACT)
    assert "_factor" not in schur.__dict__
    if not nested:  # nested: fixest's df count differs from the dummies' rank (documented)
        np.testing.assert_allclose(fit.vcov, dummy.vcov.loc[["x1", "x2"], ["x1", "x2"]],
                                   rtol=RTOL_EXACT)


@pytest.mark.parametrize("gives_up", [False, True], ids=["iterated", "factor-after"])
@pytest.mark.parametrize("nested", [False, True], ids=["crossed", "nested"])
def test_three_fixed_effects_above_iterate_from_iterate_first(
        gives_up: bool, nested: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Below the dense limit: CG first, then the dense factor (crossed) or, when that factor
    is singular (firms nested in industries), CG on the whole D'WD."""
    monkeypatch.setattr(solve, "ITERATE_FROM", 10)
    monkeypatch.setattr(solve, "iteration_budget", lambda *args: 1 if gives_up else 200)
    df = _panel(nested)
    fe = FixedEffects.from_columns([df.worker, df.firm, df.year], ["worker", "firm", "year"])
    w = df.w.to_numpy()
    V = df[["y", "x1", "x2"]].to_numpy()
    D = fe.dummies
    A, b = sp.csr_matrix(D.T @ sp.diags(w) @ D), np.asarray(D.T @ (w[:, None] * V))
    solver = LevelSolver(fe, w)
    assert solver.schur is not None and not solver.schur.bounded and solver.exact
    x = solver.solve(b)
    assert ("_factor" in solver.schur.__dict__) == gives_up  # the factor only after CG
    assert solver.exact == (not (gives_up and nested))
    np.testing.assert_allclose(A @ x, b, atol=RTOL_EXACT * np.abs(b).max())
    out = demean(V.copy(), fe, w, method="auto")
    assert out.converged and np.all(out.orthogonality <= 16 * out.floor)
    root = np.sqrt(w)[:, None]
    coef = np.linalg.lstsq(root * D.toarray(), root * V, rcond=None)[0]
    np.testing.assert_allclose(out.resid, V - D @ coef, atol=RTOL_EXACT * np.abs(V).max())
