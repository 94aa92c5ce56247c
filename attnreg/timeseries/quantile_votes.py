"""The attention of a quantile forecast: the exact vote of the rows its rq fit interpolates.

A linear quantile regression solution is a vertex of its linear programme: it interpolates p
training rows h, ``b = X_h⁻¹ y_h``, so the τ-quantile forecast at ``x0`` is
``x0'b = w'y_h`` with ``w = X_h⁻ᵀ x0``: signed weights on those p rows, zero on every other
row. ``fc.attention(target, tau=0.5)`` returns them as
:class:`~attnreg.views.attention.AttentionWeights` (``kind="linear"``), for the τ as fitted (before
any rearrangement of crossing quantiles). A fit that is not a verified vertex (a degenerate
problem) is refused.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.linalg as sla

from attnreg._typing import FloatArray
from attnreg.views.attention import AttentionWeights
from attnreg.exceptions import OptionError
from attnreg.quantreg.solver import vertex_rows
from attnreg.timeseries.views import last_refit, model_at

if TYPE_CHECKING:
    from attnreg.timeseries.forecast_results import ForecastResults

__all__ = ["quantile_vote"]


def _rows(weights: FloatArray, start: int, stop: int) -> FloatArray:
    return weights[start:stop]


def _tau_position(taus: tuple[float, ...], tau: float | None) -> int:
    if tau is None:
        if 0.5 not in taus:
            raise OptionError(f"these quantile forecasts have tau={list(taus)}, without the "
                              "median: choose the quantile with tau=")
        tau = 0.5
    if tau not in taus:
        raise OptionError(f"tau={tau!r} was not fitted; the fitted tau are {list(taus)}")
    return taus.index(tau)


def quantile_vote(res: ForecastResults, i: int, tau: float | None,
                  chunk_size: int | None = None) -> AttentionWeights:
    """Weights of forecast ``i``'s τ quantile over its training rows (see the module's notes).

    Returns
    -------
    AttentionWeights
        One query; its weights, shape (1, n_train), are zero except on the p interpolated
        rows, and ``weights @ y_train`` is the forecast of that τ as fitted.
    """
    assert res.taus is not None
    k = _tau_position(tuple(res.taus), tau)
    fit: Any = model_at(res, last_refit(res, i))
    X, y = fit.design.X, fit.design.y
    b = fit.fits[k].coef
    h = vertex_rows(X, y - X @ b)
    if h is None or not fit.fits[k].vertex:
        raise OptionError(f"the tau={res.taus[k]} fit of this forecast is not a verified vertex "
                          "(a degenerate problem): it has no exact vote of p rows")
    lu = sla.lu_factor(X[h], check_finite=False)
    if not np.allclose(sla.lu_solve(lu, y[h], check_finite=False), b, rtol=1e-8, atol=1e-12):
        raise OptionError(f"the tau={res.taus[k]} fit of this forecast interpolates no set of p "
                          "independent rows: it has no exact vote")
    x0 = res.plan.design.X[res.plan.targets[i]]
    weights = np.zeros((1, X.shape[0]))
    weights[0, h] = sla.lu_solve(lu, x0, trans=1, check_finite=False)  # X_h⁻ᵀ x0
    return AttentionWeights(weight_fn=partial(_rows, weights), n_queries=1,
                            query_labels=res.forecasts.index[i:i + 1],
                            train_labels=fit.design.row_labels, y_train=y, kind="linear",
                            chunk_size=chunk_size)
