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
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg._warn import warn_user
from attnreg.exceptions import InferenceWarning
from attnreg.inference.glance import TidyGlance
from attnreg.inference.tstats import StudentInference
from attnreg.large.accumulate import RFactor
from attnreg.large.chunked_covariance import ChunkedCovariance
from attnreg.large.chunked_predict import ChunkedPrediction
from attnreg.large.hypotheses import ChunkedHypotheses
from attnreg.large.meat import MeatPart
from attnreg.large.spec import ChunkSpec
from attnreg.inference.vcov.cluster_columns import ClusterCounts
from attnreg.linear.rules import SpectralRule
from attnreg.methods import get_method

__all__ = ["ChunkedResults", "ClusterCounts"]


@dataclass(frozen=True)
class ChunkedResults(ChunkedCovariance, ChunkedPrediction, StudentInference, TidyGlance,
                     ChunkedHypotheses):
    """A spectral fit (OLS, WLS, ridge, PCR) of data read chunk by chunk. Immutable.

    The covariance, standard errors and ``with_vcov()`` are
    :class:`~attnreg.large.chunked_covariance.ChunkedCovariance`'s, ``predict()`` and
    ``attention()`` :class:`~attnreg.large.chunked_predict.ChunkedPrediction`'s.

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
        from attnreg.scaling import unit_weights

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

    def _with(self, **changes: Any) -> ChunkedResults:
        """A copy with fields changed (cached statistics recomputed)."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        values.update(changes)
        out = ChunkedResults(**values)
        if "_source_description" in self.__dict__:
            object.__setattr__(out, "_source_description", self.__dict__["_source_description"])
        return out

    # ------------------------------------------------------------ prediction

    def event_study(self, term: str | None = None, level: float = 0.95) -> pd.DataFrame:
        """The coefficients of an ``i()`` term over its levels, the reference level(s) at 0
        (:func:`attnreg.views.eventstudy.event_study`)."""
        from attnreg.views.eventstudy import event_study

        return event_study(self, term=term, level=level)

    # ------------------------------------------------------------ reports
    def summary(self) -> Any:
        """The R ``summary.lm``-style report, with notes on the chunked passes
        (:func:`attnreg.large.chunked_summary.chunked_summary`).

        Returns
        -------
        attnreg.report.Summary
        """
        from attnreg.large.chunked_summary import chunked_summary

        return chunked_summary(self)


    def __repr__(self) -> str:
        coefs = ", ".join(f"{n}={v:.4g}" for n, v in self.coef.items())
        return f"<ChunkedResults {self.method}: {coefs}; n={self.nobs}>"

