"""The look-ahead check of a forecast's formula, the ``known=`` entries, and the observed response.

A forecast made at origin t may use data observed by t only. Lags (:func:`attnreg.lag`) look
backwards, but a term can still look ahead through an expression: in
``lag(np.log(gdp) - np.log(gdp).mean(), 1)`` every row is centred on the full-sample mean,
so the value of the term at a past date changes when later rows change. The check is
generic: each term (every factor of the right-hand side, and the response) is evaluated on
the rows observed by an origin and on all rows, and the two must agree on the common rows
(up to ``LOOKAHEAD_RTOL``); a term that differs, or that cannot be computed from the past
rows alone, is refused with :class:`~attnreg.exceptions.LeakageError` naming it. It is run at
the first and the last origin. Terms declared ``known=[...]`` (their whole path is known in
advance) are exempt; patsy's stateful transforms are refused before this check (they are
fitted once, on the whole sample).

:func:`observed_response` gives the response at every data row (NaN where it is missing):
the prevailing-mean benchmark averages every response observed by the origin, whatever the
model's lags (which drop the first rows of its own design) or window.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import LeakageError, OptionError
from attnreg.formula.design import Design

__all__ = ["LOOKAHEAD_RTOL", "check_known", "check_lookahead", "observed_response"]

#: Relative tolerance (to the term's largest absolute value on the common rows) within which
#: a term evaluated on the past rows and on all rows is taken as equal: elementwise functions
#: may differ in the last bits between a vectorised loop and its scalar tail.
LOOKAHEAD_RTOL = 1e-9
#: Names in factor codes that are functions, not variables (``known=`` cannot name them).
_FUNCTIONS = frozenset({"lag", "lags", "diff", "np", "C", "I", "Q"})


def _frame(design: Design, data: pd.DataFrame, codes: Iterable[str]) -> pd.DataFrame:
    """The data as the formula saw it when the design was built (string labels, numbers)."""
    from attnreg.formula.frame import prepare_frame, string_labels, variable_uses

    uses: dict[str, bool] = {}
    for code in codes:
        for name, outside in variable_uses(code).items():
            uses[name] = uses.get(name, False) or outside
    return prepare_frame(string_labels(data, "data"), uses, "data")


def _patsy_env(design: Design) -> Any:
    """The formula's scope with patsy's builtins (``I``, ``Q``, ``C``, the stateful transforms).

    A stateful transform called here is fitted to the rows it is given, as it would be at
    each origin, so one that escaped the name check is caught by the look-ahead check.
    """
    names: dict[str, Any] = {}
    exec("from patsy.builtins import *", {}, names)  # what patsy adds to every factor's scope
    return design.eval_env.with_outer_namespace(names)


def _evaluate(code: str, frame: pd.DataFrame, env: Any) -> np.ndarray:
    """The value of one factor's code on ``frame``, as an array with one row per data row."""
    from patsy.eval import VarLookupDict

    with warnings.catch_warnings():  # building the design already said it (np.log of 0, ...)
        warnings.simplefilter("ignore")
        value = env.eval(code, inner_namespace=VarLookupDict([frame]))
    value = getattr(value, "data", value) if type(value).__name__ == "_CategoricalBox" else value
    return np.asarray(value)


def _same_rows(part: np.ndarray, whole: np.ndarray) -> bool:
    """Whether ``part`` equals the first ``len(part)`` rows of ``whole`` (NaN equal to NaN)."""
    if part.ndim == 0 and whole.ndim == 0:
        return bool(np.array_equal(part, whole, equal_nan=part.dtype.kind in "fc"))
    if part.ndim == 0 or whole.ndim == 0 or part.shape[1:] != whole.shape[1:]:
        return False
    head = whole[: part.shape[0]]
    if part.dtype.kind in "biuf" and head.dtype.kind in "biuf":
        a, b = part.astype(np.float64), head.astype(np.float64)
        finite = np.abs(b[np.isfinite(b)])
        scale = float(finite.max()) if finite.size else 0.0
        return bool(np.isclose(a, b, rtol=LOOKAHEAD_RTOL, atol=LOOKAHEAD_RTOL * scale,
                               equal_nan=True).all())
    shape = (part.shape[0], -1)
    return pd.DataFrame(part.reshape(shape)).equals(pd.DataFrame(head.reshape(shape)))


def _terms(design: Design, known: set[str]) -> list[tuple[str, str]]:
    """(code, what) of the response and of every factor not declared known."""
    codes = [f.code for f in design.design_info.factor_infos]
    out = [(design.response_name, "the response")]
    return out + [(c, "term") for c in codes if c not in known and not _names(c) <= known]


def _names(code: str) -> set[str]:
    from attnreg.formula.frame import names_in

    return set(names_in(code)) - _FUNCTIONS


def check_lookahead(design: Design, data: pd.DataFrame, origin_pos: IntArray,
                    known: set[str]) -> None:
    """Refuse any term whose values up to an origin change when later rows are added.

    Parameters
    ----------
    design : Design
        Built on ``data``.
    data : DataFrame, shape (n_rows, n_columns)
        The data of the forecast, rows in time order.
    origin_pos : ndarray of int, shape (n_forecasts,)
        Data position of each forecast's origin; the check truncates the data after the
        first and after the last one.
    known : set of str
        Terms or variables declared known in advance (exempt).

    Raises
    ------
    LeakageError
        Naming the term, the origin and how to fix it.

    Examples
    --------
    >>> import attnreg as ar
    >>> frame = pd.DataFrame({"y": np.arange(30.0) ** 0.5, "x": np.arange(30.0)})
    >>> ar.forecast("y ~ lag(x - x.mean(), 1)", frame, start=20)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnreg.exceptions.LeakageError: term 'lag(x - x.mean(), 1)' looks ahead: its values ...
    """
    terms = _terms(design, known)
    frame = _frame(design, data, [code for code, _ in terms])
    env = _patsy_env(design)
    cuts = sorted({int(origin_pos[0]) + 1, int(origin_pos[-1]) + 1} - {frame.shape[0]})
    for code, what in terms:
        try:
            whole = _evaluate(code, frame, env)
        except Exception:  # patsy built it; should this scope differ, skip
            continue
        for cut in cuts:
            origin = data.index[cut - 1]
            try:
                part = _evaluate(code, frame.iloc[:cut], env)
            except Exception as err:  # any failure means it is not known then
                raise LeakageError(
                    f"{what} {code!r} cannot be computed from the rows observed by the origin "
                    f"{origin!r} ({type(err).__name__}: {err}), so a forecast made then could "
                    "not use it: compute it from past rows only") from None
            if not _same_rows(part, whole):
                raise LeakageError(
                    f"{what} {code!r} looks ahead: its values at and before the origin "
                    f"{origin!r} change when the later rows are added (it uses later data, e.g. "
                    "a full-sample mean or scale), so every forecast would use information from "
                    "after its origin. Compute it from past rows only (an expanding or rolling "
                    "statistic), or declare it with known=[...] if its whole path is known in "
                    "advance")


def check_known(design: Design, known: str | Sequence[str], formula_of: Any) -> set[str]:
    """The ``known=`` entries as factor codes; OptionError for one the formula does not use.

    ``formula_of`` maps an entry as written (``"lag(x, h)"``) to the code patsy gives it
    (the horizon substituted, spacing normalised).
    """
    from patsy.tokens import normalize_token_spacing

    entries = [known] if isinstance(known, str) else list(known)
    codes = [f.code for f in design.design_info.factor_infos]
    valid = set(codes) | {n for c in codes for n in _names(c)}
    out = set()
    for entry in entries:
        if not isinstance(entry, str):
            raise OptionError(f"known= takes the names of terms or variables of the formula, "
                              f"however it holds {entry!r}")
        try:
            code = normalize_token_spacing(formula_of(entry))
        except Exception:  # not Python: reported as not in the formula
            code = entry
        if code not in valid and entry not in valid:
            raise OptionError(
                f"known=[{entry!r}] is not a term or variable of the right-hand side of "
                f"{design.formula!r} (terms: {', '.join(map(repr, codes))}): remove it or "
                "spell it as the formula does")
        out |= {code, entry}
    return out


def observed_response(design: Design, data: pd.DataFrame) -> FloatArray:
    """The response at every row of ``data``, shape (n_rows,), NaN where it is not observed.

    The response's code is evaluated on the whole data (rows that the regressors' lags drop
    from the design included); the design's own rows keep the design's values.
    """
    out = np.full(data.shape[0], np.nan)
    try:
        values = _evaluate(design.response_name, _frame(design, data, [design.response_name]),
                           _patsy_env(design))
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if values.size == out.size:
            out = np.where(np.isfinite(values), values, np.nan)
    except Exception:  # fall back to the design's rows
        pass
    assert design.data_rows is not None
    out[design.data_rows] = design.y
    return out
