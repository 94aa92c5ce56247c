"""``subset=`` expressions that see what formulas see: numpy as ``np``, the caller's scope.

A subset expression is first evaluated as before, by :meth:`pandas.DataFrame.eval` (its
own language: ``"year > 1950 and x < 2"``, backquoted column names). Where pandas cannot
evaluate it (``"np.abs(x1) < 1"``, a variable of the caller's scope without pandas' ``@``),
it is evaluated as Python, as a formula's terms are: the data's columns first, then the
caller's scope, then the formula helpers (``lag``, ``center``, ...) and numpy as ``np``.

Examples
--------
>>> import numpy as np, pandas as pd
>>> import attnreg as ar
>>> df = pd.DataFrame({"x1": [-2.0, -0.5, 0.2, 0.9, 1.5, 3.0, -0.1],
...                    "y": [1.0, 2.0, 2.5, 3.0, 1.0, 0.0, 2.2]})
>>> ar.attnreg("y ~ x1", df, subset="np.abs(x1) < 1").nobs
4
>>> limit = 1.0
>>> ar.attnreg("y ~ x1", df, subset="x1 < limit").nobs
5
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import OptionError

__all__ = ["resolve_subset"]


def resolve_subset(subset: Any, data: Any, env: Any,
                   extra_names: Mapping[str, Any] | None = None) -> Any:
    """``subset``, or the value of a subset expression pandas cannot evaluate.

    Parameters
    ----------
    subset : str, array-like or None
        What the caller gave; anything but a string is returned as is.
    data : DataFrame or dict of columns
    env : patsy.EvalEnvironment
        The caller's scope (as for the formula).
    extra_names : mapping, optional
        The formula helpers.

    Returns
    -------
    The string itself when pandas evaluates it (so that the design reports on "subset
    expression ..."), else its value: a Series of shape (n_rows,) aligned with ``data``, or
    whatever the expression gives (the design checks it).
    """
    if not isinstance(subset, str) or not isinstance(data, (pd.DataFrame, Mapping)):
        return subset
    try:
        frame = data if isinstance(data, pd.DataFrame) else pd.DataFrame(dict(data))
    except ValueError:
        return subset  # the design says what is wrong with data
    try:
        frame.eval(subset)
        return subset
    except Exception as exc:  # any failure: try Python's evaluation
        pandas_error = exc
    columns = {str(c): frame[c] for c in frame.columns}
    outer = {**dict(extra_names or {}), "np": np, "numpy": np}
    try:
        return env.with_outer_namespace(outer).eval(subset, inner_namespace=columns)
    except Exception as exc:  # reported with both evaluators' reasons
        raise OptionError(
            f"subset expression {subset!r} could not be evaluated: {exc} (as Python, with the "
            f"data's columns, the caller's names and numpy as np); pandas' eval: "
            f"{pandas_error}") from None
