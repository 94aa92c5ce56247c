"""A logical response as R reads it: ``lm(I(y > 0) ~ x)`` regresses the 0/1 indicator.

patsy treats a boolean response as a factor with levels ``False`` and ``True`` and codes
it as two indicator columns. :func:`logical_response` recodes such a response into one
column, ``1.0`` for ``True`` and ``0.0`` for ``False``, named as written (``I(y > 0)``):
a contrast matrix ``[[0], [1]]`` with an empty suffix. The design info stays patsy's own,
so that memory, chunked and dask fits, predictions and pickling need nothing more; rows
where the response is missing are dropped as those of any factor.

Examples
--------
>>> import pandas as pd
>>> from attnreg.formula.builder import model_arrays
>>> from attnreg.formula.parse import parse
>>> built = model_arrays(parse("I(y > 0) ~ x"), pd.DataFrame({"y": [-1.0, 2, 3], "x": [1.0, 2, 4]}),
...                      patsy.EvalEnvironment([{}]))
>>> built.y_info.column_names, built.y[:, 0].tolist()
(['I(y > 0)'], [0.0, 1.0, 1.0])
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np
import patsy

__all__ = ["logical_response"]


def logical_response(y_info: Any) -> Any:
    """``y_info`` with a boolean response coded as one 0/1 column (other responses: as given).

    Parameters
    ----------
    y_info : patsy.DesignInfo
        Design info of the response (one term of one factor for a plain response).

    Returns
    -------
    patsy.DesignInfo
        A one-column design info named as the response's code when the response is a
        factor with levels exactly ``(False, True)``; ``y_info`` itself otherwise.
    """
    if len(y_info.terms) != 1 or len(y_info.factor_infos) != 1:
        return y_info
    (factor, info), = y_info.factor_infos.items()
    if info.type != "categorical" or tuple(info.categories) != (False, True):
        return y_info
    (term,) = y_info.terms
    if tuple(term.factors) != (factor,):
        return y_info
    indicator = patsy.ContrastMatrix(np.array([[0.0], [1.0]]), [""])
    sub = patsy.design_info.SubtermInfo([factor], {factor: indicator}, 1)
    return patsy.DesignInfo([factor.name()], factor_infos={factor: info},
                            term_codings=OrderedDict([(term, [sub])]))
