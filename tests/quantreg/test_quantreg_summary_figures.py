"""A quantile regression's summary holds the τ and the crossing count as numbers, and renders
each τ's table as well-formed HTML, LaTeX and Markdown."""

from __future__ import annotations

import numpy as np
import pandas as pd

import attnreg as ar
from tests.report.renderings import check_renderings


def test_taus_and_crossing_are_numbers() -> None:
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"x": rng.uniform(-1, 1, 60)})
    df["y"] = rng.standard_normal(60) * np.abs(df.x) ** 3
    q = ar.attnreg("y ~ x + I(x**2)", df, method="quantreg", tau=[0.45, 0.5, 0.55], se="iid")
    s = q.summary()
    assert s.statistics == {"taus": (0.45, 0.5, 0.55), "n_crossing": q.crossing}
    assert q.crossing > 0 and len(s.tables) == 3
    for tau, table in zip(q.taus, s.tables, strict=True):
        pd.testing.assert_frame_equal(table, q.coef_table(tau))
    check_renderings(s, [], s.tables[1]["Value"], [f"cross at {q.crossing} training row(s)"])
