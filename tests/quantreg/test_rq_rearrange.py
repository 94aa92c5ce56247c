"""``predict(rearrange=True)`` of a several-τ quantile regression: crossing quantiles sorted
(the monotone rearrangement over a finite set of τ), the fits themselves otherwise."""

from __future__ import annotations

import numpy as np
import pandas as pd
from numpy.testing import assert_array_equal

import attnreg as ar


def test_rearranged_predictions_are_the_sorted_fits() -> None:
    rng = np.random.default_rng(3)
    n = 40
    df = pd.DataFrame({"x": rng.standard_normal(n)})
    df["y"] = df["x"] + rng.standard_normal(n) * (1 + df["x"] ** 2)
    q = ar.attnreg("y ~ x", df, method="quantreg", tau=[0.45, 0.5, 0.55])
    raw = q.predict()
    assert q.crossing == int((np.diff(raw.to_numpy(), axis=1) < 0).any(axis=1).sum()) > 0
    fixed = q.predict(rearrange=True)
    assert_array_equal(fixed.to_numpy(), np.sort(raw.to_numpy(), axis=1))
    assert (np.diff(fixed.to_numpy(), axis=1) >= 0).all()
    assert fixed.columns.tolist() == raw.columns.tolist()
    new = pd.DataFrame({"x": [-3.0, np.nan, 3.0]})
    out = q.predict(new, rearrange=True).to_numpy()
    assert_array_equal(out[[0, 2]], np.sort(q.predict(new).to_numpy()[[0, 2]], axis=1))
    assert np.isnan(out[1]).all()
