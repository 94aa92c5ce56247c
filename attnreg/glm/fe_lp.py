"""Separation in a binomial GLM with absorbed fixed effects: the linear program on the
regressors and the fixed-effect dummies, kept sparse.

The iterative rectifier (:mod:`attnreg.glm.fe_separation`) needs the ``z = 0`` / ``z >= 0``
form of Poisson separation; a binomial separation wants ``z >= 0`` where y = 1 and ``z <= 0``
where y = 0 with ``z = X b + D a``, which signs the rows and so leaves the fixed-effect
structure. :func:`sparse_separation` solves it as :func:`attnreg.glm.separation.find_separation`
does (Konis's sequence of bounded LPs, HiGHS), on [X, D] with D the sparse N × G dummies
(K nonzeros a row): the rows it finds are separated with a guarantee, and none is left when it
stops. It runs only on a fit that did not certify itself (:mod:`attnreg.glm.fe_fit`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from attnreg._typing import BoolArray, FloatArray
from attnreg.fe.demean import FixedEffects

__all__ = ["sparse_separation"]

#: a row is separated when its ``|z_i|`` exceeds this (columns at unit norm, separated rows
#: capped at 1 by the LP), as :mod:`attnreg.glm.separation`
_ZTOL = 1e-7


def sparse_separation(X: FloatArray, y: FloatArray, fe: FixedEffects
                      ) -> tuple[BoolArray, FloatArray]:
    """Rows of a binomial design with fixed effects that some ``z = X b + D a`` separates.

    Parameters
    ----------
    X : ndarray, shape (n, k)
        Regressors (no intercept).
    y : ndarray, shape (n,)
        0/1 responses or proportions (a proportion strictly inside (0, 1) wants ``z = 0``).
    fe : FixedEffects

    Returns
    -------
    separated : ndarray of bool, shape (n,)
    b : ndarray, shape (k,)
        The regressors' part of the direction (which regressors take part).
    """
    n, k = X.shape
    Z = sp.hstack([sp.csr_matrix(X), fe.dummies]).tocsr()
    norms = np.sqrt(np.asarray(Z.multiply(Z).sum(axis=0))).ravel()
    norms[norms == 0] = 1.0
    Z = (Z @ sp.diags(1.0 / norms)).tocsr()
    s = np.where(y >= 1, 1.0, np.where(y <= 0, -1.0, 0.0))
    ineq, eq = np.flatnonzero(s != 0), np.flatnonzero(s == 0)
    S = (sp.diags(s[ineq]) @ Z[ineq]).tocsr()  # rows wanted >= 0
    found = np.zeros(ineq.size, dtype=bool)
    direction = np.zeros(Z.shape[1])
    for _ in range(ineq.size + 1):
        open_ = np.flatnonzero(~found)
        if not open_.size:
            break
        A_ub = sp.vstack([-S, S[open_]]).tocsr()
        b_ub = np.concatenate([np.zeros(ineq.size), np.ones(open_.size)])
        res = linprog(-np.asarray(S[open_].sum(axis=0)).ravel(), A_ub=A_ub, b_ub=b_ub,
                      A_eq=Z[eq] if eq.size else None, b_eq=np.zeros(eq.size) if eq.size
                      else None, bounds=[(None, None)] * Z.shape[1], method="highs")
        if res.status != 0 or -res.fun <= _ZTOL:
            break
        new = (S @ res.x > _ZTOL) & ~found
        if not new.any():
            break
        found |= new
        direction += res.x
    out = np.zeros(n, dtype=bool)
    out[ineq[found]] = True
    b = direction[:k] / norms[:k]
    return out, b
