"""The design rows of new data for a fit learned chunk by chunk (its :class:`ChunkSpec`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import patsy

from attnreg._typing import FloatArray

__all__ = ["design_of_frame"]


def design_of_frame(spec: Any, frame: pd.DataFrame) -> FloatArray:
    """The design matrix of ``frame``'s rows with the fit's levels and transform statistics.

    Parameters
    ----------
    spec : ChunkSpec
    frame : DataFrame
        New rows; they must hold every variable of the formula's right-hand side.

    Returns
    -------
    ndarray, shape (len(frame), n_coef)
        NaN rows for rows with a missing value.
    """
    from attnreg.formula.builder import design_rows
    from attnreg.formula.checks import translate_patsy_error
    from attnreg.formula.frame import prepare_frame, string_labels, variable_uses
    from attnreg.formula.parse import check_names

    frame = string_labels(frame, "newdata")
    factors = list(spec.x_info.factor_infos.keys())
    check_names(factors, frame, spec.eval_env, "newdata")
    uses = {name: outside for f in factors for name, outside in variable_uses(f.code).items()}
    frame = prepare_frame(frame, uses, "newdata")
    try:  # patsy's build_design_matrices, factors encoded per distinct value
        mat, rows = design_rows(spec.x_info, frame)
    except patsy.PatsyError as exc:
        raise translate_patsy_error(exc, "newdata") from None
    X = np.full((frame.shape[0], len(spec.column_names)), np.nan)
    X[rows] = mat
    return X
