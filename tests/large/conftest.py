"""A LocalCluster of two single-threaded worker processes on the loopback interface, with a
small memory limit, started once per test module that asks for ``client`` and stopped after."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  host="127.0.0.1", memory_limit="500MB",
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as c:
        yield c
