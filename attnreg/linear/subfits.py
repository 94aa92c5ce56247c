"""What the inference and diagnostics families ask a spectral fit to decompose for them: the
R factor of a sub-design (anova) and the spectrum of an auxiliary regression (White's test).

They reach the spectral machinery only through these methods of the fit, so that they import
nothing of the linear family.
"""

from __future__ import annotations

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.inference.contract import LinearFitContract
from attnreg.linear.spectral import Spectrum, decompose
from attnreg.linear.tallqr import column_exponents, multipliers, streaming_r

__all__ = ["SubFits"]


class SubFits(LinearFitContract):
    """Mixin of :class:`~attnreg.linear.results.LinearResults`: decompositions of other
    designs on the fit's rows and weights."""

    def sub_design_r(self, cols: IntArray, centred: bool) -> FloatArray:
        """R of the QR of [√w X[:, cols] | √w y], on the spectrum's rescaled response.

        Each column is multiplied by a power of two first (exact), so that no square leaves
        float64's range.

        Parameters
        ----------
        cols : ndarray of int, shape (m,)
            Design columns, in the order wanted (not the intercept when ``centred``).
        centred : bool
            Columns and response centred on their weighted means (the intercept's span
            taken out), as the sequential table needs; otherwise uncentred.

        Returns
        -------
        ndarray, shape (m + 1, m + 1)
            Upper triangular; its last diagonal entry squared is the sub-design's RSS.
        """
        sp, X = self.spectrum, self.design.X
        center = sp.center if centred else np.zeros(X.shape[1])
        sqrt_w = sp.sqrt_w if sp.weighted else None
        e = column_exponents(X, cols, center, sqrt_w) if cols.size else np.zeros(0, np.int64)
        mult = multipliers(e) if cols.size else None
        y_center = sp.y_center if centred else 0.0
        return streaming_r(X, sp.y, cols, center, sqrt_w, y_center, col_mult=mult)

    def aux_spectrum(self, A: FloatArray, r: FloatArray) -> Spectrum:
        """The spectrum of the auxiliary regression of ``r`` on ``A`` with the fit's prior
        weights (and an intercept when the fit has one; ``A``'s first column is then it).

        Parameters
        ----------
        A : ndarray, shape (n_obs, m)
            The auxiliary regressors.
        r : ndarray, shape (n_obs,)
            Its response.

        Returns
        -------
        Spectrum
        """
        intercept = 0 if self.design.intercept else None
        return decompose(A, r, intercept=intercept, weights=self.design.weights, scaling="sd")
