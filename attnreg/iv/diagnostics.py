r"""R's ``summary(ivreg(...), diagnostics = TRUE)`` tests (AER's ``ivdiag``), under a covariance.

With ``Q = [X, Z]`` the instruments (``L`` columns), ``a`` the levels absorbed by fixed
effects (0 without), ``k = k1 + k2`` the coefficients and all rows scaled by ``sqrt(w)``:

* weak instruments, per endogenous regressor ``D_j``: the F test that the excluded
  instruments have zero coefficients in the first stage ``D_j ~ X + Z``, on
  ``(l, n - L - a)`` df; classical ``[π'π / l] / [V̂_j'V̂_j / (n - L - a)]`` (``π = Q_z'D_j``,
  ``V̂ = M_Q D``), or under a robust covariance the Wald statistic ``Π̂_j' V^{-1} Π̂_j / l``
  with ``V`` the first stage's covariance (AER: ``vcov.`` applied to the first-stage
  ``lm``; any registered covariance, from the first stage's own score design, hat values
  and the fit's cluster ids or periods: :mod:`attnreg.iv.aux_vcov`);
* Wu–Hausman: the F test of ``γ = 0`` in ``y ~ X + D + V̂`` on ``(k2, n - k - k2 - a)`` df
  (AER's ``y ~ X + D + D̂`` spans the same columns), classical (residual sums of squares) or
  the robust Wald / k2 under the covariance of that regression;
* Sargan: ``n R²`` of the fit's residuals on the instruments (centred total sum of squares),
  ``~ χ²(l - k2)`` (NaN when exactly identified); the same under every covariance, as AER.

Each equals AER's under the same covariance (``tests/reference/make_iv_formula.R``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats
from scipy.linalg import qr

from attnreg.iv._design import FloatArray, IVDesign
from attnreg.iv.aux_vcov import aux_vcov, control_function_wald, quad_form
from attnreg.inference.vcov.registry import VcovSpec

__all__ = ["DIAGNOSTIC_COLUMNS", "iv_diagnostics"]

DIAGNOSTIC_COLUMNS = ["df1", "df2", "statistic", "p-value"]


def _orth(a: FloatArray) -> FloatArray:
    return qr(a, mode="economic")[0]


def _wald_f(coef: FloatArray, V: FloatArray | None, ss_resid: float,
            df: tuple[int, int]) -> list[float]:
    """``[df1, df2, F, p]`` of H0: ``coef = 0``: classical (``V`` None: ``coef`` in
    orthonormal coordinates) or the Wald statistic ``coef' V^{-1} coef / df1``."""
    # AER: the covariance of the auxiliary regression, vcov.(lm(y ~ 0 + x))
    f = float(coef @ coef) / df[0] / (ss_resid / df[1]) if V is None else quad_form(coef, V) / df[0]
    return [float(df[0]), float(df[1]), f, float(stats.f.sf(f, *df))]


def _weak(d: IVDesign, j: int, spec: VcovSpec | None, absorbed: int,
          intercept: int | None, absorbed_hat: FloatArray | None) -> list[float]:
    k1, nz = d.X.shape[1], d.Z.shape[1]
    df = (nz, d.n - k1 - nz - absorbed)
    v = d.annihilate(d.D[:, j])
    if spec is None:
        return _wald_f(d.Qz.T @ d.D[:, j], None, float(v @ v), df)
    A = d.instruments  # the first stage D_j ~ X + Z
    coef = np.asarray(np.linalg.lstsq(A, d.D[:, j], rcond=None)[0][k1:], dtype=np.float64)
    V = aux_vcov(A, v, d, spec, df_resid=df[1], intercept=intercept,
                 absorbed_hat=absorbed_hat)[k1:, k1:]
    return _wald_f(coef, V, float(v @ v), df)


def _wu_hausman(d: IVDesign, spec: VcovSpec | None, absorbed: int,
                intercept: int | None, absorbed_hat: FloatArray | None) -> list[float]:
    k2 = d.D.shape[1]
    k = d.X.shape[1] + k2
    df = (k2, d.n - k - k2 - absorbed)
    R = _orth(d.regressors)
    V = d.annihilate(d.D)
    Qt = _orth(V - R @ (R.T @ V))  # M_[X, D] V̂: the part of D̂ not in [X, D]
    g = Qt.T @ d.y
    u = d.y - R @ (R.T @ d.y) - Qt @ g
    if spec is None:
        return _wald_f(g, None, float(u @ u), df)
    f = control_function_wald(d, spec, absorbed=absorbed, intercept=intercept,
                              absorbed_hat=absorbed_hat) / k2
    return [float(k2), float(df[1]), f, float(stats.f.sf(f, *df))]


def _sargan(d: IVDesign, wresid: FloatArray) -> list[float]:
    q = d.Z.shape[1] - d.D.shape[1]
    if q == 0:
        return [0.0, np.nan, np.nan, np.nan]
    w = d.sqrt_w**2
    r = wresid / d.sqrt_w  # residuals on the data's scale
    centred = float(np.sum(w * (r - np.sum(w * r) / np.sum(w)) ** 2))
    left = d.annihilate(wresid)
    stat = d.n * (1 - float(left @ left) / centred)
    return [float(q), np.nan, stat, float(stats.chi2.sf(stat, q))]


def iv_diagnostics(d: IVDesign, wresid: FloatArray, endog_names: list[str],
                   vcov: VcovSpec | None = None, absorbed: int = 0,
                   intercept: int | None = None,
                   absorbed_hat: FloatArray | None = None) -> pd.DataFrame:
    """AER's diagnostics table.

    Parameters
    ----------
    d : IVDesign
        The fit's arrays (:func:`attnreg.iv._design.make_design`).
    wresid : ndarray, shape (n,)
        The fit's residuals on the ``sqrt(w)`` scale.
    endog_names : list of str
    vcov : VcovSpec, optional
        The fit's covariance, bound to its rows (any registered one but the classical);
        None for the classical tests.
    absorbed : int
        Parameters absorbed by fixed effects (reduce the denominator df).
    intercept : int, optional
        X's intercept column (HAC bandwidths give it weight 0).
    absorbed_hat : ndarray, shape (n,), optional
        The absorbed fixed effects' own leverage, added to the auxiliary regressions' hat
        values (HC2–HC5 then equal the dummy-variable regressions').

    Returns
    -------
    DataFrame, shape (k2 + 2, 4)
        Rows ``Weak instruments`` (``Weak instruments (d)`` per regressor when several),
        ``Wu-Hausman``, ``Sargan``; columns ``df1``, ``df2``, ``statistic``, ``p-value``.
    """
    k2 = d.D.shape[1]
    weak = [f"Weak instruments ({name})" for name in endog_names] if k2 > 1 else ["Weak instruments"]
    spec = None if vcov is None or vcov.estimator.classical else vcov
    rows = [_weak(d, j, spec, absorbed, intercept, absorbed_hat) for j in range(k2)]
    rows += [_wu_hausman(d, spec, absorbed, intercept, absorbed_hat), _sargan(d, wresid)]
    return pd.DataFrame(rows, index=[*weak, "Wu-Hausman", "Sargan"], columns=DIAGNOSTIC_COLUMNS)
