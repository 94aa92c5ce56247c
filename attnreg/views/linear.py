"""The views of a linear fit beyond its coefficients: prediction (with intervals and the
estimability check) and the dual, attention view (the embedding and the weights).

:class:`LinearViews` is a mixin of :class:`~attnreg.linear.results.LinearResults`; it uses
the result's design, spectrum, filter and inference.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats

from attnreg._typing import FloatArray
from attnreg._warn import warn_user
from attnreg.exceptions import EstimabilityWarning, OptionError, ScaleWarning
from attnreg.inference.contract import LinearFitContract
from attnreg.inference.tstats import check_level
from attnreg.views.attention import AttentionWeights, Embedding, linear_weight_fn
from attnreg.views.dual import embedding_of
from attnreg.views.estimability import AliasRelations, alias_relations, outside_span

if TYPE_CHECKING:
    pass

__all__ = ["INTERVALS", "LinearViews", "check_level"]

INTERVALS = ("none", "confidence", "prediction")


class LinearViews(LinearFitContract):
    """Prediction and the attention view of a linear fit (a mixin of ``LinearResults``)."""

    # ------------------------------------------------------------ prediction
    def predict(self, newdata: Any = None, *, interval: str = "none",
                level: float = 0.95) -> Any:
        """Predictions for new data (or the training rows), optionally with intervals.

        Parameters
        ----------
        newdata : DataFrame, dict, dask DataFrame or polars DataFrame / LazyFrame, optional
            New rows; they are run through the same formula, transforms and factor levels.
            A dask frame is predicted lazily, partition by partition; a polars frame in
            memory (:mod:`attnreg.views.frames`).
        interval : {"none", "confidence", "prediction"}
        level : float
            Coverage of the interval.

        Returns
        -------
        Series (``interval="none"``) or DataFrame with columns ``fit``, ``lwr``, ``upr`` (as R);
        of dask (lazy) or polars for such ``newdata`` (polars: missing predictions are null).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> print(f"{fit.predict(df.iloc[:3]).iloc[0]:.2f}")
        60063.81
        >>> band = fit.predict(df.iloc[:2], interval="prediction", level=0.9)
        >>> list(band.columns)
        ['fit', 'lwr', 'upr']
        >>> print(f"{band['lwr'].iloc[0]:.2f} {band['upr'].iloc[0]:.2f}")
        59442.09 60685.52
        """
        if interval not in INTERVALS:
            raise OptionError(f"interval must be one of {INTERVALS}, however: {interval=}")
        check_level(level)
        from attnreg.views.frames import frame_kind, predict_frame

        if frame_kind(newdata):
            return predict_frame(self, newdata, interval=interval, level=level)
        X, labels = self._query_design(newdata)
        if newdata is not None:
            self._warn_outside_span(X, labels, "predictions" if interval == "none"
                                    else f"predictions and {interval} intervals")
        c = self.filtered.coef
        fit = X @ np.where(np.isnan(c), 0.0, c)
        if interval == "none":
            return pd.Series(fit, index=labels, name="fit")
        if not self._df_ok:
            half = np.full(fit.shape, np.nan)
        else:  # x' V x = (x ∘ 2^E)' V_z (x ∘ 2^E), on the rescaled response
            Vz, E = self._vcov_z
            e = self.spectrum.y_exponent
            Xs = np.ldexp(X, (E - e)[None, :])
            var = np.einsum("ij,jk,ik->i", Xs, np.where(np.isnan(Vz), 0.0, Vz), Xs)
            if interval == "prediction":
                var = var + self._sigma2_s
            q = stats.t.ppf(0.5 + level / 2.0, self.df_resid)
            half = q * np.ldexp(np.sqrt(var), e)
        return pd.DataFrame({"fit": fit, "lwr": fit - half, "upr": fit + half}, index=labels)

    @cached_property
    def _alias_relations(self) -> AliasRelations | None:
        if not self.spectrum.aliased.size:
            return None
        return alias_relations(self.spectrum, self.design.X)

    def _warn_outside_span(self, X: FloatArray, labels: pd.Index, what: str) -> None:
        """Warn (naming them) about query rows whose result depends on the dropped columns."""
        rel = self._alias_relations
        if rel is None:
            return
        off = outside_span(self.spectrum, rel, X)
        rows = np.flatnonzero(off.any(axis=1))
        if not rows.size:
            return
        aliased = [self.names[j] for j in self.spectrum.aliased[off.any(axis=0)]]
        shown = ", ".join(repr(labels[i]) for i in rows[:10]) + (", ..." if rows.size > 10 else "")
        warn_user(f"prediction from a rank-deficient fit: {rows.size} of {len(labels)} "
              "row(s) lie outside the column space of the training design, where the "
              f"aliased coefficient(s) {', '.join(aliased)} are not estimable, so their "
              f"{what} depend on which columns were dropped: rows {shown}", EstimabilityWarning)

    def _query_design(self, newdata: Any) -> tuple[FloatArray, pd.Index]:
        if newdata is None:
            return self.design.X, self.design.row_labels
        return self.design.rebuild(newdata)

    # ------------------------------------------------------------ attention view
    @cached_property
    def embedding(self) -> Embedding:
        """The encoder W, the metric Ω = W W' and the training factor scores."""
        emb, lost = embedding_of(self.spectrum, self.filtered.f, self.names, self.design.row_labels)
        if lost.any():
            bad = [self.names[j] for j in np.flatnonzero(lost.any(axis=1))]
            warn_user(f"entries of the attention metric omega for {', '.join(bad)} are outside "
                      "the float64 range at the data's scale (products of inverse column "
                      "scales): reported as inf or 0; the encoder, factors and weights are "
                      "unaffected", ScaleWarning)
        return emb

    def attention(self, newdata: Any = None, *, chunk_size: int | None = None) -> AttentionWeights:
        """Attention weights of each prediction over the training rows.

        ``weights @ y_train`` reproduces :meth:`predict`; on the training rows the weights are
        the hat matrix. Nothing J×N is formed until :attr:`AttentionWeights.weights` is read.

        Parameters
        ----------
        newdata : DataFrame or dict, optional
            Query rows; the training rows when omitted.
        chunk_size : int, optional
            Queries per chunk.

        Returns
        -------
        AttentionWeights

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
        >>> att = fit.attention(df.iloc[[0, 5]])
        >>> W = att.weights.to_numpy()
        >>> W.shape
        (2, 16)
        >>> print(f"{W[0].sum():.4f}")  # affine weights: they sum to one with an intercept
        1.0000
        >>> print(f"{W[0] @ fit.design.y:.2f} {fit.predict(df.iloc[[0]]).iloc[0]:.2f}")
        60063.81 60063.81
        >>> print(f"{att.diagnostics['leverage'].iloc[0]:.4f}")  # Σ ω² = hat value
        0.4018
        """
        if newdata is None:
            return self.attention_of(None, self.design.row_labels, chunk_size)
        X, labels = self.design.rebuild(newdata)
        self._warn_outside_span(X, labels, "attention weights")
        return self.attention_of(X, labels, chunk_size)

    def attention_of(self, X: FloatArray | None, labels: pd.Index,
                     chunk_size: int | None = None) -> AttentionWeights:
        """Attention weights of design rows ``X`` (intercept column included) over the training
        rows; ``X=None``: the training rows themselves (the hat matrix)."""
        emb = self.embedding
        F_train = emb.train_factors.to_numpy()
        F_q = F_train if X is None else X @ emb.encoder.to_numpy()
        fn = linear_weight_fn(F_q, F_train, self.spectrum.sqrt_w**2)
        return AttentionWeights(weight_fn=fn, n_queries=F_q.shape[0], query_labels=labels,
                                train_labels=self.design.row_labels, y_train=self.design.y,
                                kind="linear", chunk_size=chunk_size, cluster_source=self,
                                queries_are_training=X is None)

    def sampled_weight_stats(self) -> tuple[FloatArray, FloatArray, int]:
        """Negative mass Σ min(ω, 0) and Σ ω² of training rows as queries, for the summary.

        Every row for small n (computed in the same pass as the hat values), else about
        2e7 / (n (rank + 1)) evenly spaced rows (at least 20; no other row's hat value is
        computed). Returns (negative mass, Σ ω², number of query rows).
        """
        _, neg, lev, rows = self._query_pass
        return neg, lev, int(rows.size)

    def sampled_hat_values(self) -> pd.Series:
        """Hat values of the rows :meth:`sampled_weight_stats` uses as queries, by row label
        (every row for small n: then :attr:`hat_values` itself)."""
        h, _, _, rows = self._query_pass
        return pd.Series(h, index=self.design.row_labels[rows], name="hat")
