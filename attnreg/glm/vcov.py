"""The covariances of a GLM fit: what it hands over to the shared covariance registry.

No covariance formula lives here. A GLM's sandwich is ``sandwich``'s on ``glm``: bread
(XᵀWX)⁻¹ and scores w_i (z_i − η_i) x_i (W the final IRLS weights, z the working
response), which is the weighted least-squares fit of the working residuals on X. So the fit
hands over A = X (the demeaned regressors with absorbed fixed effects), the working
residuals and weights, the dispersion (the classical covariance is dispersion × (XᵀWX)⁻¹,
R's ``vcov.glm``) and its residual df, and :func:`attnreg.linear.score_vcov.score_vcov`
computes any registered covariance: ``vcovHC`` HC0–HC5 (R's ``hatvalues(glm)`` are those of
√W X), ``vcovCL`` one- and multi-way, ``NeweyWest`` / ``vcovHAC`` / ``kernHAC``,
Driscoll–Kraay and CR2 (``clubSandwich::vcovCR``, whose working model for a glm is the
inverse of W = diag(w / V(μ)): the fit hands over those variances, V(μ) / w,
:mod:`attnreg.inference.vcov.cr2_target`). Tests under a sandwich are z tests
(``lmtest::coeftest`` of a glm).
"""

from __future__ import annotations

import dataclasses
import math
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg.exceptions import OptionError
from attnreg.formula.kept import not_kept_error
from attnreg.inference.vcov.registry import VcovSpec
from attnreg.linear.score_vcov import ScoreDesign, bind_vcov, score_vcov

if TYPE_CHECKING:
    from attnreg._typing import FloatArray
    from attnreg.formula.design import Design
    from attnreg.glm.families import Family
    from attnreg.glm.irls import IrlsFit

__all__ = ["GlmCovariance", "sandwich_name"]

#: vcovHC's types: the summary names them as ``sandwich::vcovHC, type HCk``
_HC_TYPES = ("HC0", "HC1", "HC2", "HC3", "HC4", "HC4m", "HC5")


class GlmCovariance:
    """Mixin of :class:`~attnreg.glm.results.GlmResults`: ``vcov``, ``covariance``,
    ``std_err`` and ``with_vcov`` from the fit's score design and the covariance registry."""

    design: Design
    fit: IrlsFit
    kept: Any
    absorbed: Any
    robust: str | None
    cluster: Any
    vcov_spec: VcovSpec | None

    if TYPE_CHECKING:
        @property
        def nobs(self) -> int: ...
        @property
        def df_resid(self) -> int: ...
        @property
        def dispersion(self) -> float: ...
        @property
        def coef(self) -> pd.Series: ...
        def residuals(self, type: str = "deviance") -> pd.Series: ...
        @property
        def family(self) -> Family: ...
        @property
        def prior_weights(self) -> FloatArray: ...

    @property
    def n_clusters(self) -> int | None:
        """Clusters of a one-way cluster covariance (None otherwise)."""
        return None if self.cluster is None else len(set(np.asarray(self.cluster).tolist()))

    @cached_property
    def _score_design(self) -> ScoreDesign:
        """A = X (kept columns, or the demeaned ones), working residuals and weights."""
        absorbed = self.absorbed is not None
        A = self.absorbed.x_tilde if absorbed else self.design.X[:, self.kept]
        at = np.flatnonzero(np.asarray(self.kept) == 0)
        intercept = int(at[0]) if self.design.intercept and not absorbed and at.size else None
        # the bread is R's cov.unscaled, (R'R)⁻¹ from the IRLS step's factor (no other
        # decomposition for the classical covariance, dispersion × (R'R)⁻¹)
        return ScoreDesign(A, self.residuals("working").to_numpy(), sigma2=self.dispersion,
                           df_resid=float(self.df_resid), weights=self.fit.working_weights,
                           intercept=intercept, hessian=self.fit.r, classical="hessian")

    def _on_columns(self, V: Any) -> pd.DataFrame:
        full = np.full((self.design.n_coef,) * 2, np.nan)
        full[np.ix_(self.kept, self.kept)] = V
        names = self.design.column_names
        return pd.DataFrame(full, index=names, columns=names)

    @cached_property
    def vcov(self) -> pd.DataFrame:
        """Covariance of the coefficients in use, shape (n_coef, n_coef): ``vcov.glm``, or the
        sandwich chosen by ``vcov=`` / :meth:`with_vcov`; NaN rows and columns for aliased
        coefficients."""
        spec = self.vcov_spec or self._bind("classical", None, {})
        return self._on_columns(score_vcov(self._score_design, spec))

    def covariance(self, type: str | None = None, cluster: Any = None,
                   **options: Any) -> pd.DataFrame:
        """A covariance of the coefficients (:attr:`vcov` is the one in use).

        Parameters
        ----------
        type : str, optional
            None (and no cluster): dispersion × unscaled covariance (``vcov.glm``). Without
            ``cluster``, any registered covariance (``"HC0"`` … ``"HC5"``: sandwich's
            ``vcovHC``; ``"HAC"``: ``NeweyWest`` / ``vcovHAC``; ``"DK"``); with ``cluster``,
            vcovCL's type (``"HC1"``, the default, or ``"HC0"``), or ``"CR2"``
            (``clubSandwich::vcovCR``).
        cluster : str, list or array-like, optional
            A column of the data (``"a + b"`` or a list: multi-way), or one id per training
            row: ``sandwich::vcovCL`` (G/(G − 1) always; HC1 also (n − 1)/(n − rank)).
        **options
            The covariance's other options (``maxlags=``, ``kernel=``, ``time=``, ...).

        Returns
        -------
        DataFrame, shape (n_coef, n_coef)
        """
        if type is None and cluster is None:
            kind = "classical"
        elif cluster is not None:
            kind, options = "cluster", {**options, "type": type or "HC1"}
        else:
            kind = str(type)
        return self._on_columns(score_vcov(self._score_design, self._bind(kind, cluster, options)))

    def _bind(self, kind: str, cluster: Any, options: dict[str, Any]) -> VcovSpec:
        """``kind`` bound to the training rows, with z tests (``df=np.inf``)."""
        extra = dict(options)
        if extra.pop("df", math.inf) != math.inf:  # np.inf: what a GLM's sandwich tests are
            raise OptionError(f"df does not apply to a GLM's sandwich covariance: its tests "
                              f"are z tests (lmtest::coeftest of a glm); drop df=, however: "
                              f"df={options['df']!r}")
        if extra.pop("working_variance", None) is not None:
            raise OptionError("working_variance is not an option of a GLM: its CR2 working "
                              "model is the family's, V(mu) / prior weight")
        if extra.get("type") == "CR2":
            extra["working_variance"] = self._working_variance()
        if cluster is not None:
            extra["cluster"] = self._ids(cluster, "cluster")
        if extra.get("time") is not None:
            extra["time"] = self._ids(extra["time"], "time")
        return bind_vcov(kind, n_obs=self.nobs, df=math.inf, **extra)

    def _working_variance(self) -> Any:
        """clubSandwich's working variances of a glm, V(μ) / w (prior weights w)."""
        if self.absorbed is not None:
            raise OptionError("type='CR2' of a GLM with absorbed fixed effects is not "
                              "computed (clubSandwich's hat matrix includes the effects' "
                              "columns); use type='HC1' or 'HC0', or the effects as factors")
        mu = self.fit.mu
        return self.family.variance(mu) / self.prior_weights

    def _ids(self, cluster: Any, what: str) -> Any:
        """Ids per training row: a Series (one dimension) or a DataFrame (several)."""
        d = self.design
        names: list[Any] | None = None
        if isinstance(cluster, str) and "+" in cluster and (
                d.data is None or cluster not in d.data.columns):
            names = [p.strip() for p in cluster.split("+")]
        elif isinstance(cluster, (list, tuple)) and cluster and all(
                isinstance(c, str) for c in cluster):
            names = list(cluster)
        if names is not None:
            return pd.DataFrame({n: self._cluster_ids(n, what) for n in names})
        name = cluster if isinstance(cluster, str) else what
        return pd.Series(self._cluster_ids(cluster, what), name=name)

    def _cluster_ids(self, cluster: Any, what: str = "cluster") -> Any:
        """One cluster id per training row, from a column name or a vector."""
        d = self.design
        if isinstance(cluster, str):
            if d.data is not None and not d.data_complete and cluster not in d.data.columns:
                raise not_kept_error(cluster, what)  # a pickled fit keeps some columns
            if (d.data is None or d.data_rows is None or d.data_rows.size != self.nobs
                    or cluster not in d.data.columns):
                raise OptionError(f"{what} column {cluster!r} is not in the data; give a "
                                  "column name of the data or one id per training row")
            return d.data[cluster].to_numpy()[d.data_rows]
        ids = np.asarray(cluster).reshape(-1)
        if ids.size != self.nobs:
            raise OptionError(f"{what} has {ids.size} ids but the fit has {self.nobs} rows; "
                              "give one id per training row or a column name")
        return ids

    @cached_property
    def std_err(self) -> pd.Series:
        """Standard errors, sqrt(diag(vcov)) of the covariance chosen by ``vcov=``."""
        return pd.Series(np.sqrt(np.diag(self.vcov.to_numpy())), index=self.coef.index,
                         name="std_err")

    def with_vcov(self, vcov: str = "classical", *, cluster: Any = None,
                  type: str | None = None, **options: Any) -> Any:
        """The same fit with another covariance behind its standard errors and summary.

        Parameters
        ----------
        vcov : str
            ``"classical"`` (``vcov.glm``) or any registered covariance, with sandwich's
            conventions on a glm: ``"HC0"`` … ``"HC5"`` (``vcovHC``), ``"cluster"``
            (``vcovCL``, one- or multi-way), ``"HAC"`` (``NeweyWest`` with ``maxlags=``,
            ``vcovHAC``/``kernHAC`` with ``kernel=``, ``bandwidth=``, ``prewhite=``), ``"DK"``.
        cluster : str, list or array-like, optional
            With ``vcov="cluster"``: a column of the data (``"a + b"`` or a list: multi-way)
            or one id per training row.
        type : str, optional
            With ``vcov="cluster"``: vcovCL's type (default HC1, or ``"HC0"``), or ``"CR2"``
            (``clubSandwich::vcovCR``, one-way).
        **options
            The covariance's other options (``maxlags=``, ``kernel=``, ``time=``, ...).

        Returns
        -------
        GlmResults
        """
        if vcov == "classical" and cluster is None and type is None and not options:
            return dataclasses.replace(self, robust=None, cluster=None,  # type: ignore[type-var]
                                       vcov_spec=None)
        if vcov == "cluster":
            if cluster is None:
                raise OptionError("vcov='cluster' needs cluster= (a column name or ids)")
            options = {**options, "type": type or "HC1"}
        elif cluster is not None or type is not None:
            raise OptionError(f"cluster= and type= go with vcov='cluster', however: {vcov=}")
        spec = self._bind(vcov, cluster, options)
        robust, n_clusters = sandwich_name(spec)
        ids = spec.option("cluster")
        return dataclasses.replace(self, robust=robust,  # type: ignore[type-var]
                                   cluster=None if n_clusters is None else ids.codes[:, 0],
                                   vcov_spec=spec)


def sandwich_name(spec: VcovSpec | None) -> tuple[str | None, int | None]:
    """What a GLM summary says of the covariance ``spec``: vcovHC's or one-way vcovCL's type
    (and the number of clusters), else the covariance's description; None for ``vcov.glm``."""
    if spec is None or spec.estimator.classical:
        return None, None
    ids = spec.option("cluster")
    if ids is not None and ids.n_dims == 1 and spec.option("type") in ("HC0", "HC1"):
        return str(spec.option("type")), int(ids.n_clusters[0])
    if spec.kind in _HC_TYPES:
        return spec.kind, None
    return spec.label().split("; ")[0], None
