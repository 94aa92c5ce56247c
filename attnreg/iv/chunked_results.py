"""An IV formula fitted chunk by chunk: the in-memory fit's numbers and summary, no rows kept.

:func:`attnreg.iv.chunked_fit.fit_iv_chunks` is what ``attnreg("y ~ x | d ~ z", data, method="tsls" | "2sls" |
"liml" | "fuller")`` does with data larger than memory (a parquet/CSV glob, arrow, polars, a
dask DataFrame, or any data with ``chunk_rows=``): pass 1 merges the R factor of
``[X, Z, D, y]`` over the chunks, pass 2 the robust statistics' contributions (see
:mod:`attnreg.iv.chunked` and :mod:`attnreg.iv.chunked_stats`). GMM and CUE (whose weight
matrix needs a pass per step), fixed effects and the first-stage fits are refused with the way
to fit in memory.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg.exceptions import DataError, OptionError
from attnreg.iv.arset import ARSet
from attnreg.iv.chunked_stats import ChunkedIVStats
from attnreg.iv.coeftests import IVCoefTests
from attnreg.iv.estimators import IVFit
from attnreg.iv.results import IVVcovSpec
from attnreg.iv.results_reports import IVReports
from attnreg.iv.weak import WeakIV
from attnreg.report import Summary

if TYPE_CHECKING:
    pass

__all__ = ["IN_MEMORY", "ChunkedIVFrame", "ChunkedIVResults"]

#: How to fit in memory, for the refusals' messages.
IN_MEMORY = ("fit it in memory instead (read the columns the formula needs into a pandas "
              "DataFrame, e.g. dask's .compute() or pandas.read_parquet(...))")


@dataclass(frozen=True)
class ChunkedIVFrame:
    """The shape of a chunked IV fit (no rows): names and zero-row arrays of its columns.

    Attributes
    ----------
    D, Z : ndarray, shape (0, k2) and (0, l)
    exog_names, endog_names, instrument_names : tuple of str
    regressor_terms : tuple of str
        The formula terms of the regressors (for the designs of new rows).
    """

    D: Any
    Z: Any
    exog_names: tuple[str, ...]
    endog_names: tuple[str, ...]
    instrument_names: tuple[str, ...]
    regressor_terms: tuple[str, ...] = ()
    fixed_effects: tuple[str, ...] = ()
    n_absorbed: int = 0
    weights: None = None

    @property
    def names(self) -> list[str]:
        """Coefficient names: exogenous then endogenous."""
        return [*self.exog_names, *self.endog_names]

    @property
    def intercept(self) -> bool:
        """Whether the exogenous part has an intercept column."""
        return "(Intercept)" in self.exog_names


@dataclass(frozen=True)
class ChunkedIVResults(IVCoefTests, IVReports):
    """A 2SLS, LIML or Fuller fit of data read chunk by chunk (the in-memory
    :class:`attnreg.iv.results.IVResults`' numbers, summary, tidy and glance).

    Attributes
    ----------
    frame : ChunkedIVFrame
    stats : ChunkedIVStats
        The merged factor, the fit of its rows and the robust contributions' factor.
    method : str
        ``"tsls"``, ``"2sls"``, ``"liml"`` or ``"fuller"``.
    vcov_kind : str
    cluster : str or None
    alpha : float
    formula, call : str
    spec : ChunkSpec
        The combined design learned over the chunks.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.normal(size=400), "z1": rng.normal(size=400),
    ...                    "z2": rng.normal(size=400), "u": rng.normal(size=400)})
    >>> df["d"] = df.z1 + 0.5 * df.z2 + df.u + rng.normal(size=400)
    >>> df["y"] = 1 + 0.5 * df.x + 2 * df.d + df.u
    >>> fit = ar.attnreg("y ~ x | d ~ z1 + z2", df, vcov="HC1", chunk_rows=100)
    >>> type(fit).__name__, fit.nobs
    ('ChunkedIVResults', 400)
    >>> memory = ar.attnreg("y ~ x | d ~ z1 + z2", df, vcov="HC1")
    >>> bool(np.allclose(fit.std_err, memory.std_err, rtol=1e-10, atol=0))
    True
    """

    frame: Any
    stats: ChunkedIVStats = field(repr=False)
    method: str = "tsls"
    vcov_kind: str = "classical"
    cluster: str | None = None
    alpha: float = 1.0
    formula: str = ""
    call: str = ""
    spec: Any = field(default=None, repr=False)

    @property
    def fit(self) -> IVFit:
        """The fit of the merged factor's rows (coefficients, bread, κ; no data rows)."""
        return self.stats.pieces.fit

    @property
    def names(self) -> list[str]:
        """Coefficient names: exogenous regressors, then endogenous."""
        return self.frame.names

    @property
    def nobs(self) -> int:
        """Number of rows used."""
        return self.stats.n

    @property
    def df_model(self) -> int:
        """Coefficients tested by the Wald test (all but the intercept)."""
        return len(self.names) - int(self.frame.intercept)

    @property
    def df_resid(self) -> int:
        """n − k."""
        return self.nobs - len(self.names)

    @cached_property
    def coef(self) -> pd.Series:
        """Coefficients, shape (k,)."""
        return pd.Series(self.fit.coef, index=self.names, name="coef")

    @cached_property
    def vcov(self) -> pd.DataFrame:
        """Covariance of the coefficients under :attr:`vcov_kind`, shape (k, k)."""
        return pd.DataFrame(self.stats.vcov(), index=self.names, columns=self.names)

    def predict(self, newdata: Any = None) -> pd.Series:
        """``[X, D] coef`` for the rows of ``newdata`` (a pandas DataFrame holding the
        regressors' variables, exogenous and endogenous), with the fit's factor levels and
        transforms; a row with a missing value gives NaN. A chunked fit keeps no fitted
        values: ``newdata`` is required."""
        from attnreg.large.newrows import design_of_frame

        if not isinstance(newdata, pd.DataFrame):
            raise OptionError("predict() of a chunked IV fit needs newdata= (a pandas DataFrame "
                              "of the rows to predict); the fit keeps no fitted values, however: "
                              f"type(newdata) is {type(newdata).__name__}")
        spec = dataclasses.replace(
            self.spec, x_info=self.spec.x_info.subset(list(self.frame.regressor_terms)))
        X = design_of_frame(spec, newdata)
        return pd.Series(X @ self.fit.coef, index=newdata.index, name="fit")

    @property
    def first_stage(self) -> Any:
        """Refused: the first-stage fits' own residuals and summaries need the rows."""
        raise OptionError("a chunked IV fit has no first-stage fits (their residuals need the "
                          "rows); its weak_iv table has the first-stage statistics, or "
                          + IN_MEMORY)

    def attention(self, newdata: Any = None) -> Any:
        """Refused: the weights are one per training row."""
        raise OptionError("attention() of a chunked IV fit is refused: its weights are one per "
                          "training row; " + IN_MEMORY)

    @property
    def vcov_spec(self) -> IVVcovSpec:
        """The covariance in use, described."""
        return IVVcovSpec(self.vcov_kind, self.cluster, self.stats.meat.n_clusters)

    def with_vcov(self, kind: str = "classical", *, cluster: Any = None) -> ChunkedIVResults:
        """Refused: another covariance needs another pass over the data."""
        raise OptionError("a chunked IV fit keeps the contributions of its own covariance only; "
                          f"refit with vcov={kind!r}" + (f", cluster={cluster!r}" if cluster else ""))

    # ------------------------------------------------------------ fit statistics
    @cached_property
    def rss(self) -> float:
        """Weighted residual sum of squares Σ w e²."""
        e = self.fit.wresid
        return float(e @ e) * self.stats.pieces.merged.mean_w

    @property
    def sigma(self) -> float:
        """Residual standard error sqrt(Σ w e² / (n − k))."""
        return float(np.sqrt(self.rss / self.df_resid))

    @cached_property
    def r_squared(self) -> float:
        """1 − RSS/TSS (TSS centred with an intercept; can be negative)."""
        m = self.stats.pieces.merged
        yy = float(m.P[:, -1] @ m.P[:, -1]) * m.mean_w  # Σ w y²
        tss = yy - m.wsum[-1] ** 2 / (m.mean_w * m.n) if self.frame.intercept else yy
        return 1 - self.rss / tss

    @property
    def adj_r_squared(self) -> float:
        """1 − (1 − R²)(n − 1)/(n − k) (n rather than n − 1 without an intercept)."""
        return 1 - (1 - self.r_squared) * (self.nobs - int(self.frame.intercept)) / self.df_resid

    # ------------------------------------------------------------ weak instruments
    def diagnostics(self) -> pd.DataFrame:
        """AER's diagnostics under the covariance in use, shape (k2 + 2, 4)."""
        return self.stats.diagnostics(self.frame.endog_names)

    def weak_instruments(self, tau: float = 0.10) -> WeakIV:
        """The weak-instrument statistics (robust ones under the covariance in use, HC0
        under the classical one)."""
        return self.stats.weak_instruments(tau)

    @property
    def weak_iv(self) -> pd.DataFrame:
        """:meth:`weak_instruments` as one table (:func:`attnreg.iv.weak_table.weak_iv_table`)."""
        from attnreg.iv.weak_table import weak_iv_table

        return weak_iv_table(self.weak_instruments(), self.frame.endog_names)

    def anderson_rubin(self, level: float = 0.95) -> ARSet:
        """The Anderson–Rubin confidence set of the endogenous coefficient (one endogenous
        regressor), from the merged factor."""
        if len(self.frame.endog_names) != 1:
            raise DataError(f"the AR confidence set needs one endogenous regressor, however the "
                            f"model has {len(self.frame.endog_names)}: "
                            f"{', '.join(self.frame.endog_names)}")
        if not 0 < level < 1:
            raise OptionError(f"level must be strictly between 0 and 1, however: {level=}")
        return self.stats.anderson_rubin(level)

    def ar_confidence_set(self, level: float = 0.95) -> ARSet:
        """:meth:`anderson_rubin`."""
        return self.anderson_rubin(level)

    def summary(self) -> Summary:
        """The in-memory summary (:func:`attnreg.iv.report.iv_summary`); the residual quantiles
        only up to :data:`attnreg.iv.chunked.RESIDUALS_KEPT` rows."""
        from attnreg.iv.chunked_report import chunked_iv_summary

        return chunked_iv_summary(self)

    @property
    def residual_sample(self) -> Any:
        """``sqrt(w) e`` of every row when at most 200,000 rows were used, else None."""
        return self.stats.meat.resid

    def __repr__(self) -> str:
        return (f"<attnreg chunked IV fit ({self.method}): {self.formula}; n={self.nobs}; "
                f"vcov={self.vcov_kind}>")
