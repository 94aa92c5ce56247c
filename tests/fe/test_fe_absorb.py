"""The reusable helpers of :mod:`attnreg.fe.absorb`: levels from a frame and y, X demeaned.

References: the dense weighted least-squares residuals on the dummy matrix (numpy
``lstsq``), to RTOL_EXACT relative to the columns' scale.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attnreg.exceptions import DataError, FormulaError
from attnreg.fe import absorb, fixed_effects_of_frame
from tests.conftest import RTOL_EXACT


def absorb_frame() -> pd.DataFrame:
    rng = np.random.default_rng(11)
    n = 300
    return pd.DataFrame({"a": rng.choice(["p", "q", "r", "s"], n), "b": rng.integers(0, 9, n),
                         "x": rng.normal(size=n), "y": rng.normal(size=n),
                         "w": rng.uniform(0.5, 2.0, n)})


def test_levels_interactions_and_missing_rows_counted() -> None:
    df = absorb_frame()
    df.loc[df.index[[0, 5]], "a"] = None
    df["b"] = df.b.astype(float)
    df.loc[df.index[[5, 7]], "b"] = np.nan
    got = fixed_effects_of_frame(df, ["a", "a^b"])
    assert got.n_missing == {"a": 2, "a^b": 3}
    assert got.keep.sum() == len(df) - 3 and not got.keep[[0, 5, 7]].any()
    kept = df[got.keep]
    assert got.fe.n_levels == (4, len(kept.groupby(["a", "b"])))
    assert got.fe.names == ("a", "a^b")
    with pytest.raises(DataError, match="the data have no column 'c'"):
        fixed_effects_of_frame(df, ["c"])
    with pytest.raises(FormulaError, match="varying slopes"):
        fixed_effects_of_frame(df, ["a[x]"])


def test_absorb_equals_dense_weighted_residuals_and_flags_collinear_columns() -> None:
    df = absorb_frame()
    fe = fixed_effects_of_frame(df, ["a", "b"]).fe
    code_a = pd.factorize(df.a, sort=True)[0]
    X = np.column_stack([df.x, 2.0 * code_a + 1.0])  # the second is explained by "a"
    out = absorb(df.y.to_numpy(), X, fe, df.w.to_numpy())
    assert out.collinear.tolist() == [False, True] and np.all(out.X[:, 1] == 0.0)
    D = fe.dummies.toarray()
    sw = np.sqrt(df.w.to_numpy())[:, None]
    V = np.column_stack([df.y, df.x])
    coef, *_ = np.linalg.lstsq(D * sw, V * sw, rcond=None)
    ref = V - D @ coef
    np.testing.assert_allclose(np.column_stack([out.y, out.X[:, 0]]), ref,
                               atol=RTOL_EXACT * np.abs(V).max())
