"""Formula front end and results of softmax attention regression (``method="softmax"``).

The estimator itself lives in :mod:`attnreg.softmax` (a pure fitter on arrays). This module
builds the design from the formula (dropping the intercept column: a softmax over training
rows is invariant to it), calls the fitter, and wraps the fit in a result object in the same
house style as :class:`attnreg.linear.results.LinearResults`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.views.attention import AttentionWeights
from attnreg.formula.design import Design
from attnreg.results_base import PredictorResults
from attnreg.exceptions import OptionError
from attnreg.report import Summary
from attnreg.report.modelfigures import SoftmaxFigures
from attnreg.report.sections import Call, Coefficients, Lines, residuals_section


def check_softmax_options(options: dict[str, Any]) -> None:
    """Validate ``fit_softmax`` keyword arguments (names and values) without fitting."""
    import inspect

    from attnreg.softmax.fit import fit_softmax
    from attnreg.softmax.model import LAM_GRID
    from attnreg.softmax.options import check_options

    params = inspect.signature(fit_softmax).parameters
    defaults = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty}
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise OptionError(f"unknown option(s) for method 'softmax': {', '.join(unknown)}; "
                          f"valid: {', '.join(sorted(defaults))}")
    check_options(**{**defaults, **options, "lam_grid": LAM_GRID})


@dataclass(frozen=True)
class SoftmaxWeights:
    """``weight_fn`` of :class:`~attnreg.views.attention.AttentionWeights` for a softmax fit.

    A class rather than a closure, so that attention weights pickle.

    Attributes
    ----------
    fit : attnreg.softmax.SoftmaxFit
    X : ndarray, shape (J, n_predictors)
        The query rows (predictors on their original scale).
    training : bool
        The queries are the training rows: each is masked from attending to itself.
    chunk_size : int or None
        Passed to the fit's weight computation.
    """

    fit: Any
    X: FloatArray = field(repr=False)
    training: bool = False
    chunk_size: int | None = None

    def __call__(self, start: int, stop: int) -> FloatArray:
        """Weights of queries ``start:stop``, shape (stop − start, N)."""
        if not self.training:
            return self.fit.weights(self.X[start:stop], chunk_size=self.chunk_size)
        # training queries never attend to themselves: per head, the softmax over i ≠ j
        # is p_ji / (1 − p_jj); then the heads are mixed
        p = self.fit.head_weights(self.X[start:stop], chunk_size=self.chunk_size)  # (M, J, N)
        rows = np.arange(stop - start)
        self_w = p[:, rows, start + rows].copy()
        p[:, rows, start + rows] = 0.0
        p /= (1.0 - self_w)[:, :, None]
        return np.einsum("m,mjn->jn", self.fit.alpha, p)


@dataclass(frozen=True)
class SoftmaxResults(PredictorResults):
    """A fitted softmax attention regression. Immutable; derived quantities are cached.

    Attributes
    ----------
    design : Design
        The model frame.
    fit : attnreg.softmax.SoftmaxFit
        The fitted heads, mixture weights and standardisation.
    call : str
        The call, for reports.
    options : dict
        The keyword arguments of :func:`~attnreg.softmax.fit_softmax` (for refits).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame(rng.uniform(-2, 2, (200, 2)), columns=["x1", "x2"])
    >>> df["y"] = np.sin(2 * df.x1) + 0.1 * rng.standard_normal(200)
    >>> fit = ar.attnreg("y ~ x1 + x2", df, method="softmax", seed=0, progress=False)
    >>> round(fit.r_squared, 2), round(ar.attnreg("y ~ x1 + x2", df).r_squared, 2)   # vs OLS
    (0.96, 0.06)
    >>> fit.attention(df.iloc[:2]).diagnostics["weight_sum"].round(10).tolist()     # convex
    [1.0, 1.0]
    """

    design: Design
    fit: Any = field(repr=False)
    call: str = ""
    method: str = "softmax"
    options: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def r_squared(self) -> float:
        """In-sample R²."""
        y = self.design.y
        return 1.0 - float(np.sum(self.resid.to_numpy() ** 2) / np.sum((y - y.mean()) ** 2))

    @property
    def val_r2(self) -> float:
        """R² on the validation split carved from the training rows."""
        return float(self.fit.val_r2)

    @property
    def loo_r2(self) -> float:
        """Leave-one-out R²: each training row predicted without attending to itself."""
        return float(self.fit.loo_r2)

    @property
    def sigma(self) -> float:
        """Root mean squared in-sample residual."""
        return float(np.sqrt(np.mean(self.resid.to_numpy() ** 2)))

    def attention(self, newdata: Any = None, *, chunk_size: int | None = None) -> AttentionWeights:
        """Convex attention weights of each prediction over the training rows.

        With ``value="ridge"`` the weights average the residuals of the ridge base and the
        prediction is base + Σ ω r; with ``value="y"`` they average y. Without ``newdata``
        the queries are the training rows, each masked from attending to itself.
        """
        if newdata is None:
            return self.attention_of(None, self.design.row_labels, chunk_size)
        X, labels = self._query(newdata)
        return self.attention_of(X, labels, chunk_size)

    def attention_of(self, X: FloatArray | None, labels: pd.Index,
                     chunk_size: int | None = None) -> AttentionWeights:
        """Attention weights of query rows ``X`` (predictors, original scale) over the training
        rows; ``X=None``: the training rows themselves, each masked from attending to itself."""
        fit = self.fit
        training = X is None
        queries = self._X if X is None else X
        return AttentionWeights(
            weight_fn=SoftmaxWeights(fit, queries, training=training, chunk_size=chunk_size),
            n_queries=queries.shape[0], query_labels=labels, train_labels=self.design.row_labels,
            y_train=fit.attended_values, kind="softmax", chunk_size=chunk_size,
            base=fit.base(queries))

    @cached_property
    def heads(self) -> pd.DataFrame:
        """One row per head: mixture weight α, trace and effective rank of Ω_m, largest eigenvalue."""
        rows = []
        for m in range(self.fit.n_heads):
            ev = np.linalg.eigvalsh(self.metric(m, scale="standardized").to_numpy())[::-1]
            ev = np.clip(ev, 0.0, None)
            eff = float(ev.sum() ** 2 / np.sum(ev**2)) if ev.sum() > 0 else 0.0
            rows.append({"alpha": float(self.fit.alpha[m]), "trace": float(ev.sum()),
                         "top_eigenvalue": float(ev[0]), "effective_rank": eff})
        return pd.DataFrame(rows, index=pd.Index([f"head{m + 1}" for m in range(len(rows))],
                                                 name="head"))

    def metric(self, head: int = 0, *, scale: str = "original") -> pd.DataFrame:
        """Ω_m = L_m L_m' as a DataFrame over the predictors.

        ``scale="standardized"``: the metric of the standardised predictors (what is fitted);
        ``"original"``: D⁻¹ Ω D⁻¹, the metric of centred predictors in their own units.
        """
        if scale not in ("original", "standardized"):
            raise OptionError(f"scale must be 'original' or 'standardized', however: {scale=}")
        if not 0 <= head < self.fit.n_heads:
            raise OptionError(f"head must be in [0, {self.fit.n_heads}), however: {head=}")
        L = self.fit.factors[head]
        omega = L @ L.T
        if scale == "original":
            d = 1.0 / self.fit.x_scale
            omega = omega * d[:, None] * d[None, :]
        return pd.DataFrame(omega, index=self.names, columns=self.names)

    @cached_property
    def _jackknife(self) -> Any:
        from attnreg.softmax.jackknife import JackknifePlus

        return JackknifePlus.of(self.fit)

    def predict(self, newdata: Any = None, *, interval: str = "none",
                level: float = 0.95) -> Any:
        """Predictions for new rows (or the training rows), optionally with intervals.

        Parameters
        ----------
        newdata : DataFrame or dict, optional
            New rows (None: the training rows). Rows with missing values give NaN.
        interval : {"none", "jackknife+"}
            ``"jackknife+"``: jackknife+ prediction intervals with the metric held fixed
            (:mod:`attnreg.softmax.jackknife`): each training row's leave-one-out
            prediction and residual come from the fitted weights (ridge base refitted
            without the row, exactly); the metric Ω, α and the penalties are *not* refitted.
        level : float
            Coverage of the interval, strictly between 0 and 1.

        Returns
        -------
        Series (``interval="none"``) or DataFrame with columns ``fit``, ``lwr``, ``upr``.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> import attnreg as ar
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame(rng.uniform(-2, 2, (150, 2)), columns=["x1", "x2"])
        >>> df["y"] = np.sin(2 * df.x1) + 0.1 * rng.standard_normal(150)
        >>> fit = ar.attnreg("y ~ x1 + x2", df, method="softmax", seed=0, max_iter=60)
        >>> band = fit.predict(df.iloc[:3], interval="jackknife+", level=0.9)
        >>> list(band.columns), bool((band.lwr < band.fit).all() and (band.fit < band.upr).all())
        (['fit', 'lwr', 'upr'], True)
        >>> list(fit.effects().columns)
        ['estimate', 'std_err', 'sd_across_rows']
        >>> fit.partial_dependence("x1", grid=[-1.0, 0.0, 1.0]).shape
        (3, 2)
        """
        from attnreg.inference.tstats import check_level
        from attnreg.softmax.jackknife import INTERVALS, interval_frame

        if interval not in INTERVALS:
            raise OptionError(f"interval must be one of {INTERVALS} for method 'softmax', "
                              f"however: {interval=}")
        check_level(level)
        if interval == "none":
            return super().predict(newdata)
        return interval_frame(self, newdata, level)

    def marginal_effects(self, newdata: Any = None) -> pd.DataFrame:
        """Average partial effects ∂ŷ/∂x (autograd, original scale) over the rows of ``newdata``
        (default: the training rows), with their standard deviation across rows."""
        from attnreg.softmax.model import marginal_effects

        X, _ = self._query(newdata)
        per_row = marginal_effects(self.fit, X, average=False)
        return pd.DataFrame({"average_partial_effect": per_row.mean(axis=0),
                             "sd_across_rows": per_row.std(axis=0)}, index=self.names)

    def effects(self, newdata: Any = None, *, se: str = "rows", reps: int = 20,
                seed: int = 0) -> pd.DataFrame:
        """Average partial effects with standard errors (:mod:`attnreg.softmax.effects`).

        ``estimate``: the mean over the rows of ``newdata`` (default: the training rows) of
        ∂ŷ/∂x_k (autograd, original scale); ``sd_across_rows``; ``std_err``:

        - ``se="rows"``: sd / √J, the ideal bootstrap over rows of the per-row derivatives
          holding the fit fixed; it ignores the estimation of Ω, α and the base.
        - ``se="subsample"``: ``reps`` refits on half the training rows (seeded by ``seed``),
          the delete-n/2 jackknife; it accounts for the estimation of the fit, at the cost
          of ``reps`` fits.
        """
        from attnreg.softmax.effects import SE_METHODS, average_partial_effects, subsample_std_err

        if se not in SE_METHODS:
            raise OptionError(f"se must be one of {SE_METHODS}, however: {se=}")
        X, _ = self._query(newdata)
        out = average_partial_effects(self.fit, X, self.names)
        if se == "subsample":
            if newdata is not None:
                raise OptionError("se='subsample' averages each refit over its own training "
                                  "rows; call effects(se='subsample') without newdata")
            out["std_err"] = subsample_std_err(self._X, self.design.y, self.options, reps, seed)
        return out

    def partial_dependence(self, column: str, grid: Any = None) -> pd.DataFrame:
        """Partial-dependence curve of one predictor (design column): the mean prediction over
        the training rows with ``column`` set to each grid value (default: 20 points from its
        5 % to 95 % quantile). Columns: ``column`` and ``partial_dependence``."""
        from attnreg.softmax.effects import partial_dependence

        return partial_dependence(self.fit, self._X, self.names, column, grid)

    def plot(self, kind: str = "partial", *, columns: list[str] | None = None, grid: Any = None,
             ax: Any = None) -> Any:
        """A figure of the fit; ``kind="partial"``: partial-dependence curves, one panel per
        predictor (:func:`attnreg.softmax.plots.plot_partial`). Returns the Axes."""
        from attnreg.softmax.plots import PLOT_KINDS, plot_partial

        if kind not in PLOT_KINDS:
            raise OptionError(f"kind must be one of {PLOT_KINDS}, however: {kind=}")
        return plot_partial(self, columns, grid, ax)

    def summary(self) -> Summary:
        """Report: heads, partial effects, fit statistics and convergence (no standard errors)."""
        fit = self.fit
        table = self.marginal_effects().rename(columns={
            "average_partial_effect": "APE", "sd_across_rows": "SD across rows"})
        heads = self.heads
        figures = SoftmaxFigures(
            n_heads=int(fit.n_heads), value=fit.value, kernel=fit.kernel, lam=float(fit.lam),
            alpha=tuple(heads["alpha"].astype(float)),
            effective_rank=tuple(heads["effective_rank"].astype(float)),
            r_squared=float(self.r_squared), val_r2=float(self.val_r2),
            loo_r2=float(self.loo_r2), nobs=int(self.nobs), n_iter=int(fit.n_iter),
            n_evals=int(fit.n_evals), converged=bool(fit.converged),
            mask_self=bool(fit.mask_self),
            n_landmarks=0 if fit.landmarks is None else int(fit.landmarks.centers.shape[0]),
            n_neighbours=int(fit.n_neighbours),
            effective_neighbours=float(fit.effective_neighbours))
        return Summary("attnreg softmax fit", (
            Call(self.call), residuals_section(self.resid.to_numpy()),
            Lines(("Average partial effects (autograd, original scale; not coefficients):",)),
            Coefficients(table, stars=False, heading=False), figures))

    def __repr__(self) -> str:
        return (f"<attnreg softmax fit: {self.design.formula}; n={self.nobs}; "
                f"{self.fit.n_heads} heads; LOO R²={self.loo_r2:.4f}>")
