"""Pass 1 of a chunked fit: what the formula needs from all the data, learned chunk by chunk.

:func:`learn_spec` reads the source once (patsy's incremental builder,
``patsy.incr_dbuilders``, with factors' levels found per distinct value) and returns a
:class:`ChunkSpec`: patsy's design infos of the
response and the predictors with every factor's levels (a level seen only in the last
chunk is a level like any other, and levels are sorted as in memory) and the memorised
statistics of ``center()``, ``standardize()`` and ``scale()`` (attnreg's NaN-aware
transforms, whose running moments combine chunks exactly as Chan's formulas) and of R's
``poly(x, d)`` (centred power sums, :mod:`attnreg.formula.poly_moments`). With these,
every chunk's design is the same rows of the design built in memory from the whole data.

What needs more than one pass, or rows of other chunks, is refused with a
:class:`~attnreg.exceptions.FormulaError` naming the term: spline bases (``bs``, ``cr``,
``cc``, ``te``: their knots are quantiles of all the data, which patsy keeps in memory) and
the time operators ``lag``, ``lags`` and ``diff`` (a chunk's first rows would need the
previous chunk's). R's ``y ~ .`` expands over the source's columns.

A ChunkSpec pickles (patsy's objects as plain data, as :class:`attnreg.formula.spec.FormulaSpec`)
so that it can be sent to worker processes.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from attnreg.large.sources import as_source
>>> from attnreg.large.spec import learn_spec
>>> df = pd.DataFrame({"y": np.arange(6.0), "x": [1.0, 2, 3, 4, 5, 7],
...                    "g": ["a", "a", "a", "a", "b", "c"]})
>>> spec = learn_spec("y ~ center(x) + C(g)", as_source(df, chunk_rows=2))
>>> spec.column_names   # levels "b" and "c" appear only in the last chunks
['(Intercept)', 'C(g)[T.b]', 'C(g)[T.c]', 'center(x)']
>>> spec.columns_needed
('y', 'x', 'g')
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import patsy

from attnreg.exceptions import DataError, FormulaError
from attnreg.large.spec_learning import (
    first_chunk_open_columns,
    incremental_infos,
    parse_for_source,
    rest_of,
)

__all__ = ["ChunkSpec", "formula_env", "learn_spec"]


@dataclass(frozen=True)
class ChunkSpec:
    """What a chunked fit learned from pass 1: the design of every chunk, as patsy builds it.

    Attributes
    ----------
    formula : str
        The formula (R's ``.`` expanded).
    y_info, x_info : patsy.DesignInfo
        Design infos of the response and of the predictors (levels, transform statistics).
    eval_env : patsy.EvalEnvironment
        The formula's scope (attnreg's ``center``/``standardize``/``scale`` included).
    columns_needed : tuple of str
        Source columns the formula reads (weights and cluster columns are added by the fit).
    uses : dict of str to bool
        Each variable, with whether it is read outside ``C()`` (the input rules).
    weights : str or None
        The weights column.
    subset : str or None
        A row filter expression (:meth:`pandas.DataFrame.eval`), applied after the formula.
    na_action : {"drop", "raise"}
    n_rows_seen : int
        Rows of the source read in pass 1.
    """

    formula: str
    y_info: Any = field(repr=False)
    x_info: Any = field(repr=False)
    eval_env: Any = field(repr=False)
    columns_needed: tuple[str, ...]
    uses: dict[str, bool] = field(repr=False)
    weights: str | None = None
    subset: str | None = None
    na_action: str = "drop"
    n_rows_seen: int = 0

    @property
    def column_names(self) -> list[str]:
        """Design column names; the intercept is ``"(Intercept)"``, ``poly()``'s as R's."""
        from attnreg.formula.poly import r_column_names

        return r_column_names(self.x_info)

    @property
    def response_name(self) -> str:
        """The response expression."""
        return str(self.y_info.column_names[0])

    @property
    def intercept(self) -> bool:
        """Whether column 0 is the intercept."""
        names = self.column_names
        return bool(names) and names[0] == "(Intercept)"

    @property
    def n_coef(self) -> int:
        """Number of design columns."""
        return len(self.x_info.column_names)

    def read_columns(self, extra: tuple[str, ...] = ()) -> list[str]:
        """Columns a pass reads: the formula's, the weights' and ``extra`` (cluster ids...)."""
        cols = list(self.columns_needed)
        if self.weights is not None:
            cols.append(self.weights)
        return list(dict.fromkeys([*cols, *extra]))

    def finish_columns(self, columns: Any, frame: pd.DataFrame) -> Any:
        """Each chunk's :class:`~attnreg.large.columns.ChunkColumns` as the passes use them:
        unchanged here; a subclass may transform them (the fixed effects absorbed chunk by
        chunk, :class:`attnreg.fe.chunk_spec.AbsorbedSpec`)."""
        return columns

    def __getstate__(self) -> dict[str, Any]:
        """Pickle support: patsy's design infos as plain data (:mod:`attnreg.formula.spec`)."""
        from attnreg.formula.spec import FormulaSpec

        return {**self.__dict__,
                "y_info": _SpecHolder.of(self.y_info, self.eval_env, self.formula, True),
                "x_info": _SpecHolder.of(self.x_info, self.eval_env, self.formula, False),
                "eval_env": None, "_kind": FormulaSpec.__name__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        state.pop("_kind", None)
        y_info, env = state["y_info"].to_patsy()
        x_info, env_x = state["x_info"].to_patsy()
        state.update(y_info=y_info, x_info=x_info, eval_env=env_x if env_x is not None else env)
        self.__dict__.update(state)


@dataclass(frozen=True)
class _SpecHolder:
    """A patsy design info pickled through :class:`attnreg.formula.spec.FormulaSpec`."""

    spec: Any

    @classmethod
    def of(cls, info: Any, env: Any, formula: str, response: bool) -> _SpecHolder:
        from attnreg.formula.spec import FormulaSpec

        shim = _DesignShim(formula=formula, design_info=info, eval_env=env,
                           response_name=str(info.column_names[0]) if response else "")
        return cls(FormulaSpec.from_design(shim))  # type: ignore[arg-type]

    def to_patsy(self) -> tuple[Any, Any]:
        return self.spec.to_patsy()  # type: ignore[no-any-return]


@dataclass(frozen=True)
class _DesignShim:
    """The attributes of a Design that FormulaSpec reads."""

    formula: str
    design_info: Any
    eval_env: Any
    response_name: str


def formula_env(eval_env: Any = None) -> Any:
    """The scope formulas are evaluated in: ``eval_env`` plus attnreg's NaN-aware
    ``center``, ``standardize`` and ``scale``, and R's ``poly`` (:mod:`attnreg.formula.poly`).

    Parameters
    ----------
    eval_env : patsy.EvalEnvironment, optional
        The caller's scope (default: an empty scope with numpy as ``np``).

    Returns
    -------
    patsy.EvalEnvironment
    """
    import numpy as np

    from attnreg.formula.indicators import i
    from attnreg.formula.poly import poly
    from attnreg.formula.transforms import center, scale, standardize

    env = eval_env if eval_env is not None else patsy.EvalEnvironment([{"np": np}])
    if not isinstance(env, patsy.EvalEnvironment):
        raise FormulaError(f"eval_env must be a patsy.EvalEnvironment, however: {type(env).__name__}")
    return env.with_outer_namespace({"center": center, "standardize": standardize, "scale": scale,
                                     "poly": poly, "i": i})



def learn_spec(formula: str, source: Any, eval_env: Any = None, *, weights: str | None = None,
               subset: str | None = None, na_action: str = "drop",
               progress: bool = False) -> ChunkSpec:
    """Pass 1: parse ``formula`` against the source's columns and learn its design over all chunks.

    Parameters
    ----------
    formula : str
        ``"y ~ x1 + C(g) + center(x2)"``; ``y ~ .`` expands to every other column.
    source : ChunkSource
        From :func:`attnreg.large.sources.as_source`.
    eval_env : patsy.EvalEnvironment, optional
        Where names that are not columns are looked up (:func:`formula_env` adds attnreg's
        transforms).
    weights : str, optional
        Name of a weights column (left out of ``.``).
    subset : str, optional
        Row filter expression, kept in the spec (the formula is learned on every row, as in
        memory).
    na_action : {"drop", "raise"}
    progress : bool
        Report chunks read on stderr.

    Returns
    -------
    ChunkSpec

    Raises
    ------
    FormulaError
        A malformed formula, a column the source lacks (named), or a term that cannot be
        evaluated chunk by chunk (named).
    DataError
        An empty source, a factor with one level, a text column used as a number.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from attnreg.large.sources import as_source
    >>> df = pd.DataFrame({"y": [1.0, 2, 3, 4], "x": [1.0, 2, 3, 5]})
    >>> spec = learn_spec("y ~ scale(x)", as_source(df, chunk_rows=3))
    >>> state = spec.x_info.factor_infos[next(iter(spec.x_info.factor_infos))].state
    >>> spec.column_names, spec.n_rows_seen
    (['(Intercept)', 'scale(x)'], 4)
    """
    from attnreg._progress import Progress
    from attnreg.formula.checks import (check_factor_levels as _check_factor_levels,
                                        translate_patsy_error as _translate_patsy_error)

    env = formula_env(eval_env)
    formula, desc, uses, needed = parse_for_source(formula, source, env, weights)
    seen = {"rows": 0, "passes": 0}
    opened: list[Any] = []
    later: list[tuple[str, ...] | None] = [None]  # columns of the chunks after the first

    def chunks() -> Any:  # patsy may stop a pass early once every factor's type is known
        seen["passes"] += 1
        rows = 0
        total = source.n_rows or 0
        first = True
        frames = source.frames(needed or source.columns[:1], uses=uses)
        opened.append(frames)
        with Progress(total, "attnreg pass 1 (levels, transforms): rows", progress) as bar:
            for frame in frames:
                rows += frame.shape[0]
                seen["rows"] = max(seen["rows"], rows)
                bar.update(rows)
                yield frame
                if first and later[0] is not None and later[0] != needed:
                    # the rest of the pass reads only what the open factors need
                    frames.close()
                    frames = rest_of(source, later[0], uses, frame.shape[0])
                    opened.append(frames)
                    for part in frames:
                        rows += part.shape[0]
                        seen["rows"] = max(seen["rows"], rows)
                        bar.update(rows)
                        yield part
                    return
                first = False

    na = patsy.NAAction("drop")
    try:
        try:
            later[0] = first_chunk_open_columns(source, needed, uses, desc, env, na)
            y_info, x_info = incremental_infos(desc, chunks, env, na)
        except patsy.PatsyError:
            if later[0] is None or later[0] == needed:
                raise
            later[0] = None  # a factor read a column the prediction left out: read them all
            seen["rows"] = 0
            y_info, x_info = incremental_infos(desc, chunks, env, na)
    except (patsy.PatsyError, AssertionError) as exc:  # patsy asserts on no rows at all
        if seen["rows"] == 0:
            raise DataError(f"data ({source.description}) has no rows") from None
        if isinstance(exc, AssertionError):
            raise
        raise _translate_patsy_error(exc, "data") from None
    finally:  # a pass patsy stopped early: release its reader (and what it read ahead) now
        for frames in opened:
            frames.close()
    if seen["rows"] == 0:
        raise DataError(f"data ({source.description}) has no rows")
    _check_factor_levels(x_info)
    return ChunkSpec(formula=formula, y_info=y_info, x_info=x_info, eval_env=env,
                     columns_needed=needed, uses=uses, weights=weights, subset=subset,
                     na_action=na_action, n_rows_seen=int(seen["rows"]))

