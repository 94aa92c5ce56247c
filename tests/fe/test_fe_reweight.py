"""The reweighted exact demeaning of GLM scoring steps equals least squares on the dummies.

References: numpy ``lstsq`` on the dense dummy matrix (the residuals), and the Gram matrix of
those residuals (the normal equations with the levels eliminated). RTOL_EXACT relative to a
column's scale for residuals (both backward stable); the eliminated normal equations lose
up to the square of the columns' condition, so their Gram is compared at RTOL_NORMAL.
"""

from __future__ import annotations

import numpy as np
import pytest

import attnreg.fe.reweight as rw
from attnreg.fe import FixedEffects
from attnreg.fe.reweight import ReweightedDemeaner
from tests.conftest import RTOL_EXACT

#: the eliminated normal equations: condition² × eps on these small, well-conditioned panels
RTOL_NORMAL = 1e-9


def _panel(k: int, seed: int = 0, n: int = 900) -> tuple[FixedEffects, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    cols = [rng.integers(0, 60, n), rng.integers(0, 12, n), rng.integers(0, 4, n)][:k]
    V = np.column_stack([rng.normal(size=n) + 0.1 * cols[0], rng.normal(size=n),
                         rng.normal(size=n) * 3 + cols[1]])
    return FixedEffects.from_columns(cols), V, rng.uniform(0.05, 4.0, n)


def _dummy_resid(V: np.ndarray, fe: FixedEffects, w: np.ndarray) -> np.ndarray:
    D, sw = fe.dummies.toarray(), np.sqrt(w)
    coef, *_ = np.linalg.lstsq(D * sw[:, None], V * sw[:, None], rcond=None)
    return V - D @ coef


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("dense", [True, False])
@pytest.mark.parametrize("blocks", [1, 3])
def test_residuals_equal_the_dummy_fit(k: int, dense: bool, blocks: int,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    if not dense:
        monkeypatch.setattr(rw, "DENSE_LEVELS", 0)  # the sparse LU of S
    if blocks > 1:  # S formed from blocks of big levels, level sums from blocks of levels
        monkeypatch.setattr(rw, "BLOCK_ENTRIES", 64)
        monkeypatch.setattr(rw, "row_workers", lambda: blocks)
    fe, V, w = _panel(k)
    before = V.copy()
    demeaner = ReweightedDemeaner(fe)
    assert len(demeaner.blocks) == blocks
    for seed in range(3):  # the same structure, new weights each time (as IRLS steps)
        w = np.random.default_rng(seed).uniform(0.05, 4.0, V.shape[0])
        r, exact = demeaner.residuals(V, w)
        assert exact
        np.testing.assert_allclose(r, _dummy_resid(V, fe, w), rtol=0,
                                   atol=RTOL_EXACT * np.abs(V).max())
    np.testing.assert_array_equal(V, before)  # the input is not modified


@pytest.mark.parametrize("table", [500, 1 << 22, 0])
def test_the_small_fixed_effects_held_dense_give_the_same_residuals(
        table: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """The third fixed effect's columns of B dense (table 500: 60 × 4 cells fit, 60 × 12 do
    not), all of them dense, or none."""
    monkeypatch.setattr(rw, "DENSE_TABLE", table)
    monkeypatch.setattr(rw, "BLOCK_ENTRIES", 64)
    monkeypatch.setattr(rw, "row_workers", lambda: 2)
    fe, V, w = _panel(3, seed=4)
    demeaner = ReweightedDemeaner(fe)
    assert demeaner.narrow == {500: 12, 1 << 22: 0, 0: 16}[table]
    r, exact = demeaner.residuals(V, w)
    assert exact
    np.testing.assert_allclose(r, _dummy_resid(V, fe, w), rtol=0,
                               atol=RTOL_EXACT * np.abs(V).max())


@pytest.mark.parametrize("k", [2, 3])
def test_normal_equations_give_the_gram_of_the_residuals(k: int,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rw, "BLOCK_ENTRIES", 64)
    monkeypatch.setattr(rw, "row_workers", lambda: 2)
    fe, V, w = _panel(k, seed=1)
    normal = ReweightedDemeaner(fe).normal_equations(V, w)
    assert normal is not None
    r = _dummy_resid(V, fe, w)
    np.testing.assert_allclose(normal.gram, r.T @ (w[:, None] * r), rtol=RTOL_NORMAL)
    np.testing.assert_allclose(normal.norms, np.einsum("ij,ij,i->j", V, V, w), rtol=RTOL_EXACT)
    v = np.array([1.0, -0.5, 2.0])
    np.testing.assert_allclose(normal.effects_fit(v), V @ v - r @ v, rtol=0,
                               atol=RTOL_NORMAL * np.abs(V @ v).max())


def test_nested_fixed_effects_are_left_to_the_general_demeaning() -> None:
    rng = np.random.default_rng(2)
    year = rng.integers(0, 10, 400)
    fe = FixedEffects.from_columns([rng.integers(0, 30, 400), year, year // 2])  # nested
    demeaner = ReweightedDemeaner(fe)
    V = rng.normal(size=(400, 2))
    r, exact = demeaner.residuals(V, np.ones(400))
    assert not exact and r is V
    assert demeaner.normal_equations(V, np.ones(400)) is None


def test_underflowed_level_weights_are_refused() -> None:
    fe, V, w = _panel(2, seed=3)
    w = w.copy()
    w[fe.codes[0] == 0] = 0.0  # a level whose weights all underflowed
    r, exact = ReweightedDemeaner(fe).residuals(V, w)
    assert not exact and r is V


def test_applies_to_two_or_more_fixed_effects_with_a_small_rest() -> None:
    fe, _, _ = _panel(2)
    assert ReweightedDemeaner.applies(fe)
    assert not ReweightedDemeaner.applies(FixedEffects.from_columns([fe.codes[0]]))


def _counted_factors(demeaner: ReweightedDemeaner, monkeypatch: pytest.MonkeyPatch
                     ) -> list[int]:
    """Spy on the Schur complements the demeaner forms (one entry per factor)."""
    calls: list[int] = []
    form = type(demeaner)._factor

    def spy(self: ReweightedDemeaner, w: np.ndarray) -> object:
        calls.append(1)
        return form(self, w)

    monkeypatch.setattr(type(demeaner), "_factor", spy)
    return calls


@pytest.mark.parametrize("k", [2, 3])
def test_weights_close_to_the_last_factors_reuse_it(k: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """An IRLS step near the optimum: new weights within REUSE_CHANGE of the last factor's
    refine with that factor (no new Schur complement), to the new weights' exact residuals."""
    fe, V, w = _panel(k, seed=5)
    demeaner = ReweightedDemeaner(fe)
    calls = _counted_factors(demeaner, monkeypatch)
    assert demeaner.normal_equations(V, w) is not None
    near = w * (1 + 1e-6 * np.random.default_rng(6).uniform(-1, 1, w.size))
    r, exact = demeaner.residuals(V, near)
    assert exact and len(calls) == 1
    np.testing.assert_allclose(r, _dummy_resid(V, fe, near), rtol=0,
                               atol=RTOL_EXACT * np.abs(V).max())
    far = w * (1 + 1e-3 * np.random.default_rng(7).uniform(-1, 1, w.size))
    r, exact = demeaner.residuals(V, far)  # beyond REUSE_CHANGE: a fresh factor
    assert exact and len(calls) == 2
    np.testing.assert_allclose(r, _dummy_resid(V, fe, far), rtol=0,
                               atol=RTOL_EXACT * np.abs(V).max())


def test_a_reused_factor_short_of_the_floor_gives_way_to_a_fresh_one(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rw, "REUSE_CHANGE", 1.0)  # reuse for weights up to twice the old
    fe, V, w = _panel(3, seed=8)
    demeaner = ReweightedDemeaner(fe)
    calls = _counted_factors(demeaner, monkeypatch)
    demeaner.residuals(V, w)
    new = w * np.random.default_rng(9).uniform(1.0, 1.5, w.size)  # a pass gains < 1 digit
    r, exact = demeaner.residuals(V, new)
    assert exact and len(calls) == 2  # three passes with the old factor, then a fresh one
    np.testing.assert_allclose(r, _dummy_resid(V, fe, new), rtol=0,
                               atol=RTOL_EXACT * np.abs(V).max())


def test_each_fixed_effect_reaches_its_own_rounding_floor(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Levels of 2 rows next to levels of 1,000: the small levels' sums are held to their own
    scale, not to the large levels' (which would pass an error 10,000 times their floor)."""
    rng = np.random.default_rng(10)
    n = 2000
    fe = FixedEffects.from_columns([rng.permutation(np.arange(n) // 2), np.arange(n) % 2,
                                    rng.integers(0, 30, n)])
    V = rng.normal(size=(n, 2)) + np.arange(n)[:, None] % 2 * 50
    w = rng.uniform(0.5, 2.0, n)
    demeaner = ReweightedDemeaner(fe)
    demeaner.residuals(V, w)
    near = w * (1 + 1e-12 * rng.uniform(-1, 1, n))  # the last factor is reused
    assert rw.REUSE_CHANGE > 1e-12
    r, exact = demeaner.residuals(V, near)
    assert exact
    starts = demeaner.starts[:-1]
    level = np.column_stack([demeaner.big, demeaner.rest + demeaner.n_big])
    D = np.zeros((n, int(demeaner.starts[-1])))
    D[np.arange(n)[:, None], level] = 1.0
    sums = np.maximum.reduceat(np.abs(D.T @ (near[:, None] * r)), starts, axis=0)
    scale = np.maximum.reduceat(D.T @ (near[:, None] * np.abs(V)), starts, axis=0)
    assert np.all(sums / scale <= demeaner.floors[:, None])


@pytest.mark.parametrize("workers", [1, 3])
def test_the_row_passes_in_blocks_on_threads_give_the_same_residuals(
        workers: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rw, "BLOCK_BYTES", 8 * 3 * 50)  # blocks of 50 rows: 18 of them
    monkeypatch.setattr(rw, "row_workers", lambda: workers)
    fe, V, w = _panel(3, seed=11)
    r, exact = ReweightedDemeaner(fe).residuals(V, w)
    assert exact
    np.testing.assert_allclose(r, _dummy_resid(V, fe, w), rtol=0,
                               atol=RTOL_EXACT * np.abs(V).max())


@pytest.mark.parametrize("workers", [1, 3])
@pytest.mark.parametrize("by_largest", [False, True])
def test_level_sums_scattered_from_blocks_of_rows_equal_the_dummies(
        workers: int, by_largest: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """D'WV from the rows in their order, weights in the dummies' entries, on 1 or 3 blocks
    of rows; the rows as given or sorted by the largest fixed effect (as the GLM sorts
    them). A sum of at most 900 terms in another order: within 900 eps of the sum of their
    absolute values."""
    monkeypatch.setattr(rw, "row_workers", lambda: workers)
    fe, V, w = _panel(3, seed=12)
    if by_largest:
        order = np.argsort(fe.codes[0], kind="stable")
        fe, V, w = fe.reordered(order), V[order], w[order]
    demeaner = ReweightedDemeaner(fe)
    assert demeaner.row_cuts.size == workers + 1
    D = fe.dummies  # the levels in the solve order already: 60, then 12, then 4 levels
    for weights in (w, np.sqrt(w), w):  # a new weight vector resets the weighted entries
        np.testing.assert_allclose(demeaner._sums(V, weights), D.T @ (weights[:, None] * V),
                                   rtol=0, atol=V.shape[0] * np.finfo(float).eps
                                   * (D.T @ (weights[:, None] * np.abs(V))).max())


def test_reordered_fixed_effects_share_their_components() -> None:
    fe, _, _ = _panel(2, seed=13)
    _, labels = fe.pair_components(0, 1)
    order = np.random.default_rng(14).permutation(fe.n_obs)
    moved = fe.reordered(order)
    assert all(np.array_equal(a, b[order]) for a, b in zip(moved.codes, fe.codes, strict=True))
    assert moved.n_levels == fe.n_levels and moved.names == fe.names
    assert moved.pair_components(0, 1)[1] is labels  # not found again
    np.testing.assert_array_equal(moved.first_per_component(0, 1),
                                  FixedEffects.from_columns(list(moved.codes))
                                  .first_per_component(0, 1))


@pytest.mark.parametrize("workers", [1, 3])
def test_sums_of_absolute_values_and_of_columns_not_in_c_order(
        workers: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """|V| and the rows of a V in Fortran order go through a buffer a block of rows at a
    time: the same sums as the dummies' product."""
    monkeypatch.setattr(rw, "row_workers", lambda: workers)
    monkeypatch.setattr(rw, "ABS_BLOCK_ROWS", 64)  # many blocks on 900 rows
    fe, V, w = _panel(3, seed=15)
    demeaner, D = ReweightedDemeaner(fe), fe.dummies
    scale = D.T @ (w[:, None] * np.abs(V))
    tol = V.shape[0] * np.finfo(float).eps * scale.max()  # sums of at most 900 terms
    np.testing.assert_allclose(demeaner._scatter(demeaner._entries(w), V, absolute=True),
                               scale, rtol=0, atol=tol)
    F = np.asfortranarray(V)
    np.testing.assert_allclose(demeaner._sums(F, w), D.T @ (w[:, None] * V), rtol=0, atol=tol)


def test_residuals_written_into_a_given_array() -> None:
    fe, V, w = _panel(3, seed=16)
    before = V.copy()
    out = np.full(V.shape, np.nan)
    r, exact = ReweightedDemeaner(fe).residuals(V, w, out=out)
    assert exact and r is out
    np.testing.assert_array_equal(V, before)
    np.testing.assert_allclose(r, _dummy_resid(V, fe, w), rtol=0,
                               atol=RTOL_EXACT * np.abs(V).max())
