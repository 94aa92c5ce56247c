r"""The attention view of 2SLS: a prediction as a weighted sum of the training responses.

With ``R = [X, D]``, ``X̂ = P_Q R`` (weighted rows ``sqrt(w_i) r_i``) and ``A = X̂'X̂ = X̂'R``,

.. math:: x_0'\hat\beta = x_0' A^{-1} \hat X' W^{1/2} y = \sum_i a_i(x_0)\, y_i,
   \qquad a_i(x_0) = x_0' A^{-1} \hat x_i \sqrt{w_i}.

With the thin QR factors ``Q'R = U T`` (``Q`` the instrument basis), ``A^{-1}X̂' = T^{-1}U'Q'``,
so the (m, n) weight matrix of m query rows costs ``O(m n L)`` and never forms an n × n matrix;
the self-weights ``a_i(r_i)`` of the training rows (the 2SLS leverages, summing to k) are
computed row by row.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.linalg import solve_triangular

from attnreg.exceptions import DataError, OptionError
from attnreg.iv.compare_ols import AttentionComparison
from attnreg.iv._design import FloatArray, make_design
from attnreg.iv.estimators import _upper_r

__all__ = ["IVAttention", "tsls_attention"]


@dataclass(frozen=True)
class IVAttention:
    """Attention weights of 2SLS predictions.

    Attributes
    ----------
    weights : ndarray, shape (m, n)
        ``weights[j, i]``: the weight of training response ``y_i`` in prediction j;
        ``weights @ y == predictions``.
    predictions : ndarray, shape (m,)
        ``X0 @ coef``.
    coef : ndarray, shape (k,)
        The 2SLS coefficients of ``[X, D]``.
    self_weights : ndarray, shape (n,)
        ``a_i(r_i)``: the weight of each training row on its own fitted value (sums to k).
    ols_weights : ndarray, shape (m, n), or None
        The OLS weights of the same formula and rows (set by ``IVResults.attention``).
    y : ndarray, shape (n,), or None
        The training responses (set with ``ols_weights``).
    row_labels : Index, shape (n,), or None
        The training rows' labels.
    """

    weights: FloatArray
    predictions: FloatArray
    coef: FloatArray
    self_weights: FloatArray
    ols_weights: FloatArray | None = field(default=None, repr=False)
    y: FloatArray | None = field(default=None, repr=False)
    row_labels: Any = field(default=None, repr=False)

    def compare_ols(self) -> AttentionComparison:
        """Which rows the instruments re-weight: these 2SLS weights, the OLS weights of the
        same formula on the same rows and their difference, per prediction
        (:class:`attnreg.iv.compare_ols.AttentionComparison`, with ``top_rows``)."""
        if self.ols_weights is None or self.y is None:
            raise OptionError("compare_ols() needs the OLS weights: take the attention from the "
                              "fit, fit.attention(newdata)")
        return AttentionComparison(
            tsls=self.weights, ols=self.ols_weights, difference=self.weights - self.ols_weights,
            tsls_predictions=self.predictions, ols_predictions=self.ols_weights @ self.y,
            row_labels=self.row_labels if self.row_labels is not None
            else pd.RangeIndex(self.y.shape[0]))


def tsls_attention(X0: npt.ArrayLike, y: npt.ArrayLike, X: npt.ArrayLike | None, D: npt.ArrayLike,
                   Z: npt.ArrayLike, weights: npt.ArrayLike | None = None) -> IVAttention:
    """2SLS predictions at query rows ``X0`` as weights over the training rows.

    Parameters
    ----------
    X0 : array_like, shape (m, k)
        Query rows of ``[X, D]`` (same column order as the coefficients). For the fitted values
        of the training set pass its rows in chunks to keep each (m, n) block small.
    y, X, D, Z, weights
        As :func:`attnreg.iv.estimators.tsls`.

    Returns
    -------
    IVAttention
    """
    d = make_design(y, X, D, Z, weights)
    Q, R = d.Q, d.regressors
    k = R.shape[1]
    q0 = np.asarray(X0, dtype=np.float64)
    if q0.ndim == 1:
        q0 = q0[None, :]
    if q0.ndim != 2 or q0.shape[1] != k:
        raise DataError(f"X0 must have shape (m, {k}) (the columns of [X, D]); got shape {q0.shape}")
    U, T = _upper_r(Q.T @ R)
    left = solve_triangular(T, U.T, trans="N")  # T^{-1} U', (k, L)
    # A^{-1} X̂' W^{1/2} = T^{-1} U' Q' diag(sqrt w): applied from the left, never n × n
    G = (Q @ left.T) * d.sqrt_w[:, None]  # (n, k): row i is (A^{-1} x̂_i sqrt(w_i))'
    attn = q0 @ G.T
    coef = G.T @ (d.y / d.sqrt_w)
    raw = R / d.sqrt_w[:, None]  # the training rows on the data's scale
    return IVAttention(weights=attn, predictions=q0 @ coef, coef=coef,
                       self_weights=np.einsum("ij,ij->i", raw, G))
