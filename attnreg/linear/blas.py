"""BLAS's symmetric rank-k update called without holding the GIL, so that threads add Gram
matrices of row blocks in parallel.

numpy's ``A.T @ A`` of the blocks did not run in parallel on two threads (1e6 × 20 in
blocks of 16,384 rows on an idle two-core machine, one BLAS thread per call: 26 ms on one
thread and on two). The routine is exported as a C function pointer by
``scipy.linalg.cython_blas``; calling it through :mod:`ctypes` releases the interpreter lock
for the call (15 ms on two threads), as :mod:`attnreg.linear.lapack` does for the QR.

Should the pointer not be available, :func:`gram_update` falls back to numpy (the same sum,
without the parallelism).

Examples
--------
>>> import numpy as np
>>> from attnreg.linear.blas import gram_update
>>> A = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
>>> G = np.zeros((2, 2))
>>> gram_update(G, A)
>>> G.tolist()
[[35.0, 44.0], [44.0, 56.0]]
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import numpy as np

from attnreg._typing import FloatArray
from attnreg.linear.lapack import capsule_pointer

__all__ = ["gram_update", "mirror_upper", "releases_gil"]

_INT = ctypes.c_int
_CHR = ctypes.c_char_p
_DBL_P = ctypes.POINTER(ctypes.c_double)
_INT_P = ctypes.POINTER(_INT)


@functools.cache
def _dsyrk_pointer() -> Any:
    """dsyrk(uplo, trans, n, k, alpha, a, lda, beta, c, ldc) as a ctypes function, or None."""
    try:
        from scipy.linalg import cython_blas

        address = capsule_pointer(cython_blas.__pyx_capi__["dsyrk"])  # type: ignore[attr-defined]
    except (ImportError, AttributeError, KeyError, ValueError, TypeError):  # pragma: no cover
        return None
    if not address:  # pragma: no cover - a capsule without a pointer
        return None
    proto = ctypes.CFUNCTYPE(None, _CHR, _CHR, _INT_P, _INT_P, _DBL_P, _DBL_P, _INT_P, _DBL_P,
                             _DBL_P, _INT_P)
    return proto(address)


def releases_gil() -> bool:
    """Whether :func:`gram_update` releases the GIL (wherever scipy exports cython_blas)."""
    return _dsyrk_pointer() is not None


def gram_update(G: FloatArray, A: FloatArray, symmetric: bool = True) -> None:
    """``G += A'A`` in place, without the GIL.

    Parameters
    ----------
    G : ndarray, shape (p, p)
        C-ordered float64, symmetric on entry; symmetric on return.
    A : ndarray, shape (m, p)
        C-ordered float64 rows.
    symmetric : bool
        False: only the upper triangle (and diagonal) of ``G`` is sure to be updated, so that
        a sum over many blocks is mirrored once, at its end (:func:`mirror_upper`).
    """
    m, p = A.shape
    fn = _dsyrk_pointer()
    if fn is None or m == 0 or not (A.flags.c_contiguous and G.flags.c_contiguous):
        G += A.T @ A
        return
    # A in C order is the p × m Fortran matrix A'; dsyrk("L", "N") adds A'A to its lower
    # triangle in Fortran order, the upper one in C order
    n, k, lda, ldc = _INT(p), _INT(m), _INT(p), _INT(p)
    one = ctypes.c_double(1.0)
    fn(b"L", b"N", ctypes.byref(n), ctypes.byref(k), ctypes.byref(one), A.ctypes.data_as(_DBL_P),
       ctypes.byref(lda), ctypes.byref(one), G.ctypes.data_as(_DBL_P), ctypes.byref(ldc))
    if symmetric:
        mirror_upper(G)


def mirror_upper(G: FloatArray) -> None:
    """Copy the upper triangle of the square ``G`` onto its lower one, in place."""
    upper = np.triu_indices(G.shape[0], 1)
    G[upper[1], upper[0]] = G[upper]
