"""The first IRLS pass certifies that no column is aliased (its Gram matrix under R's
starting weights, with their spread against the prior weights), so the front door runs no
separate pass for it; anything it cannot certify goes to the QR of ``aliased_columns``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
import attnreg.glm.registration as registration
from attnreg.glm.families import FAMILIES
from attnreg.glm.irls import AliasingUnsure, aliased_columns, gram_clearly_full_rank, irls
from attnreg.glm.links import LINKS


def _frame(n: int = 3000, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.normal(size=n), "z": rng.normal(size=n),
                       "w": rng.uniform(0.5, 3.0, n)})
    df["y"] = rng.poisson(np.exp(0.3 + 0.4 * df.x - 0.2 * df.z))
    df["yb"] = (rng.random(n) < 1 / (1 + np.exp(-df.x))).astype(float)
    return df


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = registration.aliased_columns
    monkeypatch.setattr(registration, "aliased_columns",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    return calls


@pytest.mark.parametrize(("formula", "options"), [
    ("y ~ x + z", {"method": "poisson"}),
    ("y ~ x + z", {"method": "poisson", "weights": "w"}),
    ("yb ~ x + z", {"method": "logit"}),
    ("yb ~ x", {"method": "probit", "weights": "w"}),
])
def test_a_full_rank_design_is_certified_by_the_first_pass(formula, options,
                                                           monkeypatch) -> None:
    df = _frame()
    calls = _spy(monkeypatch)
    fit = ar.attnreg(formula, df, **options)
    assert not calls and fit.coef.notna().all()
    monkeypatch.setattr(registration, "irls", _without_check(registration.irls))
    before = ar.attnreg(formula, df, **options)  # the QR decides, as before
    assert calls
    np.testing.assert_allclose(fit.coef, before.coef, rtol=1e-13, atol=1e-15)


def _without_check(real):  # type: ignore[no-untyped-def]
    def irls_(*a, alias_tol=None, **k):  # type: ignore[no-untyped-def]
        if alias_tol is not None:
            raise registration.AliasingUnsure
        return real(*a, **k)
    return irls_


def test_an_aliased_column_still_goes_to_the_qr(monkeypatch) -> None:
    df = _frame().assign(x2=lambda d: 2 * d.x - d.z)
    calls = _spy(monkeypatch)
    with pytest.warns(ar.exceptions.RankDeficiencyWarning, match="x2"):
        fit = ar.attnreg("y ~ x + z + x2", df, method="poisson")
    assert calls and np.isnan(fit.coef["x2"]) and fit.coef.drop("x2").notna().all()


def test_control_r_keeps_the_qr_before_the_fit(monkeypatch) -> None:
    calls = _spy(monkeypatch)
    ar.attnreg("y ~ x + z", _frame(), method="poisson", control="R")
    assert calls


def test_the_weights_spread_is_part_of_the_certificate() -> None:
    """A column aliased under the prior weights (unit) looks independent under working
    weights that put 1e20 on the ten rows where it differs: the spread refuses it."""
    rng = np.random.default_rng(0)
    n, heavy = 1000, np.arange(10)
    x = rng.normal(size=n)
    x[heavy] = 1e-7 * (1 + 0.3 * rng.normal(size=heavy.size))
    e = np.zeros(n)
    e[heavy] = 1e-10 * (-1.0) ** heavy  # not in the span of (1, x) on those rows
    X = np.column_stack([np.ones(n), x, 3 * x + e])
    tol = 1e-11
    assert aliased_columns(X, tol).tolist() == [2]  # under the prior (unit) weights
    v = np.ones(n)
    v[heavy] = 1e20
    G = (X * v[:, None]).T @ X
    assert gram_clearly_full_rank(G, tol)  # without the spread: wrongly certified
    assert not gram_clearly_full_rank(G, tol, spread=1e20)
    # a modest spread keeps certifying a sound design
    G2 = (X[:, :2] * rng.uniform(0.5, 2.0, n)[:, None]).T @ X[:, :2]
    assert gram_clearly_full_rank(G2, tol, spread=4.0)
    assert not gram_clearly_full_rank(G2, tol, spread=np.inf)
    assert not gram_clearly_full_rank(G2, tol, spread=0.5)  # not a spread


def test_irls_raises_before_any_step_when_unsure() -> None:
    rng = np.random.default_rng(1)
    n = 500
    x = rng.normal(size=n)
    X = np.column_stack([np.ones(n), x, 2 * x])
    y = rng.poisson(np.exp(0.2 * x)).astype(float)
    with pytest.raises(AliasingUnsure):
        irls(X, y, np.ones(n), np.zeros(n), FAMILIES["poisson"], LINKS["log"], alias_tol=1e-11)
    with pytest.raises(ValueError, match="alias_tol"):
        irls(X[:, :2], y, np.ones(n), np.zeros(n), FAMILIES["poisson"], LINKS["log"],
             alias_tol=1e-11, exact_r=True)
