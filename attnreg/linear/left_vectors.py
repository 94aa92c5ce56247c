"""The left singular vectors U of the decomposition, stored or recomputed block by block.

For tall designs U (n_obs × rank) is never held unless it must be exact: its rows are
recomputed on demand as U = Z V S⁻¹ from the design (:class:`LeftVectors`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.linear.tallqr import column_span, take_columns
from attnreg.scaling import LAZY_BLOCK_BYTES, row_block

__all__ = ["LeftVectors"]


class LeftVectors:
    """The left singular vectors U (n_obs × rank), stored or recomputed block by block.

    Lazy form: U = Z G with Z = sqrt(w) (X[:, kept] − x̄) and G = V S⁻¹ D⁻¹ (rank × rank work
    per row), so nothing of size n_obs × rank is held. Rows are read with ``U[rows]`` (a slice
    or integer positions; ``U[rows, cols]`` also works) and every pass over all rows goes
    through :meth:`blocks`. ``np.asarray(U)`` forms the whole matrix.

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd", lazy_u=True)
    >>> U = sp.U
    >>> U.shape, U.is_stored
    ((16, 5), False)
    >>> print(f"{abs(np.asarray(U).T @ np.asarray(U) - np.eye(5)).max() < 1e-10}")
    True
    >>> U[2:4].shape, U[[0, 15]].shape
    ((2, 5), (2, 5))
    """

    def __init__(self, n: int, rank: int, *, stored: FloatArray | None = None,
                 X: FloatArray | None = None, cols: IntArray | None = None,
                 center: FloatArray | None = None, sqrt_w: FloatArray | None = None,
                 G: FloatArray | None = None, center_lo: FloatArray | None = None) -> None:
        self.shape = (n, rank)
        self._stored = stored
        self._X, self._sqrt_w, self._G = X, sqrt_w, G
        self._cols = cols if cols is not None else np.zeros(0, dtype=np.int64)
        self._center = center
        self._center_lo = center_lo  # the rest of the means: Z = (X − x̄) − x̄_lo
        self._span = column_span(self._cols)

    ndim = 2
    dtype = np.dtype(np.float64)

    @property
    def n_source_columns(self) -> int:
        """Design columns a lazy U is recomputed from (0 when stored)."""
        return int(self._cols.size)

    @property
    def is_stored(self) -> bool:
        """Whether U is held in memory (exact path) rather than recomputed from the design."""
        return self._stored is not None

    def __len__(self) -> int:
        return self.shape[0]

    def _z_rows(self, key: Any) -> FloatArray:
        X = self._X
        assert X is not None and self._center is not None
        Z = take_columns(X, key, self._cols, self._span) - self._center
        if self._center_lo is not None:
            Z -= self._center_lo
        if self._sqrt_w is not None:
            Z *= self._sqrt_w[key, None]
        return Z

    def rows(self, key: Any, col_scale: FloatArray | None = None) -> FloatArray:
        """U[key] (key: a slice or integer positions), its columns times ``col_scale``."""
        if self._stored is not None:
            out = self._stored[key]
            return out if col_scale is None else out * col_scale
        if self.shape[1] == 0:
            return np.zeros((np.arange(self.shape[0])[key].size, 0))
        assert self._G is not None  # lazy form
        G = self._G if col_scale is None else self._G * col_scale
        step = self._lazy_step()
        if isinstance(key, slice):
            lo, hi, stride = key.indices(self.shape[0])
            if stride == 1 and hi - lo > step:  # big slices: a small block of Z at a time
                out = np.empty((hi - lo, G.shape[1]))
                for a in range(lo, hi, step):
                    b = min(a + step, hi)
                    np.matmul(self._z_rows(slice(a, b)), G, out=out[a - lo:b - lo])
                return out
        return self._z_rows(key) @ G

    def product_blocks(self, M: FloatArray) -> Iterator[tuple[int, int, FloatArray]]:
        """``(lo, hi, U[lo:hi] @ M)`` over blocks of rows, for M of shape (rank, m).

        For a lazy U each block is Z[lo:hi] @ (G M): a product with m columns rather than
        rank, so that U @ M costs n p m, not the n p rank of U itself.
        """
        n = self.shape[0]
        if self._stored is not None or self.shape[1] == 0:
            for lo, hi, U in self.blocks():
                yield lo, hi, U @ M
            return
        assert self._G is not None  # lazy form
        GM = self._G @ M  # (n_source_columns, m)
        step = max(64, LAZY_BLOCK_BYTES // (8 * max(self._cols.size, M.shape[1], 1)))
        for lo in range(0, n, step):
            hi = min(lo + step, n)
            yield lo, hi, self._z_rows(slice(lo, hi)) @ GM

    def _lazy_step(self) -> int:
        return max(64, LAZY_BLOCK_BYTES // (8 * max(self._cols.size, self.shape[1], 1)))

    def __getitem__(self, key: Any) -> FloatArray:
        if isinstance(key, tuple):
            return self.rows(key[0])[(slice(None), *key[1:])]
        return self.rows(key)

    def blocks(self, col_scale: FloatArray | None = None,
               step: int | None = None) -> Iterator[tuple[int, int, FloatArray]]:
        """``(lo, hi, U[lo:hi] * col_scale)`` over cache-sized blocks of rows."""
        n = self.shape[0]
        width = max(self.shape[1], self._cols.size)
        step = step or (row_block(width) if self._stored is not None else self._lazy_step())
        for lo in range(0, n, step):
            hi = min(lo + step, n)
            yield lo, hi, self.rows(slice(lo, hi), col_scale)

    def columns(self, idx: IntArray) -> LeftVectors:
        """U[:, idx] as a LeftVectors (lazy: only those components are recomputed)."""
        if self._stored is not None:
            return LeftVectors(self.shape[0], idx.size, stored=self._stored[:, idx])
        return LeftVectors(self.shape[0], idx.size, X=self._X, cols=self._cols,
                           center=self._center, sqrt_w=self._sqrt_w,
                           G=self._G[:, idx], center_lo=self._center_lo)  # type: ignore[index]

    def materialize(self) -> FloatArray:
        """The whole (n_obs, rank) matrix."""
        if self._stored is not None:
            return self._stored
        out = np.empty(self.shape)
        for lo, hi, B in self.blocks():
            out[lo:hi] = B
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> FloatArray:
        out = self.materialize()
        return out if dtype is None else out.astype(dtype)

    def dot(self, v: FloatArray) -> FloatArray:
        """U v for v of shape (rank,) or (rank, m)."""
        if self._stored is not None:
            return self._stored @ v
        out = np.empty((self.shape[0], *v.shape[1:]))
        for lo, hi, B in self.blocks():
            out[lo:hi] = B @ v
        return out

    def t_dot(self, v: FloatArray) -> FloatArray:
        """U' v for v of shape (n_obs,) or (n_obs, m)."""
        if self._stored is not None:
            return self._stored.T @ v
        if self.shape[1] == 0:
            return np.zeros((0, *v.shape[1:]))
        acc = np.zeros((self._cols.size, *v.shape[1:]))
        step = self._lazy_step()
        for lo in range(0, self.shape[0], step):
            hi = min(lo + step, self.shape[0])
            acc += self._z_rows(slice(lo, hi)).T @ v[lo:hi]
        return self._G.T @ acc  # type: ignore[union-attr]

    def sq_dot(self, F: FloatArray) -> FloatArray:
        """(U ∘ U) F for F of shape (rank,) or (rank, m), one block at a time."""
        out = np.empty((self.shape[0], *F.shape[1:]))
        for lo, hi, B in self.blocks():
            out[lo:hi] = (B * B) @ F
        return out
