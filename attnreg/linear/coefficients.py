"""Inference on the coefficients of a linear fit under the covariance in use.

:class:`CoefficientInference` is a mixin of :class:`~attnreg.linear.results.LinearResults`:
the covariance matrix (any registered covariance), standard errors and ``with_vcov`` to
change the covariance; t and p values, intervals, AIC and BIC come from
:class:`~attnreg.inference.tstats.StudentInference`, shared with the chunked results. Computed in exactly
rescaled coordinates, so the numbers are right at any scale of the data.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.exceptions import ScaleWarning
from attnreg.inference.contract import LinearFitContract
from attnreg.inference.tstats import StudentInference
from attnreg.inference.vcov.cluster import wald_from_vcov
from attnreg.inference.vcov.registry import (
    make_vcov_spec,
    middle_matrix,
    scale_back,
    vcov_scaled,
    wald_f,
)
from attnreg.scaling import out_of_range


__all__ = ["CoefficientInference", "slopes_wald"]


def slopes_wald(fit: Any) -> tuple[float, int]:
    """The joint Wald statistic of a spectral fit's slopes under its covariance, and q.

    From the components' covariance (:func:`~attnreg.inference.vcov.registry.wald_f`), or from
    the coefficients' covariance itself where the estimator corrected it afterwards (the
    eigenvalue fix of a multi-way cluster covariance). ``fit`` is an in-memory or a chunked
    fit (its ``spectrum``, ``filtered``, ``_middle`` and ``_vcov_z``).
    """
    Vz, E = fit._vcov_z
    raw, _ = vcov_scaled(fit.spectrum, fit.filtered.f, len(fit.names), fit._middle)
    if np.array_equal(raw, Vz, equal_nan=True):
        return wald_f(fit.spectrum, fit.filtered.f, fit.filtered.coef, fit._middle)
    slopes = np.asarray(fit.spectrum.kept, dtype=np.int64)
    return wald_from_vcov(Vz, E, fit.filtered.coef, slopes)


class CoefficientInference(StudentInference, LinearFitContract):
    """Covariances, standard errors, tests and intervals (a mixin of ``LinearResults``)."""

    @cached_property
    def _middle(self) -> FloatArray:
        """Covariance of the spectrum's components (rescaled response) under the vcov in use."""
        if not self._df_ok:
            return np.full((1 + self.spectrum.rank,) * 2, np.nan)
        # the hat values (a pass over every row) only for the estimators that read them
        hat = (self._hat if self.vcov_spec.estimator.needs_hat
               else np.full(self.nobs, np.nan))
        return middle_matrix(self.spectrum, spec=self.vcov_spec, sigma2=self._sigma2_s,
                             resid_w=self._resid_ws, hat=hat, df_resid=self.df_resid,
                             f=self.filtered.f)

    @cached_property
    def _vcov_z(self) -> tuple[FloatArray, IntArray]:
        """(V_z, E) with vcov = diag(2^E) V_z diag(2^E) (all NaN with less than one df)."""
        Vz, E = vcov_scaled(self.spectrum, self.filtered.f, len(self.names), self._middle)
        if not self._df_ok:
            return np.full_like(Vz, np.nan), E
        return self.vcov_spec.estimator.adjust_vcov(self.vcov_spec, Vz, E), E

    def _wald(self) -> tuple[float, int]:
        """The joint Wald statistic of the slopes under the covariance in use, and q
        (:func:`slopes_wald`)."""
        return slopes_wald(self)

    @cached_property
    def _cr2_parts(self) -> Any:
        """The CR2 adjustment of each cluster (Satterthwaite df and HTZ tests reuse it)."""
        from attnreg.inference.vcov.satterthwaite import cr2_parts_of

        return cr2_parts_of(self)

    @cached_property
    def df_coef(self) -> pd.Series:
        """Degrees of freedom of each coefficient's t test and interval: :attr:`df_inference`
        for all, or with ``df="satterthwaite"`` (CR2) each coefficient's Satterthwaite df,
        as clubSandwich's ``coef_test(test = "Satterthwaite")`` (NaN where aliased)."""
        from attnreg.inference.vcov.satterthwaite import coefficient_df, is_satterthwaite

        if not is_satterthwaite(self.vcov_spec) or not self._df_ok:
            return pd.Series(self.df_inference, index=self.names, name="df")
        return pd.Series(coefficient_df(self), index=self.names, name="df")

    @cached_property
    def vcov(self) -> pd.DataFrame:
        """Covariance matrix of the coefficients under :attr:`vcov_spec` (NaN where aliased)."""
        Vz, E = self._vcov_z
        V = scale_back(Vz, E)
        lost = out_of_range(Vz, V)
        if lost.any():
            bad = [self.names[j] for j in np.flatnonzero(lost.any(axis=1))]
            warn_user(f"covariance entries of {', '.join(bad)} are outside the float64 range "
                  "at the data's scale (products of the response's scale over the "
                  "columns'): reported as inf or 0; std_err, t and p values, intervals "
                  "and the F test are computed without them and are unaffected", ScaleWarning)
        return pd.DataFrame(V, index=self.names, columns=self.names)

    @cached_property
    def std_err(self) -> pd.Series:
        """Standard errors of the coefficients (NaN with less than one residual df)."""
        Vz, E = self._vcov_z
        with np.errstate(invalid="ignore"):
            se = np.ldexp(np.sqrt(np.diag(Vz)), E)
        return pd.Series(se, index=self.names, name="std_err")

    def with_vcov(self, kind: str = "classical", *, maxlags: int | None = None,
                  adjust: bool = False, **options: Any) -> Any:
        """A new result (a ``LinearResults``) with another covariance estimator; this one is
        unchanged.

        Parameters
        ----------
        kind : str
            A registered covariance (:data:`attnreg.inference.vcov.registry.VCOV_REGISTRY`):
            ``"classical"``, ``"HC0"`` … ``"HC3"``, ``"HC4"``, ``"HC4m"``, ``"HC5"``
            (sandwich's ``vcovHC`` types), ``"HAC"`` (kernel HAC, :mod:`attnreg.inference.vcov.hac`),
            ``"cluster"`` (cluster-robust, one- or multi-way) or ``"DK"`` /
            ``"driscoll_kraay"`` (Driscoll–Kraay for panels).
        maxlags : int or "newey-west", optional
            HAC Bartlett lag truncation (default floor(4 (n/100)^(2/9)); ``"newey-west"``:
            the floor of the Newey–West 1994 bandwidth, as ``NeweyWest(fit)``);
            Driscoll–Kraay: lags in periods (default floor(T^(1/4)), as ``plm::vcovSCC``).
        adjust : bool
            HAC: multiply by n/(n − edf) like sandwich's ``adjust=TRUE``.
        **options
            ``"cluster"``: ``cluster=`` a column name of the data the fit was given, ids per
            data row (a Series is aligned on the data's index), ``"firm + year"`` or a list
            (multi-way, Cameron–Gelbach–Miller); ``type="HC1"`` (default; sandwich's
            ``vcovCL``: G/(G − 1) · (n − 1)/(n − K)), ``"HC0"`` (G/(G − 1) only) or
            ``"CR2"`` (Bell–McCaffrey, clubSandwich); ``cadjust=False`` drops G/(G − 1)
            (HC0/HC1 only; refused with CR2); ``df="cluster"`` (default: t and F on G − 1
            df), ``"residual"`` or, with CR2, ``"satterthwaite"`` (clubSandwich's
            Satterthwaite df per coefficient, :attr:`df_coef`, and HTZ Wald tests); ``fix=True``
            (default) sets negative eigenvalues of a multi-way covariance to zero.
            ``"DK"``: ``time=`` the period column or ids, ``type="HC0"`` (default),
            ``"HC1"`` or ``"sss"``. ``"HAC"``: ``kernel="bartlett"|"parzen"|"qs"``,
            ``bandwidth=`` a number, ``"andrews"`` (default with a kernel) or
            ``"newey-west"``, ``prewhite=True|False|p`` (VAR(p) prewhitening). Any kind:
            ``df=np.inf`` for z and χ² tests (``lmtest::coeftest(df = Inf)``).

        Returns
        -------
        LinearResults
            Same coefficients; standard errors, tests and intervals use the new estimator.
            For ridge and PCR every covariance is conditional on the chosen λ or k.

        Raises
        ------
        OptionError
            An unknown covariance or option, or an unknown cluster column (named).
        DataError
            A missing cluster id on a fitted row (column and row named), ids of the wrong
            length (both lengths), or a single cluster.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> robust = fit.with_vcov("HC1")
        >>> print(f"{fit.std_err['UNEMP']:.4f} -> {robust.std_err['UNEMP']:.4f}")
        0.3861 -> 0.4566
        >>> robust.vcov_spec.label()
        'heteroskedasticity-robust HC1'
        >>> bool((robust.coef == fit.coef).all()), fit.vcov_spec.kind
        (True, 'classical')
        >>> print(f"{fit.with_vcov('HAC', maxlags=2).std_err['UNEMP']:.4f}")
        0.3374
        >>> decade = (df["YEAR"] // 5).astype(int)          # four five-year clusters
        >>> cl = fit.with_vcov("cluster", cluster=decade)
        >>> cl.vcov_spec.label(), cl.df_inference
        ('cluster-robust (HC1) by YEAR, 4 clusters; t and F on 3 df', 3.0)
        """
        spec = make_vcov_spec(kind, maxlags=maxlags, adjust=adjust, n_obs=self.nobs,
                              design=self.design, **options)
        return dataclasses.replace(self, vcov_spec=spec)  # type: ignore[type-var]
