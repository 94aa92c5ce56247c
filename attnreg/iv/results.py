"""Results of ``attnreg("y ~ x | d ~ z", data)``: an IV fit with names, inference and reports.

The inference follows R's ``AER::ivreg``: the classical covariance uses
``σ² = Σ w e² / (n - k)``, robust ones are sandwich's ``vcovHC(type="HC0"|"HC1")`` and
``vcovCL(type="HC1")`` (``G/(G-1)·(n-1)/(n-k)``); t tests on ``n - k`` df; the Wald test of
every coefficient but the intercept. With fixed effects, ``k`` counts the absorbed levels, so
every figure of a 2SLS, LIML or Fuller fit equals the dummy-variable fit's (a GMM fit's
covariance is that of the demeaned moments, which the dummies' moments do not reproduce).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, OptionError
from attnreg.fe.leverage import level_quadratic
from attnreg.iv._design import IVDesign, make_design
from attnreg.iv.arset import ARSet, anderson_rubin_set
from attnreg.iv.coeftests import IVCoefTests
from attnreg.iv.covariance import iv_hat, score_design
from attnreg.iv.diagnostics import iv_diagnostics
from attnreg.iv.estimators import IVFit
from attnreg.iv.frame import IVFrame
from attnreg.iv.options import check_vcov
from attnreg.iv.results_reports import IVReports
from attnreg.iv.results_views import IVViews
from attnreg.iv.vcov_binding import (
    bind_iv_vcov,
    is_aer_covariance,
    one_way_ids,
    resolve_clusters,
)
from attnreg.inference.vcov.registry import VcovSpec
from attnreg.linear.score_vcov import ScoreDesign, bind_vcov, score_vcov
from attnreg.iv.weak import WeakIV, weak_instruments

__all__ = ["IVResults", "IVVcovSpec", "resolve_clusters"]


@dataclass(frozen=True)
class IVVcovSpec:
    """The covariance of an IV fit, for reports (``etable``'s covariance row).

    Attributes
    ----------
    kind : str
        ``"classical"``, ``"HC0"``, ``"HC1"`` or ``"cluster"``.
    cluster : str or None
        The cluster column's name when one was given by name.
    n_clusters : int or None
    text : str or None
        The label of a covariance other than classical, HC0, HC1 and one-way vcovCL(HC1).
    """

    kind: str
    cluster: str | None = None
    n_clusters: int | None = None
    text: str | None = None

    def label(self) -> str:
        """The covariance in words, e.g. ``"cluster (firm; 24 clusters), CR1"`` (the
        registry's label, :attr:`text`, for the covariances the IV diagnostics do not use)."""
        if self.text is not None:
            return self.text
        if self.kind != "cluster":
            return {"classical": "classical (homoskedastic)"}.get(
                self.kind, f"{self.kind} (heteroskedasticity-consistent)")
        name = f"{self.cluster}; " if self.cluster else ""
        return f"cluster ({name}{self.n_clusters} clusters), CR1"


@dataclass(frozen=True)
class IVResults(IVCoefTests, IVViews, IVReports):
    """A fitted instrumental-variable regression. Immutable; derived quantities are cached.

    Attributes
    ----------
    frame : IVFrame
        The arrays (exogenous, endogenous, instruments) and the regressors' design.
    fit : IVFit
        The numerical fit (:mod:`attnreg.iv.estimators`).
    method : str
        ``"tsls"``, ``"liml"``, ``"fuller"``, ``"gmm"`` or ``"cue"``.
    vcov_kind : str
        A registered covariance (``"classical"``, ``"HC0"`` … ``"HC5"``, ``"HAC"``,
        ``"cluster"``, ``"DK"``).
    clusters : ndarray or None
        Cluster ids of the rows used (one-way ``vcov_kind="cluster"``).
    cluster : object
        The ``cluster=`` given (a column name is shown in reports).
    alpha : float
        Fuller's α (``method="fuller"``).
    call : str
    vcov_options : tuple of (str, object) pairs
        The covariance's other options (``type``, ``maxlags``, ...), name-sorted.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.normal(size=400), "z1": rng.normal(size=400),
    ...                    "z2": rng.normal(size=400), "u": rng.normal(size=400)})
    >>> df["d"] = df.z1 + 0.5 * df.z2 + df.u + rng.normal(size=400)
    >>> df["y"] = 1 + 0.5 * df.x + 2 * df.d + df.u
    >>> fit = ar.attnreg("y ~ x | d ~ z1 + z2", df)
    >>> fit.coef.round(1).to_dict()
    {'(Intercept)': 1.1, 'x': 0.5, 'd': 2.0}
    >>> list(fit.diagnostics().index)
    ['Weak instruments', 'Wu-Hausman', 'Sargan']
    """

    frame: IVFrame
    fit: IVFit
    method: str = "tsls"
    vcov_kind: str = "classical"
    clusters: Any = field(default=None, repr=False)
    cluster: Any = field(default=None, repr=False)
    alpha: float = 1.0
    call: str = ""
    vcov_options: tuple[tuple[str, Any], ...] = ()

    # ------------------------------------------------------------ sizes and coefficients
    @property
    def design(self) -> Any:
        """The regressors' design (formula, response, row labels, prediction)."""
        return self.frame.design

    @property
    def names(self) -> list[str]:
        """Coefficient names: exogenous regressors, then endogenous."""
        return self.frame.names

    @property
    def fixed_effect_names(self) -> tuple[str, ...]:
        """The absorbed fixed effects, as ``etable`` shows them (empty when none)."""
        return tuple(self.frame.fixed_effects)

    @property
    def nobs(self) -> int:
        """Number of rows used."""
        return int(self.frame.y.shape[0])

    @property
    def df_model(self) -> int:
        """Coefficients tested by the Wald test (all but the intercept)."""
        return len(self.names) - int(self.frame.intercept)

    @property
    def df_resid(self) -> int:
        """n − k, k the coefficients plus the levels absorbed by fixed effects."""
        return self.nobs - len(self.names) - self.frame.n_absorbed

    @cached_property
    def coef(self) -> pd.Series:
        """Coefficients, shape (k,)."""
        return pd.Series(self.fit.coef, index=self.names, name="coef")

    @cached_property
    def resid(self) -> pd.Series:
        """y − fitted on the data's scale (unweighted), shape (n,)."""
        return pd.Series(self.fit.resid, index=self.design.row_labels, name="resid")

    @cached_property
    def fitted(self) -> pd.Series:
        """Fitted values ``[X, D] coef`` (plus the fixed effects when absorbed), shape (n,)."""
        return pd.Series(self.design.y - self.fit.resid, index=self.design.row_labels,
                         name="fitted")

    # ------------------------------------------------------------ inference
    @cached_property
    def _vcov_bound(self) -> VcovSpec:
        """The covariance in use, bound to the fit's rows (cluster ids, periods resolved)."""
        return bind_iv_vcov(self.vcov_kind, self.cluster, self.clusters, dict(self.vcov_options),
                            self.nobs, self.design)

    @cached_property
    def _score_design(self) -> ScoreDesign:
        """What the fit hands over to the covariance registry (:mod:`attnreg.iv.covariance`)."""
        f = self.frame
        hat = None
        if self._vcov_bound.estimator.needs_hat:
            regressors = np.column_stack([f.X, f.D])
            if f.weights is not None:  # the fit's weights have mean 1
                regressors = regressors * np.sqrt(f.weights / f.weights.mean())[:, None]
            hat = iv_hat(self.fit, regressors)
            if self._absorbed_hat is not None:  # AER's hat of the dummy-variable fit
                hat = hat + self._absorbed_hat
        return score_design(self.fit, df_resid=self.df_resid, weights=f.weights,
                            intercept=0 if f.intercept else None, hat=hat)

    @cached_property
    def _absorbed_hat(self) -> FloatArray | None:
        """The absorbed fixed effects' own leverage ``w_i d_i'(D'WD)⁺d_i``, shape (n,), the
        dummies' part of every hat value of the dummy-variable fit (None without them)."""
        f = self.frame
        if not f.fixed_effects or f.fe is None:
            return None
        w = 1.0 if f.weights is None else f.weights
        return np.asarray(w * level_quadratic(f.fe, f.weights, [np.asarray(c) for c in f.fe.codes]))

    @cached_property
    def vcov(self) -> pd.DataFrame:
        """Covariance of the coefficients under :attr:`vcov_kind` (any registered
        covariance, :func:`attnreg.linear.score_vcov.score_vcov`), shape (k, k)."""
        V = score_vcov(self._score_design, self._vcov_bound)
        return pd.DataFrame(V, index=self.names, columns=self.names)

    def bootstrap(self, kind: str = "wre", reps: int = 999, *, null: float = 0.0,
                  weights: str = "rademacher", seed: Any = None, level: float = 0.95,
                  interval: bool = True) -> Any:
        """The wild restricted efficient bootstrap (Davidson–MacKinnon 2010) of the endogenous
        coefficient: the p-value of ``coef = null`` and the ``level`` interval, t statistics
        under the covariance in use, multipliers per cluster under a cluster covariance
        (:func:`attnreg.iv.wre.wre_bootstrap`). Returns a ``WREBootstrap``."""
        from attnreg.iv.wre import wre_bootstrap

        if kind != "wre":
            raise OptionError(f"an IV fit bootstraps with kind='wre' (the wild restricted "
                              f"efficient bootstrap), however: {kind=}")
        return wre_bootstrap(self, null, reps=reps, weights=weights, seed=seed, level=level,
                             interval=interval)

    def with_vcov(self, kind: str = "classical", *, cluster: Any = None,
                  **options: Any) -> IVResults:
        """A new result with another covariance (the estimate is unchanged, also for GMM).

        Parameters
        ----------
        kind : str
            Any registered covariance (:data:`attnreg.inference.vcov.registry.VCOV_REGISTRY`):
            ``"classical"``, ``"HC0"`` … ``"HC5"``, ``"HAC"``, ``"cluster"``, ``"DK"``;
            sandwich's conventions on ``AER::ivreg``.
        cluster : str or array-like, optional
            For ``"cluster"``: a column name of the data (``"a + b"`` or a list for
            two-way), or one id per data row.
        **options
            The covariance's options, as for a linear fit's ``with_vcov`` (``type=``,
            ``maxlags=``, ``kernel=``, ``bandwidth=``, ``prewhite=``, ``adjust=``, ``time=``).
        """
        kind, options = check_vcov(kind, cluster, options)
        clusters = one_way_ids(kind, cluster, self.frame)
        bind_iv_vcov(kind, cluster, clusters, options, self.nobs, self.design)  # fail now
        return dataclasses.replace(self, vcov_kind=kind, cluster=cluster, clusters=clusters,
                                   vcov_options=tuple(sorted(options.items())))

    @property
    def vcov_spec(self) -> IVVcovSpec:
        """The covariance in use, described (:class:`IVVcovSpec`)."""
        g = None if self.clusters is None else int(np.unique(self.clusters).shape[0])
        name = self.cluster if isinstance(self.cluster, str) else None
        own = is_aer_covariance(self.vcov_kind, self.clusters, dict(self.vcov_options))
        # the registry's label, less its df clause: an IV fit tests on n - k df (AER)
        text = (None if own
                else self._vcov_bound.label().split("; t and F")[0] + "; t and F on n - k df")
        return IVVcovSpec(self.vcov_kind, name, g, text)

    # ------------------------------------------------------------ fit statistics
    @cached_property
    def _w(self) -> FloatArray:
        w = self.frame.weights
        return np.ones(self.nobs) if w is None else w

    @cached_property
    def rss(self) -> float:
        """Weighted residual sum of squares Σ w e²."""
        return float(np.sum(self._w * self.fit.resid**2))

    @property
    def sigma(self) -> float:
        """Residual standard error sqrt(Σ w e² / (n − k))."""
        return float(np.sqrt(self.rss / self.df_resid))

    @cached_property
    def r_squared(self) -> float:
        """1 − RSS/TSS (TSS centred with an intercept or fixed effects; can be negative)."""
        y, w = self.design.y, self._w
        centred = self.frame.intercept or bool(self.frame.fixed_effects)
        tss = float(np.sum(w * (y - np.sum(w * y) / np.sum(w)) ** 2)) if centred else float(np.sum(w * y**2))
        return 1 - self.rss / tss

    @property
    def adj_r_squared(self) -> float:
        """1 − (1 − R²)(n − 1)/(n − k) (n rather than n − 1 without an intercept)."""
        centred = self.frame.intercept or bool(self.frame.fixed_effects)
        return 1 - (1 - self.r_squared) * (self.nobs - int(centred)) / self.df_resid

    # ------------------------------------------------------------ weak instruments
    @cached_property
    def _iv_design(self) -> IVDesign:
        f = self.frame
        return make_design(f.y, f.X if f.X.shape[1] else None, f.D, f.Z, f.weights)

    @cached_property
    def _robust_bound(self) -> VcovSpec:
        """The robust covariance of the weak-instrument statistics: the one in use, HC0 under
        the classical one."""
        if self._vcov_bound.estimator.classical:
            return bind_vcov("HC0", n_obs=self.nobs)
        return self._vcov_bound

    def diagnostics(self) -> pd.DataFrame:
        """R's ``summary(ivreg, diagnostics = TRUE)$diagnostics`` under the covariance in use
        (any registered one, applied to the auxiliary regressions as AER's ``vcov.``): weak
        instruments F per endogenous regressor, Wu–Hausman, Sargan (see
        :mod:`attnreg.iv.diagnostics`); shape (k2 + 2, 4)."""
        f = self.frame
        return iv_diagnostics(self._iv_design, self.fit.wresid, list(f.endog_names),
                              self._vcov_bound, f.n_absorbed, 0 if f.intercept else None,
                              self._absorbed_hat)

    def weak_instruments(self, tau: float = 0.10) -> WeakIV:
        """The fuller weak-instrument statistics (:func:`attnreg.iv.weak.weak_instruments`):
        partial R², Sanderson–Windmeijer F, Cragg–Donald, Kleibergen–Paap rk Wald/LM and the
        Montiel Olea–Pflueger effective F with its critical value; robust ones under the
        covariance in use, whichever registered one (HC0 under the classical one)."""
        f = self.frame
        return weak_instruments(f.X if f.X.shape[1] else None, f.D, f.Z, f.weights, tau=tau,
                                absorbed=f.n_absorbed, vcov=self._robust_bound,
                                intercept=0 if f.intercept else None,
                                absorbed_hat=self._absorbed_hat)

    @property
    def weak_iv(self) -> pd.DataFrame:
        """:meth:`weak_instruments` as one table: statistic, df1, df2, p-value per row
        (:func:`attnreg.iv.weak_table.weak_iv_table`)."""
        from attnreg.iv.weak_table import weak_iv_table

        return weak_iv_table(self.weak_instruments(), self.frame.endog_names)

    def anderson_rubin(self, level: float = 0.95) -> ARSet:
        """The Anderson–Rubin confidence set of the endogenous coefficient (one endogenous
        regressor): an interval, two rays, the real line or empty (:attr:`ARSet.shape`)."""
        f = self.frame
        if f.D.shape[1] != 1:
            raise DataError(f"the AR confidence set needs one endogenous regressor, however the "
                            f"model has {f.D.shape[1]}: {', '.join(f.endog_names)}")
        if not 0 < level < 1:
            raise OptionError(f"level must be strictly between 0 and 1, however: {level=}")
        return anderson_rubin_set(f.y, f.X if f.X.shape[1] else None, f.D, f.Z, f.weights,
                                  alpha=1 - level, absorbed=f.n_absorbed)

    def ar_confidence_set(self, level: float = 0.95) -> ARSet:
        """:meth:`anderson_rubin` (the name the issue tracker and fixest's users know)."""
        return self.anderson_rubin(level)

    def __repr__(self) -> str:
        return (f"<attnreg IV fit ({self.method}): {self.design.formula}; n={self.nobs}; "
                f"vcov={self.vcov_kind}>")
