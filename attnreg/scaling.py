"""Arithmetic that stays inside float64 at any data scale, and row-block sizes.

Column norms and weighted means whose squares or sums would overflow or underflow are
computed on columns divided by powers of two (exact), and binary exponents record those
powers; see the "Extreme scales" note of :mod:`attnreg.linear.spectral`. Numerics only:
every family may use it, and it imports none.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from attnreg._typing import FloatArray, IntArray

__all__ = ["binary_exponents", "column_norms", "out_of_range", "unit_weights"]

#: column norms and the weighted, centred response are rescaled (by powers of two, exactly)
#: when their size leaves [2^-SAFE_EXPONENT, 2^SAFE_EXPONENT]: inside it their squares, and sums
#: of up to 2^200 of them, are normal float64 numbers
SAFE_EXPONENT = 400
_FLOAT_TINY = float(np.finfo(np.float64).tiny)
BLOCK_BYTES = 1 << 21  # row blocks of about 2 MiB for passes over (n_obs, rank) arrays
LAZY_BLOCK_BYTES = 1 << 19  # rows of U recomputed at a time: 512 KiB (two such blocks fit L2)


def row_block(width: int) -> int:
    """Rows per block of an (n, width) float64 array so that a block is about 2 MiB."""
    return max(256, BLOCK_BYTES // (8 * max(width, 1)))


def is_safe(size: FloatArray) -> npt.NDArray[np.bool_]:
    """Whether sizes (norms, largest entries) are inside the range where squaring is exact enough."""
    return (size >= 2.0**-SAFE_EXPONENT) & (size <= 2.0**SAFE_EXPONENT)


def binary_exponents(size: FloatArray) -> IntArray:
    """e with size = m · 2^e, 0.5 ≤ m < 1 (0 for zeros), so ``np.ldexp(x, -e)`` is of order one.

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.scaling import binary_exponents
    >>> binary_exponents(np.array([1e300, 1.0, 0.0, 3e-300])).tolist()
    [997, 1, 0, -994]
    """
    return np.frexp(size)[1].astype(np.int64)


def column_norms(A: FloatArray) -> FloatArray:
    """Euclidean norms of the columns of ``A``, without overflow or underflow of the squares.

    The plain sum of squares is used where the norm lies safely inside float64's range (bit for
    bit the usual result); the other columns are first divided by a power of two near their
    largest entry, exactly.

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.scaling import column_norms
    >>> A = np.array([[3.0, 3e300, 3e-300], [4.0, 4e300, 4e-300]])
    >>> print(column_norms(A))  # the plain sums of squares overflow to inf and underflow to 0
    [5.e+000 5.e+300 5.e-300]
    """
    with np.errstate(over="ignore", under="ignore"):
        out = np.sqrt(np.einsum("ij,ij->j", A, A))
    bad = ~is_safe(out)
    if bad.any():
        sub = A[:, bad]
        e = binary_exponents(np.abs(sub).max(axis=0))
        sub = np.ldexp(sub, -e)
        out[bad] = np.ldexp(np.sqrt(np.einsum("ij,ij->j", sub, sub)), e)
    return out


def weighted_means(w: FloatArray, A: FloatArray, sum_w: float) -> FloatArray:
    """Σ_i w_i A_ij / Σ w for a matrix (or vector) ``A``, without overflow of the sums.

    ``w @ A`` (one BLAS pass) unless a sum overflows; those columns are summed again with the
    normalised weights w / Σw, whose partial sums are bounded by the largest entry.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.atleast_1d(np.asarray(w @ A, dtype=np.float64) / sum_w)
    bad = ~np.isfinite(out)
    if bad.any():
        out[bad] = (w / sum_w) @ (A[:, bad] if A.ndim == 2 else A)
    return out


def unit_weights(n: int) -> FloatArray:
    """sqrt(w) of an unweighted fit: a read-only vector of ones that takes no memory.

    Examples
    --------
    >>> from attnreg.scaling import unit_weights
    >>> w = unit_weights(1_000_000)
    >>> w.shape, float(w.sum()), w.strides
    ((1000000,), 1000000.0, (0,))
    """
    return np.broadcast_to(np.float64(1.0), (n,))  # type: ignore[return-value]


def out_of_range(scaled: FloatArray, value: FloatArray) -> npt.NDArray[np.bool_]:
    """Entries whose exact rescaling ``value`` of a finite nonzero ``scaled`` left float64."""
    return (np.isfinite(scaled) & (scaled != 0)
            & ~((np.abs(value) >= _FLOAT_TINY) & np.isfinite(value)))
