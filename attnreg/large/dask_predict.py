"""Telling dask data apart without importing dask; lazy predictions for a dask DataFrame.

:func:`predict_dask` (:mod:`attnreg.views.frames`) maps a fit's ``predict`` over the
partitions (``DataFrame.map_partitions``): a lazy dask Series, computed where the partitions
are. It is what ``ChunkedResults.predict(ddf)`` returns. :func:`is_dask_frame` looks in
``sys.modules``: a dask DataFrame exists only once ``dask.dataframe`` is imported.

Examples
--------
>>> import pandas as pd
>>> is_dask_frame(pd.DataFrame({"x": [1.0]}))
False
"""

from __future__ import annotations

import sys
from typing import Any


from attnreg.views.frames import predict_dask

__all__ = ["is_dask_frame", "is_dask_series", "predict_dask"]


def pytest_importorskip(name: str) -> Any:
    """Import ``name`` for an example, or skip the example when it is not installed."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:  # pragma: no cover - exercised where dask is absent
        import pytest

        pytest.skip(f"{name} is not installed")


def is_dask_frame(data: Any) -> bool:
    """Whether ``data`` is a dask DataFrame (without importing dask).

    Examples
    --------
    >>> import pandas as pd
    >>> is_dask_frame(pd.DataFrame({"x": [1.0]}))
    False
    """
    module = sys.modules.get("dask.dataframe")
    if module is None:
        return False
    return isinstance(data, module.DataFrame)


def is_dask_series(data: Any) -> bool:
    """Whether ``data`` is a dask Series (without importing dask)."""
    module = sys.modules.get("dask.dataframe")
    return module is not None and isinstance(data, module.Series)
