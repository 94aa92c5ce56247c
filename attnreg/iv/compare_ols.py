r"""Which training rows the instruments re-weight: a 2SLS prediction's attention weights next
to the OLS weights of the same formula.

OLS predicts ``x₀'b = x₀'(R'WR)^{-1}R'W y``, weights symmetric in query and key (the hat
matrix); 2SLS replaces ``R'`` by the projected ``X̂'``. With the thin QR ``W^{1/2}R = Q T``
the OLS weights are ``x₀'T^{-1}Q'W^{1/2}``, never an n × n matrix or an inverse.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
from scipy.linalg import qr, solve_triangular

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError

__all__ = ["AttentionComparison", "ols_weights"]


def ols_weights(X0: npt.ArrayLike, R: npt.ArrayLike, weights: npt.ArrayLike | None = None) -> FloatArray:
    """OLS predictions at the query rows ``X0`` as weights over the training rows.

    Parameters
    ----------
    X0 : array_like, shape (m, k)
    R : array_like, shape (n, k)
        The training regressors (full column rank).
    weights : array_like, shape (n,), optional

    Returns
    -------
    ndarray, shape (m, n)
        ``x₀'(R'WR)^{-1}R'W``: times y, the OLS predictions.
    """
    R = np.asarray(R, dtype=np.float64)
    sw = np.ones(R.shape[0]) if weights is None else np.sqrt(np.asarray(weights, dtype=np.float64))
    Q, T = qr(R * sw[:, None], mode="economic")  # Q (n, k), T (k, k) upper triangular
    left = solve_triangular(T, np.asarray(X0, dtype=np.float64).T, trans="T")  # T^{-T} x₀, (k, m)
    return np.asarray((Q @ left).T * sw)


@dataclass(frozen=True)
class AttentionComparison:
    """2SLS and OLS weights of the same predictions (:meth:`IVAttention.compare_ols`).

    Attributes
    ----------
    tsls : ndarray, shape (m, n)
        The 2SLS weights (``tsls @ y`` the 2SLS predictions).
    ols : ndarray, shape (m, n)
        The OLS weights of the same formula on the same rows (``ols @ y`` its predictions).
    difference : ndarray, shape (m, n)
        ``tsls - ols``: how much the instruments move each training row's vote.
    tsls_predictions, ols_predictions : ndarray, shape (m,)
    row_labels : Index, shape (n,)
        The training rows' labels.
    """

    tsls: FloatArray
    ols: FloatArray
    difference: FloatArray
    tsls_predictions: FloatArray
    ols_predictions: FloatArray
    row_labels: Any

    def top_rows(self, prediction: int = 0, k: int = 5) -> pd.DataFrame:
        """The ``k`` training rows whose weight in ``prediction`` the instruments change
        most (largest ``|difference|``): columns ``tsls``, ``ols``, ``difference``, indexed
        by row label; shape (k, 3)."""
        m, n = self.tsls.shape
        if not -m <= prediction < m:
            raise OptionError(f"prediction must index one of the {m} predictions, however: "
                              f"{prediction=}")
        if not 1 <= k <= n:
            raise OptionError(f"k must be from 1 to the {n} training rows, however: {k=}")
        d = self.difference[prediction]
        top = np.argsort(-np.abs(d), kind="stable")[:k]
        return pd.DataFrame({"tsls": self.tsls[prediction, top], "ols": self.ols[prediction, top],
                             "difference": d[top]}, index=pd.Index(self.row_labels).take(top))
