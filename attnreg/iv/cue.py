r"""Continuously updated GMM (Hansen, Heaton and Yaron, 1996) on arrays.

:math:`\hat\beta = \arg\min_\beta J(\beta)`, ``J(β) = n ḡ(β)'S(β)^{-1}ḡ(β)`` with
``ḡ = Q'e(β)/n`` and ``S(β)`` the *centred* robust (or cluster) covariance of the moments at
the same β (linearmodels ``IVGMMCUE``'s default).  With ``S = R_s'R_s/n`` from a QR of the
centred score matrix, ``J = ||R_s^{-T} Q'e||²`` is a sum of squares, minimised by
``scipy.optimize.least_squares`` from the two-step GMM estimate.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy.typing as npt
from scipy.linalg import qr, solve_triangular
from scipy.optimize import least_squares

from attnreg.exceptions import ConvergenceWarning
from attnreg.iv._design import FloatArray, IVDesign, group_sums, make_design
from attnreg.iv.estimators import IVFit, _gmm_step, gmm

__all__ = ["cue"]


def _factor(d: IVDesign, e: FloatArray, clusters: npt.ArrayLike | None) -> FloatArray:
    H = d.instruments * e[:, None]
    H = H - H.mean(axis=0)  # centred per row, before any cluster sums (as linearmodels)
    if clusters is not None:
        H = group_sums(H, clusters)
    return qr(H, mode="r")[0][: H.shape[1]]


def _objective(d: IVDesign, clusters: npt.ArrayLike | None) -> Callable[[FloatArray], FloatArray]:
    def resid(beta: FloatArray) -> FloatArray:
        e = d.y - d.regressors @ beta
        return solve_triangular(_factor(d, e, clusters), d.instruments.T @ e, trans="T")
    return resid


def cue(y: npt.ArrayLike, X: npt.ArrayLike | None, D: npt.ArrayLike, Z: npt.ArrayLike,
        weights: npt.ArrayLike | None = None, *, clusters: npt.ArrayLike | None = None,
        xtol: float = 1e-14) -> IVFit:
    """Continuously updated GMM (robust, or cluster when ``clusters`` is given).

    Parameters as :func:`attnreg.iv.estimators.gmm`. The returned bread and scores use the
    weight matrix at the estimate, so :func:`attnreg.iv.covariance.iv_vcov` gives
    linearmodels' ``IVGMMCUE`` covariances (``"HC0"``/``"HC1"``/``"cluster"``); ``j_stat`` is
    the minimised ``J``.
    """
    d = make_design(y, X, D, Z, weights)
    start = gmm(y, X, D, Z, weights, weight="cluster" if clusters is not None else "robust",
                clusters=clusters).coef
    res = least_squares(_objective(d, clusters), start, xtol=xtol, ftol=xtol, gtol=xtol, method="lm")
    if not res.success:
        import warnings

        warnings.warn(f"CUE did not converge: {res.message}", ConvergenceWarning, stacklevel=2)
    coef = res.x
    e = d.y - d.regressors @ coef
    Rs = _factor(d, e, clusters)
    _, T, Zt, G = _gmm_step(d, Rs)
    H = Zt @ G
    return IVFit(method="CUE", coef=coef, bread=T, scores=(Zt * e[:, None]) @ G,
                 homoskedastic_meat=H.T @ H, resid=e / d.sqrt_w, wresid=e, kappa=float("nan"),
                 liml_kappa=float("nan"), n_instruments=G.shape[0], j_stat=float(2 * res.cost),
                 iterations=int(res.nfev), score_design=H)
