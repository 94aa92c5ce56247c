"""A network fitted to a logical response (``I(y > 0)``) scores new rows against the 0/1
response, as one fitted to the 0/1 column (patsy codes a logical response [False, True])."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from attnreg.nn import fit_network_formula  # noqa: E402

SMALL = {"d_model": 16, "pca_components": 24}  # as tests/nn/test_nn.py

pytestmark = pytest.mark.filterwarnings("ignore::attnreg.exceptions.ConvergenceWarning")


def test_permutation_importance_on_new_rows_scores_the_zero_one_response() -> None:
    rng = np.random.default_rng(2)
    n = 200
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n)})
    df["y"] = df.x1 + 0.5 * rng.normal(size=n)
    df["y01"] = (df.y > 0).astype(float)
    torch.set_num_threads(1)
    logical = fit_network_formula("I(y > 0) ~ x1 + x2", df, max_epochs=5, **SMALL)
    ref = fit_network_formula("y01 ~ x1 + x2", df, max_epochs=5, **SMALL)
    np.testing.assert_array_equal(logical.fitted.to_numpy(), ref.fitted.to_numpy())
    pd.testing.assert_frame_equal(logical.permutation_importance(df.iloc[:80], seed=3),
                                  ref.permutation_importance(df.iloc[:80], seed=3))
