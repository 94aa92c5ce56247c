"""Cluster and period ids of a fit that keeps no rows (chunked, dask): column names, counts.

A chunked pass sums the scores per value of the named columns (:mod:`attnreg.large.passes`);
the cluster-robust estimators of :mod:`attnreg.inference.vcov.cluster` are bound to the names
before the pass (:func:`column_names`) and to the numbers of clusters it found after it
(:class:`ClusterCounts`, which their labels and degrees of freedom read as they read an
in-memory fit's :class:`~attnreg.inference.vcov.cluster.ClusterIds`).

Examples
--------
>>> from attnreg.inference.vcov.cluster_columns import ClusterCounts, column_names
>>> column_names("firm + year")
('firm', 'year')
>>> ClusterCounts(("firm",), (30,)).n_dims
1
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attnreg.exceptions import OptionError

__all__ = ["ClusterCounts", "column_names"]


@dataclass(frozen=True)
class ClusterCounts:
    """What the covariance labels and degrees of freedom need of the clusters of a fit that
    keeps no rows.

    Attributes
    ----------
    names : tuple of str
        The cluster (or time) columns.
    n_clusters : tuple of int
        Clusters per dimension.
    """

    names: tuple[str, ...]
    n_clusters: tuple[int, ...]

    @property
    def n_dims(self) -> int:
        """Number of dimensions."""
        return len(self.names)


def column_names(cluster: Any, what: str = "cluster") -> tuple[str, ...]:
    """The column names of ``cluster`` (``"firm"``, ``"firm + year"`` or a list of names).

    Raises
    ------
    OptionError
        Anything else (ids as values need the rows, which a chunked fit does not keep).
    """
    if isinstance(cluster, str):
        names = tuple(p.strip() for p in cluster.split("+"))
    elif isinstance(cluster, (list, tuple)) and all(isinstance(c, str) for c in cluster):
        names = tuple(cluster)
    else:
        raise OptionError(f"{what} of a chunked fit must name columns of the data ('firm', "
                          f"'firm + year' or a list of names), however: type({what}) is "
                          f"{type(cluster).__name__}")
    if not names or not all(names):
        raise OptionError(f"{what} must name at least one column, however: {what}={cluster!r}")
    return names
