"""Validated, weighted IV arrays and the orthonormal bases every IV estimator shares.

All IV computations run on the weighted arrays ``sqrt(w) * a`` with the weights rescaled
to mean 1 (as linearmodels does; every estimator and statistic here is invariant to the
scale of the weights).  Projections use thin QR factors, never ``inv(Z'Z)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from attnreg.exceptions import DataError

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]

RANK_TOL = 1e-9  # share of a unit-norm column left after projecting on the others


@dataclass(frozen=True)
class IVDesign:
    """Weighted IV arrays and orthonormal bases.

    Attributes
    ----------
    y : ndarray, shape (n,)
        Weighted response ``sqrt(w) * y``.
    X : ndarray, shape (n, k1)
        Weighted exogenous regressors (intercept included when wanted).
    D : ndarray, shape (n, k2)
        Weighted endogenous regressors.
    Z : ndarray, shape (n, l)
        Weighted excluded instruments.
    sqrt_w : ndarray, shape (n,)
        Square roots of the weights rescaled to mean 1 (ones without weights).
    Qx : ndarray, shape (n, k1)
        Orthonormal basis of the columns of ``X``.
    Qz : ndarray, shape (n, l)
        Orthonormal basis of ``M_X Z`` (so ``[Qx, Qz]`` spans ``[X, Z]``).
    """

    y: FloatArray
    X: FloatArray
    D: FloatArray
    Z: FloatArray
    sqrt_w: FloatArray
    Qx: FloatArray
    Qz: FloatArray

    @property
    def n(self) -> int:
        """Number of rows."""
        return int(self.y.shape[0])

    @property
    def regressors(self) -> FloatArray:
        """``[X, D]``, shape (n, k1 + k2): the coefficient order of every IV fit."""
        return np.hstack([self.X, self.D])

    @property
    def instruments(self) -> FloatArray:
        """``[X, Z]``, shape (n, k1 + l)."""
        return np.hstack([self.X, self.Z])

    @property
    def Q(self) -> FloatArray:
        """``[Qx, Qz]``: orthonormal basis of the instruments, shape (n, k1 + l)."""
        return np.hstack([self.Qx, self.Qz])

    def project(self, a: FloatArray) -> FloatArray:
        """``P_Q a`` for a of shape (n,) or (n, m)."""
        return self.Qx @ (self.Qx.T @ a) + self.Qz @ (self.Qz.T @ a)

    def annihilate(self, a: FloatArray) -> FloatArray:
        """``M_Q a = a - P_Q a``."""
        return a - self.project(a)

    def annihilate_x(self, a: FloatArray) -> FloatArray:
        """``M_X a`` (residuals on the exogenous regressors only)."""
        return a - self.Qx @ (self.Qx.T @ a)


def _as_matrix(name: str, a: npt.ArrayLike | None, n: int, *, allow_empty: bool) -> FloatArray:
    if a is None:
        if allow_empty:
            return np.zeros((n, 0))
        raise DataError(f"{name} is required: pass an array of shape (n, m)")
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != n:
        raise DataError(f"{name} must have shape (n, m) with n = {n} rows as y; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr).all(axis=1))[0])
        raise DataError(f"{name} has a missing or infinite value in row {bad}; drop or impute it first")
    return arr


def _unit(a: FloatArray, name: str) -> FloatArray:
    """Columns scaled to unit norm (the bases below do not depend on column scales)."""
    norms = np.sqrt(np.sum(a**2, axis=0))
    if np.any(norms == 0):
        raise DataError(f"{name} has an all-zero column {int(np.flatnonzero(norms == 0)[0])}; drop it")
    return a / norms


def _basis(a: FloatArray, name: str) -> FloatArray:
    """Orthonormal basis of the columns of ``a``, whose columns had unit norm before any
    partialling out; a column with less than ``RANK_TOL`` of its norm left is collinear."""
    if a.shape[1] == 0:
        return np.zeros((a.shape[0], 0))
    q, r = np.linalg.qr(a)
    if np.abs(np.diag(r)).min() <= RANK_TOL:
        raise DataError(f"{name} is rank deficient (collinear columns); drop the redundant columns")
    return q


def make_design(y: npt.ArrayLike, X: npt.ArrayLike | None, D: npt.ArrayLike, Z: npt.ArrayLike,
                weights: npt.ArrayLike | None = None) -> IVDesign:
    """Validate the arrays, apply the weights and build the orthonormal bases.

    Parameters
    ----------
    y : array_like, shape (n,)
    X : array_like, shape (n, k1), or None for no exogenous regressor
    D : array_like, shape (n, k2), k2 >= 1
    Z : array_like, shape (n, l), l >= k2
    weights : array_like, shape (n,), optional
        Positive finite weights.

    Returns
    -------
    IVDesign
    """
    yv = np.asarray(y, dtype=np.float64)
    if yv.ndim == 2 and yv.shape[1] == 1:
        yv = yv[:, 0]
    if yv.ndim != 1:
        raise DataError(f"y must be a vector of shape (n,); got shape {yv.shape}")
    n = yv.shape[0]
    if not np.all(np.isfinite(yv)):
        bad = int(np.flatnonzero(~np.isfinite(yv))[0])
        raise DataError(f"y has a missing or infinite value in row {bad}; drop or impute it first")
    Xm = _as_matrix("X", X, n, allow_empty=True)
    Dm = _as_matrix("D", D, n, allow_empty=False)
    Zm = _as_matrix("Z", Z, n, allow_empty=False)
    if Zm.shape[1] < Dm.shape[1]:
        raise DataError(f"the model is under-identified: Z has {Zm.shape[1]} excluded instruments for "
                        f"{Dm.shape[1]} endogenous regressors in D; add instruments")
    if n <= Xm.shape[1] + Zm.shape[1]:
        raise DataError(f"too few rows: n = {n} must exceed the {Xm.shape[1] + Zm.shape[1]} instruments")
    if weights is None:
        sw = np.ones(n)
    else:
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if w.shape[0] != n or not np.all(np.isfinite(w)) or np.any(w <= 0):
            raise DataError(f"weights must be {n} positive finite numbers, one per row of y")
        sw = np.sqrt(w / w.mean())
    yw, Xw, Dw, Zw = yv * sw, Xm * sw[:, None], Dm * sw[:, None], Zm * sw[:, None]
    Qx = _basis(_unit(Xw, "X"), "X") if Xw.shape[1] else np.zeros((n, 0))
    Zu = _unit(Zw, "Z")
    Qz = _basis(Zu - Qx @ (Qx.T @ Zu), "Z (after partialling out X)")
    return IVDesign(y=yw, X=Xw, D=Dw, Z=Zw, sqrt_w=sw, Qx=Qx, Qz=Qz)


def group_sums(a: FloatArray, clusters: npt.ArrayLike) -> FloatArray:
    """Sum the rows of ``a`` (n, m) within each cluster; returns (G, m) in sorted label order."""
    codes = np.unique(np.asarray(clusters), return_inverse=True)[1].reshape(-1)
    if codes.shape[0] != a.shape[0]:
        raise DataError(f"clusters must have one label per row: {a.shape[0]} expected, got {codes.shape[0]}")
    out = np.zeros((int(codes.max()) + 1, a.shape[1]))
    np.add.at(out, codes, a)
    return out
