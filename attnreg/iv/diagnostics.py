r"""R's ``summary(ivreg(...), diagnostics = TRUE)`` tests (AER's ``ivdiag``), under a covariance.

With ``Q = [X, Z]`` the instruments (``L`` columns), ``a`` the levels absorbed by fixed
effects (0 without), ``k = k1 + k2`` the coefficients and all rows scaled by ``sqrt(w)``:

* weak instruments, per endogenous regressor ``D_j``: the F test that the excluded
  instruments have zero coefficients in the first stage ``D_j ~ X + Z``, on
  ``(l, n - L - a)`` df; classical ``[π'π / l] / [V̂_j'V̂_j / (n - L - a)]`` (``π = Q_z'D_j``,
  ``V̂ = M_Q D``), or under a robust covariance the Wald statistic ``π' S^{-1} π / l`` with
  ``S`` the first stage's sandwich (sandwich's ``vcovHC(type=)`` / ``vcovCL(type="HC1")``);
* Wu–Hausman: the F test of ``γ = 0`` in ``y ~ X + D + D̂`` on ``(k2, n - k - k2 - a)`` df,
  classical (residual sums of squares) or robust Wald / k2;
* Sargan: ``n R²`` of the fit's residuals on the instruments (centred total sum of squares),
  ``~ χ²(l - k2)`` (NaN when exactly identified); the same under every covariance, as AER.

Each equals AER's under the same covariance (``tests/reference/make_iv_formula.R``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy import stats
from scipy.linalg import qr

from attnreg.iv._design import FloatArray, IVDesign
from attnreg.iv._wald import robust_wald

__all__ = ["DIAGNOSTIC_COLUMNS", "iv_diagnostics"]

DIAGNOSTIC_COLUMNS = ["df1", "df2", "statistic", "p-value"]


def _orth(a: FloatArray) -> FloatArray:
    return qr(a, mode="economic")[0]


def _wald_f(g: FloatArray, H: FloatArray, ss_resid: float, df: tuple[int, int], kind: str,
            clusters: npt.ArrayLike | None, k: int) -> list[float]:
    """``[df1, df2, F, p]`` of H0: the coefficients with orthonormal coordinates g are zero."""
    if kind == "classical":
        f = float(g @ g) / df[0] / (ss_resid / df[1])
    else:  # AER: vcovHC(type=) or vcovCL(type="HC1"): cluster with its small-sample factor
        f = robust_wald(g, H, kind, clusters, k, debiased=kind == "cluster") / df[0]
    return [float(df[0]), float(df[1]), f, float(stats.f.sf(f, *df))]


def _weak(d: IVDesign, j: int, kind: str, clusters: npt.ArrayLike | None, absorbed: int) -> list[float]:
    L, nz = d.X.shape[1] + d.Z.shape[1], d.Z.shape[1]
    pi = d.Qz.T @ d.D[:, j]
    v = d.annihilate(d.D[:, j])
    return _wald_f(pi, d.Qz * v[:, None], float(v @ v), (nz, d.n - L - absorbed), kind,
                   clusters, L + absorbed)


def _wu_hausman(d: IVDesign, kind: str, clusters: npt.ArrayLike | None, absorbed: int) -> list[float]:
    k2 = d.D.shape[1]
    k = d.X.shape[1] + k2
    R = _orth(d.regressors)
    V = d.annihilate(d.D)
    Qt = _orth(V - R @ (R.T @ V))  # M_[X, D] V̂: the part of D̂ not in [X, D]
    g = Qt.T @ d.y
    u = d.y - R @ (R.T @ d.y) - Qt @ g
    return _wald_f(g, Qt * u[:, None], float(u @ u), (k2, d.n - k - k2 - absorbed), kind,
                   clusters, k + k2 + absorbed)


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


def iv_diagnostics(d: IVDesign, wresid: FloatArray, endog_names: list[str], kind: str = "classical",
                   clusters: npt.ArrayLike | None = None, absorbed: int = 0) -> pd.DataFrame:
    """AER's diagnostics table.

    Parameters
    ----------
    d : IVDesign
        The fit's arrays (:func:`attnreg.iv._design.make_design`).
    wresid : ndarray, shape (n,)
        The fit's residuals on the ``sqrt(w)`` scale.
    endog_names : list of str
    kind : {"classical", "HC0", "HC1", "cluster"}
    clusters : array_like, shape (n,), optional
    absorbed : int
        Parameters absorbed by fixed effects (reduce the denominator df).

    Returns
    -------
    DataFrame, shape (k2 + 2, 4)
        Rows ``Weak instruments`` (``Weak instruments (d)`` per regressor when several),
        ``Wu-Hausman``, ``Sargan``; columns ``df1``, ``df2``, ``statistic``, ``p-value``.
    """
    k2 = d.D.shape[1]
    weak = [f"Weak instruments ({name})" for name in endog_names] if k2 > 1 else ["Weak instruments"]
    rows = [_weak(d, j, kind, clusters, absorbed) for j in range(k2)]
    rows += [_wu_hausman(d, kind, clusters, absorbed), _sargan(d, wresid)]
    return pd.DataFrame(rows, index=[*weak, "Wu-Hausman", "Sargan"], columns=DIAGNOSTIC_COLUMNS)
