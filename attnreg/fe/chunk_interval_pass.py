"""Fixed effects beyond memory: the pass over the rows behind robust prediction intervals.

A prediction of the dummy-variable regression is linear in y, ŷ₀ = Σᵢ wᵢ cᵢ yᵢ with
cᵢ = d_i'(D'WD)⁺d₀ + x̃ᵢ'(X̃'WX̃)⁻¹x̃₀ (:mod:`attnreg.fe.robust`), and its sandwich variance is
Σ_g (Σ_{i∈g} sᵢ)² with sᵢ = vᵢ (√wᵢ P_{c(i)} + Uᵢ·u₀): vᵢ the weighted residual (rescaled by
the leverage for HC2/HC3), P_c = d_c'(D'WD)⁺d₀ the fixed effects' part, which depends on the
row through its combination c of levels only, Uᵢ the row's left singular vector of the
residualised design and u₀ = S⁻¹V'D⁻¹x̃₀ (so that √wᵢ x̃ᵢ'(X̃'WX̃)⁻¹x̃₀ = Uᵢ·u₀). The new rows
enter through P and u₀ only, so one pass over the rows, whatever the new rows, accumulates:

- rows as their own clusters (HC0–HC3): per combination Σ wᵢvᵢ² and Σ √wᵢvᵢ²Uᵢ, and
  Σ vᵢ²UᵢUᵢ' (then Σᵢ sᵢ² = Σ_c P_c² a_c + 2 Σ_c P_c b_c·u₀ + u₀'Mu₀);
- clusters: per intersection of the cluster dimensions, per (cluster, combination) pair,
  Σ √wᵢvᵢ and Σ vᵢUᵢ (then Σ_{i∈g} sᵢ = Σ_c A_gc P_c + (Σ_{i∈g} vᵢUᵢ)·u₀).

Memory: a table the size of the combinations (or of the distinct (cluster, combination)
pairs), never a vector of the rows; on dask the partials are computed on the workers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError
from attnreg.large.columns import chunk_columns
from attnreg.large.passes import PassPlan, chunk_scores, frames_of
from attnreg.inference.vcov.scorestats import residual_scale

__all__ = ["IntervalPart", "IntervalPlan", "interval_part", "run_interval_pass"]


@dataclass(frozen=True)
class IntervalPlan:
    """What the pass needs of the fit (shipped to dask's workers).

    Attributes
    ----------
    base : PassPlan
        The fit's pass plan (its ``residuals``: ``"plain"``, ``"HC2"`` or ``"HC3"``).
    n_combinations : int
        Combinations of pass A's table (all, in the fit or not).
    groups : tuple of tuple of str
        The cluster columns of each intersection of the dimensions (empty: rows as clusters).
    """

    base: PassPlan = field(repr=False)
    n_combinations: int
    groups: tuple[tuple[str, ...], ...] = ()

    def read_columns(self) -> list[str]:
        """The fit's columns and the cluster columns."""
        extra = tuple(dict.fromkeys(c for g in self.groups for c in g))
        return self.base.spec.read_columns(extra)  # type: ignore[no-any-return]


@dataclass(frozen=True)
class IntervalPart:
    """The mergeable partial of :func:`interval_part` over some rows (module notes).

    Attributes
    ----------
    n_obs : int
    per_combination : ndarray, shape (n_combinations, 1 + rank), or None
        Rows as clusters: Σ w v² and Σ √w v² U per combination of pass A's table.
    cross : ndarray, shape (rank, rank), or None
        Rows as clusters: Σ v² U U'.
    sums : tuple of DataFrame
        Clusters: per intersection, indexed by the cluster columns and ``combination``
        (position in pass A's table), columns 0 (Σ √w v) and 1 … rank (Σ v U).
    """

    n_obs: int
    per_combination: FloatArray | None = field(default=None, repr=False)
    cross: FloatArray | None = field(default=None, repr=False)
    sums: tuple[pd.DataFrame, ...] = field(default=(), repr=False)

    def merge(self, other: IntervalPart) -> IntervalPart:
        """The partial of both parts' rows (any order)."""
        if other.n_obs == 0:
            return self
        if self.n_obs == 0:
            return other
        per = cross = None
        if self.per_combination is not None and other.per_combination is not None:
            per = self.per_combination + other.per_combination
        if self.cross is not None and other.cross is not None:
            cross = self.cross + other.cross
        sums = tuple(_add_tables(a, b) for a, b in zip(self.sums, other.sums, strict=True))
        return IntervalPart(self.n_obs + other.n_obs, per, cross, sums)


def _add_tables(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    both = pd.concat([a, b])
    return both.groupby(level=list(range(both.index.nlevels)), sort=False).sum()


def _key_values(frame: pd.DataFrame, column: str, rows: Any, labels: pd.Index) -> Any:
    values = frame[column].to_numpy()[rows]
    missing = pd.isna(values)
    if np.any(missing):
        j = int(np.argmax(missing))
        raise DataError(f"cluster column {column!r} is missing at row {labels[j]!r}")
    return values


def interval_part(plan: IntervalPlan, frame: pd.DataFrame) -> IntervalPart:
    """One chunk's partial (a ``map_reduce`` task).

    Parameters
    ----------
    plan : IntervalPlan
    frame : DataFrame
        A chunk with the columns :meth:`IntervalPlan.read_columns`.

    Returns
    -------
    IntervalPart
    """
    spec: Any = plan.base.spec  # an AbsorbedSpec
    cols = chunk_columns(spec, frame)
    if cols.n_obs == 0:
        return IntervalPart(0)
    chunk = cols.design()
    combo = spec.combination_of(frame, chunk.rows)
    rw, hat, basis = chunk_scores(plan.base, chunk)
    assert basis is not None
    U = basis[:, 1:]  # the rows' left singular vectors (this thread's scratch: used now)
    v = residual_scale(plan.base.residuals, rw, hat)
    sw = np.ones(v.size) if chunk.weights is None else np.sqrt(chunk.weights)
    vU = v[:, None] * U
    if not plan.groups:
        values = np.column_stack([(v * sw) ** 2, (v * v * sw)[:, None] * U])
        per = np.column_stack([np.bincount(combo, weights=values[:, j],
                                           minlength=plan.n_combinations)
                               for j in range(values.shape[1])]).astype(np.float64)
        return IntervalPart(v.size, per, vU.T @ vU)
    table = np.column_stack([v * sw, vU])
    sums = []
    for group in plan.groups:
        keys = [_key_values(frame, c, chunk.rows, chunk.labels) for c in group] + [combo]
        df = pd.DataFrame(table, columns=range(table.shape[1]),
                          index=pd.MultiIndex.from_arrays(keys, names=[*group, "combination"]))
        sums.append(df.groupby(level=list(range(len(keys))), sort=False).sum())
    return IntervalPart(v.size, sums=tuple(sums))


def run_interval_pass(plan: IntervalPlan, source: Any, progress: bool = False) -> IntervalPart:
    """:func:`interval_part` over every chunk of ``source``, merged (on dask's workers in a
    tree)."""
    spec = plan.base.spec
    label = "attnreg pass (prediction intervals)"
    if hasattr(source, "map_reduce"):
        return source.map_reduce(interval_part, (plan,),  # type: ignore[no-any-return]
                                 columns=plan.read_columns(), uses=spec.uses, label=label)
    total = IntervalPart(0)
    for frame in frames_of(source, spec, plan.read_columns(), f"{label}: rows", progress):
        total = total.merge(interval_part(plan, frame))
    return total
