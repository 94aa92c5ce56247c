"""The rows of a fixed-effects formula: the model part's design, and the fixed effects of its rows.

Shared by every estimator that absorbs fixed effects (least squares in
:mod:`attnreg.fe.formula`, the GLMs in :mod:`attnreg.glm.fe_fit`): missing fixed effects are
left out and counted, singletons removed on request (fixest's ``fixef.rm``), and an estimator
may leave out more rows (a GLM: the levels only an infinite effect fits).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg._typing import BoolArray
from attnreg.exceptions import DataError
from attnreg.fe.absorb import FrameEffects, fixed_effects_of_frame, term_values
from attnreg.fe.demean import FixedEffects
from attnreg.formula.counts import cbind
from attnreg.formula.design import Design, build_design
from attnreg.formula.indicators import i
from attnreg.formula.poly import poly
from attnreg.formula.subset import resolve_subset
from attnreg.formula.transforms import center, scale, standardize

if TYPE_CHECKING:
    from attnreg.formula.parts import FormulaParts

__all__ = ["absorbed_design", "drop_singletons"]


def drop_singletons(fe: FixedEffects) -> BoolArray:
    """Rows kept once the singletons are removed, repeatedly (a level with one row in any
    fixed effect goes, which may make others singletons), as fixest's ``fixef.rm``.

    Examples
    --------
    >>> fe = FixedEffects.from_columns([[0, 0, 1, 2, 2], [0, 1, 1, 0, 1]])
    >>> drop_singletons(fe).tolist()
    [True, True, False, True, True]
    """
    keep = np.ones(fe.n_obs, dtype=bool)
    while True:
        single = np.zeros(fe.n_obs, dtype=bool)
        for code, n in zip(fe.codes, fe.n_levels, strict=True):
            counts = np.bincount(code[keep], minlength=n)
            single |= keep & (counts[code] == 1)
        if not single.any():
            return keep
        keep &= ~single


def _namespace() -> dict[str, Any]:
    names: dict[str, Any] = {"center": center, "standardize": standardize, "scale": scale,
                             "poly": poly, "i": i, "cbind": cbind}
    try:
        from attnreg.formula.lags import diff, lag, lags
    except ImportError:  # pragma: no cover - optional at import time, as in attnreg.api
        return names
    return {**names, "lag": lag, "lags": lags, "diff": diff}


def _effect_frame(data: pd.DataFrame, parts: FormulaParts) -> pd.DataFrame:
    """The columns the fixed-effect terms read, so that a selection of rows copies those
    only (the whole data when one is absent: the error then lists the columns there are)."""
    needed = list(dict.fromkeys(c for t in parts.fixed_effect_terms
                                for c in (*t.columns, *t.slopes)))
    if len(needed) < data.shape[1] and all(c in data.columns for c in needed):
        return data[needed]
    return data


def _rows(design: Design, data: pd.DataFrame, parts: FormulaParts, rm: str,
          na_action: str) -> tuple[FrameEffects, BoolArray, int]:
    """The fixed effects of the design's rows, the rows kept, and the singletons removed."""
    rows = design.data_rows if design.data_rows is not None else np.arange(design.n_obs)
    frame = _effect_frame(data, parts)
    if not (rows.size == len(frame) and (rows.size == 0 or rows[-1] == rows.size - 1)
            and bool(np.all(rows[1:] > rows[:-1]))):  # not every row, in order: select
        frame = frame.iloc[rows]
    got = fixed_effects_of_frame(frame, parts.fixed_effect_terms)
    if na_action == "raise" and not got.keep.all():
        first = int(np.flatnonzero(~got.keep)[0])
        bad = next(t.text for t in got.terms if term_values(frame.iloc[[first]], t)[1][0])
        row = frame.index[first]
        raise DataError(f"fixed effect {bad!r} is missing in row {row!r} (na_action='raise'); "
                        "drop the row or use na_action='drop'")
    keep = got.keep.copy()
    n_single = 0
    if rm == "singleton":
        inner = drop_singletons(got.fe)
        n_single = int((~inner).sum())
        keep[np.flatnonzero(keep)[~inner]] = False
    return got, keep, n_single


def absorbed_design(request: Any, parts: FormulaParts, rm: str = "none",
                    extra_drop: Callable[[Design, FixedEffects, BoolArray], Any] | None = None,
                    counts: bool = False) -> tuple[Design, FrameEffects, int, dict[str, int]]:
    """The model part's design on the rows with every fixed effect, and those effects.

    ``request.data`` is in memory (:func:`attnreg.fe.formula.fit_fe_formula` converts it).

    The model part is built as any formula (missing values, ``subset=``, ``weights=``); rows
    with a missing fixed effect are left out and counted; ``rm="singleton"`` removes the
    singletons repeatedly; ``extra_drop(design, fe)`` (optional) returns more rows to leave
    out (a mask over the design's rows), applied after them. ``counts`` accepts a
    ``cbind(successes, failures)`` response (a binomial GLM's).

    Returns
    -------
    design : Design
    got : FrameEffects
        The fixed effects of the design's rows.
    n_single : int
        Singletons removed.
    n_missing : dict
        Rows dropped for a missing value, per fixed-effect term.
    """
    data = request.data
    if not isinstance(data, pd.DataFrame):
        data = pd.DataFrame(data)
    names = _namespace()
    subset = resolve_subset(request.subset, data, request.eval_env, names)
    build = dict(weights=request.weights, na_action=request.na_action,
                 eval_env=request.eval_env, extra_names=names,
                 counts=counts)
    first = build_design(parts.model, data, subset=subset, **build)  # type: ignore[arg-type]
    got, keep, n_single = _rows(first, data, parts, rm, request.na_action)
    n_missing = dict(got.n_missing)
    if extra_drop is not None and keep.any():
        now = keep[got.keep]  # the kept rows among those got.fe holds
        fe_now = FixedEffects.from_columns([c[now] for c in got.fe.codes], names=got.fe.names)
        more = np.asarray(extra_drop(first, fe_now, keep), dtype=bool)
        keep[np.flatnonzero(keep)[more]] = False
    design = first
    kept = None if keep.all() else _kept(first, got, keep)
    if kept is not None:
        design, got = kept
    elif not keep.all():
        mask = np.zeros(len(data), dtype=bool)
        rows = first.data_rows if first.data_rows is not None else np.arange(first.n_obs)
        mask[rows[keep]] = True
        design = dataclasses.replace(
            build_design(parts.model, data, subset=mask, **build),  # type: ignore[arg-type]
            dropped_labels=first.dropped_labels, n_subset_excluded=first.n_subset_excluded)
        got = fixed_effects_of_frame(_effect_frame(data, parts).iloc[np.flatnonzero(mask)],
                                     parts.fixed_effect_terms)
    return design, got, n_single, n_missing


def _kept(first: Design, got: FrameEffects, keep: BoolArray) -> tuple[Design, FrameEffects] | None:
    """The design and fixed effects of the rows ``keep`` of ``first``, by selection: what
    building the design again on those rows gives (the formula is evaluated on every row of
    the data either way, then the rows are selected, :func:`attnreg.formula.design.
    build_design`), without the second build and factorisation. None where rows of weight
    zero are set apart (a second build on the kept rows has none) or no row is left."""
    if first.zero_weight is not None or not keep.any():
        return None

    def pick(v: Any) -> Any:
        return None if v is None else v[keep]

    design = dataclasses.replace(first, y=first.y[keep], X=np.ascontiguousarray(first.X[keep]),
                                 row_labels=first.row_labels[keep], weights=pick(first.weights),
                                 data_rows=pick(first.data_rows), trials=pick(first.trials))
    fe = got.fe.subset(keep[got.keep])
    return design, FrameEffects(fe, np.ones(fe.n_obs, dtype=bool),
                                dict.fromkeys(got.n_missing, 0), got.terms)
