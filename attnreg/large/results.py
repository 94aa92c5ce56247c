"""The result of a chunked fit: coefficients, inference and an R-style summary without the data.

A :class:`ChunkedResults` holds the spec (pass 1), the accumulated R factor, the spectrum,
the filter, the covariance in use and the statistics of the last pass over the rows
(:class:`attnreg.large.passes.MeatPart`): O(n_coef²) numbers and a bounded residual sample,
never the data. It keeps its source (a reference: files by path, objects in memory only
until it is pickled) so that :meth:`ChunkedResults.with_vcov` can read the rows again.

Examples
--------
>>> import numpy as np, pandas as pd
>>> import attnreg as ar
>>> rng = np.random.default_rng(0)
>>> df = pd.DataFrame({"x": rng.normal(size=400), "g": rng.choice(list("abcd"), 400)})
>>> df["y"] = 1 + df.x + rng.normal(size=400)
>>> fit = ar.attnreg("y ~ x + C(g)", df, chunk_rows=100)   # chunk_rows: the chunked path
>>> type(fit).__name__, fit.nobs
('ChunkedResults', 400)
>>> mem = ar.attnreg("y ~ x + C(g)", df)
>>> bool(np.allclose(fit.std_err, mem.std_err, rtol=1e-12))
True
>>> print(f"{fit.with_vcov('cluster', cluster='g').std_err['x']:.4f}")
0.0398
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
import patsy

from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.inference.tstats import f_sf
from attnreg.exceptions import InferenceWarning
from attnreg.large.accumulate import RFactor
from attnreg.large.hypotheses import ChunkedHypotheses
from attnreg.large.passes import MeatPart
from attnreg.large.spec import ChunkSpec
from attnreg.linear.cluster_columns import ClusterCounts
from attnreg.linear.scorestats import ScoreStats
from attnreg.inference.glance import TidyGlance
from attnreg.inference.tstats import StudentInference
from attnreg.linear.rules import SpectralRule
from attnreg.methods import get_method

__all__ = ["ChunkedResults", "ClusterCounts"]

def _plain(label: Any) -> Any:
    """A row label as Python prints it (``123`` rather than ``np.int64(123)``)."""
    return label.item() if isinstance(label, np.generic) else label


@dataclass(frozen=True)
class ChunkedResults(StudentInference, TidyGlance, ChunkedHypotheses):
    """A spectral fit (OLS, WLS, ridge, PCR) of data read chunk by chunk. Immutable.

    ``tidy()`` and ``glance()`` are those of the in-memory fit
    (:class:`~attnreg.inference.glance.TidyGlance`), and :func:`attnreg.etable` takes it as a
    column; ``wald_test()`` and ``t_test()`` are the in-memory fit's
    (:class:`~attnreg.large.hypotheses.ChunkedHypotheses`), and :func:`attnreg.anova`
    compares nested chunked fits; ``augment()``, which needs the rows, is refused.

    Attributes
    ----------
    spec : ChunkSpec
        The formula's design as learned in pass 1.
    method : str
    factor : RFactor
        The R factor of every row (with row counts).
    spectrum : Spectrum
        The decomposition of the scaled design (its U holds no rows).
    filtered : Filtered
        Filter factors, coefficients (refined for ill-conditioned OLS), effective df.
    selection : Selection or None
        How λ or k was chosen (GCV) or that it was fixed.
    vcov_spec : VcovSpec
        The covariance in use.
    call : str
    standardize : bool
    source : ChunkSource or None
        Where the rows are read again (not pickled unless it is files).
    stats : MeatPart or None
        The last pass's residual statistics and covariance meat (None: no pass over the
        rows since the R factor; see :attr:`residual_stats`).
    refinement : tuple of float
        Sizes of the refinement corrections (OLS on ill-conditioned designs).
    lazy_residuals : bool
        Whether :attr:`residual_stats` may read the rows again when first asked for.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from attnreg.large.fit import fit_chunked
    >>> rng = np.random.default_rng(2)
    >>> df = pd.DataFrame({"x": rng.normal(size=120)})
    >>> df["y"] = 2 + 3 * df.x + rng.normal(size=120)
    >>> fit = fit_chunked("y ~ x", df, chunk_rows=50)
    >>> print(f"{fit.coef['x']:.3f} ({fit.std_err['x']:.3f}), R2 {fit.r_squared:.3f}")
    2.803 (0.094), R2 0.883
    >>> fit.predict(df.head(2)).round(3).tolist()
    [2.513, 0.517]
    """

    spec: ChunkSpec = field(repr=False)
    method: str
    factor: RFactor = field(repr=False)
    spectrum: Any = field(repr=False)
    filtered: Any = field(repr=False)
    selection: Any
    vcov_spec: Any
    call: str
    standardize: bool
    source: Any = field(default=None, repr=False, compare=False)
    stats: MeatPart | None = field(default=None, repr=False, compare=False)
    middle_robust: FloatArray | None = field(default=None, repr=False, compare=False)
    refinement: tuple[float, ...] = ()
    lazy_residuals: bool = field(default=False, repr=False, compare=False)

    # ------------------------------------------------------------ pickling
    def __getstate__(self) -> dict[str, Any]:
        """Pickle support: the source only if it is files; the spectrum without its n-vector."""
        state = dict(self.__dict__)
        if state.get("stats") is None and state.get("residual_stats") is not None:
            state["stats"] = state["residual_stats"]  # computed on demand: kept
        for key in [k for k in state if k not in {f.name for f in dataclasses.fields(self)}]:
            state.pop(key)  # cached properties
        src = state["source"]
        state["source"] = src if getattr(src, "portable", False) else None
        state["source_description"] = getattr(src, "description", None)
        state["spectrum"] = dataclasses.replace(self.spectrum, sqrt_w=np.ones(0))
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        from attnreg.linear.scaling import unit_weights

        state = dict(state)
        desc = state.pop("source_description", None)
        sp = state["spectrum"]
        state["spectrum"] = dataclasses.replace(sp, sqrt_w=unit_weights(state["factor"].n_obs))
        self.__dict__.update(state)
        object.__setattr__(self, "_source_description", desc)

    @property
    def source_description(self) -> str:
        """What the data was (``"parquet dataset trips/*.parquet"``)."""
        if self.source is not None:
            return str(self.source.description)
        return str(self.__dict__.get("_source_description") or "data not kept")

    # ------------------------------------------------------------ basic quantities
    @property
    def names(self) -> list[str]:
        """Coefficient names."""
        return self.spec.column_names

    @property
    def nobs(self) -> int:
        """Rows in the fit."""
        return int(self.factor.n_obs)

    @property
    def n_dropped(self) -> int:
        """Rows dropped because of missing values (over all chunks)."""
        return int(self.factor.n_dropped)

    @property
    def n_excluded(self) -> int:
        """Rows excluded by ``subset``."""
        return int(self.factor.n_excluded)

    @property
    def n_read(self) -> int:
        """Rows read from the source."""
        return int(self.factor.n_read)

    @property
    def intercept(self) -> bool:
        """Whether the design has an intercept."""
        return self.spec.intercept

    @property
    def coef(self) -> pd.Series:
        """Coefficients (NaN where aliased)."""
        return pd.Series(self.filtered.coef, index=self.names, name="coef")

    @property
    def aliased(self) -> list[str]:
        """Names of the coefficients not defined because of singularities."""
        return [self.names[j] for j in self.spectrum.aliased]

    @property
    def rule(self) -> SpectralRule:
        """What the method declares (the spectral rule the chunked fit applied)."""
        return get_method(self.method).require_rule("a chunked fit")

    @property
    def lam(self) -> float | None:
        """Ridge's λ (None for other methods)."""
        return float(self.selection.value) if self.rule.tuning == "lam" else None

    @property
    def k(self) -> int | None:
        """PCR's number of components (None for other methods)."""
        return int(self.selection.value) if self.rule.tuning == "k" else None

    @property
    def edf(self) -> float:
        """Effective degrees of freedom tr(H), the intercept included."""
        return float(self.filtered.edf)

    @property
    def df_model(self) -> float:
        """Model degrees of freedom, excluding the intercept."""
        return self.edf - (1.0 if self.intercept else 0.0)

    @property
    def df_resid(self) -> float:
        """Residual degrees of freedom n − tr(H)."""
        return self.nobs - self.edf

    @cached_property
    def rss(self) -> float:
        """(Weighted) residual sum of squares, from the spectrum: Σ (1 − f)² (U'ỹ)² + the part
        of ỹ outside the column space (R's last diagonal entry, squared). The same number
        whichever passes over the rows ran (a pass's own sum, :attr:`residual_stats`'s
        ``rss``, agrees to rounding)."""
        from attnreg.linear.filters import rss_of_filter

        return float(rss_of_filter(self.spectrum, self.filtered.f))

    @cached_property
    def residual_stats(self) -> MeatPart | None:
        """Residual quantiles (a uniform sample above 200,000 rows), extremes and the largest
        hat value: from the last pass over the rows, else from one pass now (the first time
        they are asked for, e.g. by :meth:`summary`), else None (``residuals=False``, or the
        rows are no longer available)."""
        if self.stats is not None:
            return self.stats
        if not self.lazy_residuals or self.source is None or not getattr(
                self.source, "available", True):
            return None  # no residual pass, or the files are gone (a pickled fit, moved)
        from attnreg.large.passes import pass_plan, run_pass

        return run_pass(pass_plan(self, "none"), self.source)

    @property
    def tss(self) -> float:
        """Total sum of squares (centred with an intercept, as R)."""
        return float(self.spectrum.yss)

    @cached_property
    def _df_ok(self) -> bool:
        if self.df_resid >= 1.0:
            return True
        warn_user(f"inference is not defined: the residual degrees of freedom are "
                  f"{self.df_resid:.3g}", InferenceWarning)
        return False

    @cached_property
    def sigma(self) -> float:
        """Residual standard error sqrt(RSS / df_resid)."""
        return float(np.sqrt(self.rss / self.df_resid)) if self._df_ok else float("nan")

    @cached_property
    def r_squared(self) -> float:
        """R² = 1 − RSS/TSS (uncentred without an intercept, as R)."""
        return 1.0 - self.rss / self.tss if self.tss > 0 else float("nan")

    @property
    def adj_r_squared(self) -> float:
        """Adjusted R²."""
        if not self._df_ok:
            return float("nan")
        n0 = self.nobs - (1 if self.intercept else 0)
        return 1.0 - (1.0 - self.r_squared) * n0 / self.df_resid

    @cached_property
    def loglik(self) -> float:
        """Gaussian log-likelihood (R's ``logLik.lm``, prior weights included)."""
        n = self.nobs
        return 0.5 * (self.factor.sum_log_w - n * (np.log(2 * np.pi) + 1.0 - np.log(n)
                                                   + np.log(self.rss)))

    # ------------------------------------------------------------ inference
    @cached_property
    def score_stats(self) -> ScoreStats:
        """The fit's sizes and residual variance, as the covariance estimators read them
        (:class:`~attnreg.linear.scorestats.ScoreStats` without score sums: those come from
        the pass of :meth:`with_vcov`)."""
        sp = self.spectrum
        with np.errstate(invalid="ignore", divide="ignore"):
            sigma2 = float(np.sqrt(self.rss / self.df_resid)) ** 2 if self.df_resid > 0 \
                else float("nan")
        return ScoreStats(n_obs=self.nobs, df_resid=float(self.df_resid), sigma2=sigma2,
                          sum_w=float(sp.sum_w), intercept=sp.intercept is not None,
                          rank=int(sp.rank))

    @cached_property
    def _middle(self) -> FloatArray:
        """The middle matrix of the covariance in use: computed by :meth:`with_vcov`'s pass,
        or (a covariance of σ² alone, e.g. the classical one) from :attr:`score_stats`."""
        sp = self.spectrum
        if not self._df_ok:
            return np.full((1 + sp.rank,) * 2, np.nan)
        if self.middle_robust is not None:
            return self.middle_robust
        return self.vcov_spec.estimator.middle_from_scores(self.vcov_spec, self.score_stats)

    @cached_property
    def _vcov_z(self) -> tuple[FloatArray, IntArray]:
        from attnreg.linear.inference import vcov_scaled

        Vz, E = vcov_scaled(self.spectrum, self.filtered.f, len(self.names), self._middle)
        if not self._df_ok:
            return np.full_like(Vz, np.nan), E
        return self.vcov_spec.estimator.adjust_vcov(self.vcov_spec, Vz, E), E

    @cached_property
    def vcov(self) -> pd.DataFrame:
        """Covariance matrix of the coefficients under :attr:`vcov_spec` (NaN where aliased)."""
        from attnreg.linear.inference import scale_back

        V = scale_back(*self._vcov_z)
        return pd.DataFrame(V, index=self.names, columns=self.names)

    @cached_property
    def std_err(self) -> pd.Series:
        """Standard errors of the coefficients."""
        Vz, E = self._vcov_z
        with np.errstate(invalid="ignore"):
            se = np.ldexp(np.sqrt(np.diag(Vz)), E)
        return pd.Series(se, index=self.names, name="std_err")

    @cached_property
    def f_test(self) -> Any:
        """Overall F test: R's F (classical), or the Wald F under a robust covariance."""
        from attnreg.linear.coefficients import slopes_wald
        from attnreg.linear.fitstats import FTest

        df1, df2 = self.df_model, self.df_resid
        nan = float("nan")
        if df1 <= 0 or not self._df_ok:
            return FTest(nan, df1, df2, nan)
        if self.vcov_spec.estimator.classical:
            rss, tss = self.rss, self.tss
            if rss == 0.0:
                return FTest(math.inf, float(df1), float(df2), 0.0)
            stat = ((tss - rss) / df1) / (rss / df2)
            dfi = self.df_inference  # df_resid, or inf under df=np.inf (χ²(df1) of df1 F)
            return FTest(float(stat), float(df1), float(dfi), f_sf(stat, df1, dfi))
        stat, q = slopes_wald(self)  # the in-memory fit's Wald F of the slopes
        return FTest(stat, float(q), float(self.df_inference), f_sf(stat, q, self.df_inference))

    # ------------------------------------------------------------ covariances
    def with_vcov(self, kind: str = "classical", *, maxlags: int | None = None,
                  adjust: bool = False, data: Any = None, progress: bool = False,
                  **options: Any) -> ChunkedResults:
        """The same fit under another covariance, from one more pass over the rows.

        Parameters
        ----------
        kind : str
            A covariance of :data:`~attnreg.linear.inference.VCOV_REGISTRY` that is computed
            from score statistics (:mod:`attnreg.large.covariance`): ``"classical"``,
            ``"HC0"``–``"HC3"``, ``"HAC"`` (Bartlett, fixed lag), ``"cluster"`` (``"HC1"``
            or ``"HC0"``), ``"DK"``, and any registered one that implements
            :meth:`~attnreg.linear.inference.CovarianceEstimator.score_needs`.
        maxlags : int, optional
            HAC / Driscoll–Kraay lags (HAC default floor(4 (n/100)^(2/9)), DK floor(T^(1/4))).
        adjust : bool
            HAC: times n / (n − df).
        data : optional
            The source again (needed after unpickling a fit of data in memory).
        progress : bool
        **options
            ``cluster="firm"`` / ``"firm + year"`` / a list of columns, ``type="HC1"|"HC0"``,
            ``cadjust=``, ``df="cluster"|"residual"``, ``fix=``; DK: ``time="year"``,
            ``type="HC0"|"HC1"|"sss"``. Cluster ids must be columns of the data.

        Returns
        -------
        ChunkedResults

        Raises
        ------
        OptionError
            Unknown covariance or option (named, before any work); one that needs every
            row at once (HC4–HC5, HAC kernels or prewhitening, ``type="CR2"``: each
            cluster's block of the hat matrix); no source to read.
        """
        from attnreg.large.covariance import chunked_vcov

        return chunked_vcov(self, kind, maxlags=maxlags, adjust=adjust, data=data,  # type: ignore[no-any-return]
                            progress=progress, **options)

    def _with(self, **changes: Any) -> ChunkedResults:
        """A copy with fields changed (cached statistics recomputed)."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        values.update(changes)
        out = ChunkedResults(**values)
        if "_source_description" in self.__dict__:
            object.__setattr__(out, "_source_description", self.__dict__["_source_description"])
        return out

    # ------------------------------------------------------------ prediction
    def _design_of(self, frame: pd.DataFrame) -> FloatArray:
        from attnreg.formula.builder import design_rows
        from attnreg.formula.checks import translate_patsy_error as _translate_patsy_error
        from attnreg.formula.frame import prepare_frame, string_labels, variable_uses
        from attnreg.formula.parse import check_names

        frame = string_labels(frame, "newdata")
        factors = list(self.spec.x_info.factor_infos.keys())
        check_names(factors, frame, self.spec.eval_env, "newdata")
        uses = {name: outside for f in factors for name, outside in variable_uses(f.code).items()}
        frame = prepare_frame(frame, uses, "newdata")
        try:  # patsy's build_design_matrices, factors encoded per distinct value
            mat, rows = design_rows(self.spec.x_info, frame)
        except patsy.PatsyError as exc:
            raise _translate_patsy_error(exc, "newdata") from None
        X = np.full((frame.shape[0], len(self.names)), np.nan)
        X[rows] = mat
        return X

    def predict(self, newdata: Any) -> Any:
        """Predictions for new rows, built with the fit's levels and transform statistics.

        Parameters
        ----------
        newdata : DataFrame, dict, dask DataFrame, or a large source (path, arrow, polars)
            A pandas DataFrame or dict is predicted in memory; a dask DataFrame lazily,
            partition by partition (:func:`attnreg.large.dask_predict.predict_dask`); a
            large source chunk by chunk.

        Returns
        -------
        Series, dask Series (lazy: nothing is computed until asked), or an iterator of
        Series (one per chunk) for a large source
            NaN for rows with missing values.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from attnreg.large.fit import fit_chunked
        >>> df = pd.DataFrame({"x": np.arange(10.0), "y": 1 + 2 * np.arange(10.0)})
        >>> fit = fit_chunked("y ~ x", df, chunk_rows=4)
        >>> fit.predict({"x": [0.5, 2.0]}).round(6).tolist()
        [2.0, 5.0]
        """
        from attnreg.large.dask_predict import is_dask_frame, predict_dask
        from attnreg.large.sources import as_source, is_large

        if is_dask_frame(newdata):
            return predict_dask(self, newdata)
        coef = np.where(np.isnan(self.filtered.coef), 0.0, self.filtered.coef)
        if isinstance(newdata, dict):
            newdata = pd.DataFrame(newdata)
        if isinstance(newdata, pd.DataFrame) and not is_large(newdata):
            return pd.Series(self._design_of(newdata) @ coef, index=newdata.index, name="fit")
        source = as_source(newdata, chunk_rows=getattr(self.source, "chunk_rows", None))

        def chunks() -> Iterator[pd.Series]:
            cols = [c for c in self.spec.columns_needed if c != self.spec.response_name
                    and c in source.columns]
            for frame in source.frames(cols):
                yield pd.Series(self._design_of(frame) @ coef, index=frame.index, name="fit")

        return chunks()

    def attention(self, newdata: Any, *, k: int = 10, data: Any = None) -> Any:
        """The attention view for a few query rows, streamed over the training rows.

        The weight ω_ji of training row i in the prediction for query j (as
        :meth:`attnreg.linear.results.LinearResults.attention`), summarised in one pass over
        the chunks (over the partitions on their workers for a dask fit) without forming
        the J × N matrix: the top contributors per query and the diagnostics.

        Parameters
        ----------
        newdata : DataFrame or dict
            The query rows (a handful: each pass computes J weights per training row).
        k : int
            Contributors the pass keeps per query (``top_k`` with a larger k reads again).
        data : optional
            The training rows again (needed after unpickling a fit of data in memory).

        Returns
        -------
        StreamedAttention
            ``.top_k(k, by="abs"|"weight")`` (long format: ``query``, ``rank``,
            ``train_label``, ``weight``, ``y``, ``contribution``) and ``.diagnostics``
            (``prediction``, ``weight_sum``, ``negative_mass``, ``leverage``,
            ``effective_neighbours``, ``entropy``, ``self_weight``).

        Raises
        ------
        OptionError
            The fit keeps no source and ``data`` is not given; ``newdata`` is not a frame.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from attnreg.large.fit import fit_chunked
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"x": rng.normal(size=300)})
        >>> df["y"] = 1 + df.x + rng.normal(size=300)
        >>> fit = fit_chunked("y ~ x", df, chunk_rows=100)
        >>> att = fit.attention(df.iloc[[0, 1]], k=3)
        >>> att.top_k(3).shape, float(round(att.diagnostics["weight_sum"].iloc[0], 12))
        ((6, 6), 1.0)
        """
        from attnreg.large.dask_attention import streamed_attention

        if isinstance(newdata, dict):
            newdata = pd.DataFrame(newdata)
        source = None if data is None else self._reread(data)
        return streamed_attention(self, newdata, k=k, source=source)

    def _reread(self, data: Any) -> Any:
        """``data`` (the fit's files at a new location) as a source read like the fit's own:
        same chunk size, same CSV separator."""
        from attnreg.large.sources import as_source

        sep = getattr(self.source, "_sep", None)
        return as_source(data, chunk_rows=getattr(self.source, "chunk_rows", None),
                         sep=sep if isinstance(data, (str, os.PathLike, list, tuple)) else None)

    def event_study(self, term: str | None = None, level: float = 0.95) -> pd.DataFrame:
        """The coefficients of an ``i()`` term over its levels, the reference level(s) at 0
        (:func:`attnreg.views.eventstudy.event_study`)."""
        from attnreg.views.eventstudy import event_study

        return event_study(self, term=term, level=level)

    # ------------------------------------------------------------ reports
    def summary(self) -> Any:
        """The R ``summary.lm``-style report, with notes on the chunked passes.

        Returns
        -------
        attnreg.report.Summary
        """
        from attnreg.report.sections import (
            Call,
            Coefficients,
            FitStatistics,
            Lines,
            Penalty,
            Residuals,
        )
        from attnreg.report.summary import Summary

        sections: list[Any] = [Call(self.call)]
        notes = [f"Chunked fit of {self.source_description}: {self.n_read} rows read, "
                 f"{self.nobs} in the fit"
                 + (f", {self.n_dropped} dropped for missing values" if self.n_dropped else "")
                 + (f", {self.n_excluded} excluded by subset" if self.n_excluded else "")
                 + (f", {self.factor.n_zero_weight} of weight zero" if self.factor.n_zero_weight
                    else "") + "."]
        st = self.residual_stats
        if st is not None:
            values = np.concatenate([st.sample_values, [st.resid_min, st.resid_max]]) \
                if st.sample_values.size < st.n_obs else st.sample_values
            sections.append(Residuals(np.asarray(values, dtype=np.float64),
                                      tuple(str(i) for i in range(values.size)),
                                      self.factor.weighted, float(self.df_resid)))
            if st.sample_values.size < st.n_obs:
                notes.append(f"Residual quantiles from a uniform sample of "
                             f"{st.sample_values.size} of {st.n_obs} rows (Min and Max exact).")
            notes.append(f"Leverage (hat values): mean {self.edf / self.nobs:.4g}, max "
                         f"{st.hat_max:.4g} (row {_plain(st.hat_max_label)!r}).")
        elif self.lazy_residuals:
            notes.append("Residuals not computed (the rows are no longer available): no "
                         "residual quantiles.")
        else:
            notes.append("Residuals not computed (residuals=False): no residual quantiles.")
        if self.refinement:
            notes.append(f"OLS refined in extended precision: {len(self.refinement)} pass(es).")
        table = pd.DataFrame({"Estimate": self.coef, "Std. Error": self.std_err,
                              "t value": self.t_value, "Pr(>|t|)": self.p_value})
        sections.append(Coefficients(table, n_aliased=len(self.aliased)))
        has_model = self.df_model > 0
        ft = self.f_test if has_model else None
        sections.append(FitStatistics(
            sigma=float(self.sigma), df_resid=float(self.df_resid),
            effective=self.rule.penalized, n_deleted=self.n_dropped,
            r_squared=float(self.r_squared) if has_model else None,
            adj_r_squared=float(self.adj_r_squared) if has_model else None,
            f_statistic=None if ft is None else float(ft.statistic),
            f_df1=None if ft is None else float(ft.df1),
            f_df2=None if ft is None else float(ft.df2),
            f_p_value=None if ft is None else float(ft.p_value),
            covariance=self.vcov_spec.kind, covariance_label=self.vcov_spec.label()))
        if self.selection is not None:
            sel = self.selection
            sections.append(Penalty(method=self.method, parameter=self.rule.parameter,
                                    value=float(sel.value), criterion=sel.criterion,
                                    n_candidates=int(sel.grid.size),
                                    standardized=bool(self.standardize), edf=self.edf))
        sections.append(Lines(tuple(notes), lead_blank=True))
        return Summary(title=f"attnreg {self.method} fit (chunked)", sections=tuple(sections))

    def __repr__(self) -> str:
        coefs = ", ".join(f"{n}={v:.4g}" for n, v in self.coef.items())
        return f"<ChunkedResults {self.method}: {coefs}; n={self.nobs}>"

