"""Influence measures and the residual family of a linear fit.

:class:`Influence` is a mixin of :class:`~attnreg.linear.results.LinearResults` (through
:class:`~attnreg.diagnostics.reports.Diagnostics`). The influence measures are closed forms
from the fit's decomposition (:mod:`attnreg.diagnostics.loo`).

What applies to ridge and PCR: hat values, Cook's distances with the effective df and the
internally studentized residuals (``rstandard``) are defined conditionally on the chosen λ or
k and computed; the leave-one-out closed forms (``rstudent``, ``dffits``, ``dfbeta(s)``,
``covratio``, ``loo_sigma``, ``outlier_test``) hold for a projection only and raise an
:class:`~attnreg.exceptions.OptionError` for them.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.inference.contract import LinearFitContract

__all__ = ["RESIDUAL_KINDS", "Influence"]

#: the kinds of :meth:`Influence.residuals`
RESIDUAL_KINDS = ("response", "working", "pearson", "deviance", "standardized", "studentized")


class Influence(LinearFitContract):
    """Influence measures and residuals (a mixin of ``LinearResults``)."""

    # ------------------------------------------------------------ leave-one-out pieces
    def _require_ols(self, what: str) -> None:
        rule = self.rule
        if not rule.least_squares:
            raise OptionError(
                f"{what} is defined for OLS/WLS fits only: its leave-one-out closed form "
                "(sigma_(i)^2 = (RSS - e_i^2 / (1 - h_i)) / (n - p - 1), b - b_(i) = "
                "(X'WX)^-1 x_i w_i e_i / (1 - h_i)) holds for a projection, not for the "
                f"{self.method} smoother (method {self.method!r} has no exact hat values: it "
                f"is penalised by {rule.tuning}); hat values, Cook's distances and "
                f"rstandard() are available, conditional on the chosen {rule.parameter}")

    @cached_property
    def _loo(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        """(h with 1 − 10ε → 1, σ₍ᵢ₎ on the rescaled response, rstudent) of an OLS fit."""
        from attnreg.diagnostics.loo import hat_one, loo_sigma_scaled

        h = hat_one(self._hat)
        ew = self._resid_ws
        sigma_i = loo_sigma_scaled(ew, h, self.df_resid)
        with np.errstate(divide="ignore", invalid="ignore"):
            rstudent = ew / (sigma_i * np.sqrt(1.0 - h))
        rstudent[~np.isfinite(rstudent)] = np.nan
        return h, sigma_i, rstudent

    def _std_cooks(self) -> tuple[FloatArray, FloatArray]:
        """Internally studentized residuals and Cook's distances (p = tr(H))."""
        h, e = self._hat, self._resid_ws
        s = float(np.sqrt(self._sigma2_s))
        with np.errstate(divide="ignore", invalid="ignore"):
            std = e / (s * np.sqrt(1.0 - h))
            cooks = std**2 * h / ((1.0 - h) * self.edf)
        return std, cooks

    def _series(self, values: FloatArray, name: str) -> pd.Series:
        return pd.Series(values, index=self.design.row_labels, name=name)

    # ------------------------------------------------------------ residual family
    def rstandard(self) -> pd.Series:
        """Internally studentized residuals √wᵢ eᵢ / (σ̂ sqrt(1 − hᵢ)) (R's ``rstandard``).

        Rows of the fit only (rows of weight zero are left out, as R does); NaN where
        hᵢ = 1. Ridge and PCR: with σ̂ on the effective residual df, conditional on λ or k.

        Returns
        -------
        Series, shape (n_obs,)
            Indexed by row label.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> print(f"{fit.rstandard().iloc[4]:.6f}")
        1.689930
        """
        std = self._std_cooks()[0]
        if self.rule.least_squares:
            std = np.where(self._loo[0] < 1.0, std, np.nan)
        return self._series(std, "rstandard")

    def rstudent(self) -> pd.Series:
        """Externally studentized residuals √wᵢ eᵢ / (σ₍ᵢ₎ sqrt(1 − hᵢ)) (R's ``rstudent``).

        σ₍ᵢ₎ is the residual standard error without row i, from the closed form
        RSS₍ᵢ₎ = RSS − ẽᵢ² / (1 − hᵢ) (no refits). OLS/WLS only; rows of the fit only; NaN
        where hᵢ = 1 or with fewer than 2 residual df.

        Returns
        -------
        Series, shape (n_obs,)

        Raises
        ------
        OptionError
            For ridge and PCR fits.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> print(f"{fit.rstudent().iloc[4]:.6f}")
        1.896771
        """
        self._require_ols("rstudent()")
        return self._series(self._loo[2].copy(), "rstudent")

    def loo_sigma(self) -> pd.Series:
        """σ₍ᵢ₎: the residual standard error of the fit without row i (R's
        ``lm.influence(fit)$sigma``, broom's ``.sigma``), by the closed form. OLS/WLS only.

        Returns
        -------
        Series, shape (n_obs,)

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> print(f"{fit.loo_sigma().iloc[4]:.3f} {fit.sigma:.3f}")
        258.122 289.715
        """
        self._require_ols("loo_sigma()")
        x = self.spectrum.y_exponent
        s = self._loo[1]
        return self._series(np.ldexp(s, x) if x else s.copy(), "sigma_i")

    def residuals(self, kind: str = "response") -> pd.Series:
        """Residuals of one kind, by row label.

        Parameters
        ----------
        kind : {"response", "working", "pearson", "deviance", "standardized", "studentized"}
            ``"response"`` and ``"working"``: y − ŷ (:attr:`resid`); ``"pearson"`` and
            ``"deviance"``: √w (y − ŷ) (R's ``residuals.lm`` of those types: for a linear
            model the same); these four include rows of weight zero (the weighted ones are 0
            there), as R does. ``"standardized"``: :meth:`rstandard`; ``"studentized"``:
            :meth:`rstudent` (rows of the fit only).

        Returns
        -------
        Series

        Examples
        --------
        >>> import numpy as np
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df, weights=1 / df["POP"])
        >>> r, p = fit.residuals(), fit.residuals("pearson")
        >>> bool(np.allclose(p, r / np.sqrt(df["POP"])))
        True
        """
        if kind in ("response", "working"):
            return self.resid.rename(kind)
        if kind in ("pearson", "deviance"):
            r = self.resid
            w = self.design.weights
            if w is None:
                return r.rename(kind)
            zero = self.design.zero_weight
            sw = np.sqrt(w) if zero is None else zero.all_rows(
                np.sqrt(w), self.design.row_labels, np.zeros(zero.y.size), "w").to_numpy()
            return (r * sw).rename(kind)
        if kind == "standardized":
            return self.rstandard()
        if kind == "studentized":
            return self.rstudent()
        raise OptionError(f"kind must be one of {', '.join(map(repr, RESIDUAL_KINDS))}, "
                          f"however: {kind=}")

    # ------------------------------------------------------------ influence
    def influence(self) -> pd.DataFrame:
        """Influence measures of every row of the fit, indexed by row label.

        Returns
        -------
        DataFrame, shape (n_obs, 3) or (n_obs, 7 + p)
            Always: ``hat`` (diagonal of the hat matrix: the leverage, also each training
            row's attention weight on itself), ``cooks_distance`` (ẽᵢ² hᵢ / (p σ̂² (1 − hᵢ)²),
            p = tr(H)) and ``std_resid`` (internally studentized residuals, = rstandard).
            OLS/WLS also (R's ``influence.measures``): ``student_resid`` (rstudent),
            ``dffits`` (rstudent · sqrt(hᵢ / (1 − hᵢ))), ``covratio``
            ((σ₍ᵢ₎ / σ̂)^(2p) / (1 − hᵢ)), ``sigma_ratio`` (σ₍ᵢ₎ / σ̂) and one
            ``dfb_<name>`` per estimable coefficient (dfbetas: the change in the
            coefficient when row i is left out, in units of its standard error with σ₍ᵢ₎;
            R's ``dfb.<name>``). Rows of weight zero are not part of the fit and are left
            out, as R does; rows with hᵢ = 1 have NaN (dfbetas 0, as R). Ridge and PCR: the
            first three, conditional on λ or k (with the effective df).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> infl = fit.influence()
        >>> list(infl.columns)[:7]
        ['hat', 'cooks_distance', 'std_resid', 'student_resid', 'dffits', 'covratio', 'sigma_ratio']
        >>> list(infl.columns)[7:9]
        ['dfb_(Intercept)', 'dfb_GNP']
        >>> print(f"{infl['hat'].sum():.4f}")  # trace of the hat matrix = number of coefficients
        6.0000
        >>> print(f"{infl['hat'].iloc[0]:.4f} {infl['cooks_distance'].iloc[0]:.4f}")
        0.4018 0.1498
        """
        h, e = self._hat, self._resid_ws
        std, cooks = self._std_cooks()
        out = {"hat": h, "cooks_distance": cooks, "std_resid": std}
        if not self.rule.least_squares:  # no exact hat values: no leave-one-out closed forms
            return pd.DataFrame(out, index=self.design.row_labels)
        from attnreg.diagnostics.loo import dfbeta_blocks

        s = float(np.sqrt(self._sigma2_s))

        h1, sigma_i, rstudent = self._loo
        est = self._estimable
        dfbetas, _, _ = dfbeta_blocks(self.spectrum, self.filtered.f, len(self.names), est,
                                      e, h1, sigma_i)
        p = self.edf
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ratio = sigma_i / s
            covratio = ratio ** (2.0 * p) / (1.0 - h1)
            dffits = rstudent * np.sqrt(h1 / (1.0 - h1))
        std = np.where(h1 < 1.0, std, np.nan)
        cooks = np.where(h1 < 1.0, cooks, np.nan)
        out.update(std_resid=std, cooks_distance=cooks, student_resid=rstudent,
                   dffits=dffits, covratio=np.where(np.isfinite(covratio), covratio, np.nan),
                   sigma_ratio=ratio)
        frame = pd.DataFrame(out, index=self.design.row_labels)
        dfb = pd.DataFrame(dfbetas, index=self.design.row_labels,
                           columns=[f"dfb_{self.names[j]}" for j in est])
        return pd.concat([frame, dfb], axis=1)

    def dfbeta(self) -> pd.DataFrame:
        """b − b₍ᵢ₎: the change in each estimable coefficient when row i is left out (R's
        ``dfbeta``), (X'WX)⁻¹ xᵢ wᵢ eᵢ / (1 − hᵢ) from the decomposition (no refits, no
        inverse of X'X). OLS/WLS only; 0 for rows with hᵢ = 1, as R.

        Returns
        -------
        DataFrame, shape (n_obs, p)
            One column per estimable coefficient, named as the coefficient.

        Examples
        --------
        >>> import numpy as np
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df)
        >>> drop0 = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df.iloc[1:])
        >>> bool(np.allclose(fit.dfbeta().iloc[0], fit.coef - drop0.coef))
        True
        """
        self._require_ols("dfbeta()")
        from attnreg.diagnostics.loo import dfbeta_blocks

        h1, sigma_i, _ = self._loo
        est = self._estimable
        _, dfb_z, E = dfbeta_blocks(self.spectrum, self.filtered.f, len(self.names), est,
                                    self._resid_ws, h1, sigma_i)
        with np.errstate(over="ignore", under="ignore"):
            values = np.ldexp(dfb_z, E[None, :])
        return pd.DataFrame(values, index=self.design.row_labels,
                            columns=[self.names[j] for j in est])
