"""The README's demo: an OLS fit of the Longley data, its summary and its attention view."""

from __future__ import annotations

import pandas as pd


def longley_frame() -> pd.DataFrame:
    """Longley's (1967) macroeconomic data, as shipped with statsmodels, indexed by year."""
    from statsmodels.datasets import longley

    frame = longley.load_pandas().data
    frame.index = pd.Index(frame["YEAR"].astype(int).astype(str), name="year")
    return frame


def demo_text() -> str:
    """Fit, summarise and explain one prediction; return the text to show."""
    from attnreg.api import attnreg

    data = longley_frame()
    fit = attnreg("TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR", data=data)
    weights = fit.attention(data.loc[["1962"]])
    explain = weights.explain(0, top=5)
    lines = [
        "attnreg demo: OLS on the Longley data (statsmodels.datasets.longley)",
        str(fit.summary()),
        "The prediction for 1962 as a weighted vote of the training years "
        f"(prediction {explain.attrs['prediction']:.1f} = sum of weight * y over all years):",
        explain.round(4).to_string(),
        "",
        "Per-query attention diagnostics:",
        weights.diagnostics.round(4).to_string(),
    ]
    return "\n".join(lines)
