"""Lazy predictions for a dask DataFrame, and telling dask data apart without importing dask.

:func:`predict_dask` maps a fit's ``predict`` over the partitions
(``DataFrame.map_partitions``): a lazy dask Series, computed where the partitions are. It is
what ``ChunkedResults.predict(ddf)`` returns. :func:`is_dask_frame` looks in
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

import numpy as np
import pandas as pd

from attnreg.exceptions import OptionError

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


class _Predictor:
    """A fit as an argument of ``map_partitions`` (tokenized by a fresh id, not by value)."""

    def __init__(self, fit: Any) -> None:
        import uuid

        self.fit = fit
        self.token = uuid.uuid4().hex

    def __dask_tokenize__(self) -> str:
        return self.token


def _predict_partition(part: pd.DataFrame, predictor: _Predictor,
                       options: dict[str, Any]) -> pd.Series | pd.DataFrame:
    out = predictor.fit.predict(part, **options)
    return out if isinstance(out, pd.DataFrame) else out.rename("fit")


def predict_dask(fit: Any, newdata: Any, **options: Any) -> Any:
    """Lazy predictions for a dask DataFrame: a dask Series, partition by partition.

    Parameters
    ----------
    fit : ChunkedResults or LinearResults
        Any fit whose ``predict`` takes a pandas DataFrame.
    newdata : dask.dataframe.DataFrame
    **options
        Passed to ``fit.predict`` for each partition (``interval=``, ``level=`` of an
        in-memory linear fit).

    Returns
    -------
    dask.dataframe.Series or dask.dataframe.DataFrame
        Named ``"fit"``, aligned on ``newdata``'s index (NaN for rows with missing values);
        with an interval, a frame with columns ``fit``, ``lwr``, ``upr``. Nothing is computed
        until asked; the fit is sent to each worker once (a delayed object), not with each
        partition's task.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> dd = pytest_importorskip("dask.dataframe")
    >>> df = pd.DataFrame({"x": np.arange(8.0), "y": 1 + 2 * np.arange(8.0)})
    >>> fit = ar.attnreg("y ~ x", df)
    >>> lazy = predict_dask(fit, dd.from_pandas(df[["x"]], npartitions=2))
    >>> lazy.compute(scheduler="sync").round(6).tolist()[:3]
    [1.0, 3.0, 5.0]
    """
    if not is_dask_frame(newdata):
        raise OptionError(f"newdata must be a dask DataFrame, however: type(newdata) is "
                          f"{type(newdata).__name__}")
    slim = fit._with(source=None) if hasattr(fit, "_with") and hasattr(fit, "spec") else fit
    spec = getattr(fit, "spec", None)
    if spec is not None:
        response = spec.response_name
        cols = [c for c in spec.columns_needed if c != response and c in newdata.columns]
        missing = [c for c in spec.columns_needed if c != response and c not in newdata.columns]
        if missing:
            from attnreg.exceptions import FormulaError

            raise FormulaError(f"newdata (dask DataFrame) has no column {missing[0]!r}")
        frame = newdata[cols] if cols else newdata
    else:
        frame = newdata
    import dask

    meta: pd.Series | pd.DataFrame = pd.Series(dtype=np.float64, name="fit")
    if options.get("interval", "none") != "none":
        meta = pd.DataFrame({c: pd.Series(dtype=np.float64) for c in ("fit", "lwr", "upr")})
    predictor = dask.delayed(_Predictor(slim), pure=True)
    return frame.map_partitions(_predict_partition, predictor, options, meta=meta)
