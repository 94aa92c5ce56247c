"""What the mixins of :class:`~attnreg.linear.results.LinearResults` may use of it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from attnreg._typing import FloatArray, IntArray

if TYPE_CHECKING:
    from attnreg.formula.design import Design
    from attnreg.linear.filters import Filtered
    from attnreg.linear.inference import VcovSpec
    from attnreg.linear.rules import SpectralRule
    from attnreg.linear.spectral import Spectrum

__all__ = ["LinearFitContract"]


class LinearFitContract:
    """The fields and statistics of a linear fit that its mixins rely on (types only)."""

    design: Design
    spectrum: Spectrum
    filtered: Filtered
    vcov_spec: VcovSpec

    if TYPE_CHECKING:  # provided by LinearResults and its mixins
        method: str
        rule: SpectralRule
        @property
        def resid(self) -> pd.Series: ...
        @property
        def fitted(self) -> pd.Series: ...
        @property
        def _resid_fit(self) -> FloatArray: ...
        @property
        def _estimable(self) -> IntArray: ...
        @property
        def names(self) -> list[str]: ...
        @property
        def nobs(self) -> int: ...
        @property
        def coef(self) -> pd.Series: ...
        @property
        def sigma(self) -> float: ...
        @property
        def df_resid(self) -> float: ...
        @property
        def df_inference(self) -> float: ...
        @property
        def edf(self) -> float: ...
        @property
        def std_err(self) -> pd.Series: ...
        @property
        def vcov(self) -> pd.DataFrame: ...
        @property
        def _resid_w(self) -> FloatArray: ...
        @property
        def _df_ok(self) -> bool: ...
        @property
        def _sigma2_s(self) -> float: ...
        @property
        def _resid_ws(self) -> FloatArray: ...
        @property
        def _hat(self) -> FloatArray: ...
        @property
        def _row_pass(self) -> tuple[FloatArray, FloatArray, FloatArray, int]: ...
        @property
        def _query_pass(self) -> tuple[FloatArray, FloatArray, FloatArray, IntArray]: ...
        @property
        def _vcov_z(self) -> tuple[FloatArray, Any]: ...
        @property
        def _coef_zeroed(self) -> FloatArray: ...
