"""The autoregressive structure of a forecasting formula: the response's lag in each column,
and the ``level=`` of forecast intervals (shared by the forecasting loop and ``ahead()``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from attnreg._typing import IntArray
from attnreg.exceptions import LeakageError, OptionError
from attnreg.formula.design import Design

__all__ = ["ar_lags", "forecast_level"]


def forecast_level(level: Any) -> float:
    """The ``level=`` of forecast intervals: a number in (0, 1)."""
    if isinstance(level, bool) or not isinstance(level, (int, float, np.floating)) or \
            not 0.0 < float(level) < 1.0:
        raise OptionError(f"level must be a number in (0, 1), e.g. 0.9, however: {level=!r}")
    return float(level)


def ar_lags(design: Design) -> IntArray:
    """The lag of the response in each column (0: the intercept), or LeakageError.

    Examples
    --------
    >>> import attnreg as ar
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"y": np.random.default_rng(0).normal(size=30)})
    >>> fc = ar.forecast("y ~ lag(y, 2) + lags(y, 4, 5)", frame, start=20)
    >>> ar_lags(fc.plan.design).tolist()
    [0, 2, 4, 5]
    """
    import ast

    lhs = ast.unparse(ast.parse(design.formula.split("~", 1)[0].strip(), mode="eval"))
    info = design.design_info
    out = np.zeros(len(design.column_names), dtype=np.int64)
    for term, cols in info.term_slices.items():
        if not term.factors:
            continue
        code = " : ".join(f.code for f in term.factors)
        found = _lag_of_response(code, lhs) if len(term.factors) == 1 else None
        if found is None:
            raise LeakageError(
                f"strategy='iterated' iterates an autoregression, but the term {code!r} is not a "
                f"lag of the response {lhs!r} (lag({lhs}, k) or lags({lhs}, a, b), k, a >= 1): "
                "its future values are not forecast; use strategy='direct'")
        a, b = found
        if b - a + 1 != cols.stop - cols.start:
            raise LeakageError(f"strategy='iterated' cannot map the columns of term {code!r}")
        out[cols] = np.arange(a, b + 1)
    return out


def _lag_of_response(code: str, lhs: str) -> tuple[int, int] | None:
    import ast

    node = ast.parse(code.strip(), mode="eval").body
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args):
        return None
    if ast.unparse(node.args[0]) != lhs or node.keywords:
        return None
    nums = [a.value for a in node.args[1:]
            if isinstance(a, ast.Constant) and type(a.value) is int and a.value >= 1]
    if len(nums) != len(node.args) - 1:
        return None
    if node.func.id == "lag" and len(nums) <= 1:
        k = nums[0] if nums else 1
        return k, k
    if node.func.id == "lags" and len(nums) == 2 and nums[0] <= nums[1]:
        return nums[0], nums[1]
    return None
