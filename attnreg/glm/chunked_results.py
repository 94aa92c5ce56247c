"""A GLM fitted chunk by chunk: R's ``glm`` numbers and summary, with no rows kept.

:func:`fit_glm_chunks` is the chunked backend of ``attnreg(..., method="glm" | "logit" |
"probit" | "poisson")`` for data larger than memory (a parquet/CSV glob, arrow, polars, a
dask DataFrame): see :mod:`attnreg.glm.chunked` for the passes. The result holds the
coefficients, the R of the last IRLS step and the sums of the final pass: everything the
summary prints, the covariances (model-based, HC0/HC1, cluster) and predictions of new rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy.linalg import solve_triangular

from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.exceptions import OptionError, RankDeficiencyWarning
from attnreg.formula.counts import counts_columns
from attnreg.glm.chunked import ChunkData, FinalStats, IrlsPath, aic_from_sums, \
    aliased_from_factor, chunked_irls, final_pass, weights_factor
from attnreg.glm.chunked_separation import certified, handle_chunked, merged
from attnreg.glm.separation import Separation
from attnreg.glm.families import FAMILIES
from attnreg.glm.links import LINKS
from attnreg.glm.coeftests import GlmTests
from attnreg.glm.registration import warn_state
from attnreg.glm.summary import glm_summary

__all__ = ["ChunkedGlmResults", "fit_glm_chunks"]


@dataclass(frozen=True)
class ChunkedGlmResults(GlmTests):
    """A GLM fitted over data read chunk by chunk.

    Attributes
    ----------
    spec : ChunkSpec
        The design learned over every chunk (levels, transforms), for new rows.
    family_name, link_name : str
    coef_kept : ndarray, shape (rank,)
    kept, aliased : ndarray of int
    r : ndarray, shape (rank, rank)
        R of the last IRLS step's weighted design.
    deviance, null_deviance, pearson, aic_family : float
        The residual and null deviances, Pearson's χ² and the family's AIC term.
    n_obs, n_dropped, iterations : int
        ``iterations`` counts the scoring steps to the optimum (as the in-memory fit)
    iterations_r : int
        The steps after which R's stopping rule was met.
    converged : bool
    robust : {None, "HC0", "HC1"}
    meat : ndarray or None
        Σ s sᵀ of the scores (per cluster sums' products for a cluster covariance).
    n_clusters : int or None
    call, method, control : str
    offset_spec : str or None
    separation : Separation or None
        Separated rows found (binomial and Poisson, when the fit did not certify itself;
        :mod:`attnreg.glm.chunked_separation`); None when none was found or not checked.
        Its ``positions`` are empty (the rows are not held).
    """

    spec: Any
    family_name: str
    link_name: str
    coef_kept: FloatArray
    kept: IntArray
    aliased: IntArray
    r: FloatArray
    deviance: float
    null_deviance: float
    pearson: float
    aic_family: float
    n_obs: int
    n_dropped: int
    iterations: int
    iterations_r: int
    converged: bool
    robust: str | None = None
    meat: FloatArray | None = None
    n_clusters: int | None = None
    call: str = ""
    method: str = "glm"
    control: str = "optimum"
    offset_spec: str | None = None
    separation: Separation | None = None
    absorbed: None = None

    @property
    def nobs(self) -> int:
        """Rows in the fit."""
        return self.n_obs

    @property
    def n_deleted(self) -> int:
        """Rows dropped for missing values."""
        return self.n_dropped

    @property
    def rank(self) -> int:
        """Number of estimated coefficients."""
        return int(self.kept.size)

    @property
    def df_resid(self) -> int:
        """Residual degrees of freedom, n − rank."""
        return self.n_obs - self.rank

    @property
    def df_null(self) -> int:
        """Degrees of freedom of the null model, n − intercept."""
        return self.n_obs - int(self.spec.intercept)

    @property
    def aic(self) -> float:
        """R's AIC."""
        return self.aic_family + 2 * self.rank

    @property
    def dispersion(self) -> float:
        """1 for binomial and Poisson; Pearson's χ² / df_resid otherwise (``summary.glm``)."""
        if self.family.fixed_dispersion:
            return 1.0
        return self.pearson / self.df_resid if self.df_resid > 0 else float("nan")

    @property
    def names(self) -> list[str]:
        """Design column names."""
        return list(self.spec.column_names)

    def _full(self, values: FloatArray) -> FloatArray:
        out = np.full(len(self.names), np.nan)
        out[self.kept] = values
        return out

    @cached_property
    def coef(self) -> pd.Series:
        """Coefficients (NaN for aliased columns)."""
        return pd.Series(self._full(self.coef_kept), index=self.names, name="coef")

    @cached_property
    def vcov(self) -> pd.DataFrame:
        """Covariance in use: ``vcov.glm``, or the sandwich of ``vcov=``."""
        r_inv = solve_triangular(self.r, np.eye(self.rank))
        bread = r_inv @ r_inv.T
        if self.robust is None:
            inner = bread * self.dispersion
        else:
            assert self.meat is not None
            inner = bread @ self.meat @ bread * self._adjust()
        full = np.full((len(self.names),) * 2, np.nan)
        full[np.ix_(self.kept, self.kept)] = inner
        return pd.DataFrame(full, index=self.names, columns=self.names)

    def _adjust(self) -> float:
        if self.n_clusters is None:
            return self.n_obs / self.df_resid if self.robust == "HC1" else 1.0
        g = self.n_clusters
        return g / (g - 1) * ((self.n_obs - 1) / self.df_resid if self.robust == "HC1" else 1.0)

    @cached_property
    def std_err(self) -> pd.Series:
        """Standard errors."""
        return pd.Series(np.sqrt(np.diag(self.vcov.to_numpy())), index=self.names,
                         name="std_err")

    def summary(self) -> Any:
        """R's ``summary.glm``, as for an in-memory fit."""
        return glm_summary(self)

    def predict(self, newdata: Any, type: str = "link") -> pd.Series:
        """Predictions of new rows (a DataFrame or dict) on the link or response scale.

        The offset, when the fit has one, is the fit's expression evaluated on ``newdata``.
        """
        from attnreg.glm.offset import evaluate_offset
        from attnreg.large.newrows import design_of_frame

        if type not in ("link", "response"):
            raise OptionError(f"type must be 'link' or 'response', however: {type=}")
        frame = pd.DataFrame(newdata)
        X = design_of_frame(self.spec, frame)
        eta = X[:, self.kept] @ self.coef_kept
        if self.offset_spec is not None:
            eta = eta + evaluate_offset(self.offset_spec, frame, self.spec.eval_env, "newdata")
        out = eta if type == "link" else self.link.linkinv(eta)
        return pd.Series(out, index=frame.index, name="fit")

    def __repr__(self) -> str:
        return (f"<ChunkedGlmResults {self.family_name}({self.link_name}): n={self.n_obs}, "
                f"deviance={self.deviance:.6g}>")


def _vcov_choice(checked: dict[str, Any]) -> tuple[str | None, str | None]:
    v = checked["vcov"]
    if v["vcov"] == "classical":
        return None, None
    if v["vcov"] == "cluster":
        if not isinstance(v["cluster"], str):
            raise OptionError("cluster= of a chunked GLM must name a column of the data, "
                              f"however: type(cluster) is {type(v['cluster']).__name__}")
        return v["type"] or "HC1", v["cluster"]
    return v["vcov"], None


def fit_glm_chunks(request: Any, chunk: dict[str, Any], call: str) -> ChunkedGlmResults:
    """Fit a GLM to a larger-than-memory source (a :class:`attnreg.large.FitRequest`).

    Every option is checked before any data is read; offsets, weights and cluster ids must be
    columns of the data (or expressions of them, for the offset).

    Parameters
    ----------
    request : FitRequest
        Its ``weights``, ``subset`` and ``na_action`` already checked.
    chunk : dict
        The chunked path's own options (``chunk_rows``, ``progress``, ``sep``), checked.
    call : str
        The call string the summary prints.
    """
    from attnreg.glm.registration import check_glm_options
    from attnreg.large.sources import as_source
    from attnreg.large.spec import learn_spec

    checked = check_glm_options(request.method, dict(request.options))
    _refuse_counts(request.formula)
    if checked["offset"] is not None and not isinstance(checked["offset"], str):
        raise OptionError("offset of a chunked GLM must be a column or an expression of "
                          "columns such as 'np.log(pyears)', not a vector")
    robust, cluster = _vcov_choice(checked)
    source = as_source(request.data, chunk_rows=chunk["chunk_rows"], sep=chunk["sep"])
    spec = learn_spec(request.formula, source, request.eval_env, weights=request.weights,
                      subset=request.subset, na_action=request.na_action,
                      progress=chunk["progress"])
    family, link = FAMILIES[checked["family"]], LINKS[checked["link"]]
    data = ChunkData(spec, source, family, link, checked["offset"], cluster, chunk["progress"])
    check = (checked["separation"] != "none" and family.name in ("binomial", "poisson")
             and checked["control"] == "optimum")
    found: list[Separation] = []
    while True:  # again after separated rows are dropped, until the fit certifies itself
        aliased, kept, path, final, null = _fit_once(data, checked, robust is not None)
        if not check or certified(path, final) or not handle_chunked(
                data, kept, path.coef, checked["separation"], found):
            break
    names = spec.column_names
    if aliased.size:
        warn_user(f"{aliased.size} coefficient(s) not defined because of singularities "
                  f"(aliased columns: {', '.join(names[j] for j in aliased)})",
                  RankDeficiencyWarning)
    meat, n_clusters = final.meat, None
    if final.cluster_sums is not None:
        sums = final.cluster_sums.to_numpy()
        meat, n_clusters = sums.T @ sums, int(sums.shape[0])
    warn_state(path.n_halved, path.boundary, path.converged, final.n_boundary, family.name)
    return ChunkedGlmResults(
        spec=spec, family_name=family.name, link_name=link.name, coef_kept=path.coef,
        kept=kept, aliased=aliased, r=path.r, deviance=path.deviance,
        null_deviance=final.null_deviance if null is None else null, pearson=final.pearson,
        aic_family=aic_from_sums(family, final.aic_terms, path.deviance),
        n_obs=path.first.n_obs, n_dropped=data.n_dropped, iterations=path.iter, iterations_r=path.iter_r,
        converged=path.converged, robust=robust, meat=meat, n_clusters=n_clusters, call=call,
        method=request.method, control=checked["control"], offset_spec=checked["offset"],
        separation=merged(found, dropped=bool(data.separated)))


def _refuse_counts(formula: Any) -> None:
    lhs = formula.split("~", 1)[0] if isinstance(formula, str) else ""
    if counts_columns(lhs) is not None:
        raise OptionError(f"a {lhs.strip()} response is fitted in memory only: for data larger "
                          "than memory give the proportion of successes as the response and "
                          "the trials as weights= (the same fit: 'p ~ x', weights='trials')")


def _fit_once(data: ChunkData, checked: dict[str, Any], meat: bool
              ) -> tuple[IntArray, IntArray, IrlsPath, FinalStats, float | None]:
    """The aliased and kept columns, the IRLS path, the final pass and the null deviance
    with an offset (None: in the final pass) over the rows ``data`` reads."""
    spec = data.spec
    tol = min(1e-7, checked["epsilon"] / 1000)  # as the in-memory fit (R's glm.fit)
    aliased = aliased_from_factor(weights_factor(data), tol)
    kept = np.setdiff1d(np.arange(spec.n_coef), aliased)
    path = chunked_irls(data, kept, epsilon=checked["epsilon"], maxit=checked["maxit"],
                        exact_r=checked["control"] == "R")
    null_mean = path.first.sum_wy / path.first.sum_w if spec.intercept else None
    null = None
    if spec.intercept and checked["offset"] is not None:  # R refits y ~ 1 with the offset
        null = _null_with_offset(data, checked)
    final = final_pass(data, kept, path.coef, null_mean=null_mean, meat=meat,
                       null=null is None)
    return aliased, kept, path, final, null


def _null_with_offset(data: ChunkData, checked: dict[str, Any]) -> float:
    """The null deviance with an offset: the chunked IRLS of y ~ 1 (R's glm.fit refit); the
    intercept is the design's first column."""
    path = chunked_irls(data, np.array([0]), epsilon=checked["epsilon"],
                        maxit=checked["maxit"], exact_r=checked["control"] == "R")
    return path.deviance
