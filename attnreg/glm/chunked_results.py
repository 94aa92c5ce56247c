"""A GLM fitted chunk by chunk: R's ``glm`` numbers and summary, with no rows kept.

:func:`fit_glm_chunks` is the chunked backend of ``attnreg(..., method="glm" | "logit" |
"probit" | "poisson")`` for data larger than memory (a parquet/CSV glob, arrow, polars, a
dask DataFrame): see :mod:`attnreg.glm.chunked` for the passes. The result holds the
coefficients, the R of the last IRLS step and the sums of the final pass: everything the
summary prints, the covariance in use (any registered covariance the final pass can
accumulate, :mod:`attnreg.glm.chunked_vcov`) and predictions of new rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.exceptions import OptionError, RankDeficiencyWarning
from attnreg.formula.counts import counts_columns
from attnreg.glm.chunked import ChunkData, FinalStats, IrlsPath, aic_from_sums, \
    aliased_from_factor, chunked_irls, final_pass, weights_factor
from attnreg.glm.chunked_separation import certified, handle_chunked, merged
from attnreg.glm.chunked_vcov import ScoreAccumulator, check_streamed_vcov, streamed_vcov
from attnreg.glm.separation import Separation
from attnreg.glm.vcov import sandwich_name
from attnreg.inference.vcov.registry import get_vcov
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
    robust : str or None
        The sandwich in use as the summary names it (vcovHC's or one-way vcovCL's type, else
        the covariance's description); None: ``vcov.glm``.
    meat : ndarray or None
        The covariance in use (``vcov`` on the kept columns), from the registry.
    n_clusters : int or None
    vcov_spec : VcovSpec or None
        The registered covariance in use, completed by the final pass (None: ``vcov.glm``).
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
    vcov_spec: Any = None

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
        """Covariance in use: ``vcov.glm``, or the sandwich of ``vcov=`` (computed by the
        registry from the final pass, :mod:`attnreg.glm.chunked_vcov`)."""
        if self.meat is None:
            inner = streamed_vcov(None, None, self.r, n_obs=self.n_obs,
                                  df_resid=float(self.df_resid), dispersion=self.dispersion)[1]
        else:
            inner = self.meat
        full = np.full((len(self.names),) * 2, np.nan)
        full[np.ix_(self.kept, self.kept)] = inner
        return pd.DataFrame(full, index=self.names, columns=self.names)

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
    wanted = check_streamed_vcov(checked)  # before any pass
    source = as_source(request.data, chunk_rows=chunk["chunk_rows"], sep=chunk["sep"])
    spec = learn_spec(request.formula, source, request.eval_env, weights=request.weights,
                      subset=request.subset, na_action=request.na_action,
                      progress=chunk["progress"])
    family, link = FAMILIES[checked["family"]], LINKS[checked["link"]]
    data = ChunkData(spec, source, family, link, checked["offset"], (), chunk["progress"])
    check = (checked["separation"] != "none" and family.name in ("binomial", "poisson")
             and checked["control"] == "optimum")
    found: list[Separation] = []
    while True:  # again after separated rows are dropped, until the fit certifies itself
        aliased, kept, path, final, null, scores = _fit_once(data, checked, wanted)
        if not check or certified(path, final) or not handle_chunked(
                data, kept, path.coef, checked["separation"], found):
            break
    names = spec.column_names
    if aliased.size:
        warn_user(f"{aliased.size} coefficient(s) not defined because of singularities "
                  f"(aliased columns: {', '.join(names[j] for j in aliased)})",
                  RankDeficiencyWarning)
    fixed = FAMILIES[checked["family"]].fixed_dispersion
    df_resid = path.first.n_obs - kept.size
    dispersion = (1.0 if fixed else final.pearson / df_resid if df_resid > 0
                  else float("nan"))  # as ChunkedGlmResults.dispersion
    meat = vspec = None
    if scores is not None:
        vspec, meat = streamed_vcov(scores.spec, final.scores, path.r, n_obs=path.first.n_obs,
                                    df_resid=float(df_resid), dispersion=dispersion)
    robust, n_clusters = sandwich_name(vspec)
    warn_state(path.n_halved, path.boundary, path.converged, final.n_boundary, family.name)
    return ChunkedGlmResults(
        spec=spec, family_name=family.name, link_name=link.name, coef_kept=path.coef,
        kept=kept, aliased=aliased, r=path.r, deviance=path.deviance,
        null_deviance=final.null_deviance if null is None else null, pearson=final.pearson,
        aic_family=aic_from_sums(family, final.aic_terms, path.deviance),
        n_obs=path.first.n_obs, n_dropped=data.n_dropped, iterations=path.iter, iterations_r=path.iter_r,
        converged=path.converged, robust=robust, meat=meat, n_clusters=n_clusters, call=call,
        method=request.method, control=checked["control"], offset_spec=checked["offset"],
        separation=merged(found, dropped=bool(data.separated)), vcov_spec=vspec)


def _refuse_counts(formula: Any) -> None:
    lhs = formula.split("~", 1)[0] if isinstance(formula, str) else ""
    if counts_columns(lhs) is not None:
        raise OptionError(f"a {lhs.strip()} response is fitted in memory only: for data larger "
                          "than memory give the proportion of successes as the response and "
                          "the trials as weights= (the same fit: 'p ~ x', weights='trials')")


def _fit_once(data: ChunkData, checked: dict[str, Any], wanted: Any
              ) -> tuple[IntArray, IntArray, IrlsPath, FinalStats, float | None,
                         ScoreAccumulator | None]:
    """The aliased and kept columns, the IRLS path, the final pass (with the scores of the
    covariance ``wanted``, when one is), the null deviance with an offset (None: in the final
    pass) and the score accumulator, over the rows ``data`` reads."""
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
    scores = None
    if wanted is not None:
        estimator = get_vcov(wanted[0])
        scores = ScoreAccumulator(estimator.bind_streamed(wanted[1], n_obs=path.first.n_obs),
                                  path.r)
        data.keys = scores.keys  # the final pass reads the cluster or period columns too
    final = final_pass(data, kept, path.coef, null_mean=null_mean, scores=scores,
                       null=null is None)
    return aliased, kept, path, final, null, scores


def _null_with_offset(data: ChunkData, checked: dict[str, Any]) -> float:
    """The null deviance with an offset: the chunked IRLS of y ~ 1 (R's glm.fit refit); the
    intercept is the design's first column."""
    path = chunked_irls(data, np.array([0]), epsilon=checked["epsilon"],
                        maxit=checked["maxit"], exact_r=checked["control"] == "R")
    return path.deviance
