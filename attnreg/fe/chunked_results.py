"""The result of a fixed-effects fit of data read chunk by chunk (files, arrow, polars, dask).

A :class:`ChunkedFixedEffectsResults` is the :class:`~attnreg.large.results.ChunkedResults`
of the residualised design (:mod:`attnreg.fe.chunk_spec`) with what the Frisch–Waugh–Lovell
theorem does not carry put back, as :class:`~attnreg.fe.results.FixedEffectsResults` does
in memory: the fixed-effect parameters in the degrees of freedom, R² on the response's own
total sum of squares (the residualised fit's is the within R²), fixest's small-sample
correction of cluster covariances, and the fixed-effects lines of the summary.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import OptionError
from attnreg.fe.demean import FixedEffects
from attnreg.fe.effects import normalise
from attnreg.fe.ssc import check_ssc
from attnreg.formula.parts import FixedEffectTerm
from attnreg.large.results import ChunkedResults

__all__ = ["ChunkedAbsorbed", "ChunkedFixedEffectsResults"]

#: covariances that need every row's leverage, which includes the fixed effects' own part
NEEDS_FE_LEVERAGE = ("HC2", "HC3")


@dataclass(frozen=True)
class ChunkedAbsorbed:
    """What a chunked fit absorbed (the fields of
    :class:`~attnreg.fe.results.AbsorbedEffects` that need no rows).

    Attributes
    ----------
    fe : FixedEffects
        The fixed effects over the combinations of levels in the fit (``fe.n_levels``:
        levels per fixed effect; its codes are per combination, not per row).
    terms : tuple of FixedEffectTerm
    n_redundant : int
        Levels that are not parameters (:func:`attnreg.fe.effects.redundant_levels`).
    n_missing : dict of str to int
        Rows left out because a fixed effect was missing, by term.
    n_singletons : int
        Rows removed as singletons (``fixef_rm="singleton"``).
    n_combinations : int
        Distinct combinations of levels in the fit (the size of pass A's table).
    effects : ndarray, shape (n_levels_total, 1 + n_coef)
        α of the response and of each regressor, as on the rows.
    orthogonality, floor : float
        The demeaning's accuracy and its rounding floor.
    converged : bool
    iterations : int
    tss : float
        Σ w (y − ȳ)² over the fitted rows.
    weights, counts : ndarray, shape (n_combinations,), or None
        Σ w and the row count of each combination in the fit: D'WD of the rows is that of
        the combinations weighted by ``weights`` (:mod:`attnreg.fe.chunked_leverage`).
    """

    fe: FixedEffects
    terms: tuple[FixedEffectTerm, ...]
    n_redundant: int
    n_missing: dict[str, int]
    n_singletons: int
    n_combinations: int
    effects: Any = field(repr=False)
    orthogonality: float
    floor: float
    converged: bool
    iterations: int
    tss: float
    weights: Any = field(default=None, repr=False)
    counts: Any = field(default=None, repr=False)

    @property
    def n_params(self) -> int:
        """Parameters the fixed effects add: Σ levels − redundant levels."""
        return int(sum(self.fe.n_levels)) - self.n_redundant


@dataclass(frozen=True)
class ChunkedFixedEffectsResults(ChunkedResults):
    """A regression with absorbed fixed effects fitted chunk by chunk
    (``attnreg("y ~ x | firm + year", "panel/*.parquet")``). Immutable.

    Coefficients, covariances (classical, HC0, HC1, HAC, 1- and multi-way cluster,
    Driscoll–Kraay), degrees of freedom, R², within R², ``tidy()``, ``glance()`` and the
    summary's fixed-effects lines, ``fixef()`` and ``predict()`` are those of the in-memory fit
    (:class:`~attnreg.fe.results.FixedEffectsResults`), and so are HC2 and HC3 (each row's
    leverage on the fixed effects from pass A's table, :mod:`attnreg.fe.chunked_leverage`)
    and the confidence and prediction intervals (:mod:`attnreg.fe.chunked_intervals`). The
    attention view is refused.

    Attributes
    ----------
    absorbed : ChunkedAbsorbed
    ssc : {"fixest", "dummy"}
        Small-sample convention of cluster covariances (:mod:`attnreg.fe.ssc`).
    """

    absorbed: Any = field(default=None, repr=False)
    ssc: str = "fixest"

    @property
    def fixed_effect_names(self) -> tuple[str, ...]:
        """The absorbed fixed-effect terms, as ``etable`` shows them."""
        return tuple(self.absorbed.fe.names)

    # ------------------------------------------------------------ degrees of freedom
    @property
    def edf(self) -> float:
        """Parameters of the dummy-variable regression: the slopes' rank and the fixed
        effects' levels less the redundant ones."""
        return float(self.filtered.edf + self.absorbed.n_params)

    @property
    def df_model(self) -> float:
        """Slopes estimated (the fixed effects not counted)."""
        return float(self.filtered.edf)

    # ------------------------------------------------------------ fit
    @property
    def tss(self) -> float:
        """Total sum of squares of the response about its (weighted) mean."""
        return float(self.absorbed.tss)

    @property
    def adj_r_squared(self) -> float:
        """1 − (1 − R²)(n − 1)/df_resid, as fixest and the dummy-variable regression."""
        if not self._df_ok:
            return float("nan")
        return 1.0 - (1.0 - self.r_squared) * (self.nobs - 1.0) / self.df_resid

    @cached_property
    def within_r_squared(self) -> float:
        """R² of the residualised response on the residualised regressors."""
        return 1.0 - self.rss / float(self.spectrum.yss)

    @property
    def adj_within_r_squared(self) -> float:
        """1 − (1 − within R²)(n − K_fe)/df_resid, K_fe the fixed-effect parameters."""
        n_fe = self.absorbed.n_params
        return 1.0 - (1.0 - self.within_r_squared) * (self.nobs - n_fe) / self.df_resid

    @cached_property
    def f_test(self) -> Any:
        """The F test of the slopes: on the within sums of squares (classical), else the
        Wald F (as the in-memory fit)."""
        from scipy import stats

        from attnreg.linear.fitstats import FTest

        df1, df2 = self.df_model, self.df_resid
        if df1 <= 0 or not self._df_ok or not self.vcov_spec.estimator.classical:
            return ChunkedResults.f_test.func(self)  # type: ignore[attr-defined]
        rss, tss = self.rss, float(self.spectrum.yss)
        if rss == 0.0:
            return FTest(float("inf"), float(df1), float(df2), 0.0)
        stat = ((tss - rss) / df1) / (rss / df2)
        return FTest(float(stat), float(df1), float(df2), float(stats.f.sf(stat, df1, df2)))

    # ------------------------------------------------------------ covariance
    def with_vcov(self, kind: str = "classical", *, maxlags: int | None = None,
                  adjust: bool = False, data: Any = None, progress: bool = False,
                  **options: Any) -> ChunkedFixedEffectsResults:
        """The same fit under another covariance, from one more pass over the rows (see
        :meth:`ChunkedResults.with_vcov`); ``ssc=`` (``"fixest"`` or ``"dummy"``) sets the
        small-sample convention of cluster covariances (:mod:`attnreg.fe.ssc`); fixest's
        reads the rows once more to find the fixed effects nested in the clusters."""
        from attnreg.fe.chunked_vcov import fe_chunked_vcov

        ssc = check_ssc(options.pop("ssc", self.ssc))
        base = self._with_leverage() if kind in NEEDS_FE_LEVERAGE else self
        return fe_chunked_vcov(base, kind, ssc, maxlags=maxlags, adjust=adjust, data=data,
                               progress=progress, **options)

    @cached_property
    def _level_solver(self) -> Any:
        """Exact solves with the fixed effects' normal equations D'WD, on pass A's table of
        combinations weighted by their Σ w (:class:`attnreg.fe.solve.LevelSolver`)."""
        from attnreg.fe.solve import LevelSolver

        return LevelSolver(self.absorbed.fe, self.absorbed.weights)

    def _with_leverage(self) -> ChunkedFixedEffectsResults:
        """The same fit whose passes over the rows compute the hat values of the
        dummy-variable regression (for HC2 and HC3): each combination's leverage on the fixed
        effects (:func:`attnreg.fe.chunked_leverage.combination_leverage`, one exact solve per
        fixed-effect level involved, on pass A's table) travels with the spec."""
        from attnreg.fe.chunked_leverage import combination_leverage

        spec: Any = self.spec
        if spec.leverage is not None:
            return self
        a = self.absorbed
        full = np.zeros(len(spec.in_fit))
        full[spec.in_fit] = combination_leverage(a.fe, a.weights, a.counts,
                                                 solver=self._level_solver)
        return self._with(spec=dataclasses.replace(spec, leverage=full))

    def _with(self, **changes: Any) -> ChunkedFixedEffectsResults:
        """A copy with fields changed (cached statistics recomputed)."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        values.update(changes)
        out = ChunkedFixedEffectsResults(**values)
        if "_source_description" in self.__dict__:
            object.__setattr__(out, "_source_description", self.__dict__["_source_description"])
        return out

    # ------------------------------------------------------------ fixed effects
    def fixef(self) -> dict[str, pd.Series]:
        """The estimated fixed effects with fixest's normalisation, one Series per term (as
        :meth:`attnreg.fe.results.FixedEffectsResults.fixef`): the effects α of the
        residual y − X b, from those of the response and of each regressor on pass A's
        table (D α is linear in the column)."""
        fe = self.absorbed.fe
        b = np.where(np.isnan(self.filtered.coef), 0.0, self.filtered.coef)
        eff = self.absorbed.effects
        alpha = normalise(fe, eff[:, 0] - eff[:, 1:] @ b)
        o = fe.offsets
        return {name: pd.Series(alpha[o[k]:o[k + 1]], index=fe.levels[k], name=name)
                for k, name in enumerate(fe.names)}

    # ------------------------------------------------------------ refused
    def predict(self, newdata: Any, *, interval: str = "none", level: float = 0.95,
                unseen: str = "nan", data: Any = None, progress: bool = False) -> Any:
        """Predictions for new rows with the estimated fixed effects added, and their
        confidence or prediction intervals, as the in-memory fit's
        (:func:`attnreg.fe.chunked_predict.predict_chunked_fe`): classical intervals from
        the fit's tables, HC0–HC3 and cluster ones from one more pass over the rows
        (``data=``: the data again, for a fit that does not keep its source);
        ``unseen="nan"`` (NaN and a warning naming the level) or ``"error"``."""
        from attnreg.fe.chunked_predict import predict_chunked_fe

        return predict_chunked_fe(self, newdata, interval=interval, level=level, unseen=unseen,
                                  data=data, progress=progress)

    def attention(self, newdata: Any, *, k: int = 10, data: Any = None) -> Any:
        """Not available for chunked fixed-effects fits (OptionError)."""
        raise OptionError("the attention view of a chunked fit with absorbed fixed effects "
                          "is not available: fit in memory and write the fixed effects as "
                          "C(firm)")

    # ------------------------------------------------------------ reports
    def glance(self) -> pd.DataFrame:
        """``glance()`` with ``within.r.squared`` and ``adj.within.r.squared``."""
        out = ChunkedResults.glance(self)
        out["within.r.squared"] = self.within_r_squared
        out["adj.within.r.squared"] = self.adj_within_r_squared
        return out

    def summary(self) -> Any:
        """The chunked fit's report with the absorbed fixed effects and the within R²."""
        from attnreg.fe.report import fe_lines
        from attnreg.report.sections import Lines
        from attnreg.report.summary import Summary

        base = ChunkedResults.summary(self)
        sections = list(base.sections)
        notes = [line for line in sections[-1].lines if not line.startswith("Leverage")]
        sections[-1] = Lines(tuple(notes), lead_blank=True)
        sections.insert(-1, Lines(fe_lines(self), lead_blank=False))  # type: ignore[arg-type]
        return Summary(title="attnreg ols fit with absorbed fixed effects (chunked)",
                       sections=tuple(sections))

    def __repr__(self) -> str:
        coefs = ", ".join(f"{n}={v:.4g}" for n, v in self.coef.items())
        return (f"<ChunkedFixedEffectsResults ols: {coefs} | "
                f"{' + '.join(self.fixed_effect_names)}; n={self.nobs}>")

