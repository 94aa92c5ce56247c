"""The network fit's report holds its numbers: architecture, training and R² are the fit's
own, and the HTML, LaTeX and Markdown are well formed and show them."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import ConvergenceWarning
from attnreg.report.modelfigures import NetworkFigures, PermutationSetup
from tests.report.renderings import check_renderings


@pytest.fixture(scope="module")
def fit() -> Any:
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.normal(size=120), "b": rng.normal(size=120)})
    df["y"] = df.a - 0.5 * df.b + 0.3 * rng.normal(size=120)
    with warnings.catch_warnings():  # a short fit: the numbers, not the optimum, matter
        warnings.simplefilter("ignore", ConvergenceWarning)
        return ar.attnreg("y ~ a + b", df, method="block", seed=0, max_epochs=3)


def test_statistics_are_the_fit_s(fit) -> None:
    s = fit.summary()
    stats = s.statistics
    h = fit.fit.history
    assert (stats["n_params"], stats["n_epochs"], stats["best_epoch"]) == (
        fit.n_params, h.n_epochs, h.best_epoch)
    assert (stats["val_loss_first"], stats["val_loss_best"], stats["val_loss_last"]) == (
        h.val_loss[0], h.best_val_loss, h.val_loss[-1])
    assert (stats["r_squared"], stats["val_r2"]) == (fit.r_squared, fit.val_r2)
    assert stats["n_val"] == stats["n_validation"] == fit.fit.val_rows.size
    assert stats["n_fit"] == fit.fit.fit_rows.size and stats["n_shuffles"] == 5
    assert stats["lr"] == fit.fit.options["lr"] and stats["max_epochs"] == 3
    assert [type(x) for x in s.sections[2::2]] == [PermutationSetup, NetworkFigures]
    importance = fit.permutation_importance()
    np.testing.assert_array_equal(s.table["Importance"], importance["importance"])


def test_renderings_show_the_numbers(fit) -> None:
    check_renderings(fit.summary(), [fit.val_r2, fit.r_squared, fit.fit.history.best_val_loss],
                     fit.permutation_importance()["importance"], [f"{fit.n_params:,}"])
