"""Residualising on absorbed fixed effects equals least squares on the dummy matrix.

The reference is the dense dummy-variable least-squares fit (numpy ``lstsq`` on the N × G
dummies, or attnreg's own QR fit with ``C()`` terms for the coefficients: the
Frisch–Waugh–Lovell theorem makes them equal). RTOL_EXACT (1e-10) relative to the column's
scale bounds the difference: both sides are backward stable, and the demeaning stops when
every level's weighted residual sum is at its rounding floor.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import DataError, OptionError
from attnreg.fe import FixedEffects, components, demean, normalise, redundant_levels
from tests.conftest import RTOL_EXACT


def dummy_resid(V: np.ndarray, fe: FixedEffects, w: np.ndarray | None = None) -> np.ndarray:
    D = fe.dummies.toarray()
    sw = np.sqrt(np.ones(len(V)) if w is None else w)
    coef, *_ = np.linalg.lstsq(D * sw[:, None], V * sw[:, None], rcond=None)
    return V - D @ coef


def panel(seed: int = 0, n: int = 2000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    firm, year = rng.integers(0, 120, n), rng.integers(0, 15, n)
    x1 = rng.normal(size=n) + 0.05 * firm
    x2 = rng.normal(size=n) + 0.1 * year
    y = 1.0 + 0.5 * x1 - 2.0 * x2 + 0.02 * firm + 0.3 * year + rng.normal(size=n)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "firm": firm, "year": year,
                         "industry": rng.integers(0, 7, n), "w": rng.uniform(0.5, 2.0, n)})


def movers(seed: int = 0, n_workers: int = 1500, periods: int = 5, share: float = 0.01):
    """A worker–firm panel where 1 % of the worker-years are at another firm (a sparse graph,
    where alternating projections converge slowly)."""
    rng = np.random.default_rng(seed)
    worker = np.repeat(np.arange(n_workers), periods)
    firm = rng.integers(0, 150, n_workers)[worker]
    move = rng.random(worker.size) < share
    firm[move] = rng.integers(0, 150, move.sum())
    v = rng.normal(size=(worker.size, 2)) + np.column_stack([0.01 * firm, 0.001 * worker])
    return worker, firm, v


@pytest.mark.parametrize("names", [["firm"], ["firm", "year"], ["firm", "year", "industry"]])
@pytest.mark.parametrize("weighted", [False, True])
def test_residuals_equal_the_dummy_variable_fit(names: list[str], weighted: bool) -> None:
    df = panel()
    fe = FixedEffects.from_columns([df[n] for n in names], names)
    V = df[["y", "x1", "x2"]].to_numpy()
    w = df["w"].to_numpy() if weighted else None
    out = demean(V, fe, w)
    assert out.converged
    assert np.all(out.orthogonality <= 16 * out.floor)
    scale = np.abs(V).max(axis=0)
    np.testing.assert_array_less(np.abs(out.resid - dummy_resid(V, fe, w)).max(axis=0),
                                 RTOL_EXACT * scale)


def test_sparse_mover_graph_converges_to_the_exact_residuals() -> None:
    worker, firm, V = movers()
    fe = FixedEffects.from_columns([worker, firm], ["worker", "firm"])
    out = demean(V, fe)
    assert out.converged and out.iterations > 50  # a hard graph, solved anyway
    np.testing.assert_array_less(np.abs(out.resid - dummy_resid(V, fe)).max(axis=0),
                                 RTOL_EXACT * np.abs(V).max(axis=0))


def test_disconnected_components_and_singletons() -> None:
    rng = np.random.default_rng(3)
    a = np.concatenate([rng.integers(0, 10, 300), rng.integers(10, 20, 300), [20, 21, 22]])
    b = np.concatenate([rng.integers(0, 5, 300), rng.integers(5, 9, 300), [9, 9, 10]])
    V = rng.normal(size=(a.size, 2))
    fe = FixedEffects.from_columns([a, b])
    out = demean(V, fe)
    assert out.converged
    np.testing.assert_allclose(out.resid, dummy_resid(V, fe), atol=RTOL_EXACT)
    np.testing.assert_allclose(out.resid[-3:-1], 0.0, atol=RTOL_EXACT)  # singleton levels of a


@pytest.mark.parametrize("fes", ["firm", "firm + year", "firm + year + industry"])
def test_frisch_waugh_lovell_coefficients_equal_the_dummy_fit(fes: str) -> None:
    df = panel(1)
    names = [n.strip() for n in fes.split("+")]
    fe = FixedEffects.from_columns([df[n] for n in names], names)
    r = demean(df[["y", "x1", "x2"]].to_numpy(), fe).resid
    coef = np.linalg.lstsq(r[:, 1:], r[:, 0], rcond=None)[0]
    dummies = " + ".join(f"C({n})" for n in names)
    full = ar.attnreg(f"y ~ x1 + x2 + {dummies}", data=df)
    np.testing.assert_allclose(coef, full.coef[["x1", "x2"]].to_numpy(), rtol=RTOL_EXACT)


def test_the_iteration_cap_is_reported_not_hidden() -> None:
    worker, firm, V = movers(1)
    out = demean(V, FixedEffects.from_columns([worker, firm]), max_iter=5)
    assert not out.converged and out.iterations == 5
    assert np.all(out.orthogonality > out.floor)


def test_input_is_not_modified_and_ids_of_any_type() -> None:
    rng = np.random.default_rng(4)
    ids = np.array([2**63 + 5, 2**63 + 9, 7], dtype=np.uint64)[rng.integers(0, 3, 200)]
    names = np.array(["b", "a", "c"])[rng.integers(0, 3, 200)]
    V = rng.normal(size=(200, 2))
    before = V.copy()
    fe = FixedEffects.from_columns([ids, pd.Categorical(names)], ["id", "name"])
    out = demean(V, fe)
    np.testing.assert_array_equal(V, before)
    assert fe.n_levels == (3, 3) and list(fe.levels[1]) == ["a", "b", "c"]
    np.testing.assert_allclose(out.resid, dummy_resid(V, fe), atol=RTOL_EXACT)


@pytest.mark.parametrize("names", [["g"], ["g", "h", "k"]])
@pytest.mark.parametrize("weighted", [False, True])
def test_overwrite_residualises_in_place_over_several_blocks_of_rows(names: list[str],
                                                                     weighted: bool) -> None:
    """``overwrite=True`` works in the caller's array (no copy) and gives the same residuals
    as the default copy, over 150,000 rows (several of the passes' blocks of rows), equal to
    the group means' residuals for one fixed effect."""
    rng = np.random.default_rng(7)
    n = 150_000
    codes = {"g": rng.integers(0, 9_000, n), "h": rng.integers(0, 40, n),
             "k": rng.integers(0, 6, n)}
    fe = FixedEffects.from_columns([codes[k] for k in names], names)
    V = rng.normal(size=(n, 2)) + 3.0 * codes["g"][:, None] / 9_000
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    copied = demean(V, fe, w, method="auto")
    work = V.copy()
    out = demean(work, fe, w, method="auto", overwrite=True)
    assert out.resid is work and out.converged
    np.testing.assert_array_equal(out.resid, copied.resid)
    if len(names) == 1:
        ww = np.ones(n) if w is None else w
        frame = pd.DataFrame(V * ww[:, None]).assign(w=ww, g=codes["g"])
        sums = frame.groupby("g").transform("sum").to_numpy()
        means = sums[:, :2] / sums[:, 2:]
        np.testing.assert_allclose(out.resid, V - means, atol=RTOL_EXACT * np.abs(V).max())


@pytest.mark.parametrize("dtype", ["int64", "int32", "uint16", "uint64"])
def test_integer_ids_are_counted_not_hashed(dtype: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Non-negative integer ids of a short range (codes, years, fixest's designs) are
    factorised by counting: the same codes and level labels as pandas' sorted factorize,
    which is then never called; other columns still go through it."""
    import importlib

    rng = np.random.default_rng(9)
    ids = (rng.integers(0, 40, 500) * 3 + 7).astype(dtype)  # gaps, not starting at 0
    names = np.array(["b", "a", "c"])[rng.integers(0, 3, 500)]
    expected = [pd.factorize(pd.Series(c), sort=True) for c in (ids, names)]
    module = importlib.import_module("attnreg.fe.demean")
    calls = []
    factorize = module.pd.factorize

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return factorize(*args, **kwargs)

    monkeypatch.setattr(module.pd, "factorize", counted)
    fe = FixedEffects.from_columns([pd.Series(ids), ids, names], ["s", "a", "n"])
    assert len(calls) == 1  # the strings only
    for k, (code, uniques) in enumerate([expected[0], expected[0], expected[1]]):
        np.testing.assert_array_equal(fe.codes[k], code)
        assert fe.levels[k].equals(pd.Index(uniques))
        assert fe.levels[k].dtype == pd.Index(uniques).dtype


def test_bad_input_is_named() -> None:
    with pytest.raises(DataError, match=r"fixed effect 'firm' has a missing value in row 1"):
        FixedEffects.from_columns([[1.0, np.nan, 2.0]], ["firm"])
    with pytest.raises(DataError, match="different lengths"):
        FixedEffects.from_columns([[1, 2, 3], [1, 2]], ["a", "b"])
    with pytest.raises(OptionError, match="one name per fixed effect"):
        FixedEffects.from_columns([[1, 2]], ["a", "b"])
    fe = FixedEffects.from_columns([[1, 2, 1]], ["a"])
    with pytest.raises(DataError, match="must have 3 rows"):
        demean(np.ones(4), fe)
    with pytest.raises(DataError, match="positive finite"):
        demean(np.ones(3), fe, weights=[1.0, 0.0, 1.0])


@pytest.mark.parametrize("names", [["firm"], ["firm", "year"], ["firm", "year", "industry"]])
def test_effects_reproduce_the_absorbed_part(names: list[str]) -> None:
    df = panel(2)
    fe = FixedEffects.from_columns([df[n] for n in names], names)
    V = df[["y", "x1"]].to_numpy()
    out = demean(V, fe, df["w"].to_numpy())
    absorbed = fe.dummies @ out.effects
    np.testing.assert_allclose(absorbed, V - out.resid, atol=RTOL_EXACT * np.abs(V).max())
    normal = normalise(fe, out.effects)
    np.testing.assert_allclose(fe.dummies @ normal, absorbed, atol=RTOL_EXACT * np.abs(V).max())
    for k in range(1, len(names)):  # fixest's references: the first level of each later FE
        assert np.all(normal[fe.offsets[k]] == 0.0)


def test_redundant_levels_are_the_rank_deficiency_of_two_fixed_effects() -> None:
    rng = np.random.default_rng(7)
    a = np.concatenate([rng.integers(0, 12, 400), rng.integers(12, 20, 300), [20]])
    b = np.concatenate([rng.integers(0, 6, 400), rng.integers(6, 9, 300), [9]])
    fe = FixedEffects.from_columns([a, b])
    n_comp, labels = components(fe)
    assert n_comp == 3 and labels.size == fe.n_levels[1]
    D = fe.dummies.toarray()
    assert np.linalg.matrix_rank(D) == D.shape[1] - redundant_levels(fe)
    out = demean(rng.normal(size=(a.size, 1)), fe)
    normal = normalise(fe, out.effects)
    second = normal[fe.offsets[1]:fe.offsets[2], 0]
    for c in range(n_comp):  # one zero reference per connected component
        assert second[np.flatnonzero(labels == c)[0]] == 0.0
    assert redundant_levels(FixedEffects.from_columns([a])) == 0
