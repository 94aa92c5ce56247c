"""The result of a GLM fit: R's ``glm`` object and ``summary.glm`` numbers."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy.linalg import solve_triangular

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import OptionError
from attnreg.formula.design import Design
from attnreg.glm.families import counts_aic
from attnreg.glm.irls import IrlsFit
from attnreg.glm.coeftests import GlmTests
from attnreg.glm.vcov import GlmCovariance
from attnreg.glm.separation import Separation
from attnreg.glm.views import GlmViews

__all__ = ["RESIDUAL_TYPES", "GlmResults"]

RESIDUAL_TYPES = ("deviance", "pearson", "working", "response")


@dataclass(frozen=True)
class GlmResults(GlmCovariance, GlmTests, GlmViews):
    """A fitted generalised linear model.

    Attributes
    ----------
    design : Design
    family_name, link_name : str
        R's names (``"binomial"``, ``"probit"``).
    fit : IrlsFit
        The IRLS state at convergence.
    kept, aliased : ndarray of int
        Design columns estimated, and those not defined because of singularities.
    offset : ndarray, shape (n_obs,)
        Offset of the training rows (zeros when none).
    offset_spec : str, array or None
        ``offset=`` as given (a column name or an expression is evaluated on new data).
    null_deviance : float
    call : str
    method : str
    control : {"optimum", "R"}
    robust : str or None
        The sandwich behind the standard errors and the summary (``vcov=``: vcovHC's or
        one-way vcovCL's type, else the covariance's description); None: the model-based
        covariance of ``summary.glm``. Tests are then z tests, as ``lmtest::coeftest`` of a glm.
    cluster : ndarray, shape (n_obs,), or None
        Cluster codes of the training rows (one-way ``vcov="cluster"``: ``sandwich::vcovCL``).
    absorbed : AbsorbedGlm or None
        The fixed effects absorbed (``y ~ x | firm``, :mod:`attnreg.glm.fe_fit`): their
        degrees of freedom count in the residual df and the AIC, the sandwich's scores use
        the demeaned regressors; predictions of new rows, attention, profile intervals,
        margins and anova need the effects themselves and are refused.
    separation : Separation or None
        Separated rows and separating regressors (binomial and Poisson; ``separation=``);
        None when not checked. With ``separation="drop"`` the rows are not in ``design``.
    vcov_spec : VcovSpec or None
        The registered covariance in use, bound to the training rows
        (:mod:`attnreg.glm.vcov`); None: ``vcov.glm``.
    """

    design: Design
    family_name: str
    link_name: str
    fit: IrlsFit
    kept: IntArray
    aliased: IntArray
    offset: FloatArray
    offset_spec: Any
    null_deviance: float
    call: str = ""
    method: str = "glm"
    control: str = "optimum"
    robust: str | None = None
    cluster: Any = None
    separation: Separation | None = None
    absorbed: Any = None
    vcov_spec: Any = None

    # ---------------------------------------------------------------- model pieces
    @property
    def prior_weights(self) -> FloatArray:
        """Prior weights of the training rows (ones when none were given)."""
        w = self.design.weights
        return np.ones(self.design.n_obs) if w is None else w

    @property
    def nobs(self) -> int:
        """Training rows (rows of weight zero excluded)."""
        return self.design.n_obs

    @property
    def n_deleted(self) -> int:
        """Rows dropped for missing values."""
        return int(self.design.dropped_labels.size)

    @property
    def rank(self) -> int:
        """Number of estimated coefficients."""
        return int(self.kept.size)

    @property
    def df_resid(self) -> int:
        """Residual degrees of freedom, n − rank (− the absorbed fixed effects' levels)."""
        return self.nobs - self.rank - self._n_absorbed

    @property
    def df_null(self) -> int:
        """Degrees of freedom of the null model, n − intercept (the fixed effects hold one)."""
        return self.nobs - int(self.design.intercept or self.absorbed is not None)

    @property
    def fixed_effect_names(self) -> tuple[str, ...]:
        """The absorbed fixed-effect terms (``("firm", "year")``), as ``etable`` shows them."""
        return () if self.absorbed is None else tuple(self.absorbed.terms)

    @property
    def _n_absorbed(self) -> int:
        return 0 if self.absorbed is None else int(self.absorbed.n_params)

    @property
    def deviance(self) -> float:
        """Residual deviance."""
        return self.fit.deviance

    @property
    def iterations(self) -> int:
        """Fisher scoring iterations."""
        return self.fit.iter

    @property
    def converged(self) -> bool:
        """Whether R's convergence rule was met within ``maxit``."""
        return self.fit.converged

    @cached_property
    def aic(self) -> float:
        """R's AIC: the family's −2 log-likelihood (+2 for a dispersion) + 2 rank (the
        absorbed fixed effects' levels counted in the rank)."""
        y, mu, wt, trials = self.design.y, self.fit.mu, self.prior_weights, self.design.trials
        family_aic = (self.family.aic(y, mu, wt, self.deviance) if trials is None
                      else counts_aic(y, mu, wt, trials))
        return family_aic + 2 * (self.rank + self._n_absorbed)

    @cached_property
    def dispersion(self) -> float:
        """1 for binomial and poisson; otherwise Pearson's estimate, Σ w r²/df (working
        weights and residuals, as ``summary.glm``)."""
        if self.family.fixed_dispersion:
            return 1.0
        if self.df_resid <= 0:
            return float("nan")
        r = self.residuals("working").to_numpy()
        return float(np.sum(self.fit.working_weights * r ** 2) / self.df_resid)

    # ---------------------------------------------------------------- coefficients
    def _full(self, values: FloatArray) -> FloatArray:
        out = np.full(self.design.n_coef, np.nan)
        out[self.kept] = values
        return out

    @cached_property
    def coef(self) -> pd.Series:
        """Coefficients (NaN for aliased columns), shape (n_coef,)."""
        return pd.Series(self._full(self.fit.coef), index=self.design.column_names, name="coef")

    @cached_property
    def cov_unscaled(self) -> pd.DataFrame:
        """(X'WX)⁻¹ from the last step's R: R⁻¹R⁻ᵀ by a triangular solve (R's ``chol2inv``)."""
        k = self.rank
        r_inv = solve_triangular(self.fit.r, np.eye(k))
        full = np.full((self.design.n_coef,) * 2, np.nan)
        full[np.ix_(self.kept, self.kept)] = r_inv @ r_inv.T
        names = self.design.column_names
        return pd.DataFrame(full, index=names, columns=names)

    # ---------------------------------------------------------------- fitted values
    @cached_property
    def fitted(self) -> pd.Series:
        """Fitted means μ of the training rows."""
        return pd.Series(self.fit.mu, index=self.design.row_labels, name="fitted")

    @cached_property
    def linear_predictor(self) -> pd.Series:
        """η = Xβ + offset of the training rows."""
        return pd.Series(self.fit.eta, index=self.design.row_labels, name="linear_predictor")

    def residuals(self, type: str = "deviance") -> pd.Series:
        """R's ``residuals.glm``: ``"deviance"``, ``"pearson"``, ``"working"`` or ``"response"``."""
        y, mu, eta, wt = self.design.y, self.fit.mu, self.fit.eta, self.prior_weights
        if type == "response":
            r = y - mu
        elif type == "working":
            r = (y - mu) / self.link.mu_eta(eta)
        elif type == "pearson":
            r = (y - mu) * np.sqrt(wt) / np.sqrt(self.family.variance(mu))
        elif type == "deviance":
            d = np.maximum(self.family.dev_resids(y, mu, wt), 0)
            r = np.where(y > mu, 1.0, -1.0) * np.sqrt(d)
        else:
            raise OptionError(f"type must be one of {', '.join(map(repr, RESIDUAL_TYPES))}, "
                              f"however: {type=}")
        return pd.Series(r, index=self.design.row_labels, name=f"{type}_resid")

    @property
    def resid(self) -> pd.Series:
        """Deviance residuals (R's default)."""
        return self.residuals("deviance")

    def predict_matrix(self, X: FloatArray) -> FloatArray:
        """Fitted means of design rows ``X``, shape (n, n_coef), with no offset."""
        return self.link.linkinv(X[:, self.kept] @ self.fit.coef)

    def __repr__(self) -> str:
        return (f"GlmResults(family={self.family_name!r}, link={self.link_name!r}, "
                f"nobs={self.nobs}, deviance={self.deviance:.6g})")
