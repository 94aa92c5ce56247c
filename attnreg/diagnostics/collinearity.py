"""Collinearity of a linear fit's design: condition numbers (R's ``kappa``) and variance
inflation factors (car's ``vif``, generalised for terms of several columns after Fox and
Monette 1992)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import scipy.linalg as sla

from attnreg.exceptions import DataError, OptionError
from attnreg.inference.contract import LinearFitContract

__all__ = ["condition_numbers", "vif_table"]


def condition_numbers(fit: LinearFitContract) -> tuple[float, float]:
    """(κ of X̃ with unit-length columns, κ of X̃ itself): ratios of the largest to the
    smallest singular value, R's ``kappa(X, exact = TRUE)``; the second is statsmodels'
    ``condition_number``. The intercept column is included, not centred; inf when a column
    is aliased.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.collinearity import condition_numbers
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR",
    ...                  data=longley.load_pandas().data)
    >>> scaled, raw = condition_numbers(fit)
    >>> print(f"{scaled:.4g} {raw:.4g}")
    3.923e+04 4.756e+09
    """
    X = fit.design.X
    sw = fit.spectrum.sqrt_w
    Xw = X * np.asarray(sw)[:, None] if fit.spectrum.weighted else X
    norms = np.sqrt(np.einsum("ij,ij->j", Xw, Xw))
    if min(X.shape) < X.shape[1]:  # fewer rows than columns: singular
        return math.inf, math.inf
    R = sla.qr(Xw, mode="r", check_finite=False)[0][: X.shape[1]]
    out = []
    for B in (R / np.where(norms > 0, norms, 1.0), R):
        s = sla.svdvals(B, check_finite=False)
        out.append(float(s[0] / s[-1]) if s[-1] > 0 else math.inf)
    return out[0], out[1]



def vif_table(fit: LinearFitContract) -> pd.DataFrame:
    """Variance inflation factors (``car::vif``): see
    :meth:`~attnreg.linear.results.LinearResults.vif`.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.collinearity import vif_table
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
    >>> vif_table(fit).columns.tolist()
    ['VIF']
    """
    from attnreg.inference.vcov.registry import vcov_scaled

    design, sp = fit.design, fit.spectrum
    if not design.intercept:
        raise OptionError("vif() needs a model with an intercept: without one the variance "
                          "inflation factors are not defined (car::vif warns that they 'may "
                          "not be sensible')")
    if sp.aliased.size:
        names = ", ".join(design.column_names[j] for j in sp.aliased)
        raise DataError(f"vif() is not defined when coefficients are aliased ({names}); drop "
                        "the aliased columns")
    slices = [(name, sl) for name, sl in design.design_info.term_name_slices.items()
              if name != "Intercept"]
    if len(slices) < 2:
        raise DataError(f"vif() needs at least 2 terms besides the intercept, however the "
                        f"model has {len(slices)}")
    if design.n_obs <= design.n_coef:
        raise DataError("vif() needs more rows than design columns (an OLS covariance)")
    middle = np.eye(1 + sp.rank)
    middle[0, 0] = 1.0 / sp.sum_w
    Vz, _ = vcov_scaled(sp, np.ones_like(sp.s), design.n_coef, middle)  # OLS: f = 1
    keep = np.arange(1, design.n_coef)
    V = Vz[np.ix_(keep, keep)]
    d = np.sqrt(np.diag(V))
    R = V / np.outer(d, d)
    _, logdet = np.linalg.slogdet(R)
    gvif, dfs = [], []
    for _, sl in slices:
        sub = np.arange(sl.start, sl.stop) - 1
        rest = np.setdiff1d(np.arange(keep.size), sub)
        a = np.linalg.slogdet(R[np.ix_(sub, sub)])[1]
        b = np.linalg.slogdet(R[np.ix_(rest, rest)])[1]
        gvif.append(math.exp(a + b - logdet))
        dfs.append(sub.size)
    index = pd.Index([name for name, _ in slices], name="term")
    if all(d == 1 for d in dfs):
        return pd.DataFrame({"VIF": gvif}, index=index)
    g, k = np.array(gvif), np.array(dfs)
    return pd.DataFrame({"GVIF": g, "Df": k, "GVIF^(1/(2*Df))": g ** (1.0 / (2.0 * k))},
                        index=index)
