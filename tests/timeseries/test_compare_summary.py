"""The report of a comparison of forecasts holds its numbers: the setting and the model
confidence set are the comparison's own, and its renderings are well formed and show them."""

from __future__ import annotations

import pandas as pd
import pytest
from statsmodels.datasets import macrodata

import attnreg as ar
from attnreg.report.fcfigures import ComparisonSetup, ModelConfidence
from tests.report.renderings import check_renderings, latex_errors, markdown_errors


@pytest.fixture(scope="module")
def comparison():
    macro = macrodata.load_pandas().data
    macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    fa = ar.forecast("infl ~ lag(infl, 1)", macro, start="1990Q1")
    fb = ar.forecast("infl ~ lag(unemp, 1)", macro, start="1990Q1")
    return ar.compare_forecasts([fa, fb], mcs_reps=200, seed=2)


def test_statistics_are_the_comparison_s(comparison) -> None:
    s = comparison.summary()
    stats, m = s.statistics, comparison.mcs
    assert (stats["n_models"], stats["benchmark"], stats["horizon"], stats["loss"]) == (
        2, comparison.benchmark_name, comparison.horizon, comparison.loss)
    assert stats["n_forecasts"] == comparison.targets.size
    assert stats["first_target"] == str(comparison.targets[0])
    assert (stats["reps"], stats["seed"], stats["block_size"]) == (200, 2, m.block_size)
    assert (stats["size"], stats["included"]) == (m.size, tuple(m.included))
    assert s.table["MSFE"].tolist() == comparison.table["msfe"].tolist()
    assert isinstance(s.sections[0], ComparisonSetup)
    assert isinstance(s.sections[3], ModelConfidence)
    check_renderings(s, [], comparison.table["msfe"], [", ".join(m.included)])
    # its own LaTeX and Markdown (the printed cells) end with the same notes
    latex, md = comparison.to_latex(), comparison.to_markdown()
    assert latex_errors(latex) == [] and markdown_errors(md) == []
    assert latex.splitlines()[-1].startswith("% MCS: Hansen-Lunde-Nason")
    assert md.splitlines()[-1].startswith("MCS: Hansen-Lunde-Nason")

