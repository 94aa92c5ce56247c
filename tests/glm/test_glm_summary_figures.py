"""A GLM's summary holds its figures as numbers: dispersion, deviances, AIC and iterations
are the fit's own, and the HTML, LaTeX and Markdown are well formed and show them."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.glm.summary import glm_notes
from tests.report.renderings import check_renderings


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"x": rng.normal(size=90), "g": np.repeat(np.arange(9), 10)})
    df["y"] = rng.poisson(np.exp(0.3 + 0.5 * df.x))
    return df


def test_statistics_are_the_fit_s(data) -> None:
    fit = ar.attnreg("y ~ x", data, method="glm", family="poisson")
    s = fit.summary()
    stats = s.statistics
    assert (stats["deviance"], stats["null_deviance"], stats["aic"]) == (
        fit.deviance, fit.null_deviance, fit.aic)
    assert (stats["dispersion"], stats["iterations"], stats["family"]) == (
        fit.dispersion, fit.iterations, "poisson")
    assert (stats["df_null"], stats["df_resid"]) == (fit.df_null, fit.df_resid)
    assert stats["robust"] is None and stats["n_clusters"] is None
    assert s.table["Estimate"].tolist() == fit.coef.tolist()
    assert str(s).endswith("\n".join(glm_notes(fit)) + "\n")
    check_renderings(s, [fit.deviance, fit.aic], fit.coef)


def test_clustered_sandwich_counts_its_clusters(data) -> None:
    fit = ar.attnreg("y ~ x", data, method="glm", family="poisson").with_vcov(
        "cluster", cluster="g", type="HC0")
    stats = fit.summary().statistics
    assert (stats["robust"], stats["n_clusters"]) == ("HC0", 9)
    assert "sandwich::vcovCL, 9 clusters, type HC0" in str(fit.summary())
