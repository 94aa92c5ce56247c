"""Rows left out after the design is built (singletons, levels fitted perfectly) are selected
from it: the same design, fixed effects and fit as building the design again on the rows
kept (the formula is evaluated on every row either way), compared bit for bit."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
import attnreg.fe.frame as frame


def _counts() -> pd.DataFrame:
    rng = np.random.default_rng(21)
    n = 400
    df = pd.DataFrame({"x": rng.normal(size=n), "g": rng.integers(0, 30, n),
                       "s": rng.choice(["u", "v", "w", "z"], n), "k": rng.choice(["a", "b"], n),
                       "w": rng.uniform(0.5, 2.0, n), "exposure": rng.uniform(1, 3, n)})
    df["y"] = rng.poisson(np.exp(0.4 * df.x)).astype(float)
    df.loc[df.g == 7, "y"] = 0.0  # level 7 of g: fitted perfectly, its rows left out
    df.loc[df.index[df.g == 7][0], "k"] = "c"  # a level of k only there: an all-zero column
    return df


def _both(monkeypatch: pytest.MonkeyPatch, *args: Any, **kwargs: Any) -> tuple[Any, Any, list]:
    calls: list[Any] = []
    kept = frame._kept
    monkeypatch.setattr(frame, "_kept", lambda *a: calls.append(kept(*a)) or calls[-1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        selected = ar.attnreg(*args, **kwargs)
        monkeypatch.setattr(frame, "_kept", lambda *a: None)  # build again on the rows kept
        rebuilt = ar.attnreg(*args, **kwargs)
    return selected, rebuilt, calls


def _same(a: Any, b: Any) -> None:
    assert a.coef.index.tolist() == b.coef.index.tolist()
    np.testing.assert_array_equal(a.coef.to_numpy(), b.coef.to_numpy())
    np.testing.assert_array_equal(a.std_err.to_numpy(), b.std_err.to_numpy())
    fitted_a, fitted_b = pd.Series(a.fitted), pd.Series(b.fitted)
    np.testing.assert_array_equal(fitted_a.to_numpy(), fitted_b.to_numpy())
    assert fitted_a.index.equals(fitted_b.index)
    assert a.nobs == b.nobs
    assert str(a.summary()) == str(b.summary())


def test_levels_fitted_perfectly_are_selected_out_of_the_design(
        monkeypatch: pytest.MonkeyPatch) -> None:
    df = _counts()
    selected, rebuilt, calls = _both(
        monkeypatch, "y ~ x + C(k) + I(x - x.mean()) | g + s", df, method="poisson",
        weights="w", offset="np.log(exposure)", vcov="cluster", cluster="g")
    assert len(calls) == 1 and calls[0] is not None  # selected, not built again
    assert selected.nobs == len(df) - int((df.g == 7).sum())
    _same(selected, rebuilt)


def test_singletons_are_selected_out_of_the_design(monkeypatch: pytest.MonkeyPatch) -> None:
    df = _counts().assign(y=lambda d: d.x * 2 + d.g * 0.1)
    df.loc[len(df)] = [0.3, 99, "u", "a", 1.0, 1.0, 1.0]  # g = 99: a singleton
    selected, rebuilt, calls = _both(monkeypatch, "y ~ x | g + s", df, fixef_rm="singleton")
    assert calls[0] is not None and selected.nobs == len(df) - 1
    _same(selected, rebuilt)


def test_rows_of_weight_zero_are_built_again(monkeypatch: pytest.MonkeyPatch) -> None:
    df = _counts()
    df.loc[df.index[:5], "w"] = 0.0  # set apart by the first build: the rebuild has none
    selected, rebuilt, calls = _both(monkeypatch, "y ~ x | g + s", df, method="poisson",
                                     weights="w")
    assert calls == [None]
    _same(selected, rebuilt)
