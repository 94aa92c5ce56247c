"""Heteroskedasticity tests of a linear fit: Breusch–Pagan (``lmtest::bptest``) and White
(statsmodels' ``het_white``)."""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from attnreg._typing import FloatArray
from attnreg.diagnostics.projection import (
    aux_rank,
    df_text,
    projected_ss,
    resid_scaled,
    row_weights,
    table_row,
)
from attnreg.exceptions import DataError
from attnreg.inference.contract import LinearFitContract

__all__ = ["breusch_pagan", "white_products", "white_test"]


def breusch_pagan(fit: LinearFitContract, studentize: bool = True) -> dict[str, Any]:
    """Breusch–Pagan test of the residual variance on the regressors (``lmtest::bptest``).

    Studentized (Koenker): n · Σ w f² / Σ v² with v = e² − σ̂², σ̂² = Σ w e² / n and f the
    fitted values of the weighted regression of v on X (n · R² without weights). Not
    studentized: ½ Σ w f² with f from the regression of e²/σ̂² − 1. χ² on rank(X) − 1 df.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.heteroskedasticity import breusch_pagan
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
    >>> row = breusch_pagan(fit)
    >>> row["test"], row["df"]
    ('Breusch-Pagan (studentized)', '2')
    """
    sp = fit.spectrum
    e, _ = resid_scaled(fit)
    w = row_weights(fit)
    n = fit.nobs
    df = aux_rank(sp) - 1
    if df < 1:
        raise DataError("the Breusch-Pagan test needs at least one regressor besides the "
                        "intercept")
    e2 = e * e
    sigma2 = float(w @ e2) / n
    if studentize:
        v = e2 - sigma2
        stat = n * projected_ss(sp, sp.sqrt_w * v) / float(v @ v)
        name = "Breusch-Pagan (studentized)"
    else:
        v = e2 / sigma2 - 1.0
        stat = 0.5 * projected_ss(sp, sp.sqrt_w * v)
        name = "Breusch-Pagan"
    return table_row(name, stat, df_text(df), stats.chi2.sf(stat, df))


def white_products(X: FloatArray) -> FloatArray:
    """The products X_i X_j (i ≤ j) of every pair of columns, shape (n, p (p + 1) / 2).

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.diagnostics.heteroskedasticity import white_products
    >>> white_products(np.array([[1.0, 2.0], [1.0, 3.0]])).tolist()
    [[1.0, 2.0, 4.0], [1.0, 3.0, 9.0]]
    """
    i, j = np.triu_indices(X.shape[1])
    return np.ascontiguousarray(X[:, i] * X[:, j])


def white_test(fit: LinearFitContract) -> dict[str, Any]:
    """White's test: the studentized Breusch–Pagan test on the regressors, their squares and
    cross products (statsmodels' ``het_white``; duplicated products count once).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> from attnreg.diagnostics.heteroskedasticity import white_test
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=longley.load_pandas().data)
    >>> white_test(fit)["df"]  # 1, GNP, UNEMP, GNP², GNP·UNEMP, UNEMP²: rank 6 - 1
    '5'
    """
    e, _ = resid_scaled(fit)
    w = row_weights(fit)
    n = fit.nobs
    Z = white_products(fit.design.X)
    if n <= Z.shape[1]:
        raise DataError(f"White's test needs more rows than its {Z.shape[1]} auxiliary "
                        f"regressors (products of the {fit.design.n_coef} design columns), "
                        f"however the fit has {n} rows")
    e2 = e * e
    v = e2 - float(w @ e2) / n
    intercept = 0 if fit.design.intercept else None
    aux = fit.aux_spectrum(Z, v)
    ss = float(aux.uty @ aux.uty) * aux.y_scale**2
    if intercept is not None:
        ss += float(w @ v) ** 2 / float(w.sum())
    df = aux_rank(aux) - 1
    stat = n * ss / float(v @ v)
    return table_row("White", stat, df_text(df), stats.chi2.sf(stat, df))
