"""Average partial effects and partial-dependence curves of a softmax attention fit.

**Average partial effects.** For predictor k, APE_k = (1/J) Σ_j ∂ŷ(x_j)/∂x_k: the derivative
of the fitted surface ŷ(x) = b(x) + Σ_m α_m Σ_i softmax_i(s_m(x, x_i)) v_i (the prediction
of :meth:`SoftmaxFit.predict`, every key visible, the training rows held fixed as keys and
values), by automatic differentiation in torch
(:func:`attnreg.softmax.model.marginal_effects`), on the original scale of the design
columns.

**Standard errors** (``std_err``): the ideal (B → ∞) nonparametric bootstrap over the J
rows of the per-row derivatives d_j, *holding the fit fixed*. For a mean this bootstrap has
a closed form, SE = sd(d) / √J with sd the population standard deviation (divisor J), so
no resampling is drawn. It measures only how the average varies with the rows averaged
over; it ignores the estimation of the metric Ω, α, the ridge base and the penalty (a
bootstrap over refits would account for them, at the cost of one fit per replication, and
is not offered). Read it as a lower bound on the sampling uncertainty of the APE.

**Partial dependence** (Friedman 2001): PD_k(g) = (1/N) Σ_i ŷ(x_i with x_ik := g), the
average prediction over the training rows with column k set to g. It acts on the design
columns: for a term built from several columns (``x + I(x**2)``, factor dummies) the
other columns are *not* updated.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.softmax.model import marginal_effects

__all__ = ["GRID_POINTS", "average_partial_effects", "partial_dependence"]

#: points of the default partial-dependence grid (5 % to 95 % quantiles of the column)
GRID_POINTS = 20


def average_partial_effects(fit: Any, X: FloatArray, names: list[str]) -> pd.DataFrame:
    """APEs, their standard errors holding the fit fixed, and the spread across rows.

    Parameters
    ----------
    fit : SoftmaxFit
    X : (J, P) rows to average over, original scale.
    names : P predictor names.

    Returns
    -------
    DataFrame, shape (P, 3)
        ``estimate`` (the APE), ``std_err`` (sd / √J, the ideal row bootstrap of the mean
        with the fit fixed) and ``sd_across_rows`` (sd of the per-row derivatives).
    """
    per_row = marginal_effects(fit, X, average=False)  # (J, P)
    sd = per_row.std(axis=0)
    return pd.DataFrame({"estimate": per_row.mean(axis=0),
                         "std_err": sd / np.sqrt(per_row.shape[0]),
                         "sd_across_rows": sd}, index=pd.Index(names, name="term"))


def _column(names: list[str], column: Any) -> int:
    if not isinstance(column, str) or column not in names:
        raise OptionError(f"column must name a predictor of the fit, however: {column=}; "
                          f"the predictors are {', '.join(map(repr, names))}")
    return names.index(column)


def _grid(x: FloatArray, grid: Any, column: str) -> FloatArray:
    if grid is None:
        return np.quantile(x, np.linspace(0.05, 0.95, GRID_POINTS))
    g = np.asarray(grid, dtype=np.float64).ravel() if np.ndim(grid) else np.array([])
    if g.size == 0 or not np.isfinite(g).all():
        raise OptionError(f"grid must be a non-empty sequence of finite numbers for {column!r}, "
                          f"however: {grid=}")
    return g


def partial_dependence(fit: Any, X: FloatArray, names: list[str], column: str,
                       grid: Any = None) -> pd.DataFrame:
    """Partial-dependence curve of one predictor: the mean prediction with the column set to g.

    Parameters
    ----------
    fit : SoftmaxFit
    X : (N, P) rows to average over (the training rows), original scale.
    names : P predictor names; column : the one to vary.
    grid : values of the column (default: :data:`GRID_POINTS` points from its 5 % to its
        95 % quantile over ``X``).

    Returns
    -------
    DataFrame, shape (G, 2)
        The grid (a column named ``column``) and ``partial_dependence``.
    """
    k = _column(names, column)
    g = _grid(X[:, k], grid, column)
    rows = X.copy()  # never the caller's array
    pd_values = np.empty(g.size)
    for t, value in enumerate(g):  # one prediction of all rows per grid point: memory O(N)
        rows[:, k] = value
        pd_values[t] = float(np.mean(fit.predict(rows)))
    return pd.DataFrame({column: g, "partial_dependence": pd_values})
