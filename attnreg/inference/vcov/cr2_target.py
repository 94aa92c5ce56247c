"""CR2 (Bell–McCaffrey) with an inverse-variance working model, as clubSandwich's ``vcovCR``
of a ``glm`` (``inverse_var = TRUE``).

An estimator whose scores are X̃_i w_i r_i with a weight matrix W = diag(1/θ) (θ the working
model's variances: for a glm X̃ = (dμ/dη) X, θ = V(μ)/w_prior, r = y − μ) hands over θ. In the
coordinates of the whitened design Z = W^½ X̃ (the spectrum's: for a glm, √w_IRLS X) with
hat matrix H̃ = Z (Z'Z)⁻¹ Z' and whitened residuals ẽ = W^½ r, clubSandwich's adjustment
A_g = Θ_g^½ G_g^(-1/2) Θ_g^½, G_g = Θ_g^½ (I − X̃ M X̃' W)_gg Θ_g Θ_g^½, makes each cluster's
score sum Z_g' a_g with

    a_g = B_g^(-1/2) Θ_g ẽ_g,     B_g = Θ_g (I − H̃_gg) Θ_g,

B_g^(-1/2) the symmetric inverse square root with eigenvalues at or below 1e-12 mapped to 0
(clubSandwich's ``matrix_power``). Without weights and with θ = 1 this is the registry's CR2
of an unweighted least-squares fit. Each cluster's n_g × n_g block is formed and decomposed
(stacked over the clusters of one size), so a cluster may have at most
:data:`MAX_CLUSTER_ROWS` rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import OptionError
from attnreg.inference.vcov._blocks import scores_c
from attnreg.inference.vcov.cr2 import hat_multipliers

if TYPE_CHECKING:
    from attnreg.linear.spectral import Spectrum

__all__ = ["MAX_CLUSTER_ROWS", "WorkingVariances", "cr2_target_residuals"]

#: the most rows of one cluster under this CR2 (its n_g × n_g block and eigendecomposition)
MAX_CLUSTER_ROWS = 5000
#: eigenvalues of B_g at or below this get a zero inverse square root (clubSandwich's 10^-12)
EIG_TOL = 1e-12


@dataclass(frozen=True, eq=False)
class WorkingVariances:
    """The working model's variances θ_i, one per row of the fit (``working_variance=`` of
    ``vcov="cluster", type="CR2"``), compared by value.

    Attributes
    ----------
    values : ndarray, shape (n_obs,)
        Positive and finite.
    """

    values: FloatArray

    @classmethod
    def check(cls, values: Any) -> WorkingVariances:
        """The variances as a read-only float vector; OptionError unless positive and finite."""
        arr = np.array(values, dtype=np.float64).reshape(-1)
        if arr.size == 0 or not np.all(np.isfinite(arr) & (arr > 0)):
            raise OptionError("working_variance must be positive and finite, one per row of "
                              "the fit (the working model's variances, e.g. a glm's "
                              "V(mu) / prior weight)")
        arr.flags.writeable = False
        return cls(arr)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, WorkingVariances) and np.array_equal(self.values, other.values)

    def __hash__(self) -> int:
        return hash(self.values.tobytes())


def _hat_rows(sp: Spectrum, f: FloatArray) -> FloatArray:
    """L with H̃ = L L', shape (n_obs, 1 + rank): the rows [c_i, U_i] D."""
    D = hat_multipliers(sp, f)
    c = scores_c(sp)
    L = np.empty((sp.n_obs, D.size))
    for start, stop, U in sp.U.blocks():
        L[start:stop] = np.column_stack([c[start:stop], U]) * D
    return L


def cr2_target_residuals(sp: Spectrum, resid_w: FloatArray, f: FloatArray, codes: IntArray,
                         n_groups: int, theta: WorkingVariances) -> FloatArray:
    """The adjusted whitened residuals a_g = B_g^(-1/2) Θ_g ẽ_g of every cluster, shape (n_obs,).

    Parameters
    ----------
    sp : Spectrum
        Of the whitened design Z.
    resid_w : ndarray, shape (n_obs,)
        ẽ (on the spectrum's rescaled response).
    f : ndarray, shape (rank,)
        The filter factors (ones: least squares).
    codes : ndarray of int, shape (n_obs,)
        Cluster codes 0 … n_groups − 1.
    n_groups : int
    theta : WorkingVariances
        θ, shape (n_obs,).
    """
    th = theta.values
    if th.size != sp.n_obs:
        raise OptionError(f"working_variance has {th.size} values but the fit has "
                          f"{sp.n_obs} rows; give one per row")
    sizes = np.bincount(codes, minlength=n_groups)
    if sizes.max(initial=0) > MAX_CLUSTER_ROWS:
        raise OptionError(f"type='CR2' forms each cluster's block of the hat matrix, at most "
                          f"{MAX_CLUSTER_ROWS} rows, however the largest cluster has "
                          f"{int(sizes.max())}; use type='HC1' or 'HC0'")
    L = _hat_rows(sp, f)
    order = np.argsort(codes, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    out = np.zeros(sp.n_obs)
    for size in np.unique(sizes[sizes > 0]):  # clusters of one size at a time (not rows)
        rows = order[starts[sizes == size][:, None] + np.arange(size)]  # (G_s, size)
        Lg, t = L[rows], th[rows]  # (G_s, size, m), (G_s, size)
        B = t[:, :, None] * (np.eye(size) - Lg @ np.swapaxes(Lg, 1, 2)) * t[:, None, :]
        lam, Q = np.linalg.eigh((B + np.swapaxes(B, 1, 2)) / 2.0)
        p = np.where(lam > EIG_TOL, 1.0 / np.sqrt(np.where(lam > EIG_TOL, lam, 1.0)), 0.0)
        rhs = np.einsum("gji,gj->gi", Q, t * resid_w[rows])  # Q' Θ ẽ
        out[rows] = np.einsum("gij,gj->gi", Q, p * rhs)
    return out
