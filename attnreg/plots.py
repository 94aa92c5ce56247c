"""Plots of the coefficient and attention views (matplotlib, an optional extra: ``attnreg[plot]``).

Every function draws on the given Axes (or a new figure) and returns the Axes it drew on.
Importing this module does not import matplotlib; the first plot does.

Examples
--------
>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import attnreg as ar
>>> from attnreg import plots
>>> from attnreg.demo import longley_frame
>>> data = longley_frame()
>>> fit = ar.attnreg("TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR", data=data)
>>> coef_ax, attn_ax = plots.plot_dual_view(fit, data.loc[["1962"]], top=6)
>>> len(attn_ax.patches)
6
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
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import attnreg as ar
    >>> from attnreg.demo import longley_frame
    >>> data = longley_frame()
    >>> fit = ar.attnreg("TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR", data=data)
    >>> ax = plot_contributors(fit.attention(data.loc[["1962"]]), top=5)
    >>> ax.get_yticklabels()[-1].get_text()     # the top contributor is 1962 itself
    '1962'
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
    """Standardised residuals against leverage (hat values), with Cook's distance contours.

    The leverage of a training row is its own attention weight (the diagonal of the hat
    matrix); the ``label_top`` rows with the largest Cook's distance are labelled.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import attnreg as ar
    >>> from attnreg.demo import longley_frame
    >>> fit = ar.attnreg("TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR",
    ...                  data=longley_frame())
    >>> ax = plot_leverage(fit)
    >>> len(ax.collections[0].get_offsets())
    16
    """
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
    """The GCV or LOO curve over λ (ridge) or k (PCR), with the chosen value marked.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import attnreg as ar
    >>> from attnreg.demo import longley_frame
    >>> fit = ar.attnreg("TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR",
    ...                  data=longley_frame(), method="ridge", lam="loo")
    >>> ax = plot_selection(fit)
    >>> ax.get_xscale(), ax.get_ylabel()
    ('log', 'LOO')
    """
    sel = getattr(fit, "selection", None)
    if sel is None or sel.grid.size == 0:
        raise OptionError("plot_selection needs a ridge or PCR fit with lam/k chosen by 'gcv' "
                          "or 'loo'")
    rule = fit.rule
    ax = _axes(ax)
    ax.plot(sel.grid, sel.scores, marker="." if rule.counts else None)
    ax.axvline(sel.value, color="tab:red", ls="--", lw=1)
    if rule.counts:
        ax.set_xlabel("number of components k")
    else:
        ax.set_xscale("log")
        ax.set_xlabel("lambda (standardised scale)")
    ax.set_ylabel(sel.criterion.upper())
    ax.set_title(f"{sel.criterion.upper()} curve; chosen {fit.method} "
                 f"{rule.parameter} = {sel.value:.4g}")
    return ax


def plot_attention_heatmap(attention: Any, ax: Any = None, max_rows: int = 200) -> Any:
    """Heatmap of the weight matrix (queries × training rows), diverging around zero.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import attnreg as ar
    >>> from attnreg.demo import longley_frame
    >>> fit = ar.attnreg("TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR",
    ...                  data=longley_frame())
    >>> ax = plot_attention_heatmap(fit.attention())   # the hat matrix
    >>> ax.images[0].get_array().shape
    (16, 16)
    """
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
    """Coefficients at every forecast origin (or of a rolling fit); ``plot_forecasts(fc, "coef")``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="1990Q1")
    >>> ax = plot_coef_paths(fc)
    >>> [line.get_label() for line in ax.lines[:2]]
    ['lag(infl, 1)', 'lag(unemp, 1)']
    """
    from attnreg.timeseries.fcplots import plot_forecasts

    return plot_forecasts(forecasts, "coef", terms=terms, ax=_axes(ax))


def plot_forecast(forecasts: Any, ax: Any = None) -> Any:
    """Forecast vs actual (top) and the cumulative squared-error difference vs the benchmark
    (bottom; rising means the model is beating the prevailing mean): the kinds ``"forecast"``
    and ``"cumulative"`` of :func:`attnreg.timeseries.fcplots.plot_forecasts`.

    Returns
    -------
    pair of matplotlib Axes
        Pass ``ax=(top, bottom)`` to draw on existing Axes.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> fc = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, start="1990Q1")
    >>> top, bottom = plot_forecast(fc)
    >>> len(top.lines), len(bottom.lines)
    (3, 2)
    """
    from attnreg.timeseries.fcplots import plot_forecasts

    axes = _axes(ax, nrows=2, figsize=(8.0, 6.0)) if ax is None else ax
    top, bottom = axes[0], axes[1]
    plot_forecasts(forecasts, "forecast", ax=top)
    plot_forecasts(forecasts, "cumulative", ax=bottom)
    bottom.set_title("")
    return axes


def coefficient_contributions(fit: Any, newdata: Any, i: int = 0) -> Any:
    """The coefficient view of prediction ``i``: ȳ-centred contributions β_j (x*_j − x̄_j).

    With an intercept, an OLS, ridge or PCR prediction is ``baseline + Σ_j contribution_j``
    where the baseline is the (weighted) mean response and x̄ the (weighted) training means.

    Parameters
    ----------
    fit : LinearResults
        An OLS, ridge or PCR fit with an intercept.
    newdata : DataFrame
        Query rows.
    i : int
        Query position.

    Returns
    -------
    pandas.Series
        One contribution per term (aliased terms excluded), with ``attrs`` ``baseline`` and
        ``prediction``.

    Examples
    --------
    >>> import attnreg as ar
    >>> from attnreg.demo import longley_frame
    >>> data = longley_frame()
    >>> fit = ar.attnreg("TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR", data=data)
    >>> c = coefficient_contributions(fit, data.loc[["1962"]])
    >>> bool(abs(c.attrs["baseline"] + c.sum() - fit.predict(data.loc[["1962"]]).iloc[0]) < 1e-6)
    True
    """
    import pandas as pd

    design = getattr(fit, "design", None)
    from attnreg.methods import METHODS

    estimator = METHODS.get(str(getattr(fit, "method", None)))
    if estimator is None or not estimator.capabilities.linear or design is None:
        raise OptionError("the coefficient view needs an OLS, ridge or PCR fit")
    if not design.intercept:
        raise OptionError("the centred coefficient view needs a model with an intercept")
    X_new, labels = design.rebuild(newdata)
    if not 0 <= i < X_new.shape[0]:
        raise OptionError(f"i must be between 0 and {X_new.shape[0] - 1}, however: {i=}")
    w = design.weights if design.weights is not None else np.ones(design.n_obs)
    means = (w @ design.X) / w.sum()
    coef = fit.coef.to_numpy()
    keep = np.isfinite(coef)
    keep[0] = False  # the intercept is part of the baseline
    contrib = pd.Series(coef[keep] * (X_new[i, keep] - means[keep]),
                        index=[n for n, k in zip(design.column_names, keep, strict=True) if k],
                        name="contribution")
    baseline = float(np.nan_to_num(coef) @ means)
    contrib.attrs.update(baseline=baseline, prediction=baseline + float(contrib.sum()),
                         query=labels[i])
    return contrib


def plot_coefficients(fit: Any, newdata: Any, i: int = 0, top: int = 10, ax: Any = None) -> Any:
    """Horizontal bars of the coefficient view of prediction ``i`` (see
    :func:`coefficient_contributions`), largest in absolute value on top.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import attnreg as ar
    >>> from attnreg.demo import longley_frame
    >>> data = longley_frame()
    >>> fit = ar.attnreg("TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR", data=data)
    >>> ax = plot_coefficients(fit, data.loc[["1962"]])
    >>> len(ax.patches)
    6
    """
    c = coefficient_contributions(fit, newdata, i)
    order = np.argsort(-np.abs(c.to_numpy()), kind="stable")[:top][::-1]
    shown = c.iloc[order]
    ax = _axes(ax)
    ax.barh([str(s) for s in shown.index], shown.to_numpy(),
            color=["tab:red" if v < 0 else "tab:blue" for v in shown.to_numpy()])
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel("contribution  β_j (x*_j − mean x_j)")
    ax.set_title(f"Coefficient view of {c.attrs['query']!r}: mean {c.attrs['baseline']:.4g} "
                 f"+ Σ = {c.attrs['prediction']:.4g}")
    return ax


def plot_dual_view(fit: Any, newdata: Any, i: int = 0, top: int = 8, axes: Any = None) -> Any:
    """One prediction two ways, side by side: coefficients times predictors (left) and a
    weighted vote of the training rows (right, :func:`plot_contributors`).

    Parameters
    ----------
    fit : LinearResults
        OLS, ridge or PCR with an intercept.
    newdata : DataFrame
        Query rows; row ``i`` is shown.
    top : int
        Training rows shown on the right.
    axes : pair of matplotlib Axes, optional

    Returns
    -------
    pair of matplotlib Axes

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import attnreg as ar
    >>> from attnreg.demo import longley_frame
    >>> data = longley_frame()
    >>> fit = ar.attnreg("TOTEMP ~ GNPDEFL + GNP + UNEMP + ARMED + POP + YEAR", data=data)
    >>> left, right = plot_dual_view(fit, data.loc[["1962"]], top=5)
    >>> len(left.patches), len(right.patches)
    (6, 5)
    """
    if axes is None:
        _axes()  # checks that matplotlib is there
        import matplotlib.pyplot as plt

        _, axes = plt.subplots(1, 2, figsize=(12.0, 4.2), constrained_layout=True)
    left, right = axes[0], axes[1]
    plot_coefficients(fit, newdata, i=i, ax=left)
    plot_contributors(fit.attention(newdata), i=i, top=top, ax=right)
    left.set_title("Coefficient view: ŷ = ȳ + Σ_j β_j (x*_j − x̄_j)", fontsize=10)
    right.set_title(f"Attention view: ŷ = Σ_i ω_i y_i (top {top} of {len(fit.fitted)} rows)",
                    fontsize=10)
    left.figure.suptitle(f"Prediction for {coefficient_contributions(fit, newdata, i).attrs['query']}"
                         f" = {float(fit.predict(newdata).iloc[i]):,.1f}", fontsize=11)
    return axes



# ------------------------------------------------------------------ R's plot.lm panels
# (in attnreg.diagnostics.plots, which fit.plot() uses without importing this module)
from attnreg.diagnostics.plots import (  # noqa: E402
    LM_PANELS,
    added_variable,
    lowess_xy,
    plot_added_variable,
    plot_lm,
)
from attnreg.views.eventstudy import plot_event_study  # noqa: E402  (fixest's iplot)

__all__ = ["LM_PANELS", "added_variable", "coefficient_contributions", "lowess_xy",
           "plot_added_variable", "plot_attention_heatmap", "plot_coef_paths",
           "plot_coefficients", "plot_contributors", "plot_dual_view", "plot_event_study",
           "plot_forecast", "plot_leverage", "plot_lm", "plot_selection"]
