"""Regression diagnostics of a linear fit: influence measures, residual family, tests, plots.

:class:`Diagnostics` is a mixin of :class:`~attnreg.linear.results.LinearResults`. The
influence measures are closed forms from the fit's decomposition (:mod:`attnreg.diagnostics.loo`),
the tests are in :mod:`attnreg.diagnostics.battery`, the plots in :mod:`attnreg.plots`.

What applies to ridge and PCR: hat values, Cook's distances with the effective df and the
internally studentized residuals (``rstandard``) are defined conditionally on the chosen λ or
k and computed; the leave-one-out closed forms (``rstudent``, ``dffits``, ``dfbeta(s)``,
``covratio``, ``loo_sigma``, ``outlier_test``) hold for a projection only and raise an
:class:`~attnreg.exceptions.OptionError` for them.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.linear.contract import LinearFitContract

__all__ = ["RESIDUAL_KINDS", "Diagnostics"]

#: the kinds of :meth:`Diagnostics.residuals`
RESIDUAL_KINDS = ("response", "working", "pearson", "deviance", "standardized", "studentized")


class Diagnostics(LinearFitContract):
    """Influence measures, residuals and diagnostic tests (a mixin of ``LinearResults``)."""

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

    def outlier_test(self, cutoff: float = 0.05, n_max: int = 10) -> Any:
        """Bonferroni test of the largest externally studentized residuals (``car::outlierTest``).

        Each rstudent is t distributed on df_resid − 1 df under the model; the Bonferroni p
        is n times its two-sided p. OLS/WLS only.

        Parameters
        ----------
        cutoff : float
            Rows with Bonferroni p at most ``cutoff`` are reported ...
        n_max : int
            ... at most this many, smallest p first; when there is none, the row with the
            largest abs(rstudent) (R's "No Studentized residuals with Bonferroni p < 0.05").

        Returns
        -------
        OutlierTest
            ``.table`` (rstudent, unadjusted p-value, Bonferroni p), ``.signif``; ``str()`` is
            car's printout.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data.copy()
        >>> df.loc[3, "TOTEMP"] += 2500  # a planted outlier
        >>> ot = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df).outlier_test()
        >>> ot.signif, ot.table.index.tolist()
        (True, [3])
        """
        from attnreg.diagnostics.outliers import outlier_table

        self._require_ols("outlier_test()")
        return outlier_table(self.rstudent(), self.df_resid - 1.0, cutoff, n_max)

    # ------------------------------------------------------------ tests
    def diagnostics(self, *, bg_order: int = 1, reset_power: Any = (2, 3),
                    studentize: bool = True, dw_exact: bool | None = None) -> Any:
        """The standard battery of specification tests, as a table.

        Breusch–Pagan (``lmtest::bptest``, studentized by default), White (bptest on the
        regressors, their squares and cross products; statsmodels' ``het_white``),
        Durbin–Watson with its p-value against positive autocorrelation (``dwtest``: exact
        below 100 rows, else the normal approximation), Breusch–Godfrey of order
        ``bg_order`` in its LM (χ²) and F forms (``bgtest``, lags filled with 0),
        Jarque–Bera (statsmodels), RESET (``resettest(power = reset_power, type =
        "fitted")``) and the condition numbers of √w X (with unit-length columns, R's
        ``kappa(exact = TRUE)``, and as is, statsmodels' ``condition_number``).

        Weighted fits: every test uses the weighted model √w y ~ √w X (BP with the prior
        weights as bptest; DW and BG on √w e and √w X, where lmtest's functions would ignore
        the weights). Durbin–Watson and Breusch–Godfrey take the rows in data order (rows
        of weight zero or with missing values are not part of the fit and are skipped).
        Ridge and PCR: BP, White, JB, the DW statistic and the condition numbers, with
        the residuals conditional on λ or k; BG, RESET and the DW p-value assume OLS
        residuals and are NaN, with a note.

        Parameters
        ----------
        bg_order : int
            Order of the Breusch–Godfrey test.
        reset_power : sequence of int
            Powers of the fitted values added in RESET (distinct, at least 2).
        studentize : bool
            Koenker's studentized Breusch–Pagan (default) or the original.
        dw_exact : bool, optional
            Exact Durbin–Watson p-value (default: when n < 100).

        Returns
        -------
        DiagnosticTable
            ``.table`` (test, statistic, df, p_value, note), ``to_frame()``, ``str()``.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED", data=df)
        >>> print(fit.diagnostics())  # doctest: +NORMALIZE_WHITESPACE
        Regression diagnostics
        <BLANKLINE>
                                       statistic     df  p-value
        Breusch-Pagan (studentized)        3.456      3   0.3265
        White                              6.802      9   0.6577
        Durbin-Watson                    0.90408         0.00114
        Breusch-Godfrey LM (order 1)      4.7141      1  0.02992
        Breusch-Godfrey F (order 1)       4.5947  1, 11  0.05527
        Jarque-Bera                       1.7878      2   0.4091
        RESET                             7.3106  2, 10  0.01105
        Condition number (scaled)         20.749
        Condition number              2.3882e+06
        <BLANKLINE>
        Notes:
          Durbin-Watson: exact p-value (Imhof), alternative: rho > 0; rows in data order
          Breusch-Godfrey LM (order 1): rows in data order
          Breusch-Godfrey F (order 1): rows in data order
          Jarque-Bera: skewness 0.532, kurtosis 4.245
          RESET: powers 2, 3 of the fitted values
          Condition number (scaled): kappa of sqrt(w) X with unit-length columns, intercept included
          Condition number: kappa of sqrt(w) X as is
        """
        from attnreg.diagnostics.battery import diagnostic_table

        if not isinstance(studentize, bool):
            raise OptionError(f"studentize must be True or False, however: {studentize=}")
        if dw_exact is not None and not isinstance(dw_exact, bool):
            raise OptionError(f"dw_exact must be True, False or None, however: {dw_exact=}")
        return diagnostic_table(self, bg_order=bg_order, reset_power=reset_power,
                                studentize=studentize, dw_exact=dw_exact)

    def vif(self) -> pd.DataFrame:
        """Variance inflation factors of the terms (``car::vif``).

        From the correlation matrix R of the coefficients without the intercept (the
        classical covariance σ̂² (X'WX)⁻¹; any covariance in use is ignored, as car does):
        GVIF = det(R_tt) det(R_rest) / det(R) per term t (Fox and Monette 1992), which for
        a single-column term is the usual VIF 1 / (1 − R²_j). Ridge and PCR: the VIFs of
        the design (the same as its OLS fit's).

        Returns
        -------
        DataFrame
            Indexed by term. A column ``VIF`` when every term has one column; otherwise
            ``GVIF``, ``Df`` (columns of the term) and ``GVIF^(1/(2*Df))`` (comparable
            across terms of different size).

        Raises
        ------
        OptionError
            The model has no intercept.
        DataError
            Fewer than 2 terms, or aliased coefficients.

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> print(fit.vif().round(2))
                   VIF
        term
        GNP    1034.22
        UNEMP    23.26
        ARMED     3.15
        POP     225.71
        YEAR    732.64
        """
        from attnreg.diagnostics.collinearity import vif_table

        return vif_table(self)

    # ------------------------------------------------------------ plots
    def plot(self, which: Any = (1, 2, 3, 5), axes: Any = None, *, kind: str = "lm",
             **options: Any) -> Any:
        """R's ``plot.lm`` diagnostic panels (see :func:`attnreg.plots.plot_lm`), or with
        ``kind="event"`` fixest's ``iplot`` of an ``i()`` term
        (:func:`attnreg.plots.plot_event_study`).

        Parameters
        ----------
        which : sequence of int
            1 residuals vs fitted, 2 normal Q–Q, 3 scale–location, 4 Cook's distances,
            5 residuals vs leverage with Cook's distance contours.
        axes : sequence of matplotlib Axes, optional
            (``kind="event"``: one Axes, also as ``ax=``.)
        kind : {"lm", "event"}
        **options
            ``kind="event"``: ``term=`` (which ``i()`` term) and ``level=`` (0.95).

        Returns
        -------
        ndarray of matplotlib Axes, one per panel (``kind="event"``: one Axes)

        Examples
        --------
        >>> import matplotlib
        >>> matplotlib.use("Agg")
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
        >>> [ax.get_title() for ax in fit.plot()]
        ['Residuals vs Fitted', 'Q-Q Residuals', 'Scale-Location', 'Residuals vs Leverage']
        """
        if kind == "event":
            from attnreg.views.eventstudy import plot_event_study

            ax = options.pop("ax", axes)
            return plot_event_study(self, ax=ax, **options)
        if kind != "lm":
            raise OptionError(f"kind must be 'lm' (R's plot.lm panels) or 'event' (the "
                              f"coefficients of an i() term), however: {kind=}")
        if options:
            raise OptionError(f"plot(kind='lm') takes which= and axes=, however it got "
                              f"{', '.join(sorted(options))}")
        from attnreg.diagnostics.plots import plot_lm

        return plot_lm(self, which=which, axes=axes)

    def event_study(self, term: str | None = None, level: float = 0.95) -> pd.DataFrame:
        """The coefficients of an ``i()`` term over its levels, the reference level(s) at 0
        (what ``plot(kind="event")`` draws; :func:`attnreg.views.eventstudy.event_study`).

        Returns
        -------
        DataFrame
            One row per level: ``level``, ``estimate``, ``std_err``, ``lower``, ``upper``
            and ``reference``.
        """
        from attnreg.views.eventstudy import event_study

        return event_study(self, term=term, level=level)
