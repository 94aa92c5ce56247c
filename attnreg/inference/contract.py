"""What the mixins of :class:`~attnreg.linear.results.LinearResults` may use of it.

The inference, views and diagnostics families read a fit through this contract alone (its
spectral types are annotations only), so that none of them imports the linear family; what
needs the decomposition itself they ask of the fit (:meth:`LinearFitContract.sub_design_r`,
:meth:`LinearFitContract.aux_spectrum`, :mod:`attnreg.linear.subfits`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from attnreg._typing import FloatArray, IntArray

if TYPE_CHECKING:
    from attnreg.formula.design import Design
    from attnreg.inference.vcov.registry import VcovSpec
    from attnreg.linear.filters import Filtered
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
        @property
        def rule(self) -> SpectralRule: ...
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
        def sub_design_r(self, cols: IntArray, centred: bool) -> FloatArray: ...
        def aux_spectrum(self, A: FloatArray, r: FloatArray) -> Spectrum: ...
