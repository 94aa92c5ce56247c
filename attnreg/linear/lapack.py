"""LAPACK's compact-WY QR called without holding the GIL, so that threads factorise in parallel.

scipy's LAPACK wrappers (``scipy.linalg.lapack``) keep the interpreter lock for the whole
call, so two Python threads factorising different row blocks run one after the other. The
same LAPACK routines are exported as C function pointers by ``scipy.linalg.cython_lapack``;
calling such a pointer through :mod:`ctypes` releases the lock for the duration of the call
(ctypes does so for every foreign call), which is all a worker thread needs. The library is
scipy's own LAPACK, the one ``scipy.linalg.lapack`` calls: the numbers are the same bit for
bit (tested).

Should the pointers not be available (a scipy built without ``cython_lapack``), :func:`geqrt`
falls back to ``scipy.linalg.lapack.dgeqrt``, which gives the same numbers and only loses
the parallelism; :func:`releases_gil` says which is in use.

Examples
--------
>>> import numpy as np
>>> from attnreg.linear.lapack import geqrt, workspace
>>> rng = np.random.default_rng(0)
>>> A = np.asfortranarray(rng.normal(size=(50, 4)))
>>> R_ref = np.linalg.qr(A, mode="r")
>>> B = A.copy(order="F")
>>> geqrt(B, 4, *workspace(4, 4))
>>> bool(np.allclose(np.abs(np.triu(B[:4])), np.abs(R_ref)))
True
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

import numpy as np

from attnreg._typing import FloatArray

__all__ = ["capsule_pointer", "geqrt", "releases_gil", "workspace"]

_INT = ctypes.c_int
_DBL_P = ctypes.POINTER(ctypes.c_double)
_INT_P = ctypes.POINTER(_INT)


def capsule_pointer(capsule: Any) -> int:
    """The address a PyCapsule holds (its name is the C signature Cython gave it)."""
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return int(get_pointer(capsule, get_name(capsule)))


@functools.cache
def _dgeqrt_pointer() -> Any:
    """dgeqrt(m, n, nb, a, lda, t, ldt, work, info) as a ctypes function, or None."""
    try:
        from scipy.linalg import cython_lapack

        capsule = cython_lapack.__pyx_capi__["dgeqrt"]  # type: ignore[attr-defined]
        address = capsule_pointer(capsule)
    except (ImportError, AttributeError, KeyError, ValueError, TypeError):  # pragma: no cover
        return None
    if not address:  # pragma: no cover - a capsule without a pointer
        return None
    proto = ctypes.CFUNCTYPE(None, _INT_P, _INT_P, _INT_P, _DBL_P, _INT_P, _DBL_P, _INT_P,
                             _DBL_P, _INT_P)
    return proto(address)


def releases_gil() -> bool:
    """Whether :func:`geqrt` releases the GIL (True wherever scipy exports cython_lapack)."""
    return _dgeqrt_pointer() is not None


def workspace(n: int, nb: int) -> tuple[FloatArray, FloatArray]:
    """Scratch arrays ``(T, work)`` for :func:`geqrt` of an ``(m, n)`` block with block size nb.

    A thread keeps its own and reuses them for every block of the same width.
    """
    nb = max(1, min(nb, n))
    return np.zeros((nb, max(n, 1)), order="F"), np.zeros(nb * max(n, 1))


def geqrt(a: FloatArray, nb: int, t: FloatArray, work: FloatArray) -> None:
    """QR-factorise the Fortran-ordered ``a`` (m × n, m ≥ 1) in place with block size nb.

    On return the upper triangle of ``a[:min(m, n)]`` is R and the reflectors lie below it
    (LAPACK dgeqrt; ``t`` receives the block reflectors' triangular factors, ``work`` is
    scratch, both from :func:`workspace`). The GIL is released during the factorisation.

    Raises
    ------
    numpy.linalg.LinAlgError
        LAPACK reported an illegal argument (a bug, not a property of the data).
    """
    m, n = a.shape
    nb = max(1, min(nb, m, n))
    if not (a.flags.f_contiguous and a.dtype == np.float64):
        raise ValueError("geqrt needs a Fortran-ordered float64 array")
    fn = _dgeqrt_pointer()
    if fn is None:  # pragma: no cover - scipy without cython_lapack
        import scipy.linalg.lapack as lapack

        _, _, info_value = lapack.dgeqrt(nb, a, overwrite_a=True)
        if info_value != 0:
            raise np.linalg.LinAlgError(f"QR factorisation failed (LAPACK info={info_value})")
        return
    if t.shape[0] < nb or t.shape[1] < n or work.size < nb * n or not t.flags.f_contiguous:
        raise ValueError("geqrt: the workspace is too small for this block")
    mi, ni, nbi, lda, ldt, info = _INT(m), _INT(n), _INT(nb), _INT(max(m, 1)), \
        _INT(t.shape[0]), _INT(0)
    fn(ctypes.byref(mi), ctypes.byref(ni), ctypes.byref(nbi), a.ctypes.data_as(_DBL_P),
       ctypes.byref(lda), t.ctypes.data_as(_DBL_P), ctypes.byref(ldt),
       work.ctypes.data_as(_DBL_P), ctypes.byref(info))
    if info.value != 0:
        raise np.linalg.LinAlgError(f"QR factorisation failed (LAPACK info={info.value})")
