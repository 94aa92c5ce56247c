"""The arguments of :func:`attnreg.forecast` checked, and the formula of each horizon."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import OptionError

__all__ = ["at_horizon", "check_choice", "horizons_of", "is_iv_formula", "positive_int",
           "refuse_for_iv"]


def at_horizon(formula: str, h: int, data: pd.DataFrame) -> str:
    """The formula of horizon ``h``: the name ``h`` replaced by the number (not a column).

    Examples
    --------
    >>> at_horizon("y ~ lag(y, h) + lag(x, h + 1)", 4, pd.DataFrame({"y": [1.0]}))
    'y ~ lag(y, 4) + lag(x, 4 + 1)'
    """
    if "h" in data.columns:
        return formula
    import io
    import tokenize

    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(formula).readline))
    except (tokenize.TokenError, SyntaxError):
        return formula  # the formula parser reports it
    starts = np.cumsum([0] + [len(line) for line in formula.splitlines(keepends=True)])
    out, last = [], 0
    for k, tok in enumerate(tokens):
        before = tokens[k - 1].string if k else ""
        after = tokens[k + 1].string if k + 1 < len(tokens) else ""
        if tok.type == tokenize.NAME and tok.string == "h" and before != "." and after != "=":
            at = int(starts[tok.start[0] - 1]) + tok.start[1]
            out += [formula[last:at], str(h)]
            last = at + 1
    return "".join(out) + formula[last:]


def horizons_of(horizon: Any) -> list[int]:
    if isinstance(horizon, (int, np.integer, bool)):
        return [positive_int("horizon", horizon)]
    if isinstance(horizon, (str, bytes)) or not isinstance(horizon, Sequence | np.ndarray):
        raise OptionError(f"horizon must be a positive integer or a sequence of them, "
                          f"however: horizon={horizon!r}")
    values = [positive_int("horizon", h) for h in horizon]
    if not values:
        raise OptionError("horizon=[] gives nothing to forecast: name at least one horizon")
    if len(set(values)) != len(values):
        raise OptionError(f"horizon lists a horizon twice, however: horizon={list(values)!r}")
    return sorted(values)


def check_choice(name: str, value: Any, valid: Sequence[str]) -> None:
    if value not in valid:
        raise OptionError(f"{name} must be one of {', '.join(map(repr, valid))}, however: "
                          f"{name}={value!r}")


def positive_int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise OptionError(f"{name} must be a positive integer, however: {name}={value!r}")
    return int(value)


def is_iv_formula(formula: Any) -> Any:
    """The split formula (:class:`~attnreg.formula.parts.FormulaParts`) when ``formula`` is a
    string with an IV part (``"y ~ lag(x, 1) | lag(d, 1) ~ lag(z, 1)"``), else None.

    Examples
    --------
    >>> is_iv_formula("y ~ lag(x, 1) | lag(d, 1) ~ lag(z, 1)").instruments
    'lag(z, 1)'
    >>> is_iv_formula("y ~ lag(x, 1)") is None
    True
    """
    if not isinstance(formula, str) or "|" not in formula:
        return None
    from attnreg.formula.parts import split_formula

    try:
        parts = split_formula(formula)
    except Exception:  # the single-part path reports it
        return None
    return parts if parts.endogenous is not None else None


def refuse_for_iv(formula: Any, what: str) -> None:
    """OptionError when forecasts of the IV formula ``formula`` are asked for ``what`` (an
    attention view or the forecasts past the data, which refit through the method registry)."""
    if is_iv_formula(formula) is not None:
        raise OptionError(f"{what} is not available for the forecasts of an IV formula "
                          f"({formula!r}): use the forecasts, evaluation, summary() and plot()")
