"""Warnings point at the caller's line, whatever the path through the registry."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import EstimabilityWarning, RankDeficiencyWarning


@pytest.fixture
def aliased() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.normal(size=30), "z": rng.normal(size=30)})
    df["x2"] = 2 * df.x
    df["y"] = df.x + rng.normal(size=30)
    return df


@pytest.mark.parametrize("method", ["ols", "ridge", "pcr"])
def test_a_singularity_warning_names_the_callers_line(aliased, method) -> None:
    with pytest.warns(RankDeficiencyWarning, match="x2") as record:
        ar.attnreg("y ~ x + x2 + z", aliased, method=method)
    assert record[0].filename == __file__


def test_an_estimability_warning_names_the_callers_line(aliased) -> None:
    with pytest.warns(RankDeficiencyWarning):
        fit = ar.attnreg("y ~ x + x2", aliased)
    with pytest.warns(EstimabilityWarning) as record:
        fit.predict(pd.DataFrame({"x": [1.0], "x2": [0.0]}))
    assert record[0].filename == __file__
