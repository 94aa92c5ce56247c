"""The attention view of 2SLS: weights @ y equals the predictions."""

from __future__ import annotations

import numpy as np
import pytest

from attnreg.exceptions import DataError
from attnreg.iv import tsls
from attnreg.iv.attention import tsls_attention
from tests.conftest import ATOL_IDENTITY, RTOL_EXACT
from tests.iv.conftest import make_iv_data


@pytest.mark.parametrize("weighted", [False, True])
def test_weights_reproduce_predictions(weighted):
    d = make_iv_data()
    w = d.w if weighted else None
    rng = np.random.default_rng(3)
    X0 = np.column_stack([np.ones(5), rng.normal(size=(5, 5))])
    att = tsls_attention(X0, d.y, d.X, d.D, d.Z, w)
    fit = tsls(d.y, d.X, d.D, d.Z, w)
    np.testing.assert_allclose(att.coef, fit.coef, rtol=RTOL_EXACT)
    np.testing.assert_allclose(att.weights @ d.y, X0 @ fit.coef, atol=ATOL_IDENTITY)
    np.testing.assert_allclose(att.predictions, X0 @ fit.coef, atol=ATOL_IDENTITY)
    assert att.weights.shape == (5, d.y.shape[0])
    # the self-weights are the diagonal of the training rows' weight matrix and sum to k
    R = np.hstack([d.X, d.D])
    full = tsls_attention(R[:40], d.y, d.X, d.D, d.Z, w).weights
    np.testing.assert_allclose(att.self_weights[:40], np.diag(full[:, :40]), atol=ATOL_IDENTITY)
    np.testing.assert_allclose(att.self_weights.sum(), R.shape[1], rtol=RTOL_EXACT)


def test_closed_form_weights():
    # a_i(x0) = x0' (X̂'X̂)^{-1} x̂_i with X̂ = P_Q R (unweighted), from explicit matrices
    d = make_iv_data(n=60)
    R, Q = np.hstack([d.X, d.D]), np.hstack([d.X, d.Z])
    Xh = Q @ np.linalg.solve(Q.T @ Q, Q.T @ R)
    x0 = R[:3]
    ref = x0 @ np.linalg.solve(Xh.T @ Xh, Xh.T)
    np.testing.assert_allclose(tsls_attention(x0, d.y, d.X, d.D, d.Z).weights, ref, atol=ATOL_IDENTITY)


def test_bad_query_shape():
    d = make_iv_data(n=60)
    with pytest.raises(DataError, match=r"X0 must have shape \(m, 6\)"):
        tsls_attention(np.ones((2, 5)), d.y, d.X, d.D, d.Z)
