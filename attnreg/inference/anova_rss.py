"""Nested fits compared by their residual sums of squares alone (R's ``anova.lmlist``).

:func:`nested_table` is the table of ``anova(m1, m2, ...)`` from each fit's residual df and
RSS: the in-memory comparison (:mod:`attnreg.inference.anova`) and the comparison of fits that
keep no rows (chunked and dask fits, and mixtures with in-memory ones: :func:`check_summaries`)
both end there. Without the rows, "the same rows" is checked as far as the fits' statistics
allow (the response, the number of rows and the sum of the weights), and nesting by the
coefficient names: each estimable coefficient of the smaller fit is a coefficient of the
bigger one (R itself checks only the number of rows).

Examples
--------
>>> import numpy as np
>>> from attnreg.inference.anova_rss import nested_table
>>> table, heading = nested_table(np.array([14.0, 12.0]), np.array([6036140.0, 2756712.0]),
...                               ["TOTEMP ~ GNP", "TOTEMP ~ GNP + UNEMP + ARMED"], "F")
>>> print(f"{table.loc['2', 'F']:.4f}")
7.1377
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError

__all__ = ["SAME_SUM_RTOL", "check_summaries", "formula_frame", "nested_table"]

#: Σw of two fits of the same rows, summed in other orders (chunks), agrees to this
SAME_SUM_RTOL = 1e-10


def nested_table(resdf: FloatArray, rss: FloatArray, formulas: Sequence[str],
                 test: str) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """R's ``anova.lmlist`` table and heading from the fits' residual df and RSS.

    Parameters
    ----------
    resdf, rss : ndarray, shape (n_fits,)
        Residual degrees of freedom and residual sums of squares, in the order given.
    formulas : sequence of str
        The fits' formulas (the heading's ``Model i:`` lines).
    test : {"F", "Chisq"}
        Each sum of squares over its df and the biggest model's residual variance, on that
        model's residual df (F), or χ² of the same ratio (R's ``Pr(>Chi)``).

    Returns
    -------
    table : DataFrame
        ``Res.Df``, ``RSS``, ``Df``, ``Sum of Sq`` and ``F``, ``Pr(>F)`` or ``Pr(>Chi)``.
    heading : tuple of str
    """
    nan = math.nan
    ddf = np.r_[nan, -np.diff(resdf)]
    dss = np.r_[nan, -np.diff(rss)]
    table = pd.DataFrame({"Res.Df": resdf, "RSS": rss, "Df": ddf, "Sum of Sq": dss},
                         index=[str(i + 1) for i in range(len(formulas))])
    bigmodel = int(np.argmin(resdf))
    scale = rss[bigmodel] / resdf[bigmodel] if resdf[bigmodel] > 0 else nan
    with np.errstate(divide="ignore", invalid="ignore"):
        if test == "F":
            F = (dss / ddf) / scale
            F[(ddf == 0) | ~(F >= 0)] = nan
            table["F"] = F
            table["Pr(>F)"] = [float(stats.f.sf(f, abs(d), resdf[bigmodel]))
                               if not math.isnan(f) else nan for f, d in zip(F, ddf, strict=True)]
        else:
            vals = dss / scale * np.sign(ddf)
            vals[(ddf == 0) | ~(vals >= 0)] = nan
            table["Pr(>Chi)"] = [float(stats.chi2.sf(v, abs(d))) if not math.isnan(v) else nan
                                 for v, d in zip(vals, ddf, strict=True)]
    width = len(str(len(formulas)))
    top = "\n".join(f"Model {str(i + 1).rjust(width)}: {f}" for i, f in enumerate(formulas))
    return table, ("Analysis of Variance Table\n", top)


def formula_frame(fit: Any) -> Any:
    """What a fit knows of its formula: the in-memory design, or a chunked fit's spec."""
    return fit.design if getattr(fit, "keeps_rows", True) else fit.spec


def _estimable_names(fit: Any) -> list[str]:
    aliased = set(fit.aliased)
    return [n for n in fit.names if n not in aliased]


def check_summaries(fits: Sequence[Any]) -> None:
    """OptionError unless the fits model one response on as many rows of the same total
    weight, and each is nested in the next or contains it (by coefficient names)."""
    first = formula_frame(fits[0])
    for i, fit in enumerate(fits[1:], start=2):
        frame = formula_frame(fit)
        if frame.response_name != first.response_name:
            raise OptionError(f"the fits have different responses: fit 1 models "
                              f"{first.response_name!r}, fit {i} models "
                              f"{frame.response_name!r}")
        if fit.nobs != fits[0].nobs or not math.isclose(
                fit.spectrum.sum_w, fits[0].spectrum.sum_w, rel_tol=SAME_SUM_RTOL):
            raise OptionError(f"the fits are not fitted on the same rows: fit 1 has "
                              f"{fits[0].nobs} rows, fit {i} has {fit.nobs} (or other "
                              "weights); refit both on the same complete rows")
    for i in range(1, len(fits)):
        a, b = fits[i - 1], fits[i]
        small, big, i_small, i_big = (a, b, i, i + 1) if a.df_resid >= b.df_resid \
            else (b, a, i + 1, i)
        outside = [n for n in _estimable_names(small) if n not in set(big.names)]
        if outside:
            raise OptionError(
                f"the fits are not nested: coefficient(s) {', '.join(outside)} of fit "
                f"{i_small} ({formula_frame(small).formula}) are not coefficients of fit {i_big} "
                f"({formula_frame(big).formula}); fits that keep no rows (chunked) are nested when "
                "the smaller one's coefficients are among the bigger one's")
