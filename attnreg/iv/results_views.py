"""What an IV fit predicts, and from which rows: :meth:`predict`, :meth:`attention`, the
first stages and the fixed effects (a mixin of :class:`attnreg.iv.results.IVResults`)."""

from __future__ import annotations

import dataclasses
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg.exceptions import DataError, OptionError
from attnreg.iv.attention import IVAttention, tsls_attention
from attnreg.iv.compare_ols import ols_weights
from attnreg.iv.fe_views import fe_attention, iv_fixed_effects, predict_iv_fe

__all__ = ["IVViews"]


class IVViews:
    """Mixin: prediction, the attention view, first stages and fixed effects of an IV fit."""

    if TYPE_CHECKING:
        from attnreg.iv.estimators import IVFit
        from attnreg.iv.frame import IVFrame

        frame: IVFrame
        fit: IVFit
        method: str

        @property
        def design(self) -> Any: ...

        @property
        def fitted(self) -> pd.Series: ...

    @cached_property
    def first_stage(self) -> dict[str, Any]:
        """The first-stage OLS fits, one per endogenous regressor, under the covariance in
        use (:func:`attnreg.iv.first_stage.first_stages`): ``LinearResults``, or with absorbed
        fixed effects ``FixedEffectsResults`` with the same fixed effects."""
        from attnreg.iv.first_stage import first_stages

        return first_stages(self)  # type: ignore[arg-type]

    def fixef(self) -> dict[str, pd.Series]:
        """The absorbed fixed effects, one Series per fixed effect indexed by its levels
        (fixest's normalisation, as :meth:`FixedEffectsResults.fixef`)."""
        if not self.frame.fixed_effects:
            raise OptionError("fixef() needs an IV fit with absorbed fixed effects "
                              "('y ~ x | firm | d ~ z'), however this fit has none")
        return iv_fixed_effects(self)  # type: ignore[arg-type]

    def predict(self, newdata: Any = None) -> pd.Series:
        """``[X, D] coef`` for new rows (the training rows' fitted values when None), plus the
        estimated fixed effects of each row's levels when they are absorbed (the
        dummy-variable fit's prediction); a row with a missing value, or a level not in the
        fit (with an ``InferenceWarning``), gives NaN."""
        if newdata is None:
            return self.fitted.rename("fit")
        if self.frame.fixed_effects:
            return predict_iv_fe(self, newdata)  # type: ignore[arg-type]
        X, labels = self.design.rebuild(newdata)
        return pd.Series(X @ self.fit.coef, index=labels, name="fit")

    def attention(self, newdata: Any = None) -> IVAttention:
        """2SLS predictions at the rows of ``newdata`` (default the training rows) as weights
        over the training responses (:func:`attnreg.iv.attention.tsls_attention`; with
        absorbed fixed effects :func:`attnreg.iv.fe_views.fe_attention`, the dummy-variable
        fit's weights): ``weights @ y == predictions``. ``.compare_ols()`` sets them next to
        the OLS weights of the same formula (which rows the instruments re-weight)."""
        f = self.frame
        if self.method != "tsls":
            raise OptionError(f"attention() is the view of 2SLS, however: method={self.method!r}; "
                              "refit with method='tsls'")
        if f.fixed_effects:
            return fe_attention(self, newdata)  # type: ignore[arg-type]
        X0 = self.design.X if newdata is None else self.design.rebuild(newdata)[0]
        if not np.isfinite(X0).all():
            raise DataError("newdata has rows with missing values; drop them first")
        att = tsls_attention(X0, f.y, f.X if f.X.shape[1] else None, f.D, f.Z, f.weights)
        return dataclasses.replace(att, ols_weights=ols_weights(X0, self.design.X, f.weights),
                                   y=f.y, row_labels=self.design.row_labels)
