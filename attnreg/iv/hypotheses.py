"""Wald tests of linear restrictions on the coefficients of an IV fit (``car::linearHypothesis``
on an ``AER::ivreg`` fit with ``test = "F"``): F = W / q on (q, n − k) degrees of freedom,
W = (Rb − r)' (R V R')⁻¹ (Rb − r) under the covariance in use, by a Cholesky solve."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.linalg as sla
from scipy import stats

from attnreg.exceptions import OptionError
from attnreg.inference.restrictions import parse_restrictions
from attnreg.inference.hypothesis_results import WaldTest

if TYPE_CHECKING:
    from attnreg.iv.results import IVResults

__all__ = ["iv_wald_test"]


def _labels(names: list[str], R: np.ndarray, r: np.ndarray) -> list[str]:
    """``"d1 + x1 = 1"``-style text of each restriction."""
    out = []
    for row, rhs in zip(R, r, strict=True):
        terms = [(c, n) for c, n in zip(row, names, strict=True) if c != 0]
        text = " ".join(f"{'-' if c < 0 else '+'} {'' if abs(c) == 1 else f'{abs(c):g}*'}{n}"
                        for c, n in terms).lstrip("+ ")
        out.append(f"{text} = {rhs:g}")
    return out


def iv_wald_test(res: IVResults, hypothesis: str | list[str]) -> WaldTest:
    """Joint Wald F test of restrictions written as text (``"d1 + x1 = 1, x1 = 0"``).

    Parameters
    ----------
    res : IVResults
    hypothesis : str or list of str
        Grammar of :func:`attnreg.inference.restrictions.parse_restrictions`.

    Returns
    -------
    WaldTest
    """
    if not isinstance(hypothesis, (str, list)) or not hypothesis:
        raise OptionError(f"hypothesis must be text such as 'd1 = 0, x1 = x2' (or a list of such "
                          f"strings), however: {hypothesis!r}")
    names = list(res.names)
    R, r = parse_restrictions(names, hypothesis)
    if np.linalg.matrix_rank(R) < R.shape[0]:  # exact small numbers: no rounding to decide it
        raise OptionError("the restrictions are linearly dependent (a row of the hypothesis "
                          "matrix is a combination of the others); drop the redundant ones")
    b, V = res.coef.to_numpy(), res.vcov.to_numpy()
    u = R @ b - r
    S = R @ V @ R.T
    try:
        factor = sla.cho_factor(S, lower=True)
    except np.linalg.LinAlgError:
        raise OptionError("the restrictions are linearly dependent (their covariance R V R' is "
                          "singular); drop the redundant ones") from None
    q, df2 = R.shape[0], float(res.df_resid)
    stat = float(u @ sla.cho_solve(factor, u)) / q
    se = np.sqrt(np.diag(S))
    t = u / se
    labels = pd.Index(_labels(names, R, r), name="restriction")
    table = pd.DataFrame({"Estimate": u, "Std. Error": se, "t value": t,
                          "Pr(>|t|)": 2 * stats.t.sf(np.abs(t), df2)}, index=labels)
    spec: Any = res.vcov_spec
    return WaldTest(statistic=stat, df=(float(q), df2), p_value=float(stats.f.sf(stat, q, df2)),
                    test="F", table=table,
                    hypothesis_matrix=pd.DataFrame(R, index=labels, columns=names), rhs=r,
                    covariance=spec.label(), method=res.method, note="")
