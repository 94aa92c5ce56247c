"""Wald and t tests, anova and the refusals of a chunked fit: the in-memory fit's own code.

:class:`ChunkedHypotheses` is a mixin of :class:`~attnreg.large.results.ChunkedResults`. The
tests of linear restrictions read only the coefficients, their covariance (in its exactly
rescaled form) and the formula's terms, so ``wald_test`` and ``t_test`` are those of
:class:`~attnreg.linear.hypotheses.Hypotheses`; :func:`attnreg.anova` compares nested
chunked fits (and in-memory ones) by their residual sums of squares
(:mod:`attnreg.linear.anova_rss`). What needs each row again (``augment``, the sequential
table of one fit) is refused with a message saying why and what to do instead.

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

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.linear.hypotheses import Hypotheses

__all__ = ["ChunkedHypotheses"]


class ChunkedHypotheses(Hypotheses):
    """``wald_test``, ``t_test`` and ``anova`` of a chunked fit; ``augment`` refused."""

    #: A chunked fit keeps O(n_coef²) statistics, not its rows (a capability that
    #: :func:`attnreg.anova` reads: nested fits are compared by their sums of squares).
    keeps_rows: ClassVar[bool] = False

    if TYPE_CHECKING:  # provided by ChunkedResults
        spec: Any

    @property
    def _term_info(self) -> Any:
        """The formula's patsy ``DesignInfo``, as learned in pass 1."""
        return self.spec.x_info

    @cached_property
    def _coef_zeroed(self) -> FloatArray:
        """Coefficients with the aliased (NaN) ones set to 0."""
        coef = self.filtered.coef
        return np.where(np.isnan(coef), 0.0, coef)

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
