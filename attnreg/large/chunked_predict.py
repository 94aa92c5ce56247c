"""Predictions and the attention view of a chunked fit, for new rows in memory or in chunks.

:class:`ChunkedPrediction` is a mixin of :class:`~attnreg.large.results.ChunkedResults`: new
rows are built with the fit's levels and transform statistics (patsy's design infos of pass
1), in memory, partition by partition for a dask frame, or chunk by chunk for a large
source; the attention view streams over the training rows again.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from attnreg.large.fit import fit_chunked
>>> df = pd.DataFrame({"x": np.arange(10.0), "y": 3 - np.arange(10.0)})
>>> fit = fit_chunked("y ~ x", df, chunk_rows=4)
>>> fit.predict(pd.DataFrame({"x": [1.0, np.nan]})).round(6).tolist()
[2.0, nan]
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import patsy

from attnreg._typing import FloatArray

__all__ = ["ChunkedPrediction"]


class ChunkedPrediction:
    """``predict`` and ``attention`` of a chunked fit (a mixin)."""

    if TYPE_CHECKING:  # provided by the results class
        spec: Any
        filtered: Any
        source: Any

        @property
        def names(self) -> list[str]: ...

    def _design_of(self, frame: pd.DataFrame) -> FloatArray:
        from attnreg.formula.builder import design_rows
        from attnreg.formula.checks import translate_patsy_error as _translate_patsy_error
        from attnreg.formula.frame import prepare_frame, string_labels, variable_uses
        from attnreg.formula.parse import check_names

        frame = string_labels(frame, "newdata")
        factors = list(self.spec.x_info.factor_infos.keys())
        check_names(factors, frame, self.spec.eval_env, "newdata")
        uses = {name: outside for f in factors for name, outside in variable_uses(f.code).items()}
        frame = prepare_frame(frame, uses, "newdata")
        try:  # patsy's build_design_matrices, factors encoded per distinct value
            mat, rows = design_rows(self.spec.x_info, frame)
        except patsy.PatsyError as exc:
            raise _translate_patsy_error(exc, "newdata") from None
        X = np.full((frame.shape[0], len(self.names)), np.nan)
        X[rows] = mat
        return X

    def predict(self, newdata: Any) -> Any:
        """Predictions for new rows, built with the fit's levels and transform statistics.

        Parameters
        ----------
        newdata : DataFrame, dict, dask DataFrame, or a large source (path, arrow, polars)
            A pandas DataFrame or dict is predicted in memory; a dask DataFrame lazily,
            partition by partition (:func:`attnreg.views.frames.predict_dask`); a
            large source chunk by chunk.

        Returns
        -------
        Series, dask Series (lazy: nothing is computed until asked), or an iterator of
        Series (one per chunk) for a large source
            NaN for rows with missing values.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from attnreg.large.fit import fit_chunked
        >>> df = pd.DataFrame({"x": np.arange(10.0), "y": 1 + 2 * np.arange(10.0)})
        >>> fit = fit_chunked("y ~ x", df, chunk_rows=4)
        >>> fit.predict({"x": [0.5, 2.0]}).round(6).tolist()
        [2.0, 5.0]
        """
        from attnreg.large.dask_predict import is_dask_frame, predict_dask
        from attnreg.large.sources import as_source, is_large

        if is_dask_frame(newdata):
            return predict_dask(self, newdata)
        coef = np.where(np.isnan(self.filtered.coef), 0.0, self.filtered.coef)
        if isinstance(newdata, dict):
            newdata = pd.DataFrame(newdata)
        if isinstance(newdata, pd.DataFrame) and not is_large(newdata):
            return pd.Series(self._design_of(newdata) @ coef, index=newdata.index, name="fit")
        source = as_source(newdata, chunk_rows=getattr(self.source, "chunk_rows", None))

        def chunks() -> Iterator[pd.Series]:
            cols = [c for c in self.spec.columns_needed if c != self.spec.response_name
                    and c in source.columns]
            for frame in source.frames(cols):
                yield pd.Series(self._design_of(frame) @ coef, index=frame.index, name="fit")

        return chunks()

    def attention(self, newdata: Any, *, k: int = 10, data: Any = None) -> Any:
        """The attention view for a few query rows, streamed over the training rows.

        The weight ω_ji of training row i in the prediction for query j (as
        :meth:`attnreg.linear.results.LinearResults.attention`), summarised in one pass over
        the chunks (over the partitions on their workers for a dask fit) without forming
        the J × N matrix: the top contributors per query and the diagnostics.

        Parameters
        ----------
        newdata : DataFrame or dict
            The query rows (a handful: each pass computes J weights per training row).
        k : int
            Contributors the pass keeps per query (``top_k`` with a larger k reads again).
        data : optional
            The training rows again (needed after unpickling a fit of data in memory).

        Returns
        -------
        StreamedAttention
            ``.top_k(k, by="abs"|"weight")`` (long format: ``query``, ``rank``,
            ``train_label``, ``weight``, ``y``, ``contribution``) and ``.diagnostics``
            (``prediction``, ``weight_sum``, ``negative_mass``, ``leverage``,
            ``effective_neighbours``, ``entropy``, ``self_weight``).

        Raises
        ------
        OptionError
            The fit keeps no source and ``data`` is not given; ``newdata`` is not a frame.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from attnreg.large.fit import fit_chunked
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"x": rng.normal(size=300)})
        >>> df["y"] = 1 + df.x + rng.normal(size=300)
        >>> fit = fit_chunked("y ~ x", df, chunk_rows=100)
        >>> att = fit.attention(df.iloc[[0, 1]], k=3)
        >>> att.top_k(3).shape, float(round(att.diagnostics["weight_sum"].iloc[0], 12))
        ((6, 6), 1.0)
        """
        from attnreg.large.dask_attention import streamed_attention

        if isinstance(newdata, dict):
            newdata = pd.DataFrame(newdata)
        source = None if data is None else self._reread(data)
        return streamed_attention(self, newdata, k=k, source=source)

    def _reread(self, data: Any) -> Any:
        """``data`` (the fit's files at a new location) as a source read like the fit's own:
        same chunk size, same CSV separator."""
        from attnreg.large.sources import as_source

        sep = getattr(self.source, "_sep", None)
        return as_source(data, chunk_rows=getattr(self.source, "chunk_rows", None),
                         sep=sep if isinstance(data, (str, os.PathLike, list, tuple)) else None)
