"""The rows of a fixed-effects fit are selected on the columns its fixed effects read only
(a copy of those, not of the whole data); a missing column is still named with the columns
the data have."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import DataError
from attnreg.fe.frame import _effect_frame
from attnreg.formula.parts import split_formula


def test_only_the_fixed_effects_columns_are_selected() -> None:
    df = pd.DataFrame({"y": [1.0, 2, 3], "x": [0.0, 1, 0], "firm": [1, 1, 2], "year": [1, 2, 2],
                       "note": ["a", "b", "c"]})
    parts = split_formula("y ~ x | firm + firm^year")
    assert list(_effect_frame(df, parts).columns) == ["firm", "year"]
    assert _effect_frame(df, split_formula("y ~ x | plant")) is df  # absent: all, for the error


def test_a_missing_column_is_named_with_the_datas_columns() -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"y": rng.poisson(2.0, 40) * 1.0, "x": rng.normal(size=40),
                       "firm": rng.integers(0, 4, 40)})
    with pytest.raises(DataError, match=r"no column 'plant' \(columns: y, x, firm\)"):
        ar.attnreg("y ~ x | firm + plant", df, method="poisson")
