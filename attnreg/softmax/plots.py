"""Figures of a softmax attention fit: partial-dependence curves (``fit.plot(kind="partial")``).

Importing this module does not import matplotlib; the first plot does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnreg.exceptions import OptionError

__all__ = ["PLOT_KINDS", "plot_partial"]

#: the ``kind`` choices of :meth:`SoftmaxResults.plot`
PLOT_KINDS = ("partial",)


def _panels(ax: Any, n: int) -> list[Any]:
    """``n`` Axes: the given ones (one, or a sequence of n), else a new row of panels."""
    if ax is not None:
        axes = list(np.ravel(ax)) if isinstance(ax, (list, tuple, np.ndarray)) else [ax]
        if len(axes) != n:
            raise OptionError(f"ax must hold one Axes per column plotted ({n}); got {len(axes)}")
        return axes
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("plots need matplotlib: pip install 'attnreg[plot]'") from None
    _, made = plt.subplots(1, n, figsize=(3.2 * n + 0.8, 3.2), squeeze=False, constrained_layout=True)
    return list(made[0])


def plot_partial(res: Any, columns: list[str] | None = None, grid: Any = None, ax: Any = None) -> Any:
    """Partial-dependence curves, one panel per predictor (design column).

    Each curve is :meth:`SoftmaxResults.partial_dependence` of its column: the mean prediction
    over the training rows with the column set to each grid value.

    Parameters
    ----------
    res : SoftmaxResults
    columns : list of str, optional
        Design columns to plot (default: every predictor).
    grid : sequence of float, optional
        The values of each column (default: 20 points from its 5 % to its 95 % quantile).
    ax : Axes or sequence of Axes, optional
        One per column; default: a new figure with a row of panels.

    Returns
    -------
    Axes, or a list of Axes when more than one column is plotted.
    """
    cols = list(res.names) if columns is None else list(columns)
    if not cols:
        raise OptionError("columns must name at least one predictor")
    axes = _panels(ax, len(cols))
    for a, col in zip(axes, cols, strict=True):
        curve = res.partial_dependence(col, grid)
        a.plot(curve[col].to_numpy(), curve["partial_dependence"].to_numpy(), marker="o", ms=3)
        a.set_xlabel(col)
        a.set_ylabel(f"partial dependence of {res.design.response_name}")
        a.grid(alpha=0.3)
    return axes[0] if len(axes) == 1 else axes
