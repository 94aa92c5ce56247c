"""Draw the README's picture of the dual view: ``python vignettes/make_figures.py [OUT_DIR]``.

The Longley OLS fit (data shipped with statsmodels) and its 1962 prediction, as
coefficients times centred predictors (left) and as a weighted vote of the training years
(right), drawn with :func:`attnreg.plots.plot_dual_view`. Writes ``dual_view.png`` to
``vignettes/figures/`` (or OUT_DIR).
"""

from __future__ import annotations

import sys
from pathlib import Path

FIGURES = Path(__file__).resolve().parent / "figures"


def dual_view(out_dir: Path = FIGURES) -> Path:
    """Draw and save the dual view of the Longley 1962 prediction; return the PNG's path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    import attnreg as ar
    from attnreg.demo import longley_frame
    from attnreg.plots import plot_dual_view

    data = longley_frame()
    fit = ar.attnreg("TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR", data=data)
    left, _ = plot_dual_view(fit, data.loc[["1962"]], top=8)
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "dual_view.png"
    left.figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(left.figure)
    return path


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's attnreg
    print(dual_view(Path(sys.argv[1]) if len(sys.argv) > 1 else FIGURES))
