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

With ``se="subsample"`` the standard errors come instead from ``reps`` refits, each on half
the training rows drawn without replacement (no duplicated rows, so the leave-one-out
training stays honest) with the fit's own options (the penalty, early stopping and split
re-chosen): the delete-n/2 jackknife (Shao & Wu 1989), SE² = (1/B) Σ_b (θ_b − θ̄)², with θ_b
the APE of refit b over its own rows. It accounts for the estimation of Ω, α and the base,
approximately: a half-sample fit smooths a little more than the full one.

**Partial dependence** (Friedman 2001): PD_k(g) = (1/N) Σ_i ŷ(x_i with x_ik := g), the
average prediction over the training rows with column k set to g. It acts on the design
columns: for a term built from several columns (``x + I(x**2)``, factor dummies) the
other columns are *not* updated.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg._warn import warn_user
from attnreg.exceptions import ConvergenceWarning, OptionError
from attnreg.softmax.model import marginal_effects

__all__ = ["GRID_POINTS", "SE_METHODS", "average_partial_effects", "partial_dependence",
           "subsample_std_err"]

#: the ``se`` choices of :meth:`SoftmaxResults.effects`
SE_METHODS = ("rows", "subsample")

#: options of the original fit that a refit must not reuse
_NOT_REUSED = ("warm_start", "progress")

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


def subsample_std_err(X: FloatArray, y: FloatArray, options: dict[str, Any], reps: int,
                      seed: int) -> FloatArray:
    """Delete-n/2 jackknife standard errors of the APEs from ``reps`` half-sample refits, (P,).

    Parameters
    ----------
    X : (N, P) training predictors, original scale; y : (N,) outcome.
    options : the keyword arguments of the original :func:`fit_softmax` call.
    reps : refits B (at least 2); seed : seeds the half samples.
    """
    from attnreg.softmax.fit import fit_softmax

    if isinstance(reps, bool) or not isinstance(reps, (int, np.integer)) or reps < 2:
        raise OptionError(f"reps must be an integer of at least 2, however: {reps=}")
    opts = {k: v for k, v in options.items() if k not in _NOT_REUSED}
    rng = np.random.default_rng(seed)
    n = X.shape[0]
    theta = np.empty((int(reps), X.shape[1]))
    failed = 0
    for b in range(int(reps)):  # one fit per replication
        idx = np.sort(rng.choice(n, n // 2, replace=False))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            refit = fit_softmax(X[idx], y[idx], **opts)
        failed += any(issubclass(w.category, ConvergenceWarning) for w in caught)
        theta[b] = marginal_effects(refit, X[idx], average=True)
    if failed:
        warn_user(f"{failed} of {reps} half-sample refits did not converge (max_iter="
                  f"{opts.get('max_iter', 300)}); their partial effects are used as they are",
                  ConvergenceWarning)
    return theta.std(axis=0)


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
