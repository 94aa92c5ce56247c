"""Pass 1 on a dask DataFrame: per-partition summaries merged on the client.

:func:`attnreg.large.spec.learn_spec` runs patsy's incremental builder over the chunks in
order, which would pull every partition through the client. Here each partition is
summarised on its worker instead (:func:`partition_summary`):

- the rows where each value of each categorical factor first appears (at most the number of
  levels; the first row when there is no factor), so that a spec learned from the merged
  rows has every level of the data, sorted as in memory;
- the running moments (count, mean, sum of squared deviations) of every ``center()``,
  ``standardize()`` and ``scale()`` in the formula, as the partition's own pass 1 memorised
  them; partitions' moments combine exactly by Chan's formulas (:meth:`Pass1Part.merge`);
- the number of rows.

:func:`spec_from_summary` learns the spec from the merged rows on the client and puts the
merged moments into its transforms: the spec every chunk of the data would give, with
O(levels) rows and O(columns) numbers sent to the client. A formula whose statistics do
not merge that way (patsy's own stateful transforms, a transform of a transform, a factor
computed from a transform) is :func:`mergeable` False and takes the streaming route.

The formula's scope travels to the workers as the few names it uses
(:func:`portable_env`).

Examples
--------
>>> import numpy as np, pandas as pd
>>> from attnreg.large.dask_spec import Pass1Part, partition_summary, spec_from_summary
>>> df = pd.DataFrame({"y": np.arange(6.0), "x": [1.0, 2, 3, 4, 5, 7],
...                    "g": ["a", "a", "a", "b", "a", "c"]})
>>> job = dict(formula="y ~ center(x) + C(g)", names={}, weights=None)
>>> parts = [partition_summary(job, df.iloc[i:i + 2]) for i in range(0, 6, 2)]
>>> total = parts[0].merge(parts[1]).merge(parts[2])
>>> total.n_rows, len(total.rows)               # 6 rows read, 5 kept (levels, first rows)
(6, 5)
>>> spec = spec_from_summary(total, "y ~ center(x) + C(g)", None)
>>> spec.column_names
['(Intercept)', 'C(g)[T.b]', 'C(g)[T.c]', 'center(x)']
>>> t = next(iter(spec.x_info.factor_infos[list(spec.x_info.factor_infos)[0]].state["transforms"].values()))
>>> bool(float(t.mean[0]) == df.x.mean())
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import patsy

from attnreg.exceptions import DataError
from attnreg.large.source_base import ChunkSource

__all__ = ["Pass1Part", "mergeable", "partition_summary", "portable_env", "spec_from_summary"]

Moments = tuple[np.ndarray, np.ndarray, np.ndarray]  # (n, mean, m2) per column


def portable_env(formula: str, env: Any, columns: Sequence[str]) -> dict[str, Any]:
    """The names a formula uses that are not data columns, from its scope (to send to workers).

    Parameters
    ----------
    formula : str
    env : patsy.EvalEnvironment or None
    columns : sequence of str
        The data's columns (they shadow the scope).

    Returns
    -------
    dict
        Name -> value (modules and functions pickle by reference).

    Examples
    --------
    >>> import numpy as np, patsy
    >>> env = patsy.EvalEnvironment([{"np": np, "unused": 1}])
    >>> sorted(portable_env("y ~ np.log(x)", env, ["y", "x"]))
    ['np']
    """
    from attnreg.formula.frame import names_in

    if env is None:
        return {}
    out: dict[str, Any] = {}
    cols = set(columns)
    for name in dict.fromkeys(names_in(formula.replace("~", "+"))):
        if name in cols or name in ("center", "standardize", "scale", "poly", "i", "C", "I", "Q"):
            continue
        try:
            out[name] = env.namespace[name]
        except KeyError:
            continue
    return out


def _env(names: Mapping[str, Any]) -> Any:
    import numpy as np_

    return patsy.EvalEnvironment([{"np": np_, **names}])


def _transform_moments(state: Mapping[str, Any]) -> dict[str, Moments] | None:
    """A factor's transforms as moments, or None when one of them is not attnreg's."""
    from attnreg.formula.transforms import MomentTransform

    out: dict[str, Moments] = {}
    for key, obj in state.get("transforms", {}).items():
        if not isinstance(obj, MomentTransform) or obj.n is None:
            return None
        assert obj.mean is not None and obj.m2 is not None
        out[key] = (np.array(obj.n, dtype=np.float64), np.array(obj.mean, dtype=np.float64),
                    np.array(obj.m2, dtype=np.float64))
    return out


def _factor_infos(spec: Any) -> Iterator[Any]:
    seen: set[Any] = set()
    for info in (spec.y_info, spec.x_info):
        for fi in info.factor_infos.values():
            if fi.factor not in seen:
                seen.add(fi.factor)
                yield fi


def mergeable(spec: Any) -> bool:
    """Whether a partition's pass-1 spec merges with others' (attnreg's moments, one pass).

    Examples
    --------
    >>> import pandas as pd
    >>> from attnreg.large.sources import as_source
    >>> from attnreg.large.spec import learn_spec
    >>> df = pd.DataFrame({"y": [1.0, 2, 3], "x": [1.0, 2, 4]})
    >>> mergeable(learn_spec("y ~ center(x)", as_source(df, chunk_rows=2)))
    True
    >>> mergeable(learn_spec("y ~ center(center(x))", as_source(df, chunk_rows=2)))
    False
    """
    for fi in _factor_infos(spec):
        state = fi.state
        if len(state.get("pass_bins", [])) > 1:
            return False
        moments = _transform_moments(state)
        if moments is None or (moments and fi.type == "categorical"):
            return False
    return True


def _chan(a: Moments, b: Moments) -> Moments:
    """Moments of the union of two sets of values (Chan, Golub and LeVeque)."""
    na, ma, sa = a
    nb, mb, sb = b
    n = na + nb
    with np.errstate(invalid="ignore", divide="ignore"):
        delta = mb - ma
        mean = np.where(n > 0, ma + delta * np.where(n > 0, nb / n, 0.0), 0.0)
        m2 = sa + sb + np.where(n > 0, delta**2 * na * nb / n, 0.0)
    return n, mean, m2


@dataclasses.dataclass(frozen=True)
class Pass1Part:
    """What pass 1 keeps of some consecutive partitions.

    Attributes
    ----------
    rows : DataFrame
        Rows covering every level of every categorical factor (input rules applied).
    n_rows : int
        Rows read.
    moments : dict
        Factor code -> transform key -> (n, mean, m2), each of shape (n_columns,).
    ok : bool
        Every partition's statistics merge (:func:`mergeable`).
    """

    rows: pd.DataFrame
    n_rows: int
    moments: dict[str, dict[str, Moments]]
    ok: bool = True

    def merge(self, other: Pass1Part) -> Pass1Part:
        """The summary of these partitions followed by ``other``'s."""
        if other.n_rows == 0:
            return dataclasses.replace(self, ok=self.ok and other.ok)
        if self.n_rows == 0:
            return dataclasses.replace(other, ok=self.ok and other.ok)
        moments: dict[str, dict[str, Moments]] = {}
        for code in dict.fromkeys([*self.moments, *other.moments]):
            a, b = self.moments.get(code, {}), other.moments.get(code, {})
            moments[code] = {k: (_chan(a[k], b[k]) if k in a and k in b
                                 else a[k] if k in a else b[k])
                             for k in dict.fromkeys([*a, *b])}
        rows = pd.concat([self.rows, other.rows])
        return Pass1Part(rows=_first_rows(rows), n_rows=self.n_rows + other.n_rows,
                         moments=moments, ok=self.ok and other.ok)


def _first_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Merged summary rows without repeats of the same row (bounded as partitions merge)."""
    try:
        dup = rows.astype(object).duplicated()
    except TypeError:  # pragma: no cover - unhashable values: keep all
        return rows
    return rows[~np.asarray(dup)] if dup.any() else rows


def _level_rows(spec: Any, frame: pd.DataFrame) -> np.ndarray:
    """Positions of the rows where each value of each categorical factor first appears."""
    positions = [np.zeros(min(1, frame.shape[0]), dtype=np.int64)]
    positional = frame.set_axis(pd.RangeIndex(frame.shape[0]), axis=0)
    for fi in _factor_infos(spec):
        if fi.type != "categorical":
            continue
        value = fi.factor.eval(fi.state, positional)
        data = getattr(value, "data", value)  # C(...) boxes its values
        series = pd.Series(np.asarray(data, dtype=object).ravel())
        positions.append(np.asarray(series.drop_duplicates().index, dtype=np.int64))
    return np.unique(np.concatenate(positions))


def partition_summary(job: Mapping[str, Any], frame: pd.DataFrame) -> Pass1Part:
    """Pass 1 of one partition (runs on its worker).

    Parameters
    ----------
    job : dict
        ``formula`` (R's ``.`` expanded), ``names`` (:func:`portable_env`), ``weights``.
    frame : DataFrame
        The partition, input rules applied.

    Returns
    -------
    Pass1Part
    """
    from attnreg.formula.checks import translate_patsy_error
    from attnreg.formula.parse import parse
    from attnreg.large.spec import formula_env
    from attnreg.large.spec_learning import incremental_infos

    n = int(frame.shape[0])
    if n == 0:
        return Pass1Part(rows=frame, n_rows=0, moments={})
    # patsy's incremental builder on this partition alone (learn_spec's checks ran on the
    # client; a factor may well have one level in one partition)
    try:
        y_info, x_info = incremental_infos(parse(job["formula"]), lambda: iter([frame]),
                                         formula_env(_env(job["names"])), patsy.NAAction("drop"))
    except patsy.PatsyError as exc:
        raise translate_patsy_error(exc, "data") from None
    spec = _Infos(y_info, x_info)
    ok = mergeable(spec)
    moments: dict[str, dict[str, Moments]] = {}
    if ok:
        for fi in _factor_infos(spec):
            m = _transform_moments(fi.state)
            if m:
                moments[fi.factor.code] = m
    rows = frame.iloc[_level_rows(spec, frame)]
    return Pass1Part(rows=rows, n_rows=n, moments=moments, ok=ok)


@dataclasses.dataclass(frozen=True)
class _Infos:
    """patsy's design infos of the response and the predictors (one partition's pass 1)."""

    y_info: Any
    x_info: Any


class _PreparedSource(ChunkSource):
    """One frame whose input rules were already applied (rows are not checked again)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame
        self.columns = tuple(str(c) for c in frame.columns)
        self.n_rows = int(frame.shape[0])
        self.chunk_rows = max(1, self.n_rows)
        self.description = "dask partition"

    def _raw(self, columns: Sequence[str]) -> Iterator[pd.DataFrame]:
        yield self._frame[list(columns)]

    def frames(self, columns: Sequence[str] | None = None, *,
               uses: Mapping[str, bool] | None = None) -> Iterator[pd.DataFrame]:
        """The frame itself, cut to ``columns`` (the rules were applied on the partition)."""
        cols = list(self.columns) if columns is None else list(dict.fromkeys(columns))
        yield self._frame[cols]


def spec_from_summary(total: Pass1Part, formula: str, eval_env: Any, *,
                      weights: str | None = None, subset: str | None = None,
                      na_action: str = "drop") -> Any:
    """The ChunkSpec of all partitions from their merged summary (on the client).

    Parameters
    ----------
    total : Pass1Part
        The merge of every partition's :func:`partition_summary` (``ok`` True).
    formula : str
        R's ``.`` expanded.
    eval_env : patsy.EvalEnvironment or None
    weights, subset, na_action
        As for :func:`attnreg.large.spec.learn_spec`.

    Returns
    -------
    ChunkSpec
        Levels from the summary rows, transform statistics from the merged moments,
        ``n_rows_seen`` the rows of every partition.
    """
    from attnreg.large.spec import learn_spec

    if total.n_rows == 0:
        raise DataError("data (dask DataFrame) has no rows")
    spec = learn_spec(formula, _PreparedSource(total.rows), eval_env, weights=weights,
                      subset=subset, na_action=na_action)
    for fi in _factor_infos(spec):
        merged = total.moments.get(fi.factor.code)
        if not merged:
            continue
        for key, obj in fi.state["transforms"].items():
            n, mean, m2 = merged[key]
            obj.n, obj.mean, obj.m2 = n.copy(), mean.copy(), m2.copy()
    return dataclasses.replace(spec, n_rows_seen=int(total.n_rows))
