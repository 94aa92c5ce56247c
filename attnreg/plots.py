"""Plots of the coefficient and attention views (matplotlib, an optional extra: ``attnreg[plot]``).

Every function draws on the given Axes (or a new figure) and returns the Axes it drew on.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnreg.exceptions import OptionError


def _axes(ax: Any = None, nrows: int = 1, figsize: tuple[float, float] = (7.0, 4.0)) -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("plots need matplotlib: pip install 'attnreg[plot]'") from None
    if ax is not None:
        return ax
    _, axes = plt.subplots(nrows, 1, figsize=figsize, squeeze=True,
                           sharex=nrows > 1, constrained_layout=True)
    return axes


def plot_contributors(attention: Any, i: int = 0, top: int = 10, ax: Any = None) -> Any:
    """Horizontal bars of the training rows that contribute most to prediction ``i``.

    Parameters
    ----------
    attention : AttentionWeights
        From ``fit.attention(newdata)``.
    i : int
        Query position.
    top : int
        Rows to show.
    """
    ex = attention.explain(i, top=top)
    ax = _axes(ax)
    labels = [str(s) for s in ex.index][::-1]
    values = ex["contribution"].to_numpy()[::-1]
    colors = ["tab:red" if v < 0 else "tab:blue" for v in ex["weight"].to_numpy()[::-1]]
    ax.barh(labels, values, color=colors)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel("contribution  weight × y  (red: negative weight)")
    ax.set_title(f"Top {len(ex)} training rows behind prediction {ex.attrs['query']!r} "
                 f"= {ex.attrs['prediction']:.4g}")
    return ax


def plot_leverage(fit: Any, ax: Any = None, label_top: int = 3) -> Any:
    """Standardised residuals against leverage (hat values), with Cook's distance contours."""
    inf = fit.influence()
    h, r = inf["hat"].to_numpy(), inf["std_resid"].to_numpy()
    ax = _axes(ax)
    ax.scatter(h, r, s=14, alpha=0.7)
    grid = np.linspace(max(h.min(), 1e-3), min(h.max() * 1.05, 0.999), 100)
    for d in (0.5, 1.0):
        bound = np.sqrt(d * fit.edf * (1 - grid) / grid)
        ax.plot(grid, bound, "--", color="grey", lw=0.8)
        ax.plot(grid, -bound, "--", color="grey", lw=0.8)
    for j in np.argsort(-inf["cooks_distance"].to_numpy())[:label_top]:
        ax.annotate(str(inf.index[j]), (h[j], r[j]), fontsize=8)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xlabel("leverage (hat value = own attention weight)")
    ax.set_ylabel("standardised residual")
    ax.set_title("Residuals vs leverage (dashed: Cook's distance 0.5, 1)")
    return ax


def plot_selection(fit: Any, ax: Any = None) -> Any:
    """The GCV or LOO curve over λ (ridge) or k (PCR), with the chosen value marked."""
    sel = getattr(fit, "selection", None)
    if sel is None or sel.grid.size == 0:
        raise OptionError("plot_selection needs a ridge or PCR fit with lam/k chosen by 'gcv' "
                          "or 'loo'")
    ax = _axes(ax)
    ax.plot(sel.grid, sel.scores, marker="." if fit.method == "pcr" else None)
    ax.axvline(sel.value, color="tab:red", ls="--", lw=1)
    if fit.method == "ridge":
        ax.set_xscale("log")
        ax.set_xlabel("lambda (standardised scale)")
    else:
        ax.set_xlabel("number of components k")
    ax.set_ylabel(sel.criterion.upper())
    ax.set_title(f"{sel.criterion.upper()} curve; chosen {fit.method} "
                 f"{'lambda' if fit.method == 'ridge' else 'k'} = {sel.value:.4g}")
    return ax


def plot_attention_heatmap(attention: Any, ax: Any = None, max_rows: int = 200) -> Any:
    """Heatmap of the weight matrix (queries × training rows), diverging around zero."""
    if attention.n_queries > max_rows or len(attention.train_labels) > 5000:
        raise OptionError(f"the heatmap shows at most {max_rows} queries and 5000 training rows; "
                          f"this view has {attention.n_queries} × {len(attention.train_labels)}")
    W = attention.weights.to_numpy()
    ax = _axes(ax)
    lim = float(np.abs(W).max()) or 1.0
    image = ax.imshow(W, aspect="auto", cmap="RdBu_r", vmin=-lim, vmax=lim,
                      interpolation="nearest")
    ax.figure.colorbar(image, ax=ax, label="weight")
    ax.set_xlabel("training row")
    ax.set_ylabel("query")
    ax.set_title("Attention weights")
    return ax


def plot_coef_paths(forecasts: Any, terms: list[str] | None = None, ax: Any = None) -> Any:
    """Coefficients at every forecast origin (or of a rolling fit)."""
    frame = forecasts.coef  # ForecastResults and RollingResults both carry .coef
    if frame is None:
        raise OptionError("coefficient paths exist for the spectral methods only")
    terms = terms or [c for c in frame.columns if c != "(Intercept)"]
    ax = _axes(ax)
    x = frame.index.to_timestamp() if hasattr(frame.index, "to_timestamp") else frame.index
    for t in terms:
        ax.plot(x, frame[t].to_numpy(), label=t)
    ax.axhline(0, color="black", lw=0.8)
    ax.legend(fontsize=8)
    ax.set_title("Coefficients over origins")
    return ax


def plot_forecast(forecasts: Any, ax: Any = None) -> Any:
    """Forecast vs actual (top) and the cumulative squared-error difference vs the benchmark
    (bottom; rising means the model is beating the prevailing mean)."""
    f = forecasts.forecasts
    axes = _axes(ax, nrows=2, figsize=(8.0, 6.0)) if ax is None else ax
    top, bottom = axes[0], axes[1]
    x = f.index.to_timestamp() if hasattr(f.index, "to_timestamp") else f.index
    top.plot(x, f["actual"].to_numpy(), color="black", lw=1, label="actual")
    top.plot(x, f["forecast"].to_numpy(), color="tab:blue", lw=1.2, label="forecast")
    top.plot(x, f["benchmark"].to_numpy(), color="grey", ls="--", lw=1, label="prevailing mean")
    top.legend(fontsize=8)
    top.set_title(f"{forecasts.plan.method} forecasts, horizon {forecasts.plan.horizon}")
    gain = np.cumsum(f["benchmark_error"].to_numpy() ** 2 - f["error"].to_numpy() ** 2)
    bottom.plot(x, gain, color="tab:green")
    bottom.axhline(0, color="black", lw=0.8)
    bottom.set_ylabel("cum. SSE(mean) − SSE(model)")
    return axes
