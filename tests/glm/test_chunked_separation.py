"""Separation in GLMs fitted beyond memory: the fit certifies itself, or the linear program
runs on the rows that matter, its direction checked on every row (cutting planes), and the
separated rows are dropped as in memory (tests/glm/test_separation.py for the in-memory LP)."""

from __future__ import annotations

import pickle
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
import attnreg.glm.chunked_results as chunked_results
from attnreg.exceptions import DataError, SeparationWarning
from tests.conftest import RTOL_EXACT


def _frame(n: int = 800, seed: int = 27) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.uniform(0, 2, n).round(4), "z": rng.normal(size=n).round(4),
                       "g": rng.choice(["a", "b", "c", "d"], n)})
    df["yb"] = rng.binomial(1, 1 / (1 + np.exp(0.5 - 0.8 * df.x)))
    df["count"] = rng.poisson(np.exp(0.3 + 0.4 * df.x))
    return df


def _parquet(df: pd.DataFrame, folder: Path) -> str:
    for i, start in enumerate(range(0, len(df), 200)):
        df.iloc[start:start + 200].to_parquet(folder / f"part{i}.parquet")
    return str(folder / "*.parquet")


def _both(formula: str, df: pd.DataFrame, folder: Path, **options: Any) -> tuple[Any, Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.warns(SeparationWarning, match=r"separated by C\(g\)\[T.c\].*dropped"):
            folder.mkdir(exist_ok=True)
            chunked = ar.attnreg(formula, _parquet(df, folder), chunk_rows=150, **options)
        with pytest.warns(SeparationWarning):
            memory = ar.attnreg(formula, df, **options)
    return chunked, memory


def _same(chunked: Any, memory: Any) -> None:
    assert_allclose(chunked.coef, memory.coef, rtol=RTOL_EXACT, atol=RTOL_EXACT)
    assert_allclose(chunked.std_err, memory.std_err, rtol=RTOL_EXACT)
    assert_allclose([chunked.deviance, chunked.aic], [memory.deviance, memory.aic],
                    rtol=RTOL_EXACT)
    assert chunked.nobs == memory.nobs
    assert sorted(chunked.separation.rows) == sorted(memory.separation.rows)
    assert chunked.separation.regressors == memory.separation.regressors
    assert chunked.separation.dropped


def test_quasi_complete_binomial_separation_dropped_as_in_memory(tmp_path: Path) -> None:
    df = _frame()
    df.loc[df.g == "c", "yb"] = 1  # level c: every response 1
    chunked, memory = _both("yb ~ x + z + C(g)", df, tmp_path, method="logit")
    _same(chunked, memory)
    assert np.isnan(chunked.coef["C(g)[T.c]"])  # no row of level c is left: aliased
    assert "separated by C(g)[T.c], removed before the fit" in str(chunked.summary())
    back = pickle.loads(pickle.dumps(chunked))
    assert list(back.separation.rows) == list(chunked.separation.rows)


def test_poisson_separation_dropped_as_in_memory(tmp_path: Path) -> None:
    df = _frame()
    df.loc[df.g == "c", "count"] = 0  # level c: every count 0 (ppmlhdfe's case)
    chunked, memory = _both("count ~ x + C(g)", df, tmp_path, method="poisson")
    _same(chunked, memory)


def test_dropped_rows_leave_the_clustered_covariance_too(tmp_path: Path) -> None:
    """The final pass reads the cluster column of the kept rows only: equal to the in-memory
    vcovCL after the drop (two-way too)."""
    df = _frame()
    df.loc[df.g == "c", "yb"] = 1
    df["firm"] = np.arange(len(df)) % 37
    df["year"] = np.arange(len(df)) % 11
    for cluster in ("firm", "firm + year"):
        chunked, memory = _both("yb ~ x + z + C(g)", df, tmp_path / cluster.replace(" ", ""),
                                method="logit", vcov="cluster", cluster=cluster)
        _same(chunked, memory)


def test_separation_by_a_continuous_regressor_outside_the_near_rows(tmp_path: Path) -> None:
    """y = 1 wherever z > 1.2, and z's coefficient then diverges: the LP's first working set
    holds the rows fitted near 1, the check adds the rows that break its direction."""
    df = _frame(seed=3)
    df.loc[df.z > 1.2, "yb"] = 1
    df["zz"] = np.maximum(df.z - 1.2, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.warns(SeparationWarning, match=r"separated by zz"):
            chunked = ar.attnreg("yb ~ x + zz", _parquet(df, tmp_path), method="logit",
                                 chunk_rows=150)
        with pytest.warns(SeparationWarning):
            memory = ar.attnreg("yb ~ x + zz", df, method="logit")
    assert_allclose(chunked.coef, memory.coef, rtol=RTOL_EXACT, atol=RTOL_EXACT)
    assert chunked.nobs == memory.nobs == int((df.z <= 1.2).sum())


def test_complete_separation_is_refused(tmp_path: Path) -> None:
    df = _frame().assign(yb=lambda d: (d.x > 1).astype(int))
    with pytest.raises(DataError, match=r"complete separation: every row \(800\) is separated "
                                        r"by \(Intercept\), x; remove"):
        ar.attnreg("yb ~ x", _parquet(df, tmp_path), method="logit", chunk_rows=150)


def test_error_and_warn_modes(tmp_path: Path) -> None:
    df = _frame()
    df.loc[df.g == "c", "yb"] = 1
    glob = _parquet(df, tmp_path)
    with pytest.raises(DataError, match=r"observation\(s\) separated by C\(g\)\[T.c\].*"
                                        r"separation='drop'"):
        ar.attnreg("yb ~ x + C(g)", glob, method="logit", separation="error")
    with pytest.warns(SeparationWarning, match="fitted anyway"):
        kept = ar.attnreg("yb ~ x + C(g)", glob, method="logit", separation="warn")
    assert kept.nobs == len(df) and not kept.separation.dropped


def test_a_certified_fit_runs_no_linear_program(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: Any) -> bool:
        raise AssertionError("the linear program ran on a certified fit")

    monkeypatch.setattr(chunked_results, "handle_chunked", fail)
    fit = ar.attnreg("yb ~ x + C(g)", _parquet(_frame(), tmp_path), method="logit")
    assert fit.separation is None
