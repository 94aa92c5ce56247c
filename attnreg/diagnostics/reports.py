"""Regression diagnostics of a linear fit beyond the influence measures: the diagnostic tests
(:mod:`attnreg.diagnostics.battery`), variance inflation factors, the outlier test, R's
``plot.lm`` panels and the event-study view.

:class:`Diagnostics` is a mixin of :class:`~attnreg.linear.results.LinearResults`; its
influence measures and residuals come from :class:`~attnreg.diagnostics.influence.Influence`.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from attnreg.diagnostics.influence import Influence
from attnreg.exceptions import OptionError

__all__ = ["Diagnostics"]


class Diagnostics(Influence):
    """Influence measures, residuals and diagnostic tests (a mixin of ``LinearResults``)."""

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
