"""Predictions for a dask or polars frame, returned in the same library.

``LinearResults.predict(newdata)`` hands ``newdata`` to :func:`predict_frame` when it is a
dask DataFrame (a lazy dask Series through :func:`predict_dask`, computed where the
partitions are) or a polars DataFrame or LazyFrame (converted to pandas, only the columns
the formula reads, and predicted in memory; the result is a polars Series, or a polars
DataFrame with an interval, missing predictions as null). ``ChunkedResults.predict(ddf)``
is :func:`predict_dask`. :func:`frame_kind` tells these apart without importing dask or
polars.

Examples
--------
>>> import numpy as np, pandas as pd
>>> import attnreg as ar
>>> from attnreg.large.dask_predict import pytest_importorskip
>>> pl = pytest_importorskip("polars")
>>> df = pd.DataFrame({"x": np.arange(6.0), "y": 1 + 2 * np.arange(6.0)})
>>> fit = ar.attnreg("y ~ x", df)
>>> fit.predict(pl.DataFrame({"x": [0.5, None]})).to_list()
[2.0, None]
>>> frame_kind(df), frame_kind(pl.DataFrame({"x": [1.0]}))
('', 'polars')
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import OptionError
from attnreg.formula.frame import variable_uses
from attnreg.formula.polars_frames import polars_to_pandas

__all__ = ["frame_kind", "predict_dask", "predict_frame"]


def frame_kind(data: Any) -> str:
    """``"dask"`` for a dask DataFrame, ``"polars"`` for a polars DataFrame or LazyFrame, else
    ``""`` (nothing is imported to tell)."""
    dd = sys.modules.get("dask.dataframe")
    if dd is not None and isinstance(data, dd.DataFrame):
        return "dask"
    if type(data).__module__.split(".")[0] == "polars" and type(data).__name__ in (
            "DataFrame", "LazyFrame"):
        return "polars"
    return ""


def _columns_read(fit: Any, available: list[str]) -> list[str]:
    """The columns of ``available`` that the fit's right-hand side reads (a column the frame
    lacks is left for ``predict`` to name)."""
    info = fit.design.design_info
    used: dict[str, None] = {}
    for factor in info.factor_infos:
        used.update(dict.fromkeys(variable_uses(factor.code)))
    return [c for c in available if c in used]


def _polars_prediction(fit: Any, newdata: Any, options: dict[str, Any]) -> Any:
    import polars as pl

    lazy = type(newdata).__name__ == "LazyFrame"
    names = list(newdata.collect_schema().names() if lazy else newdata.columns)
    sub = newdata.select(_columns_read(fit, [str(c) for c in names]))
    frame = polars_to_pandas(sub.collect() if lazy else sub, 0)
    out = fit.predict(frame, **options)
    if isinstance(out, pd.DataFrame):
        return pl.DataFrame({c: pl.Series(c, out[c].to_numpy(), nan_to_null=True)
                             for c in out.columns})
    return pl.Series("fit", out.to_numpy(), nan_to_null=True)


def predict_frame(fit: Any, newdata: Any, **options: Any) -> Any:
    """Predictions of ``fit`` for a dask or polars frame (see the module's docstring).

    Parameters
    ----------
    fit : LinearResults
    newdata : dask.dataframe.DataFrame, polars.DataFrame or polars.LazyFrame
        n rows, with the columns the formula's right-hand side reads.
    **options
        ``interval=`` and ``level=`` of ``fit.predict``.

    Returns
    -------
    dask Series (lazy), polars Series of length n; with an interval a dask or polars
    DataFrame with columns ``fit``, ``lwr``, ``upr``
        Rows with a missing value predict NaN (dask) or null (polars).
    """
    kind = frame_kind(newdata)
    if kind == "dask":
        return predict_dask(fit, newdata, **options)
    return _polars_prediction(fit, newdata, options)


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
    >>> from attnreg.large.dask_predict import pytest_importorskip
    >>> dd = pytest_importorskip("dask.dataframe")
    >>> df = pd.DataFrame({"x": np.arange(8.0), "y": 1 + 2 * np.arange(8.0)})
    >>> fit = ar.attnreg("y ~ x", df)
    >>> lazy = predict_dask(fit, dd.from_pandas(df[["x"]], npartitions=2))
    >>> lazy.compute(scheduler="sync").round(6).tolist()[:3]
    [1.0, 3.0, 5.0]
    """
    if frame_kind(newdata) != "dask":
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
