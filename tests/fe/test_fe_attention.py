"""``fit.attention(new)`` of a fixed-effects fit equals the dummy-variable fit's weights.

The reference is attnreg's own attention view of ``y ~ x1 + x2 + C(firm) + C(year)`` (its
encoder from the dense QR of the N × (p + G) design), on a well-connected panel and on a
sparse mover graph, weighted and not: both are the rows of the same hat matrix
W Z (Z'WZ)⁺z₀ computed by backward-stable routes, hence RTOL_EXACT with an absolute floor of
RTOL_EXACT on weights of order one (many are near zero).
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import InferenceWarning, OptionError, RankDeficiencyWarning
from attnreg.fe.attention import FixedEffectsAttention
from tests.conftest import ATOL_IDENTITY, RTOL_EXACT


def panel(seed: int = 0, n: int = 400) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    firm, year = rng.integers(0, 30, n), rng.integers(0, 6, n)
    x1 = rng.normal(size=n) + 0.05 * firm
    x2 = rng.normal(size=n) + 0.1 * year
    y = 0.5 * x1 - 2.0 * x2 + 0.02 * firm + np.sin(year) + rng.normal(size=n)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "firm": firm, "year": year,
                         "w": rng.uniform(0.5, 2.0, n)})


def movers(seed: int = 1, n_workers: int = 150, periods: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    worker = np.repeat(np.arange(n_workers), periods)
    firm = rng.integers(0, 25, n_workers)[worker]
    move = rng.random(worker.size) < 0.1
    firm[move] = rng.integers(0, 25, move.sum())
    x1, x2 = rng.normal(size=(2, worker.size))
    y = x1 - x2 + 0.01 * worker + 0.05 * firm + rng.normal(size=worker.size)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "firm": worker, "year": firm,
                         "w": rng.uniform(0.5, 2.0, worker.size)})


def fits(df: pd.DataFrame, weighted: bool) -> tuple[ar.LinearResults, ar.LinearResults]:
    w = "w" if weighted else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankDeficiencyWarning)
        fe = ar.attnreg("y ~ x1 + x2 | firm + year", df, weights=w)
        dummy = ar.attnreg("y ~ x1 + x2 + C(firm) + C(year)", df, weights=w)
    return fe, dummy


@pytest.mark.parametrize("data", ["panel", "movers"])
@pytest.mark.parametrize("weighted", [False, True])
def test_weights_equal_the_dummy_variable_fit(data: str, weighted: bool) -> None:
    df = panel() if data == "panel" else movers()
    fe, dummy = fits(df, weighted)
    new = df.sample(7, random_state=2)
    new = pd.concat([new, new.head(2).assign(x1=[3.0, -2.0], year=new.year.iloc[2:4].to_numpy())])
    att = fe.attention(new)
    assert isinstance(att, FixedEffectsAttention)
    got, ref = att.weights.to_numpy(), dummy.attention(new).weights.to_numpy()
    np.testing.assert_allclose(got, ref, rtol=RTOL_EXACT, atol=RTOL_EXACT)
    np.testing.assert_allclose(got @ df.y.to_numpy(), fe.predict(new).to_numpy(),
                               rtol=RTOL_EXACT)
    np.testing.assert_allclose(att.diagnostics["weight_sum"], 1.0, atol=ATOL_IDENTITY)
    top, top_ref = att.top_k(5), dummy.attention(new).top_k(5)
    np.testing.assert_allclose(top.weight.abs(), top_ref.weight.abs(), rtol=RTOL_EXACT)  # ties
    rows = new.index.get_indexer(top["query"]) if new.index.is_unique else None
    if rows is not None:
        cols = df.index.get_indexer(top.train_label)
        np.testing.assert_allclose(ref[rows, cols], top.weight, rtol=RTOL_EXACT)
    hat = fe.attention(chunk_size=64).weights.to_numpy()  # the training rows: the hat matrix
    np.testing.assert_allclose(hat, dummy.attention().weights.to_numpy(), rtol=RTOL_EXACT,
                               atol=RTOL_EXACT)
    np.testing.assert_allclose(np.diag(hat), fe.hat_values, rtol=RTOL_EXACT)


def test_by_group_splits_each_prediction_between_its_own_level_and_the_others() -> None:
    df = panel()
    fe, dummy = fits(df, weighted=True)
    new = df.sample(9, random_state=3)
    table = fe.attention(new, chunk_size=4).by_group()
    ref = dummy.attention(new).weights.to_numpy()
    y = df.y.to_numpy()
    np.testing.assert_allclose(table.prediction, ref @ y, rtol=RTOL_EXACT)
    for name in ("firm", "year"):
        mine = df[name].to_numpy()[None, :] == new[name].to_numpy()[:, None]
        own = np.where(mine, ref, 0.0)
        np.testing.assert_allclose(table[f"{name}_own"], own.sum(axis=1), rtol=RTOL_EXACT)
        np.testing.assert_allclose(table[f"{name}_own"], 1.0, rtol=RTOL_EXACT)  # D reproduced
        np.testing.assert_allclose(table[f"{name}_others"], ref.sum(axis=1) - own.sum(axis=1),
                                   atol=ATOL_IDENTITY)
        np.testing.assert_allclose(table[f"{name}_own_abs_share"],
                                   np.abs(own).sum(axis=1) / np.abs(ref).sum(axis=1),
                                   rtol=RTOL_EXACT)
        np.testing.assert_allclose(table[f"{name}_own_vote"], own @ y, rtol=RTOL_EXACT)
        np.testing.assert_allclose(table[f"{name}_others_vote"], (ref - own) @ y,
                                   rtol=RTOL_EXACT)
    training = fe.attention().by_group()
    assert training.shape == (len(df), 12) and training.index.equals(fe.design.row_labels)


def test_unseen_levels_pickling_and_refusals() -> None:
    df = panel()
    fe, _ = fits(df, weighted=False)
    new = df.head(3).copy()
    new.loc[new.index[0], "firm"] = 999
    with pytest.warns(InferenceWarning, match=r"'firm' has 1 level\(s\) not in the fit: 999"):
        att = fe.attention(new)
    W = att.weights.to_numpy()
    assert np.isnan(W[0]).all() and np.isfinite(W[1:]).all()
    assert np.isnan(att.by_group().iloc[0]).all()
    back = pickle.loads(pickle.dumps(att))
    np.testing.assert_array_equal(back.weights.to_numpy()[1:], W[1:])
    with pytest.raises(OptionError, match=r"attention_of\(X\) .* use fit.attention\(newdata\)"):
        fe.attention_of(df[["x1", "x2"]].to_numpy(), df.index)


def test_weights_with_20000_levels_reproduce_the_predictions() -> None:
    rng = np.random.default_rng(6)
    worker = np.repeat(np.arange(14_000), 4)
    firm = rng.integers(0, 6_500, 14_000)[worker]
    move = rng.random(worker.size) < 0.1
    firm[move] = rng.integers(0, 6_500, move.sum())
    x1 = rng.normal(size=worker.size)
    df = pd.DataFrame({"y": x1 + 0.01 * worker + rng.normal(size=worker.size), "x1": x1,
                       "worker": worker, "firm": firm})
    fit = ar.attnreg("y ~ x1 | worker + firm", df)
    new = df.sample(3, random_state=0)
    att = fit.attention(new)
    np.testing.assert_allclose(att.diagnostics["prediction"], fit.predict(new), rtol=RTOL_EXACT)
    top = att.top_k(3)
    assert (top.groupby("query").weight.max() > 0).all() and len(top) == 9
