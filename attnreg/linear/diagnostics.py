"""Regression diagnostics of a linear fit: influence measures, residual family, tests.

:class:`Diagnostics` is a mixin of :class:`~attnreg.linear.results.LinearResults`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnreg.linear._contract import LinearFitContract

__all__ = ["Diagnostics"]


class Diagnostics(LinearFitContract):
    """Influence measures and diagnostic tests (a mixin of ``LinearResults``)."""

    def influence(self) -> pd.DataFrame:
        """Hat values, Cook's distances and standardised residuals, indexed by row label.

        Returns
        -------
        DataFrame
            Columns ``hat`` (diagonal of the hat matrix: the leverage, also each training
            row's attention weight on itself), ``cooks_distance`` and ``std_resid`` (internally
            studentised residuals).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> infl = fit.influence()
        >>> list(infl.columns)
        ['hat', 'cooks_distance', 'std_resid']
        >>> print(f"{infl['hat'].sum():.4f}")  # trace of the hat matrix = number of coefficients
        6.0000
        >>> print(f"{infl['hat'].iloc[0]:.4f} {infl['cooks_distance'].iloc[0]:.4f}")
        0.4018 0.1498
        """
        h = self._hat
        e = self._resid_w
        with np.errstate(divide="ignore", invalid="ignore"):
            std = e / (self.sigma * np.sqrt(1.0 - h))
            cooks = std**2 * h / ((1.0 - h) * self.edf)
        return pd.DataFrame({"hat": h, "cooks_distance": cooks, "std_resid": std},
                            index=self.design.row_labels)
