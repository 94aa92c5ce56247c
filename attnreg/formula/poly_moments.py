"""R's ``poly(x, d)`` coefficients from mergeable centred power sums (chunked fits).

In memory, :func:`attnreg.formula.poly.orthogonal_coefs` takes the QR decomposition of the
centred Vandermonde matrix V = [1, xc, ..., xc^d] (xc = x - mean). Chunk by chunk the rows
are not all at hand, but everything the coefficients need is a function of the centred power
sums M_k = Σ xc^k, k = 0 ... 2d + 1:

- V'V is the Hankel matrix H_ij = M_(i+j); its Cholesky factor is R of V = QR (up to signs),
  so norm2_j = R_jj²;
- Σ xc Q_j² = u_j' H1 u_j with H1_ij = M_(i+j+1) and u_j = R⁻¹ e_j (a triangular solve), so
  alpha_j = u_j' H1 u_j + mean.

Each chunk keeps its count, mean and power sums about its own mean; two summaries merge by
shifting each to the combined mean with the binomial theorem (Pébay's formulas for moments
of any order). Everything is in ``numpy.longdouble`` (64-bit significand on x86-64): the
Hankel matrix squares the condition number of V, and the extra 11 bits keep the result within
1e-10 of the QR in memory for the degrees a regression uses (tests/large/test_poly_chunked.py).
The values themselves are never kept, only ``degree + 1`` distinct ones (R's check that the
degree is below the number of distinct values).

Examples
--------
>>> import numpy as np
>>> from attnreg.formula.poly import orthogonal_coefs
>>> x = np.linspace(0.0, 3.0, 11) ** 1.5
>>> sums = PowerSums(2)
>>> for part in (x[:4], x[4:9], x[9:]):
...     sums.add(part)
>>> alpha, norm2 = sums.coefs()
>>> ref_alpha, ref_norm2 = orthogonal_coefs(x, 2)
>>> bool(np.allclose(alpha, ref_alpha, rtol=1e-12) and np.allclose(norm2, ref_norm2, rtol=1e-12))
True
"""

from __future__ import annotations

from math import comb

import numpy as np

from attnreg.exceptions import DataError

__all__ = ["PowerSums"]

_LD = np.longdouble


class PowerSums:
    """Count, mean and Σ (x − mean)^k, k = 0 ... 2·degree + 1, in extended precision.

    Parameters
    ----------
    degree : int
        The polynomial degree d (sums up to order 2d + 1 are kept).
    """

    def __init__(self, degree: int) -> None:
        self.degree = int(degree)
        self.n = 0
        self.mean = _LD(0)
        self.sums = np.zeros(2 * self.degree + 2, dtype=_LD)  # (2d + 2,): M_0 ... M_(2d+1)
        self.distinct: np.ndarray = np.zeros(0)  # up to degree + 1 distinct values

    def add(self, x: np.ndarray) -> None:
        """Merge the finite values ``x`` (shape (n,)) of one chunk."""
        x = np.asarray(x, dtype=np.float64)
        x = x[np.isfinite(x)]
        if x.size == 0:
            return
        if self.distinct.size <= self.degree:
            self.distinct = np.unique(np.concatenate([self.distinct, np.unique(x)]))[
                : self.degree + 1]
        xl = x.astype(_LD)
        mean = xl.mean()
        mean = mean + (xl - mean).mean()  # one refinement step
        xc = xl - mean
        sums = np.empty_like(self.sums)
        power = np.ones_like(xc)
        for k in range(sums.size):  # over the orders, not the rows
            sums[k] = power.sum()
            power = power * xc
        self._merge(x.size, mean, sums)

    def _merge(self, n_b: int, mean_b: np.longdouble, sums_b: np.ndarray) -> None:
        if self.n == 0:
            self.n, self.mean, self.sums = n_b, mean_b, sums_b
            return
        n = self.n + n_b
        mean = self.mean + (mean_b - self.mean) * _LD(n_b) / _LD(n)
        self.sums = _shift(self.sums, self.mean - mean) + _shift(sums_b, mean_b - mean)
        self.n, self.mean = n, mean

    def coefs(self) -> tuple[np.ndarray, np.ndarray]:
        """R's ``coefs``: ``alpha`` (degree,) and ``norm2`` (degree + 2,), as in memory."""
        d = self.degree
        if self.distinct.size <= d:
            raise DataError(f"poly(): degree ({d}) must be less than the number of distinct "
                            f"values of the variable ({self.distinct.size}); lower the degree")
        xbar = float(self.mean)  # the mean in float64, as the QR in memory centres with it
        sums = _shift(self.sums, self.mean - _LD(xbar))
        idx = np.add.outer(np.arange(d + 1), np.arange(d + 1))
        R = _cholesky_upper(sums[idx])
        diag = np.abs(np.diag(R))
        lengths = np.sqrt(sums[2 * np.arange(d + 1)])
        if (diag < _LD(1e-7) * lengths).any() or not np.isfinite(diag).all():
            raise DataError(f"poly(): the values do not support a polynomial of degree {d} "
                            "(the powers are collinear to working precision); lower the degree")
        H1 = sums[idx + 1]
        alpha = np.empty(d, dtype=_LD)
        for j in range(d):  # over the degree
            e = np.zeros(d + 1, dtype=_LD)
            e[j] = 1
            u = _solve_upper(R, e)
            alpha[j] = u @ H1 @ u + _LD(xbar)
        norm2 = np.concatenate([[_LD(1)], diag**2])
        return alpha.astype(np.float64), norm2.astype(np.float64)


def _shift(sums: np.ndarray, delta: np.longdouble) -> np.ndarray:
    """Σ (x − m')^k from Σ (x − m)^j, with delta = m − m' (binomial theorem)."""
    out = np.zeros_like(sums)
    powers = delta ** np.arange(sums.size, dtype=_LD)
    for k in range(sums.size):  # over the orders
        coef = np.array([comb(k, j) for j in range(k + 1)], dtype=_LD)
        out[k] = np.sum(coef * powers[k - np.arange(k + 1)] * sums[: k + 1])
    return out


def _cholesky_upper(H: np.ndarray) -> np.ndarray:
    """Upper R with R'R = H, in the dtype of H (numpy.linalg has no long double)."""
    m = H.shape[0]
    R = np.zeros_like(H)
    for i in range(m):  # over the degree
        s = H[i, i] - R[:i, i] @ R[:i, i]
        if not s > 0:
            return np.full_like(H, np.nan)  # not positive definite: collinear powers
        R[i, i] = np.sqrt(s)
        R[i, i + 1:] = (H[i, i + 1:] - R[:i, i] @ R[:i, i + 1:]) / R[i, i]
    return R


def _solve_upper(R: np.ndarray, b: np.ndarray) -> np.ndarray:
    """x with R x = b, R upper triangular (back substitution)."""
    x = np.zeros_like(b)
    for i in range(b.size - 1, -1, -1):  # over the degree
        x[i] = (b[i] - R[i, i + 1:] @ x[i + 1:]) / R[i, i]
    return x
