"""Error messages of attnreg.iv name the argument and say how to fix it."""

from __future__ import annotations

import numpy as np
import pytest

from attnreg.exceptions import DataError, OptionError
from attnreg.iv import anderson_rubin_test, iv_vcov, tsls, weak_instruments
from tests.iv.conftest import make_iv_data


def test_robust_kind_and_clusters_errors():
    d = make_iv_data(n=80)
    with pytest.raises(OptionError, match="kind must be one of HC0, HC1, cluster; got 'HC3'"):
        weak_instruments(d.X, d.D, d.Z, kind="HC3")
    with pytest.raises(OptionError, match=r"kind='cluster' needs clusters= \(one label per row\)"):
        weak_instruments(d.X, d.D, d.Z, kind="cluster")
    with pytest.raises(DataError, match="clusters must have one label per row: 80 expected, got 79"):
        iv_vcov(tsls(d.y, d.X, d.D, d.Z), "cluster", clusters=d.g[:-1])
    with pytest.raises(OptionError, match="needs at least 2 clusters, got 1"):
        iv_vcov(tsls(d.y, d.X, d.D, d.Z), "cluster", clusters=np.zeros(80))
    with pytest.raises(OptionError, match="kind must be one of HC0, HC1, cluster; got 'HAC'"):
        anderson_rubin_test(d.y, d.X, d.D, d.Z, [0.0, 0.0], kind="HAC")


def test_shape_and_weight_errors():
    d = make_iv_data(n=80)
    msg = r"Z must have shape \(n, m\) with n = 80 rows as y; got shape \(79, 4\)"
    with pytest.raises(DataError, match=msg):
        tsls(d.y, d.X, d.D, d.Z[:-1])
    with pytest.raises(DataError, match="weights must be 80 positive finite numbers"):
        tsls(d.y, d.X, d.D, d.Z, weights=-d.w)
    with pytest.raises(DataError, match="y has a missing or infinite value in row 5"):
        y = d.y.copy()
        y[5] = np.inf
        tsls(y, d.X, d.D, d.Z)
    with pytest.raises(DataError, match="X is rank deficient"):
        tsls(d.y, np.column_stack([d.X, d.X[:, 1]]), d.D, d.Z)


def test_unidentified_regressor():
    d = make_iv_data(n=80)
    D = np.column_stack([d.D, d.X[:, 1] * 2.0])  # an "endogenous" copy of an exogenous column
    with pytest.raises(DataError, match=r"the projection of \[X, D\] on the instruments is rank deficient"):
        tsls(d.y, d.X, D, np.column_stack([d.Z, d.Z[:, 0] ** 2]))
