"""Fixed effects beyond memory, pass A: weighted sums per combination of fixed-effect levels.

The effects α of a column v solve D'WD α = D'W v. Rows with the same combination c of
levels (one level per fixed effect) have the same row of D, so D'W v = Σ_c d_c (Σ_{i∈c} w_i
v_i) and D'WD = Σ_c d_c d_c' W_c: the least-squares problem of v on D over all rows has the
normal equations of the weighted least squares of the means v̄_c = Σ w v / W_c on D over the
combinations, with weights W_c = Σ_{i∈c} w_i. :class:`LevelSums` holds, per combination, the
row count, W_c, the weighted sums of the response and the regressors and of their squares:
a partial groupby, mergeable across chunks and partitions, whose size is the number of
distinct combinations, never the number of rows.

The response's sums are taken about a shift near its mean (each partial's own; merging
moves one onto the other's), so that its total sum of squares about the mean (R²'s TSS)
keeps the digits of its spread, not of its offset.

Examples
--------
>>> import numpy as np, pandas as pd
>>> a = LevelSums.of_rows({"firm": np.array([1, 1, 2])}, np.array([1.0, 2, 4]),
...                       np.array([[1.0], [3], [5]]), None)
>>> b = LevelSums.of_rows({"firm": np.array([2])}, np.array([6.0]), np.array([[7.0]]), None)
>>> both = a.merge(b)
>>> both.table["n"].tolist(), both.means()[:, 0].tolist()
([2, 2], [1.5, 5.0])
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import BoolArray, FloatArray, IntArray

__all__ = ["LevelSums", "combination_codes", "drop_singleton_combinations", "merge_all"]


@dataclass(frozen=True)
class LevelSums:
    """Sums per combination of fixed-effect levels over some rows (see the module notes).

    Attributes
    ----------
    table : DataFrame, shape (n_combinations, 2 + 2 (1 + p))
        Indexed by the key columns' values; columns ``n`` (rows), ``w`` (Σ w), ``v0`` … ``vp``
        (Σ w v for v the response, shifted by ``shift``, then the p regressors) and ``q0``
        … ``qp`` (Σ w v², the response's about ``shift``).
    shift : float
        The shift of the response's sums.
    n_missing : dict of str to int
        Rows left out because a fixed effect was missing, by term.
    """

    table: pd.DataFrame = field(repr=False)
    shift: float = 0.0
    n_missing: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of_rows(cls, keys: dict[str, Any], y: FloatArray, X: FloatArray,
                weights: FloatArray | None, n_missing: dict[str, int] | None = None
                ) -> LevelSums:
        """The sums of some rows.

        Parameters
        ----------
        keys : dict of str to ndarray, each shape (m,)
            The key columns' values (none missing).
        y : ndarray, shape (m,)
        X : ndarray, shape (m, p)
        weights : ndarray, shape (m,), or None
        n_missing : dict, optional
        """
        m, p = X.shape
        w = np.ones(m) if weights is None else np.asarray(weights, dtype=np.float64)
        shift = float(np.mean(y)) if m else 0.0
        V = np.column_stack([y - shift, X])  # (m, 1 + p)
        WV = w[:, None] * V
        code, index = combination_codes(keys)
        g = len(index)

        def total(values: Any) -> FloatArray:
            return np.asarray(np.bincount(code, weights=values, minlength=g), dtype=np.float64)

        data: dict[str, Any] = {"n": np.bincount(code, minlength=g).astype(np.int64),
                                "w": total(w)}
        data.update({f"v{j}": total(WV[:, j]) for j in range(p + 1)})
        data.update({f"q{j}": total(WV[:, j] * V[:, j]) for j in range(p + 1)})
        return cls(pd.DataFrame(data, index=index), shift, dict(n_missing or {}))

    @property
    def width(self) -> int:
        """1 + p: the response and the regressors."""
        return sum(1 for c in self.table.columns if str(c).startswith("v"))

    def _shifted(self, shift: float) -> pd.DataFrame:
        """The table with the response's sums about ``shift``."""
        d = self.shift - shift
        if d == 0.0 or self.table.empty:
            return self.table
        t = self.table.copy()
        s1 = t["v0"].to_numpy()
        t["q0"] = t["q0"].to_numpy() + 2.0 * d * s1 + t["w"].to_numpy() * d * d
        t["v0"] = s1 + t["w"].to_numpy() * d
        return t

    def merge(self, other: LevelSums) -> LevelSums:
        """The sums of both parts' rows (any order)."""
        return merge_all([self, other])

    def sorted(self) -> LevelSums:
        """The same sums, combinations in sorted key order."""
        return LevelSums(self.table.sort_index(), self.shift, dict(self.n_missing))

    def means(self) -> FloatArray:
        """Weighted means per combination, shape (n_combinations, 1 + p): the response's
        (shift added back), then the regressors'."""
        t = self.table
        S = t[[f"v{j}" for j in range(self.width)]].to_numpy(dtype=np.float64)
        out = S / t["w"].to_numpy()[:, None]
        out[:, 0] += self.shift
        return np.asarray(out)

    def total_sum_of_squares(self, keep: BoolArray) -> float:
        """Σ w (y − ȳ)² over the rows of the combinations ``keep`` (ȳ their weighted mean)."""
        t = self.table[keep]
        w, s1 = float(t["w"].sum()), float(t["v0"].sum())
        return float(t["q0"].sum()) - s1 * s1 / w

    def norms(self, keep: BoolArray) -> FloatArray:
        """‖√w x‖ of each regressor over the rows of the combinations ``keep``, shape (p,)."""
        t = self.table[keep]
        q = t[[f"q{j}" for j in range(1, self.width)]].to_numpy(dtype=np.float64)
        return np.asarray(np.sqrt(q.sum(axis=0)))


def combination_codes(keys: dict[str, Any]) -> tuple[IntArray, pd.Index]:
    """The combination of each row's key values (codes in order of first appearance) and
    the combinations (an Index for one key column, a MultiIndex named by the keys for
    several): factorised column by column, never through Python tuples of the rows.

    Examples
    --------
    >>> code, index = combination_codes({"a": np.array([1, 2, 1]), "b": np.array(["x", "y", "x"])})
    >>> code.tolist(), index.tolist()
    ([0, 1, 0], [(1, 'x'), (2, 'y')])
    """
    names = list(keys)
    columns = [keys[k] for k in names]
    code, uniques = pd.factorize(columns[0])
    if len(columns) == 1:
        return np.asarray(code, dtype=np.int64), pd.Index(uniques, name=names[0])
    key = np.asarray(code, dtype=np.int64)
    for column in columns[1:]:
        part, levels = pd.factorize(column)
        key, _ = pd.factorize(key * len(levels) + part)  # codes stay below the rows' count
    key = np.asarray(key, dtype=np.int64)
    first = np.empty(int(key.max()) + 1 if key.size else 0, dtype=np.int64)
    first[key] = np.arange(key.size)  # a row of each combination (all have its values)
    index = pd.MultiIndex.from_arrays([np.asarray(c)[first] for c in columns], names=names)
    return key, index


def merge_all(parts: list[LevelSums]) -> LevelSums:
    """The sums of every part's rows, in one groupby (any order).

    Examples
    --------
    >>> a = LevelSums.of_rows({"g": np.array([0, 1])}, np.array([1.0, 2]), np.zeros((2, 1)), None)
    >>> merge_all([a, a, a]).table["n"].tolist()
    [3, 3]
    """
    full = [p for p in parts if not p.table.empty]
    missing: dict[str, int] = {}
    for p in parts:
        for k, v in p.n_missing.items():
            missing[k] = missing.get(k, 0) + v
    if not full:
        return LevelSums(parts[0].table, parts[0].shift, missing)
    shift = full[0].shift
    both = pd.concat([p._shifted(shift) for p in full]) if len(full) > 1 else full[0].table
    table = both.groupby(level=list(range(both.index.nlevels)), sort=False).sum() \
        if len(full) > 1 else both
    return LevelSums(table, shift, missing)


def drop_singleton_combinations(codes: tuple[Any, ...], n_levels: tuple[int, ...],
                                n_rows: Any) -> BoolArray:
    """Combinations kept once the singletons are removed, repeatedly, as fixest's
    ``fixef.rm`` on the rows (:func:`attnreg.fe.frame.drop_singletons`): a level whose rows
    (over the combinations, each counting its ``n_rows``) are one goes.

    Examples
    --------
    >>> drop_singleton_combinations((np.array([0, 1, 2]), np.array([0, 1, 1])), (3, 2),
    ...                             np.array([2, 1, 3])).tolist()
    [True, False, True]
    """
    n = np.asarray(n_rows, dtype=np.int64)
    keep = np.ones(n.size, dtype=bool)
    while True:
        single = np.zeros(n.size, dtype=bool)
        for code, g in zip(codes, n_levels, strict=True):
            counts = np.bincount(code[keep], weights=n[keep], minlength=g)
            single |= keep & (counts[code] == 1)
        if not single.any():
            return keep
        keep &= ~single
