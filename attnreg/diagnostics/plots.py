"""R's diagnostic plots of a linear fit: ``plot.lm``'s panels and added-variable plots.

Reached as :func:`attnreg.plots.plot_lm` and :func:`attnreg.plots.plot_added_variable` (and
``fit.plot()``). Importing this module does not import matplotlib; the first plot does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from attnreg.exceptions import OptionError

__all__ = ["LM_PANELS", "added_variable", "lowess_xy", "plot_added_variable", "plot_lm"]


def _axes(ax: Any = None) -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("plots need matplotlib: pip install 'attnreg[plot]'") from None
    if ax is not None:
        return ax
    _, axes = plt.subplots(1, 1, figsize=(7.0, 4.0), constrained_layout=True)
    return axes


#: the panels of :func:`plot_lm`, by R's ``which`` number
LM_PANELS = {1: "Residuals vs Fitted", 2: "Q-Q Residuals", 3: "Scale-Location",
             4: "Cook's distance", 5: "Residuals vs Leverage"}


def lowess_xy(x: Any, y: Any) -> tuple[Any, Any]:
    """R's ``lowess(x, y)`` (f = 2/3, 3 robustifying iterations, delta = 1% of the range of
    x), by statsmodels' lowess: the smoother drawn on :func:`plot_lm`'s panels.

    Returns
    -------
    x_sorted, smoothed : ndarray, shape (n,)

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.diagnostics.plots import lowess_xy
    >>> x = np.arange(10.0)
    >>> sx, sy = lowess_xy(x, 2 * x + 1)
    >>> bool(np.allclose(sy, 2 * sx + 1))
    True
    """
    from statsmodels.nonparametric.smoothers_lowess import lowess

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    delta = 0.01 * float(np.ptp(x)) if x.size else 0.0
    out = lowess(y, x, frac=2.0 / 3.0, it=3, delta=delta, return_sorted=True)
    return out[:, 0], out[:, 1]


def _panel_data(fit: Any) -> dict[str, Any]:
    """What R's ``plot.lm`` draws, for the rows of the fit (weight zero left out)."""
    infl = fit.influence()
    labels = infl.index
    fitted = fit.fitted.loc[labels].to_numpy() if fit.design.zero_weight is not None \
        else fit.fitted.to_numpy()
    resid = fit.resid.loc[labels].to_numpy() if fit.design.zero_weight is not None \
        else fit.resid.to_numpy()
    h = infl["hat"].to_numpy()
    rs = infl["std_resid"].to_numpy()
    keep = h < 1.0 - 10 * np.finfo(float).eps  # R drops rows of leverage one from 2, 3, 5
    return {"labels": labels, "fitted": fitted, "resid": resid, "hat": h, "std": rs,
            "cooks": infl["cooks_distance"].to_numpy(), "keep": keep, "p": float(fit.edf)}


def _label_top(ax: Any, x: Any, y: Any, score: Any, labels: Any, n: int = 3) -> None:
    for j in np.argsort(-np.asarray(score), kind="stable")[:n]:
        ax.annotate(str(labels[j]), (x[j], y[j]), fontsize=8, xytext=(3, 0),
                    textcoords="offset points")


def plot_lm(fit: Any, which: Any = (1, 2, 3, 5), axes: Any = None, id_n: int = 3) -> Any:
    """R's ``plot.lm`` panels of a linear fit.

    1. Residuals vs fitted values, with R's lowess smoother (:func:`lowess_xy`).
    2. Normal Q–Q plot of the standardized residuals (``rstandard``), with the line
       through the first and third quartiles (R's ``qqline``).
    3. Scale–location: sqrt(abs(standardized residual)) vs fitted, with the smoother.
    4. Cook's distances by observation number.
    5. Standardized residuals vs leverage, with the smoother and Cook's distance contours
       ±sqrt(c p (1 − h) / h) for c = 0.5 and 1 (p = tr(H)).

    The ``id_n`` most extreme points are labelled by row label, as R does (by abs(residual)
    on 1, by abs(standardized residual) on 2 and 3, by Cook's distance on 4 and 5). Rows of
    weight zero are not drawn; rows of leverage one are left out of 2, 3 and 5. Ridge and
    PCR: residuals, hat values and Cook's distances conditional on λ or k.

    Parameters
    ----------
    fit : LinearResults
    which : sequence of int
        Panels to draw, from 1 to 5.
    axes : sequence of matplotlib Axes, optional
        One per panel (default: a new figure, 2 × 2 for four panels).
    id_n : int
        Points labelled per panel.

    Returns
    -------
    ndarray of matplotlib Axes, shape (len(which),)
        In the order of ``which``. On each, ``collections[0]`` holds the points; the
        smoother (or Q–Q line) is ``lines[0]``; panel 5's contours are ``lines[1:5]``.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> import attnreg as ar
    >>> from attnreg.demo import longley_frame
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED", data=longley_frame())
    >>> axes = plot_lm(fit)
    >>> x, y = axes[0].collections[0].get_offsets().T
    >>> bool(np.allclose(x, fit.fitted) and np.allclose(y, fit.resid))
    True
    """
    try:
        panels = [int(w) for w in which]
        ok = all(int(w) == w for w in which) and bool(panels)
    except (TypeError, ValueError):
        ok, panels = False, []
    if not ok or any(w not in LM_PANELS for w in panels) or len(set(panels)) != len(panels):
        raise OptionError(f"which must be distinct panel numbers from {sorted(LM_PANELS)} "
                          f"({', '.join(f'{k}: {v}' for k, v in LM_PANELS.items())}), "
                          f"however: {which=}")
    if getattr(fit, "design", None) is None or not hasattr(fit, "influence"):
        raise OptionError("plot_lm needs an OLS, ridge or PCR fit (a result of attnreg())")
    if axes is None:
        _axes()
        import matplotlib.pyplot as plt

        k = len(panels)
        nrows, ncols = (2, 2) if k == 4 else (1, k)
        _, grid = plt.subplots(nrows, ncols, figsize=(4.5 * ncols, 4.0 * nrows),
                               constrained_layout=True, squeeze=False)
        axes = grid.ravel()
    axes = np.asarray(axes, dtype=object).ravel()
    if axes.size != len(panels):
        raise OptionError(f"axes must hold one Axes per panel ({len(panels)}), however: "
                          f"{axes.size}")
    d = _panel_data(fit)
    for ax, panel in zip(axes, panels, strict=True):
        _DRAW[panel](ax, d, id_n)
        ax.set_title(LM_PANELS[panel])
    return axes


def _smooth(ax: Any, x: Any, y: Any) -> None:
    sx, sy = lowess_xy(x, y)
    ax.plot(sx, sy, color="tab:red", lw=1)


def _draw_resid_fitted(ax: Any, d: dict[str, Any], id_n: int) -> None:
    x, y = d["fitted"], d["resid"]
    ax.scatter(x, y, s=14, facecolors="none", edgecolors="black", lw=0.7)
    _smooth(ax, x, y)
    ax.axhline(0, color="grey", ls=":", lw=0.8)
    _label_top(ax, x, y, np.abs(y), d["labels"], id_n)
    ax.set_xlabel("Fitted values")
    ax.set_ylabel("Residuals")


def _draw_qq(ax: Any, d: dict[str, Any], id_n: int) -> None:
    from scipy import stats

    keep = d["keep"]
    rs, labels = d["std"][keep], d["labels"][keep]
    n = rs.size
    a = 3.0 / 8.0 if n <= 10 else 0.5  # R's ppoints
    quantiles = stats.norm.ppf((np.arange(1, n + 1) - a) / (n + 1 - 2 * a))
    theory = np.empty(n)
    theory[np.argsort(rs, kind="stable")] = quantiles
    ax.scatter(theory, rs, s=14, facecolors="none", edgecolors="black", lw=0.7)
    y1, y2 = np.quantile(rs, [0.25, 0.75])  # R's qqline: through the quartiles (type 7)
    x1, x2 = stats.norm.ppf([0.25, 0.75])
    slope = (y2 - y1) / (x2 - x1)
    grid = np.array([theory.min(), theory.max()])
    ax.plot(grid, y1 + slope * (grid - x1), color="grey", ls=":", lw=1)
    _label_top(ax, theory, rs, np.abs(rs), labels, id_n)
    ax.set_xlabel("Theoretical Quantiles")
    ax.set_ylabel("Standardized residuals")


def _draw_scale_location(ax: Any, d: dict[str, Any], id_n: int) -> None:
    keep = d["keep"]
    x, rs = d["fitted"][keep], d["std"][keep]
    y = np.sqrt(np.abs(rs))
    ax.scatter(x, y, s=14, facecolors="none", edgecolors="black", lw=0.7)
    _smooth(ax, x, y)
    _label_top(ax, x, y, np.abs(rs), d["labels"][keep], id_n)
    ax.set_xlabel("Fitted values")
    ax.set_ylabel("sqrt(|Standardized residuals|)")


def _draw_cooks(ax: Any, d: dict[str, Any], id_n: int) -> None:
    cooks = d["cooks"]
    obs = np.arange(1, cooks.size + 1)
    ax.scatter(obs, cooks, s=0)  # the points, for the data (the stems are the picture)
    ax.vlines(obs, 0, cooks, color="black", lw=1)
    _label_top(ax, obs, cooks, np.nan_to_num(cooks, nan=-np.inf), d["labels"], id_n)
    ax.set_xlabel("Obs. number")
    ax.set_ylabel("Cook's distance")


def _draw_resid_leverage(ax: Any, d: dict[str, Any], id_n: int) -> None:
    keep = d["keep"]
    h, rs = d["hat"][keep], d["std"][keep]
    ax.scatter(h, rs, s=14, facecolors="none", edgecolors="black", lw=0.7)
    _smooth(ax, h, rs)
    lo, hi = h.min(), h.max()
    grid = np.linspace(max(lo, hi / 100.0), hi * 1.05 if hi * 1.05 < 1 else hi, 101)
    for level in (0.5, 1.0):
        bound = np.sqrt(level * d["p"] * (1.0 - grid) / grid)
        ax.plot(grid, bound, color="tab:red", ls="--", lw=0.8)
        ax.plot(grid, -bound, color="tab:red", ls="--", lw=0.8)
    ax.set_ylim(*_padded(rs))
    ax.axhline(0, color="grey", ls=":", lw=0.8)
    _label_top(ax, h, rs, np.nan_to_num(d["cooks"][keep], nan=-np.inf), d["labels"][keep], id_n)
    ax.set_xlabel("Leverage")
    ax.set_ylabel("Standardized residuals")


def _padded(v: Any) -> tuple[float, float]:
    lo, hi = float(np.nanmin(v)), float(np.nanmax(v))
    pad = 0.08 * (hi - lo or 1.0)
    return lo - pad, hi + pad


_DRAW = {1: _draw_resid_fitted, 2: _draw_qq, 3: _draw_scale_location, 4: _draw_cooks,
         5: _draw_resid_leverage}


def added_variable(fit: Any, column: str) -> tuple[Any, Any, float]:
    """The data of an added-variable (partial regression) plot of design column ``column``.

    The residuals of √w y and of √w x_j on the other columns of √w X (intercept included);
    by Frisch–Waugh–Lovell the least-squares slope through them is the coefficient of
    x_j, and their residuals are the fit's weighted residuals.

    Returns
    -------
    x_resid, y_resid : ndarray, shape (n_obs,)
    slope : float
        The coefficient of ``column`` (OLS).

    Examples
    --------
    >>> import numpy as np
    >>> import attnreg as ar
    >>> from attnreg.demo import longley_frame
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED", data=longley_frame())
    >>> x, y, slope = added_variable(fit, "UNEMP")
    >>> bool(np.isclose((x @ y) / (x @ x), fit.coef["UNEMP"]))
    True
    """
    design = getattr(fit, "design", None)
    rule = getattr(fit, "rule", None)
    if design is None or rule is None or not rule.least_squares:
        raise OptionError("added-variable plots need an OLS/WLS fit (the slope equals the "
                          "coefficient only for least squares; method "
                          f"{getattr(fit, 'method', None)!r} is not unpenalised least squares)")
    names = list(design.column_names)
    if column not in names:
        raise OptionError(f"column must be one of the design columns {names}, however: "
                          f"{column=}")
    j = names.index(column)
    if column in fit.aliased:
        raise OptionError(f"column {column!r} is aliased: it has no coefficient to plot")
    if design.intercept and j == 0:
        raise OptionError("column must be a predictor, not the intercept")
    sw = np.sqrt(design.weights) if design.weights is not None else np.ones(design.n_obs)
    X = design.X * sw[:, None]
    others = [k for k in range(len(names)) if k != j and names[k] not in fit.aliased]
    y = design.y * sw
    x = X[:, j]
    if others:
        Q, _ = np.linalg.qr(X[:, others])
        y = y - Q @ (Q.T @ y)
        x = x - Q @ (Q.T @ x)
    return x, y, float(fit.coef[column])


def plot_added_variable(fit: Any, column: str, ax: Any = None, label_top: int = 2) -> Any:
    """Added-variable (partial regression) plot of one design column, as ``car::avPlot``.

    Points are the residuals of √w y against those of √w x_j on the other columns
    (:func:`added_variable`); the line through the origin has the coefficient of x_j as
    its slope. The ``label_top`` points most extreme in each direction are labelled.

    Parameters
    ----------
    fit : LinearResults
        An OLS/WLS fit.
    column : str
        A design column name (a factor level's column such as ``"C(g)[T.b]"``).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
        ``collections[0]`` the points, ``lines[0]`` the fitted line.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import numpy as np
    >>> import attnreg as ar
    >>> from attnreg.demo import longley_frame
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED", data=longley_frame())
    >>> ax = plot_added_variable(fit, "ARMED")
    >>> lx, ly = ax.lines[0].get_data()
    >>> bool(np.isclose((ly[1] - ly[0]) / (lx[1] - lx[0]), fit.coef["ARMED"]))
    True
    """
    x, y, slope = added_variable(fit, column)
    ax = _axes(ax)
    ax.scatter(x, y, s=14, facecolors="none", edgecolors="black", lw=0.7)
    grid = np.array([x.min(), x.max()])
    ax.plot(grid, slope * grid, color="tab:blue", lw=1.2)
    labels = fit.design.row_labels
    for score in (x, y):
        order = np.argsort(score, kind="stable")
        for j in np.r_[order[:1], order[-1:]][: 2 * label_top]:
            ax.annotate(str(labels[j]), (x[j], y[j]), fontsize=8)
    others = "others"
    ax.set_xlabel(f"{column} | {others}")
    ax.set_ylabel(f"{fit.design.response_name} | {others}")
    ax.set_title(f"Added-variable plot: slope {slope:.4g}")
    return ax
