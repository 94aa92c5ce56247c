"""The covariance of a chunked fit: the registry's estimators on the pass's score sums.

:class:`ChunkedCovariance` is a mixin of :class:`~attnreg.large.results.ChunkedResults`: the
fit's sizes and σ² as the covariance estimators read them (:attr:`score_stats`), the middle
matrix of the covariance in use (from :meth:`with_vcov`'s pass over the rows, or from σ²
alone for the classical one), the covariance and standard errors in the spectrum's
coordinates, and the overall F test. :meth:`with_vcov` runs the pass
(:func:`attnreg.large.covariance.chunked_vcov`).

Examples
--------
>>> import numpy as np, pandas as pd
>>> from attnreg.large.fit import fit_chunked
>>> rng = np.random.default_rng(3)
>>> df = pd.DataFrame({"x": rng.normal(size=200)})
>>> df["y"] = 1 + df.x + rng.normal(size=200)
>>> fit = fit_chunked("y ~ x", df, chunk_rows=64)
>>> fit.score_stats.n_obs, fit.with_vcov("HC1").vcov_spec.kind
(200, 'HC1')
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray, IntArray
from attnreg.inference.tstats import f_sf
from attnreg.inference.vcov.scorestats import ScoreStats

if TYPE_CHECKING:
    from attnreg.large.results import ChunkedResults

__all__ = ["ChunkedCovariance"]


class ChunkedCovariance:
    """Covariance, standard errors and the F test of a chunked fit (a mixin)."""

    if TYPE_CHECKING:  # provided by the results class
        spectrum: Any
        filtered: Any
        vcov_spec: Any
        middle_robust: FloatArray | None

        @property
        def names(self) -> list[str]: ...
        @property
        def nobs(self) -> int: ...
        @property
        def df_resid(self) -> float: ...
        @property
        def df_model(self) -> float: ...
        @property
        def df_inference(self) -> float: ...
        @property
        def rss(self) -> float: ...
        @property
        def tss(self) -> float: ...
        @property
        def _df_ok(self) -> bool: ...

    @cached_property
    def score_stats(self) -> ScoreStats:
        """The fit's sizes and residual variance, as the covariance estimators read them
        (:class:`~attnreg.inference.vcov.scorestats.ScoreStats` without score sums: those come from
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
        from attnreg.inference.vcov.registry import vcov_scaled

        Vz, E = vcov_scaled(self.spectrum, self.filtered.f, len(self.names), self._middle)
        if not self._df_ok:
            return np.full_like(Vz, np.nan), E
        return self.vcov_spec.estimator.adjust_vcov(self.vcov_spec, Vz, E), E

    @cached_property
    def vcov(self) -> pd.DataFrame:
        """Covariance matrix of the coefficients under :attr:`vcov_spec` (NaN where aliased)."""
        from attnreg.inference.vcov.registry import scale_back

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


    def with_vcov(self, kind: str = "classical", *, maxlags: int | None = None,
                  adjust: bool = False, data: Any = None, progress: bool = False,
                  **options: Any) -> ChunkedResults:
        """The same fit under another covariance, from one more pass over the rows.

        Parameters
        ----------
        kind : str
            A covariance of :data:`~attnreg.inference.vcov.registry.VCOV_REGISTRY` that is computed
            from score statistics (:mod:`attnreg.large.covariance`): ``"classical"``,
            ``"HC0"``–``"HC3"``, ``"HAC"`` (Bartlett, fixed lag), ``"cluster"`` (``"HC1"``
            or ``"HC0"``), ``"DK"``, and any registered one that implements
            :meth:`~attnreg.inference.vcov.registry.CovarianceEstimator.score_needs`.
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
