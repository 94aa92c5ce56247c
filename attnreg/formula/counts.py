"""A binomial response written as counts: R's ``glm(cbind(successes, failures) ~ x)``.

Inside a formula ``cbind(a, b)`` (:func:`cbind`) stacks the two count columns; patsy reads
them as one two-column response. :func:`counts_response` turns them into what R's
``binomial()$initialize`` makes of them: the proportion of successes ``a / (a + b)`` (0 when
there are no trials) as the response, and the number of trials ``a + b`` multiplying the
prior weights (rows with no trials then have weight zero and are left out of the fit, as
R's ``glm.fit`` leaves them out). Only a binomial GLM takes such a response.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from attnreg.formula.design import build_design
>>> df = pd.DataFrame({"s": [1.0, 3, 0], "f": [2.0, 1, 4], "x": [0.5, 1.0, 2.0]})
>>> d = build_design("cbind(s, f) ~ x", df, extra_names={"cbind": cbind}, counts=True)
>>> d.y.tolist(), d.weights.tolist(), d.trials.tolist()
([0.3333333333333333, 0.75, 0.0], [3.0, 4.0, 4.0], [3.0, 4.0, 4.0])
"""

from __future__ import annotations

import ast
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, FormulaError

__all__ = ["cbind", "counts_code", "counts_columns", "counts_response"]


def cbind(*columns: Any) -> FloatArray:
    """The two count columns of a binomial response, side by side (R's ``cbind``).

    Parameters
    ----------
    *columns : array-like, shape (n,)
        The successes, then the failures.

    Returns
    -------
    ndarray, shape (n, 2)
    """
    if len(columns) != 2:
        raise FormulaError("a binomial response of counts must be cbind(successes, failures): "
                           f"two count columns, the successes first, however {len(columns)} "
                           "were given")
    try:
        return np.column_stack([np.asarray(c, dtype=np.float64) for c in columns])
    except (TypeError, ValueError):
        raise DataError("cbind(successes, failures) takes two numeric columns of counts; "
                        "convert them to numbers first") from None


def counts_columns(code: str) -> tuple[str, str] | None:
    """The two arguments of a response written ``cbind(a, b)``, as written; None otherwise.

    Raises FormulaError when ``cbind`` is not given exactly two arguments.
    """
    try:
        node = ast.parse(code.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "cbind"):
        return None
    if len(node.args) != 2 or node.keywords:
        raise FormulaError(f"the response {code!r} must be cbind(successes, failures): two "
                           "count columns, the successes first")
    return ast.unparse(node.args[0]), ast.unparse(node.args[1])


def counts_code(desc: Any, n_columns: int, allow: bool) -> str | None:
    """The response's code when it is ``cbind(successes, failures)`` (two columns), else None.

    Parameters
    ----------
    desc : patsy.ModelDesc
    n_columns : int
        Columns patsy built for the response.
    allow : bool
        Whether the caller fits such a response (a binomial GLM); if not, FormulaError.
    """
    if not desc.lhs_termlist or n_columns != 2:
        return None
    code = str(desc.lhs_termlist[0].factors[0].code)
    if counts_columns(code) is None:
        return None
    if not allow:
        raise FormulaError(f"the response {code!r} counts successes and failures: it is for a "
                           "binomial GLM (method='logit', 'probit', or 'glm' with "
                           "family='binomial'); for a proportion write 'p ~ x'")
    return code


def counts_response(code: str, counts: FloatArray, weights: FloatArray | None,
                    labels: pd.Index) -> tuple[FloatArray, FloatArray, FloatArray]:
    """R's reading of ``cbind(successes, failures)``: proportion, prior weights and trials.

    Parameters
    ----------
    code : str
        The response as written (for messages).
    counts : ndarray, shape (n, 2)
        Successes and failures of the rows used.
    weights : ndarray, shape (n,), or None
        The prior weights given (``weights=``), multiplied by the trials as R does.
    labels : pandas.Index
        Row labels (for messages).

    Returns
    -------
    y : ndarray, shape (n,)
        Proportion of successes (0 for a row with no trials).
    weights : ndarray, shape (n,)
        Prior weights × trials.
    trials : ndarray, shape (n,)
    """
    names = counts_columns(code) or ("successes", "failures")
    for j, name in enumerate(names):
        column = counts[:, j]
        bad = ~np.isfinite(column) | (column < 0)
        if bad.any():
            i = int(np.argmax(bad))
            raise DataError(f"{code}: the count {name!r} must be a finite non-negative number; "
                            f"row {labels[i]!r} has {float(column[i])!r} (fix it or leave the "
                            "row out with subset=)")
        fractional = np.abs(column - np.round(column)) > 1e-3  # R's tolerance for counts
        if fractional.any():
            i = int(np.argmax(fractional))
            raise DataError(f"{code}: the count {name!r} must be a whole number; row "
                            f"{labels[i]!r} has {float(column[i])!r} (for a proportion of a "
                            "number of trials write 'p ~ x' with weights='trials')")
    trials = counts[:, 0] + counts[:, 1]
    y = np.where(trials > 0, counts[:, 0] / np.where(trials > 0, trials, 1.0), 0.0)
    w = trials if weights is None else weights * trials
    return np.ascontiguousarray(y), np.ascontiguousarray(w, dtype=np.float64), trials
