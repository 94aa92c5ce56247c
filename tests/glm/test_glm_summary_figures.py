"""The GLM summary keeps its figures as numbers (issue 24, item 4): the text is R's
``print.summary.glm`` (tests/glm/test_glm_summary.py), HTML, LaTeX and Markdown show the same
figures as a table, and ``statistics`` gives them by name, in memory and chunked alike."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import attnreg as ar
from tests.conftest import RTOL_EXACT
from tests.glm._reference import cases, fit_case


def _poisson_frame() -> pd.DataFrame:
    rng = np.random.default_rng(24)
    n = 240
    d = pd.DataFrame({"x": rng.normal(size=n), "g": rng.choice(["a", "b", "c"], n),
                      "firm": np.arange(n) % 6})
    d["y"] = rng.poisson(np.exp(0.2 + 0.4 * d["x"]))
    d.loc[5, "x"] = np.nan
    return d


def _check_figures(stats: dict, fit) -> None:
    for name in ("deviance", "null_deviance", "aic", "dispersion"):
        assert_allclose(stats[name], getattr(fit, name), rtol=RTOL_EXACT, err_msg=name)
    assert (stats["df_resid"], stats["df_null"], stats["iterations"], stats["n_deleted"]) == (
        fit.df_resid, fit.df_null, fit.iterations, fit.n_deleted)
    assert stats["family"] == fit.family_name


@pytest.mark.parametrize("name", ["gamma_log", "binomial_probit_esoph", "poisson_offset"])
def test_statistics_are_the_fits_numbers(name: str) -> None:
    fit = fit_case(cases()[name])
    stats = fit.summary().statistics
    _check_figures(stats, fit)
    assert stats["covariance"] is None and stats["n_separated"] == 0


def test_chunked_summary_has_the_same_figures(tmp_path: Path) -> None:
    d = _poisson_frame()
    d.to_parquet(tmp_path / "part.parquet")
    chunked = ar.attnreg("y ~ x + C(g)", str(tmp_path / "*.parquet"), method="poisson",
                         vcov="cluster", cluster="firm")
    memory = ar.attnreg("y ~ x + C(g)", d, method="poisson", vcov="cluster", cluster="firm")
    stats = chunked.summary().statistics
    _check_figures(stats, chunked)
    for name in ("deviance", "null_deviance", "aic"):
        assert_allclose(stats[name], memory.summary().statistics[name], rtol=RTOL_EXACT)
    assert (stats["covariance"], stats["n_clusters"]) == ("HC1", 6)


def test_html_latex_and_markdown_show_the_figures_as_a_table() -> None:
    fit = ar.attnreg("y ~ x + C(g)", _poisson_frame(), method="poisson")
    s = fit.summary()
    md = s.to_markdown()
    assert f"| Residual deviance                     | {fit.deviance:.7g} on {fit.df_resid} df |" in md
    assert "| Observations deleted (missing values) | 1 " in md
    latex = s.to_latex()
    assert latex.count("begin{tabular}") == 2 and f"{fit.aic:.7g}" in latex
    html = s._repr_html_()
    assert "<td>Fisher scoring iterations" in html and "<td>model-based" in html


def test_fixed_effects_and_separation_are_figures_too() -> None:
    d = _poisson_frame()
    fe = ar.attnreg("y ~ x | firm", d, method="poisson").summary()
    assert fe.statistics["fixed_effects"].startswith("Fixed effects: firm (6 levels)")
    sep = d.assign(b=(d["y"] > 0).astype(float))
    sep.loc[sep["g"] == "c", "b"] = 1.0
    with pytest.warns(ar.exceptions.SeparationWarning):
        fit = ar.attnreg("b ~ x + C(g)", sep, method="logit")
    stats = fit.summary().statistics
    assert stats["n_separated"] == len(fit.separation.rows) > 0
    assert stats["separated_by"] == ("C(g)[T.c]",) and stats["separated_dropped"]


def test_summary_pickles_and_prints_the_same() -> None:
    s = fit_case(cases()["binomial_logit_factor"]).summary()
    back = pickle.loads(pickle.dumps(s))
    assert str(back) == str(s)
    assert back.statistics == s.statistics and back.statistics["aic"] > 0
