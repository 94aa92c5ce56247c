"""Results of a regression with absorbed fixed effects: a ``LinearResults`` of the demeaned
design, with what the Frisch–Waugh–Lovell theorem does not carry put back.

The slopes, residuals and every meat of a sandwich (HC0, cluster) of OLS on the residualised
y and X equal the dummy-variable regression's. Not carried, and corrected here: the residual
degrees of freedom and the number of parameters (the fixed-effect levels, less the redundant
ones), the leverages (h_i = h̃_i + w_i d_i'(D'WD)⁺d_i, :mod:`attnreg.fe.leverage`), the fitted
values (y − e), R² (on the response's own total sum of squares; the demeaned fit's is the
within R²), the small-sample corrections of cluster covariances (:mod:`attnreg.fe.ssc`), and
predictions, which add the estimated effects.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.fe.cr2 import fe_cr2_residuals
from attnreg.fe.cr2_df import FixedEffectsSatterthwaite
from attnreg.fe.demean import FixedEffects
from attnreg.fe.effects import normalise
from attnreg.fe.leverage import level_quadratic
from attnreg.fe.solve import LevelSolver
from attnreg.fe.ssc import check_ssc, fixest_cluster_middle
from attnreg.formula.design import Design
from attnreg.formula.parts import FixedEffectTerm
from attnreg.linear.results import LinearResults
from attnreg.inference.vcov.scorestats import group_score_sums

__all__ = ["AbsorbedEffects", "FixedEffectsResults"]


@dataclass(frozen=True)
class AbsorbedEffects:
    """What a fit absorbed, and how accurately.

    Attributes
    ----------
    fe : FixedEffects
        The levels of each fixed effect on the fitted rows.
    terms : tuple of FixedEffectTerm
        The fixed-effect terms as parsed from the formula.
    n_redundant : int
        Levels that are not parameters (:func:`attnreg.fe.effects.redundant_levels`).
    n_missing : dict of str to int
        Rows left out because a fixed effect was missing, by term.
    n_singletons : int
        Rows left out as singletons (``fixef_rm="singleton"``; 0 otherwise).
    effects : ndarray, shape (n_levels_total, 1 + n_coef)
        α of the response and of each regressor (v − r = D α).
    orthogonality : float
        The largest relative orthogonality of a residualised column to the fixed effects.
    floor : float
        Its rounding floor.
    converged : bool
        Whether the demeaning reached the data's accuracy.
    iterations : int
        Conjugate-gradient iterations of the demeaning.
    y : ndarray, shape (n_obs,)
        The response on the fitted rows (before demeaning).
    tss : float
        Its total sum of squares about the (weighted) mean.
    full_design : Design
        The design of the model part with its intercept (for predictions on new data).
    """

    fe: FixedEffects
    terms: tuple[FixedEffectTerm, ...]
    n_redundant: int
    n_missing: dict[str, int]
    n_singletons: int
    effects: FloatArray = field(repr=False)
    orthogonality: float
    floor: float
    converged: bool
    iterations: int
    y: FloatArray = field(repr=False)
    tss: float
    full_design: Design = field(repr=False)

    @property
    def n_params(self) -> int:
        """Parameters the fixed effects add: Σ levels − redundant levels."""
        return int(sum(self.fe.n_levels)) - self.n_redundant


@dataclass(frozen=True, repr=False)
class FixedEffectsResults(LinearResults):
    """A regression with absorbed fixed effects (``attnreg("y ~ x | firm + year", df)``).

    Everything of :class:`~attnreg.linear.results.LinearResults` (coefficients, ``vcov``,
    ``with_vcov``, tests, ``tidy``, ``glance``) is the dummy-variable regression's
    ``y ~ x + C(firm) + C(year)`` for the slopes; the fixed effects themselves are in
    :meth:`fixef`.

    ``design`` holds the demeaned response and regressors (what OLS was fitted on); the
    design as built from the model part is ``absorbed.full_design``.

    Attributes
    ----------
    absorbed : AbsorbedEffects
        The fixed effects, their counts and the demeaning's accuracy.
    ssc : {"fixest", "dummy"}
        Small-sample convention of cluster covariances (:mod:`attnreg.fe.ssc`).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"firm": rng.integers(0, 5, 60), "year": rng.integers(0, 4, 60),
    ...                    "x": rng.normal(size=60)})
    >>> df["y"] = 2 * df.x + df.firm + rng.normal(size=60)
    >>> fit = ar.attnreg("y ~ x | firm + year", df)
    >>> fit.names, fit.df_resid
    (['x'], 51.0)
    >>> fit  # doctest: +ELLIPSIS
    <attnreg ols fit: y ~ x | firm + year; n=60; x=...>
    """

    absorbed: AbsorbedEffects = field(repr=False)
    ssc: str = "fixest"

    @property
    def fixed_effect_names(self) -> tuple[str, ...]:
        """The absorbed fixed-effect terms (``("firm", "year")``), as ``etable`` shows them."""
        return self.absorbed.fe.names

    # ------------------------------------------------------------ degrees of freedom
    @property
    def edf(self) -> float:
        """Parameters of the dummy-variable regression: the slopes' rank and the fixed
        effects' levels less the redundant ones (tr of its hat matrix)."""
        return float(self.filtered.edf + self.absorbed.n_params)

    @property
    def df_model(self) -> float:
        """Slopes estimated (the fixed effects not counted)."""
        return float(self.filtered.edf)

    # ------------------------------------------------------------ fit
    @cached_property
    def fitted(self) -> pd.Series:
        """Fitted values of the full model (the fixed effects included): y − e."""
        return pd.Series(self.absorbed.y - self._resid_fit, index=self.design.row_labels,
                         name="fitted")

    @cached_property
    def tss(self) -> float:
        """Total sum of squares of the response about its (weighted) mean."""
        return self.absorbed.tss

    @cached_property
    def r_squared(self) -> float:
        """R² of the full model (fixed effects included): 1 − RSS/TSS."""
        return 1.0 - self.rss / self.absorbed.tss

    @property
    def adj_r_squared(self) -> float:
        """1 − (1 − R²)(n − 1)/df_resid, as R for the dummy-variable regression and fixest."""
        return 1.0 - (1.0 - self.r_squared) * (self.nobs - 1.0) / self.df_resid

    @cached_property
    def within_r_squared(self) -> float:
        """R² of the demeaned response on the demeaned regressors (fixest's within R²)."""
        return 1.0 - self._rss_s / self._tss_s

    @property
    def adj_within_r_squared(self) -> float:
        """1 − (1 − within R²)(n − K_fe)/df_resid, K_fe the fixed-effect parameters (fixest)."""
        n_fe = self.absorbed.n_params
        return 1.0 - (1.0 - self.within_r_squared) * (self.nobs - n_fe) / self.df_resid

    @cached_property
    def _level_solver(self) -> LevelSolver:
        """Exact solves with the fixed effects' normal equations D'WD (one factorisation,
        reused by the hat values and the prediction intervals)."""
        return LevelSolver(self.absorbed.fe, self.design.weights)

    @cached_property
    def _hat(self) -> FloatArray:
        """Hat values of the dummy-variable regression: the demeaned design's and the fixed
        effects' own (exactly 1 on the row of a level with a single row)."""
        fe = self.absorbed.fe
        own = level_quadratic(fe, self.design.weights, fe.codes, solver=self._level_solver)
        w = 1.0 if self.design.weights is None else self.design.weights
        h = np.asarray(LinearResults._hat.func(self) + w * own)  # type: ignore[attr-defined]
        single = np.zeros(fe.n_obs, dtype=bool)  # a level with one row fits it exactly
        for code, n in zip(fe.codes, fe.n_levels, strict=True):
            single |= np.bincount(code, minlength=n)[code] == 1
        return np.where(single, 1.0, h)

    # ------------------------------------------------------------ covariance
    @cached_property
    def _middle(self) -> FloatArray:
        spec = self.vcov_spec
        if spec.kind == "cluster" and spec.option("type") == "CR2" and self._df_ok:
            ids = spec.option("cluster")  # no small-sample factor (clubSandwich)
            v = fe_cr2_residuals(self, ids.codes[:, 0], ids.n_clusters[0])
            S = group_score_sums(self.spectrum, v, ids.codes[:, 0], ids.n_clusters[0])
            return np.asarray(S.T @ S)
        if self.ssc != "fixest" or spec.kind != "cluster" or not self._df_ok:
            return LinearResults._middle.func(self)  # type: ignore[attr-defined,no-any-return]
        return fixest_cluster_middle(self.spectrum, spec, sigma2=self._sigma2_s,
                                     resid_w=self._resid_ws, hat=np.full(self.nobs, np.nan),
                                     n_params=int(self.edf), fe=self.absorbed.fe)

    @cached_property
    def _cr2_parts(self) -> Any:
        """The CR2 parts of the Satterthwaite df and HTZ tests, with the full hat matrix
        (:class:`attnreg.fe.cr2_df.FixedEffectsSatterthwaite`)."""
        return FixedEffectsSatterthwaite(self)

    def with_vcov(self, kind: str = "classical", *, maxlags: int | None = None,
                  adjust: bool = False, **options: Any) -> Any:
        """A new result with another covariance (see ``LinearResults.with_vcov``); ``ssc=``
        (``"fixest"`` or ``"dummy"``) changes the small-sample convention of cluster
        covariances (:mod:`attnreg.fe.ssc`)."""
        ssc = check_ssc(options.pop("ssc", self.ssc))
        out = LinearResults.with_vcov(self, kind, maxlags=maxlags, adjust=adjust, **options)
        return dataclasses.replace(out, ssc=ssc)

    # ------------------------------------------------------------ fixed effects
    def fixef(self) -> dict[str, pd.Series]:
        """The estimated fixed effects with fixest's normalisation, one Series per term.

        In every fixed effect after the first, the first level (in sorted order) is 0 (per
        connected component for the second); the first fixed effect absorbs the rest.
        Their count per dimension is the length of each Series.
        """
        from attnreg.fe.predict import fixed_effects_of

        return fixed_effects_of(self)

    def predict(self, newdata: Any = None, *, interval: str = "none", level: float = 0.95,
                unseen: str = "nan") -> Any:
        """Predictions with the estimated fixed effects added (see
        :func:`attnreg.fe.predict.predict_fe`), with the dummy-variable fit's confidence or
        prediction intervals under the classical, HC0–HC3 or cluster covariance;
        ``unseen="nan"`` (default: NaN and a warning naming the unseen levels) or
        ``"error"``."""
        from attnreg.fe.predict import predict_fe

        return predict_fe(self, newdata, interval=interval, level=level, unseen=unseen)

    def augment(self, data: Any = None, newdata: Any = None, *, interval: str = "none",
                conf_level: float = 0.95, se_fit: bool = False) -> pd.DataFrame:
        """``LinearResults.augment`` (broom's frame) with the fixed effects in ``.fitted``;
        without ``data`` the variables are the response and regressors as given (not
        demeaned). Intervals and ``se_fit`` are not available here: use
        ``predict(interval=)``."""
        if interval != "none" or se_fit:
            raise OptionError("augment(interval=, se_fit=) is not available with absorbed "
                              "fixed effects: use fit.predict(newdata, interval='confidence')")
        out = LinearResults.augment(self, data, newdata, conf_level=conf_level)
        if data is None and newdata is None:
            full = self.absorbed.full_design
            out[full.response_name] = self.absorbed.y
            for j, name in enumerate(full.column_names):
                if name in out.columns:
                    out[name] = full.X[:, j]
        return out

    def attention(self, newdata: Any = None, *, chunk_size: int | None = None) -> Any:
        """Attention weights of each prediction over the training rows: those of the
        dummy-variable fit, fixed effects included (``weights @ y`` is :meth:`predict`; on the
        training rows, the hat matrix), with ``by_group()`` splitting each prediction's
        weight between its own level's rows and the others (:mod:`attnreg.fe.attention`).

        Returns
        -------
        FixedEffectsAttention
        """
        from attnreg.fe.attention import fixed_effects_attention

        return fixed_effects_attention(self, newdata, chunk_size=chunk_size)

    def attention_of(self, X: Any, labels: Any, chunk_size: int | None = None) -> Any:
        """Not available for fixed-effects fits (OptionError): the weights need the queries'
        levels, use :meth:`attention` with new rows."""
        raise OptionError("attention_of(X) of a fit with absorbed fixed effects needs the "
                          "rows' fixed-effect levels: use fit.attention(newdata)")

    @property
    def embedding(self) -> Any:  # type: ignore[override]
        """Not available for fixed-effects fits yet (OptionError): the fixed effects' part
        of the weights has no low-rank encoder."""
        raise OptionError("the embedding of a fit with absorbed fixed effects is not "
                          "available yet: use fit.attention(newdata), or write the fixed "
                          "effects as C(firm)")

    def diagnostics(self, **options: Any) -> Any:
        """Not available for fixed-effects fits yet (OptionError): the battery's auxiliary
        regressions would need the fixed effects' dummies."""
        raise OptionError("diagnostics() of a fit with absorbed fixed effects is not available "
                          "yet: write the fixed effects as C(firm) for it")

    def summary(self) -> Any:
        """The ``summary.lm``-style report with the absorbed fixed effects and within R²."""
        from attnreg.fe.report import fe_summary

        return fe_summary(self)

    def glance(self) -> pd.DataFrame:
        """``LinearResults.glance()`` with ``within.r.squared`` and ``adj.within.r.squared``."""
        out = LinearResults.glance(self)
        out["within.r.squared"] = self.within_r_squared
        out["adj.within.r.squared"] = self.adj_within_r_squared
        return out

    def effects_of(self, coef: FloatArray) -> FloatArray:
        """α of the residual y − X b for coefficients ``b`` (aliased as 0), un-normalised."""
        b = np.where(np.isnan(coef), 0.0, coef)
        eff = self.absorbed.effects
        return np.asarray(eff[:, 0] - eff[:, 1:] @ b)

    def normalised_effects(self) -> FloatArray:
        """The effects α of the fit with fixest's normalisation, shape (n_levels_total,)."""
        return normalise(self.absorbed.fe, self.effects_of(self.filtered.coef))
