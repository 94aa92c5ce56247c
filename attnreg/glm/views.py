"""What a fitted in-memory GLM is used for: predictions and their intervals, the attention
view, the summary, confidence intervals, marginal effects and the analysis of deviance.

:class:`GlmViews` is a mixin of :class:`~attnreg.glm.results.GlmResults`; each method hands
the fit to the module that computes it (:mod:`attnreg.glm.predict`, :mod:`attnreg.glm.summary`,
:mod:`attnreg.glm.profile`, :mod:`attnreg.glm.margins`, :mod:`attnreg.glm.anova`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from attnreg.exceptions import OptionError
from attnreg.glm.predict import glm_attention, predict_glm

if TYPE_CHECKING:
    from attnreg.glm.results import GlmResults

__all__ = ["GlmViews"]


class GlmViews:
    """Mixin: ``predict``, ``attention``, ``summary``, ``confint``, ``margins`` and ``anova``
    of a GLM fit; those that need the fixed effects' own estimates refuse a fit that absorbed
    them (``absorbed``)."""

    absorbed: Any

    def _fitted(self) -> GlmResults:
        return cast("GlmResults", self)

    def _needs_effects(self, what: str) -> None:
        if self.absorbed is not None:
            raise OptionError(f"{what} of a GLM with absorbed fixed effects needs the fixed "
                              "effects' estimates, which the fit does not form; write them as "
                              "C(firm) for this")

    def predict(self, newdata: Any = None, type: str = "link", offset: Any = None, *,
                se_fit: bool = False, interval: str = "none", level: float = 0.95) -> Any:
        """Predictions on the link (η) or response (μ) scale, with standard errors or intervals.

        Parameters
        ----------
        newdata : DataFrame or dict, optional
            New rows (the training rows when None). Missing values predict NaN.
        type : {"link", "response"}
        offset : str or array-like, optional
            The offset of ``newdata``; by default the fit's ``offset=`` (a column name or
            an expression) evaluated on ``newdata``. A vector offset must be given again.
        se_fit : bool
            Add R's ``se.fit`` (column ``se_fit``): on the link scale sqrt(x' V x) with V the
            covariance in use, on the response scale by the delta method.
        interval : {"none", "confidence"}
            Add ``lwr`` and ``upr``: η ± q·se on the link scale, through the inverse link for
            ``type="response"``; q normal for z tests, t(df_resid) otherwise.
        level : float
            Coverage of the interval.

        Returns
        -------
        Series, shape (n_new,), or DataFrame with ``fit`` and ``se_fit`` and/or ``lwr``, ``upr``

        Examples
        --------
        >>> import numpy as np, pandas as pd, attnreg as ar
        >>> df = pd.DataFrame({"y": [0, 0, 1, 0, 1, 1, 0, 1], "x": np.arange(8.0)})
        >>> fit = ar.attnreg("y ~ x", df, method="logit")
        >>> band = fit.predict(pd.DataFrame({"x": [3.5]}), type="response", interval="confidence")
        >>> list(band.columns), bool(0 < band["lwr"].iloc[0] < band["fit"].iloc[0] < band["upr"].iloc[0] < 1)
        (['fit', 'lwr', 'upr'], True)
        """
        if newdata is not None or se_fit or interval != "none":
            self._needs_effects("predict(newdata) or its standard errors")
        return predict_glm(self._fitted(), newdata, type, offset, se_fit=se_fit, interval=interval,
                           level=level)

    def attention(self, newdata: Any = None, offset: Any = None, *,
                  chunk_size: int | None = None) -> Any:
        """The link-scale prediction as a weighted vote of the training rows.

        ``η* = offset* + Σ_i ω_i z_i`` with z the working responses and ω from the final IRLS
        weights (:mod:`attnreg.glm.predict`); ``weights @ y_train + base`` reproduces
        ``predict(newdata)`` on the link scale. Nothing J×N is formed until ``weights`` is read.

        Parameters
        ----------
        newdata : DataFrame or dict, optional
            Query rows; the training rows when omitted.
        offset : str or array-like, optional
            As for :meth:`predict`.
        chunk_size : int, optional
            Queries per chunk.

        Returns
        -------
        AttentionWeights
            ``y_train`` holds the working responses, ``base`` the queries' offsets.
        """
        self._needs_effects("attention()")
        return glm_attention(self._fitted(), newdata, offset, chunk_size=chunk_size)

    def summary(self) -> Any:
        """R's ``summary.glm``; ``str()`` prints as ``print(summary(glm(...)))``."""
        from attnreg.glm.summary import glm_summary

        return glm_summary(self._fitted())

    def confint(self, level: float = 0.95, method: str = "profile") -> pd.DataFrame:
        """R's ``confint(glm)``: profile-likelihood (MASS) or ``method="wald"`` intervals,
        shape (n_coef, 2) (see :mod:`attnreg.glm.profile`)."""
        from attnreg.glm.profile import confint

        if method != "wald":
            self._needs_effects("confint(method='profile')")
        return confint(self._fitted(), level, method)

    def margins(self, at: str = "overall", dummy: bool = False) -> pd.DataFrame:
        """Marginal effects dμ/dx with delta-method standard errors, as statsmodels'
        ``get_margeff(at=, dummy=)`` (see :mod:`attnreg.glm.margins`)."""
        from attnreg.glm.margins import margins

        self._needs_effects("margins()")
        return margins(self._fitted(), at, dummy)

    def analysis_of_deviance(self, *others: Any, test: str | None = None) -> Any:
        """R's ``anova(glm, test=)`` (no ``others``) or ``anova(glm, *others, test=)``;
        :func:`attnreg.anova` calls it (see :mod:`attnreg.glm.anova`)."""
        from attnreg.glm.anova import deviance_anova

        self._needs_effects("anova()")
        return deviance_anova(self._fitted(), *others, test=test)

    def anova(self, test: str | None = None) -> Any:
        """R's sequential analysis of deviance, ``anova(glm, test=)``."""
        return self.analysis_of_deviance(test=test)
