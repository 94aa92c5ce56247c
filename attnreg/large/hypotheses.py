"""Wald and t tests, anova and the refusals of a chunked fit: the in-memory fit's own code.

:class:`ChunkedHypotheses` is a mixin of :class:`~attnreg.large.results.ChunkedResults`. The
tests of linear restrictions read only the coefficients, their covariance (in its exactly
rescaled form) and the formula's terms, so ``wald_test`` and ``t_test`` are those of
:class:`~attnreg.inference.hypotheses.Hypotheses`. The analysis of variance tables of one fit
(:mod:`attnreg.inference.anova`: sequential, type II and III) need the R factors of
sub-designs with the response, and the accumulated R factor gives them all
(:meth:`ChunkedHypotheses.sub_design_r`: RᵀR is the cross-product of √w [X | y]);
:func:`attnreg.anova` compares nested chunked fits (and in-memory ones) by their residual
sums of squares (:mod:`attnreg.inference.anova_rss`). ``augment``, which needs each row
again, is refused with a message saying why and what to do instead.

Examples
--------
>>> import numpy as np, pandas as pd
>>> import attnreg as ar
>>> rng = np.random.default_rng(0)
>>> df = pd.DataFrame({"x": rng.normal(size=300), "z": rng.normal(size=300)})
>>> df["y"] = 1 + df.x + rng.normal(size=300)
>>> fit = ar.attnreg("y ~ x + z", df, chunk_rows=100)
>>> mem = ar.attnreg("y ~ x + z", df)
>>> bool(np.isclose(fit.wald_test("x = z").statistic, mem.wald_test("x = z").statistic,
...                 rtol=1e-10))
True
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import scipy.linalg as sla

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import OptionError
from attnreg.inference.hypotheses import Hypotheses

__all__ = ["ChunkedHypotheses"]


class ChunkedHypotheses(Hypotheses):
    """``wald_test``, ``t_test`` and ``anova`` of a chunked fit; ``augment`` refused."""

    #: A chunked fit keeps O(n_coef²) statistics, not its rows (a capability that
    #: :func:`attnreg.anova` reads: nested fits are compared by their sums of squares).
    keeps_rows: ClassVar[bool] = False

    if TYPE_CHECKING:  # provided by ChunkedResults
        spec: Any
        factor: Any

        @property
        def rss(self) -> float: ...

    @property
    def _term_info(self) -> Any:
        """The formula's patsy ``DesignInfo``, as learned in pass 1."""
        return self.spec.x_info

    @cached_property
    def _coef_zeroed(self) -> FloatArray:
        """Coefficients with the aliased (NaN) ones set to 0."""
        coef = self.filtered.coef
        return np.where(np.isnan(coef), 0.0, coef)

    @property
    def _rss_s(self) -> float:
        """The residual sum of squares (a chunked fit's response is not rescaled)."""
        return float(self.rss)

    def _unscaled_square(self, value: float, what: str) -> float:
        """A sum of squares on the response's own scale: ``value`` itself (not rescaled)."""
        return value

    def sub_design_r(self, cols: IntArray, centred: bool) -> FloatArray:
        """R of the weighted sub-design with the response, √w [X[:, cols] | y], from the
        accumulated R factor alone (its RᵀR is the cross-product of √w [X | y]).

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
        f = self.factor
        if centred:
            full = f.centred_r()  # columns: the design's after the intercept, then y
            pos = np.asarray(cols, dtype=np.int64) - (1 if f.intercept else 0)
        else:
            full = f.R.copy()
            if f.intercept:  # [√w | √w (X − c)] T = [√w | √w X]: row 0 gains r00 c
                full[0, 1:] += full[0, 0] * f.center[1:]
            pos = np.asarray(cols, dtype=np.int64)
        sub = full[:, np.r_[pos, full.shape[1] - 1]]
        R = sla.qr(sub, mode="r", check_finite=False)[0][: sub.shape[1]]
        return np.asarray(np.triu(R))

    def augment(self, *args: Any, **kwargs: Any) -> Any:
        """Not available: one row per observation needs every row again.

        Raises
        ------
        OptionError
            Always; the message says what to use instead.
        """
        raise OptionError(
            "augment() is not available for a chunked fit: it returns one row per "
            "observation (fitted values, residuals, hat values, Cook's distances), and a "
            "chunked fit keeps only O(n_coef^2) statistics, not its rows; use "
            "fit.predict(rows) for the fitted values of given rows (a frame, or a large "
            "source chunk by chunk), or fit the data in memory for augment()")
