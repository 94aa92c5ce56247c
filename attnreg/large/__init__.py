"""Data larger than memory: formula fits read chunk by chunk, and a registry of backends.

:func:`attnreg.attnreg` hands ``data`` to the first registered backend whose predicate
accepts it (:func:`chunked_backend`); the built-in local backend takes what
:func:`attnreg.large.sources.is_large` accepts (parquet/CSV paths and globs, arrow datasets,
large arrow tables and polars frames, and any input when ``chunk_rows=`` is given); the
built-in ``"dask"`` backend takes a ``dask.dataframe.DataFrame``
(:func:`attnreg.large.dask.fit_dask`: the partitions are the chunks, computed on the
workers). Another engine registers its own with :func:`register_backend` (it is tried
first). Neither predicate imports anything: ``import attnreg`` and fits of pandas data never
import dask, pyarrow or polars.

The modules:

- :mod:`~attnreg.large.sources`: :func:`as_source`, ``ChunkSource.frames(columns)``;
- :mod:`~attnreg.large.spec`: pass 1, :func:`learn_spec` -> ``ChunkSpec``
  (:mod:`~attnreg.large.spec_learning`: the formula against the source, patsy's builder);
- :mod:`~attnreg.large.accumulate`: :func:`chunk_design`, ``RFactor.from_chunk`` /
  ``RFactor.merge`` (the TSQR combine);
- :mod:`~attnreg.large.fit`: :func:`fit_from_factor` and the local passes
  (:mod:`~attnreg.large.options`: the chunked path's options; :mod:`~attnreg.large.refine`
  and :mod:`~attnreg.large.gradient`: the extended-precision OLS refinement);
- :mod:`~attnreg.large.passes`: ``PassPlan``, :func:`second_pass` -> ``MeatPart.merge``
  (:mod:`~attnreg.large.meat`: the mergeable residual statistics and score sums);
- :mod:`~attnreg.large.results`: ``ChunkedResults`` (+ :mod:`~attnreg.large.chunked_covariance`:
  covariance and ``with_vcov``; :mod:`~attnreg.large.chunked_predict`: ``predict``,
  ``attention``; :mod:`~attnreg.large.chunked_summary`: the summary);
- :mod:`~attnreg.large.dask`, :mod:`~attnreg.large.dask_spec`: dask DataFrames on a cluster;
- :mod:`~attnreg.large.dask_attention`: the streamed attention view.

Nothing here imports pyarrow or polars until such data is read.

Examples
--------
>>> import pandas as pd
>>> from attnreg.large import chunked_backend
>>> chunked_backend(pd.DataFrame({"x": [1.0]}), {}) is None
True
>>> chunked_backend("data/*.parquet", {}).name
'local'
>>> [b.name for b in _BACKENDS]              # tried in this order
['dask', 'local']
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Backend", "FitRequest", "chunked_backend", "register_backend", "to_memory",
           "unregister_backend"]


@dataclass(frozen=True)
class FitRequest:
    """Everything :func:`attnreg.attnreg` was given, for a backend's ``fit``.

    Attributes
    ----------
    formula : str
    data : object
    method : str
    weights, subset : object
    na_action : str
    eval_env : patsy.EvalEnvironment
        The caller's scope (already captured).
    options : dict
        The options given (front-door keywords left at their defaults are absent), the
        chunked ones (``chunk_rows``, ``progress``, ``residuals``) included.
    """

    formula: str
    data: Any = field(repr=False)
    method: str
    weights: Any = None
    subset: Any = None
    na_action: str = "drop"
    eval_env: Any = field(default=None, repr=False)
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Backend:
    """A way to fit data that does not go through the in-memory path.

    Attributes
    ----------
    name : str
    predicate : callable
        ``predicate(data, options) -> bool``: whether this backend fits ``data``.
    fit : callable
        ``fit(request: FitRequest) -> results``.
    """

    name: str
    predicate: Callable[[Any, dict[str, Any]], bool]
    fit: Callable[[FitRequest], Any]


_BACKENDS: list[Backend] = []


def register_backend(name: str, predicate: Callable[[Any, dict[str, Any]], bool],
                     fit: Callable[[FitRequest], Any]) -> Backend:
    """Register a backend; it is tried before those registered earlier.

    Parameters
    ----------
    name : str
        Replaces a backend of the same name.
    predicate : callable
        ``predicate(data, options) -> bool``; must be cheap and must not import heavy
        packages for data that is not its own (check ``type(data).__module__`` first).
    fit : callable
        ``fit(request) -> results``; validates the options before any work.

    Returns
    -------
    Backend

    Examples
    --------
    >>> b = register_backend("toy", lambda data, options: data == "toy", lambda req: "fitted")
    >>> chunked_backend("toy", {}).name
    'toy'
    >>> unregister_backend("toy")
    """
    backend = Backend(name, predicate, fit)
    unregister_backend(name)
    _BACKENDS.insert(0, backend)
    return backend


def unregister_backend(name: str) -> None:
    """Remove the backend called ``name`` (nothing if there is none)."""
    _BACKENDS[:] = [b for b in _BACKENDS if b.name != name]


def chunked_backend(data: Any, options: dict[str, Any]) -> Backend | None:
    """The backend that fits ``data`` (None: the in-memory path).

    Parameters
    ----------
    data : object
    options : dict
        The options given to :func:`attnreg.attnreg` (``chunk_rows`` forces the chunked path).
    """
    for backend in _BACKENDS:
        if backend.predicate(data, options):
            return backend
    return None


def to_memory(data: Any) -> Any:
    """Small arrow / polars inputs as a pandas DataFrame (the in-memory path); else ``data``."""
    from attnreg.large.sources import to_memory as convert

    return convert(data)


def _local_predicate(data: Any, options: dict[str, Any]) -> bool:
    from attnreg.large.sources import is_large

    return is_large(data, chunk_rows=options.get("chunk_rows"))


def _local_fit(request: FitRequest) -> Any:
    from attnreg.large.fit import fit_request

    return fit_request(request)


def _dask_predicate(data: Any, options: dict[str, Any]) -> bool:
    """A dask DataFrame: one can exist only once ``dask.dataframe`` is imported, so a look in
    ``sys.modules`` tells without importing dask."""
    module = sys.modules.get("dask.dataframe")
    return module is not None and isinstance(data, module.DataFrame)


def _dask_fit(request: FitRequest) -> Any:
    from attnreg.large.dask import fit_request

    return fit_request(request)


register_backend("local", _local_predicate, _local_fit)
register_backend("dask", _dask_predicate, _dask_fit)
