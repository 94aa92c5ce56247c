"""The result of a GLM fit: R's ``glm`` object and ``summary.glm`` numbers."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy.linalg import solve_triangular

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import OptionError
from attnreg.formula.design import Design
from attnreg.formula.kept import not_kept_error
from attnreg.glm.families import counts_aic
from attnreg.glm.irls import IrlsFit
from attnreg.glm.coeftests import GlmTests
from attnreg.glm.separation import Separation
from attnreg.glm.views import GlmViews

__all__ = ["RESIDUAL_TYPES", "GlmResults"]

RESIDUAL_TYPES = ("deviance", "pearson", "working", "response")


@dataclass(frozen=True)
class GlmResults(GlmTests, GlmViews):
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
    robust : {None, "HC0", "HC1"}
        The sandwich behind the standard errors and the summary (``vcov=``); None: the
        model-based covariance of ``summary.glm``. Tests are then z tests, as
        ``lmtest::coeftest`` of a glm.
    cluster : ndarray, shape (n_obs,), or None
        Cluster ids of the training rows (``vcov="cluster"``: ``sandwich::vcovCL``).
    absorbed : AbsorbedGlm or None
        The fixed effects absorbed (``y ~ x | firm``, :mod:`attnreg.glm.fe_fit`): their
        degrees of freedom count in the residual df and the AIC, the sandwich's scores use
        the demeaned regressors; predictions of new rows, attention, profile intervals,
        margins and anova need the effects themselves and are refused.
    separation : Separation or None
        Separated rows and separating regressors (binomial and Poisson; ``separation=``);
        None when not checked. With ``separation="drop"`` the rows are not in ``design``.
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
    def n_clusters(self) -> int | None:
        """Clusters of a cluster covariance (None without one)."""
        return None if self.cluster is None else len(set(np.asarray(self.cluster).tolist()))

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

    @cached_property
    def vcov(self) -> pd.DataFrame:
        """Covariance of the coefficients in use, shape (n_coef, n_coef): ``vcov.glm``, or the
        sandwich chosen by ``vcov=`` / :meth:`with_vcov`; NaN rows and columns for aliased
        coefficients."""
        return self.covariance(self.robust, self.cluster)

    def covariance(self, type: str | None = None, cluster: Any = None) -> pd.DataFrame:
        """A covariance of the coefficients (:attr:`vcov` is the one in use).

        Parameters
        ----------
        type : {None, "HC0", "HC1"}
            None (and no cluster): dispersion × unscaled covariance (``vcov.glm``).
            ``"HC0"``/``"HC1"``: ``sandwich::vcovHC`` (bread: the unscaled covariance;
            scores: working residual × working weight × X; HC1 scales by n / (n − rank)).
        cluster : str or array-like, optional
            A column of the data or one id per training row: ``sandwich::vcovCL``
            (G/(G − 1) always; HC1, the default with a cluster, also (n − 1)/(n − rank)).

        Returns
        -------
        DataFrame, shape (n_coef, n_coef)
        """
        if type is None and cluster is None:
            return self.cov_unscaled * self.dispersion
        type = "HC1" if type is None else type
        if type not in ("HC0", "HC1"):
            raise OptionError(f"type must be None, 'HC0' or 'HC1', however: {type=}")
        bread = self.cov_unscaled.to_numpy()[np.ix_(self.kept, self.kept)]
        X = self.design.X[:, self.kept] if self.absorbed is None else self.absorbed.x_tilde
        scores = X * (
            self.residuals("working").to_numpy() * self.fit.working_weights)[:, None]
        n = self.nobs
        if cluster is None:
            meat, adjust = scores.T @ scores, n / self.df_resid
        else:
            codes, groups = pd.factorize(self._cluster_ids(cluster))
            sums = np.zeros((len(groups), scores.shape[1]))
            np.add.at(sums, codes, scores)  # each cluster's score sum
            g = len(groups)
            meat, adjust = sums.T @ sums * g / (g - 1), (n - 1) / self.df_resid
        hc = bread @ meat @ bread * (adjust if type == "HC1" else 1.0)
        full = np.full((self.design.n_coef,) * 2, np.nan)
        full[np.ix_(self.kept, self.kept)] = hc
        names = self.design.column_names
        return pd.DataFrame(full, index=names, columns=names)

    def _cluster_ids(self, cluster: Any) -> Any:
        """One cluster id per training row, from a column name or a vector."""
        d = self.design
        if isinstance(cluster, str):
            if d.data is not None and not d.data_complete and cluster not in d.data.columns:
                raise not_kept_error(cluster, "cluster")  # a pickled fit keeps some columns
            if (d.data is None or d.data_rows is None or d.data_rows.size != self.nobs
                    or cluster not in d.data.columns):
                raise OptionError(f"cluster column {cluster!r} is not in the data; give a "
                                  "column name of the data or one id per training row")
            return d.data[cluster].to_numpy()[d.data_rows]
        ids = np.asarray(cluster).reshape(-1)
        if ids.size != self.nobs:
            raise OptionError(f"cluster has {ids.size} ids but the fit has {self.nobs} rows; "
                              "give one id per training row or a column name")
        return ids

    @cached_property
    def std_err(self) -> pd.Series:
        """Standard errors, sqrt(diag(vcov)) of the covariance chosen by ``vcov=``."""
        return pd.Series(np.sqrt(np.diag(self.vcov.to_numpy())), index=self.coef.index,
                         name="std_err")

    def with_vcov(self, vcov: str = "classical", *, cluster: Any = None,
                  type: str | None = None) -> GlmResults:
        """The same fit with another covariance behind its standard errors and summary.

        Parameters
        ----------
        vcov : {"classical", "HC0", "HC1", "cluster"}
        cluster : str or array-like, optional
            With ``vcov="cluster"``: a column of the data or one id per training row.
        type : {"HC1", "HC0"}, optional
            With ``vcov="cluster"``: vcovCL's type (default HC1).

        Returns
        -------
        GlmResults
        """
        if vcov == "classical":
            return dataclasses.replace(self, robust=None, cluster=None)
        if vcov == "cluster":
            if cluster is None:
                raise OptionError("vcov='cluster' needs cluster= (a column name or ids)")
            kind = "HC1" if type is None else type
            return dataclasses.replace(self, robust=kind, cluster=self._cluster_ids(cluster))
        if vcov not in ("HC0", "HC1"):
            raise OptionError("vcov must be 'classical', 'HC0', 'HC1' or 'cluster', however: "
                              f"{vcov=}")
        return dataclasses.replace(self, robust=vcov, cluster=None)

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
