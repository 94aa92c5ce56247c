"""What pass 1 of a chunked fit does with the formula before and while it reads the rows.

:func:`parse_for_source` checks the formula against the source's columns before any row is
read (R's ``.`` expanded, terms that cannot be evaluated chunk by chunk refused, the
variables and columns it needs); :func:`open_columns` tells from the first chunk which
factors still need rows (stateful transforms, categorical factors whose levels are not
settled), so the rest of pass 1 reads only their columns (:func:`rest_of`);
:func:`incremental_infos` is patsy's incremental builder with factors' levels found per
distinct value. :func:`attnreg.large.spec.learn_spec` puts them together.

Examples
--------
>>> import pandas as pd
>>> from attnreg.large.sources import as_source
>>> from attnreg.large.spec import formula_env
>>> df = pd.DataFrame({"y": [1.0, 2, 3], "x": [1.0, 2, 4], "g": ["a", "b", "a"]})
>>> formula, desc, uses, needed = parse_for_source("y ~ .", as_source(df), formula_env(), None)
>>> formula, needed
('y ~ (x + g)', ('y', 'x', 'g'))
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import patsy

from attnreg.exceptions import FormulaError
from attnreg.formula.frame import check_factor_code, variable_uses
from attnreg.formula.parse import check_names, expand_dot, parse
from attnreg.large.chunkwise import check_chunkwise

__all__ = ["first_chunk_open_columns", "incremental_infos", "open_columns", "parse_for_source",
           "rest_of", "skip_rows"]


def open_columns(desc: Any, env: Any, frame: pd.DataFrame, na: Any) -> tuple[str, ...]:
    """Columns of the factors whose spec needs rows past the first chunk, told from it.

    patsy's incremental builder evaluates, after the first chunk, only the stateful factors
    (their memorize passes) and the categorical ones whose levels the first chunk did not
    settle; the rest of pass 1 reads only their columns. (Every factor numeric and stateless:
    no column, and patsy stops at the first chunk.)
    """
    from patsy.categorical import CategoricalSniffer, guess_categorical

    from attnreg.formula.factors import sniff
    from attnreg.formula.frame import variable_uses

    open_: dict[str, None] = {}
    for term in desc.lhs_termlist + desc.rhs_termlist:
        for factor in term.factors:
            state: dict[str, Any] = {}
            stateful = factor.memorize_passes_needed(state, env) > 0
            if not stateful:
                value = factor.eval(state, frame)
                if not guess_categorical(value):
                    continue
                if sniff(CategoricalSniffer(na, factor.origin), value):
                    continue  # levels known (booleans, C(x, levels=...))
            open_.update(dict.fromkeys(n for n in variable_uses(factor.code) if n in frame.columns))
    return tuple(open_)


def incremental_infos(desc: Any, chunks: Any, env: Any, na: Any) -> tuple[Any, Any]:
    """``patsy.incr_dbuilders(desc, chunks, eval_env=env, NA_action=na)``, the same design
    infos, with factors' levels found per distinct value (:mod:`attnreg.formula.factors`)."""
    from attnreg.formula.factors import design_infos
    from attnreg.formula.response import logical_response

    y_info, x_info = design_infos([desc.lhs_termlist, desc.rhs_termlist], chunks, env, na)
    y_info = logical_response(y_info)  # a logical response is 0/1, as in memory
    if len(y_info.column_names) == 0:
        raise patsy.PatsyError("model is missing required outcome variables")
    return y_info, x_info


def first_chunk_open_columns(source: Any, needed: tuple[str, ...], uses: dict[str, bool],
                              desc: Any, env: Any, na: Any) -> tuple[str, ...] | None:
    """:func:`open_columns` of the source's first chunk (None: no rows, or not decidable)."""
    frames = source.frames(needed or source.columns[:1], uses=uses)
    try:
        head = next(frames, None)
        if head is None:
            return None
        try:
            return open_columns(desc, env, head, na)
        except Exception:  # a factor that fails here fails in patsy's pass, with its message
            return None
    finally:
        frames.close()


def rest_of(source: Any, columns: tuple[str, ...], uses: dict[str, bool], skip: int) -> Any:
    """The chunks after the first ``skip`` rows, with only ``columns`` (none: nothing)."""
    if not columns:
        return iter(())
    return skip_rows(source.frames(list(columns), uses=uses), skip)


def skip_rows(frames: Any, skip: int) -> Any:
    for frame in frames:
        if skip >= frame.shape[0]:
            skip -= frame.shape[0]
            continue
        yield frame.iloc[skip:] if skip else frame
        skip = 0


def parse_for_source(formula: Any, source: Any, env: Any,
                      weights: str | None) -> tuple[str, Any, dict[str, bool], tuple[str, ...]]:
    """Pass 1's checks before any row is read: (the formula with ``.`` expanded, its patsy
    description, the variables it uses (True: also outside a column's own call), the source
    columns it needs)."""
    if not isinstance(formula, str) or "~" not in formula:
        raise FormulaError(f"formula must be a string of the form 'y ~ x1 + x2', however: {formula=}")
    empty = pd.DataFrame(columns=list(source.columns))
    formula = expand_dot(formula, empty, exclude=[weights] if weights else [])
    desc = parse(formula)
    if not desc.lhs_termlist:
        raise FormulaError(f"the formula {formula!r} has no response left of '~'")
    factors = [f for term in desc.lhs_termlist + desc.rhs_termlist for f in term.factors]
    codes = [f.code for f in factors]
    for factor in factors:
        check_factor_code(factor.code, source.columns)
    check_chunkwise(codes)
    try:
        check_names(factors, empty, env, "data")
    except FormulaError:  # the source may know why (a file of a glob, a partition key)
        scope = getattr(env, "namespace", {})
        for name in variable_uses(" + ".join(codes)):
            if name not in source.columns and name not in scope:
                getattr(source, "explain_absent", lambda _: None)(name)
        raise
    if weights is not None and weights not in source.columns:
        raise FormulaError(f"data ({source.description}) has no weights column {weights!r}")
    uses: dict[str, bool] = {}
    for code in codes:
        for name, outside in variable_uses(code).items():
            uses[name] = uses.get(name, False) or outside
    needed = tuple(n for n in uses if n in source.columns)
    return formula, desc, uses, needed
