"""The covariance of an IV fit bound to its rows, and the covariance its diagnostics use.

The coefficients' covariance is any registered one (:mod:`attnreg.iv.covariance`); its
cluster ids and periods are resolved here, once. The weak-instrument statistics and AER's
diagnostics use the same bound covariance for their auxiliary regressions
(:mod:`attnreg.iv.aux_vcov`). :func:`is_aer_covariance` tells the covariances AER's
``summary(ivreg)`` names itself (classical, HC0, HC1, one-way vcovCL's HC1) from those that
reports label with the registry's words.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import DataError, OptionError
from attnreg.iv.frame import IVFrame
from attnreg.iv.options import IV_VCOV
from attnreg.inference.vcov.cluster_ids import check_cluster_argument
from attnreg.inference.vcov.registry import VcovSpec
from attnreg.linear.score_vcov import bind_vcov

__all__ = ["bind_iv_vcov", "is_aer_covariance", "one_way_ids", "resolve_clusters"]


def resolve_clusters(cluster: Any, frame: IVFrame) -> Any:
    """Cluster ids of the rows used: a column name of the data, or one id per data row."""
    if cluster is None:
        return None
    design = frame.design
    data, rows = design.data, design.data_rows
    assert data is not None and rows is not None
    if isinstance(cluster, str):
        if cluster not in data.columns:
            raise OptionError(f"cluster={cluster!r} is not a column of data; give a column name "
                              "or one id per row")
        ids = data[cluster].to_numpy()
    else:
        ids = np.asarray(cluster)
        if ids.shape != (data.shape[0],):
            raise OptionError(f"cluster must have one id per row of data ({data.shape[0]}), "
                              f"however it has shape {ids.shape}")
    ids = ids[rows]
    if pd.isna(ids).any():
        what = repr(cluster) if isinstance(cluster, str) else "ids"
        raise DataError(f"cluster {what} has missing values in the rows used; fill them or "
                        "drop those rows first")
    return ids


def _is_multiway(cluster: Any, frame: IVFrame) -> bool:
    """Whether ``cluster`` names several columns (``"a + b"``, a list of names, a frame)."""
    data = frame.design.data
    if isinstance(cluster, str):
        return "+" in cluster and (data is None or cluster not in data.columns)
    if isinstance(cluster, (list, tuple)):
        return bool(cluster) and all(isinstance(c, str) for c in cluster) and len(cluster) > 1
    return bool(np.ndim(cluster) == 2)


def one_way_ids(kind: str, cluster: Any, frame: IVFrame) -> Any:
    """The cluster ids of the rows used (one dimension), or None (no or multi-way clustering)."""
    if kind != "cluster" or cluster is None:
        return None
    check_cluster_argument(cluster)
    if _is_multiway(cluster, frame):
        return None
    return resolve_clusters(cluster, frame)


def bind_iv_vcov(kind: str, cluster: Any, clusters: Any, options: dict[str, Any], n_obs: int,
                 design: Any) -> VcovSpec:
    """The registered covariance ``kind`` with ``options`` bound to the fit's rows: one-way
    ``clusters`` (ids of the rows used) directly, several dimensions and ``time=`` from the
    design's data."""
    named = cluster if isinstance(cluster, str) else None
    if kind == "cluster" and clusters is not None:
        ids = np.asarray(clusters)
        return bind_vcov(kind, n_obs=n_obs, cluster=pd.Series(ids, name=named or "cluster"),
                         **options)
    extra = {"cluster": cluster} if cluster is not None else {}
    return bind_vcov(kind, n_obs=n_obs, design=design, **options, **extra)


def is_aer_covariance(kind: str, clusters: Any, options: dict[str, Any]) -> bool:
    """Whether the covariance is one of :data:`IV_VCOV` as AER's ``summary(ivreg)`` takes
    it: classical, HC0, HC1 or a one-way cluster covariance of vcovCL's type HC1."""
    if kind == "cluster":
        return clusters is not None and options.get("type", "HC1") == "HC1"
    return kind in IV_VCOV
