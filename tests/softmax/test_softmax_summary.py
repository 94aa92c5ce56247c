"""The softmax fit's report holds its numbers: heads, penalty, R² and the optimiser's
counts are the fit's own, and the HTML, LaTeX and Markdown are well formed and show them."""

from __future__ import annotations

import pickle
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import ConvergenceWarning
from attnreg.report.modelfigures import SoftmaxFigures
from tests.report.renderings import check_renderings


@pytest.fixture(scope="module")
def fit() -> Any:
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x1": rng.normal(size=80), "x2": rng.normal(size=80)})
    df["y"] = df.x1 + np.sin(df.x2) + 0.3 * rng.normal(size=80)
    with warnings.catch_warnings():  # a short fit: the numbers, not the optimum, matter
        warnings.simplefilter("ignore", ConvergenceWarning)
        return ar.attnreg("y ~ x1 + x2", df, method="softmax", heads=2, seed=3, max_iter=20)


def test_statistics_are_the_fit_s(fit) -> None:
    s = fit.summary()
    stats = s.statistics
    assert (stats["n_heads"], stats["lam"], stats["nobs"]) == (2, fit.fit.lam, fit.nobs)
    assert (stats["r_squared"], stats["val_r2"], stats["loo_r2"]) == (
        fit.r_squared, fit.val_r2, fit.loo_r2)
    assert stats["alpha"] == tuple(fit.heads["alpha"])
    assert stats["effective_rank"] == tuple(fit.heads["effective_rank"])
    assert (stats["n_iter"], stats["converged"]) == (fit.fit.n_iter, fit.fit.converged)
    np.testing.assert_array_equal(stats["residual_quantiles"].to_numpy(),
                                  np.quantile(fit.resid, [0, 0.25, 0.5, 0.75, 1]))
    back = pickle.loads(pickle.dumps(s))  # a summary pickles with its sections
    assert str(back) == str(s) and back.statistics.keys() == stats.keys()
    effects = fit.marginal_effects()
    np.testing.assert_array_equal(s.table["APE"], effects["average_partial_effect"])
    assert isinstance(s.sections[-1], SoftmaxFigures)


def test_renderings_show_the_numbers(fit) -> None:
    s = fit.summary()
    check_renderings(s, [fit.loo_r2, fit.val_r2, fit.fit.lam],
                     fit.marginal_effects()["average_partial_effect"],
                     [f"{fit.heads['alpha'].iloc[0]:.3f}"])
