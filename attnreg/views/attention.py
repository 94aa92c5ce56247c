"""The dual view: each prediction as a weighted vote of the training rows, computed in chunks.

For a linear fit the weight of training row i in the prediction for query j is

    ω_ji = w_i · F(x*_j) · F(x_i),      F(x) = x W   (factor scores, W the encoder)

so that ŷ*_j = Σ_i ω_ji y_i. With an intercept each row of weights sums to 1; the weights
can be negative. Σ_i ω_ji² is the query's leverage. :class:`AttentionWeights` never holds
more than one chunk of the J×N matrix unless the full matrix is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import OptionError

#: upper bound on the number of weights held in memory at once (query chunk × training rows)
CHUNK_ELEMENTS = 1 << 22

WeightFn = Callable[[int, int], FloatArray]


@dataclass(frozen=True)
class AttentionWeights:
    """Attention weights of J queries over N training rows, computed chunk by chunk.

    Attributes
    ----------
    weight_fn : callable
        ``weight_fn(start, stop)`` returns the weights of queries ``start:stop``, shape
        (stop − start, N).
    n_queries : int
    query_labels : pandas.Index
        Labels of the queries (new rows, or training rows when none were given).
    train_labels : pandas.Index
        Labels of the training rows (columns of :attr:`weights`).
    y_train : ndarray, shape (N,)
        Training responses: the values the weights average.
    kind : str
        ``"linear"`` (spectral fits; signed weights) or ``"softmax"`` (convex weights).
    chunk_size : int or None
        Queries per chunk; by default chosen so a chunk holds about 4M weights.
    base : ndarray, shape (J,), or None
        A part of each prediction not carried by the weights (softmax with
        ``value="ridge"``: the ridge fit, the weights then average its residuals).
    cluster_source : LinearResults or None
        The fit whose data :meth:`by_cluster` looks cluster columns up in.
    queries_are_training : bool
        The queries are the training rows themselves (their own clusters are known).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP + ARMED + POP + YEAR", data=df)
    >>> w = fit.attention(df.iloc[[15]])        # the 1962 prediction, over 16 training years
    >>> w.weights.shape
    (1, 16)
    >>> d = w.diagnostics.iloc[0]
    >>> float(round(d["weight_sum"], 10)), bool(abs(d["prediction"] - fit.fitted.iloc[15]) < 1e-6)
    (1.0, True)
    >>> w.explain(0, top=3).index.tolist()     # the training rows that drove it
    [15, 14, 13]
    >>> w.top_k(2)[["rank", "train_label"]].to_numpy().tolist()
    [[1, 15], [2, 14]]
    """

    weight_fn: WeightFn = field(repr=False)
    n_queries: int
    query_labels: pd.Index
    train_labels: pd.Index
    y_train: FloatArray = field(repr=False)
    kind: str = "linear"
    chunk_size: int | None = None
    base: FloatArray | None = field(default=None, repr=False)
    cluster_source: Any = field(default=None, repr=False)
    queries_are_training: bool = False

    def __post_init__(self) -> None:
        size = self.chunk_size
        if size is not None and (isinstance(size, bool) or not isinstance(size, (int, np.integer))
                                 or size < 1):
            raise OptionError(f"chunk_size must be a positive integer or None, however: "
                              f"chunk_size={size!r}")

    def chunks(self) -> Iterator[tuple[int, int, FloatArray]]:
        """Yield ``(start, stop, weights)`` over query chunks."""
        n_train = max(len(self.train_labels), 1)
        step = self.chunk_size or max(1, CHUNK_ELEMENTS // n_train)
        for start in range(0, self.n_queries, step):
            stop = min(start + step, self.n_queries)
            yield start, stop, self.weight_fn(start, stop)

    @cached_property
    def weights(self) -> pd.DataFrame:
        """The full J×N weight matrix (rows: queries, columns: training row labels)."""
        full = np.empty((self.n_queries, len(self.train_labels)))
        for start, stop, block in self.chunks():
            full[start:stop] = block
        return pd.DataFrame(full, index=self.query_labels, columns=self.train_labels)

    @cached_property
    def diagnostics(self) -> pd.DataFrame:
        """Per-query summary of the weights.

        Columns: ``prediction`` (Σ ω y, plus the base when there is one), ``weight_sum``
        (Σ ω), ``negative_mass`` (Σ of the negative weights), ``leverage`` (Σ ω²),
        ``effective_neighbours`` (Kish's (Σ ω)² / Σ ω²; 1/Σ ω² when the weights sum to 1) and
        ``entropy`` (of abs(ω) / Σ abs(ω)).
        """
        out = np.empty((self.n_queries, 6))
        for start, stop, w in self.chunks():
            total = w.sum(axis=1)
            lev = np.einsum("ij,ij->i", w, w)
            a = np.abs(w)
            p = a / a.sum(axis=1, keepdims=True)
            with np.errstate(divide="ignore", invalid="ignore"):
                ent = -np.where(p > 0, p * np.log(p), 0.0).sum(axis=1)
            pred = w @ self.y_train + (0.0 if self.base is None else self.base[start:stop])
            out[start:stop] = np.column_stack([pred, total, np.minimum(w, 0).sum(axis=1),
                                               lev, total**2 / lev, ent])
        cols = ["prediction", "weight_sum", "negative_mass", "leverage", "effective_neighbours",
                "entropy"]
        return pd.DataFrame(out, index=self.query_labels, columns=cols)

    def top_k(self, k: int = 10, *, by: str = "abs") -> pd.DataFrame:
        """The ``k`` largest weights of every query, without forming the full matrix.

        Parameters
        ----------
        k : int
            Neighbours per query.
        by : {"abs", "weight"}
            Rank by abs(ω) (default) or by signed ω.

        Returns
        -------
        DataFrame
            Long format: ``query``, ``rank``, ``train_label``, ``weight``, ``y``,
            ``contribution`` (ω y).
        """
        if by not in ("abs", "weight"):
            raise OptionError(f"by must be 'abs' or 'weight', however: {by=}")
        n_train = len(self.train_labels)
        k = _check_k(k, n_train)
        idx = np.empty((self.n_queries, k), dtype=np.int64)
        val = np.empty((self.n_queries, k))
        for start, stop, w in self.chunks():
            i, v = _top_k_rows(w, k, by)
            idx[start:stop], val[start:stop] = i, v
        return pd.DataFrame({
            "query": np.repeat(np.asarray(self.query_labels, dtype=object), k),
            "rank": np.tile(np.arange(1, k + 1), self.n_queries),
            "train_label": np.asarray(self.train_labels, dtype=object)[idx.ravel()],
            "weight": val.ravel(),
            "y": self.y_train[idx.ravel()],
            "contribution": val.ravel() * self.y_train[idx.ravel()],
        })

    def explain(self, i: int = 0, top: int = 10) -> pd.DataFrame:
        """Which training rows drove prediction ``i``: the ``top`` largest abs(weight × y).

        Parameters
        ----------
        i : int
            Position of the query (0-based).
        top : int
            Number of training rows to show.

        Returns
        -------
        DataFrame
            Indexed by training label, columns ``weight``, ``y`` (the value averaged),
            ``contribution`` (ω y) and ``share`` (of Σ ω y), sorted by abs(contribution);
            ``attrs["prediction"]`` holds the full prediction.
        """
        if not isinstance(i, (int, np.integer)) or not -self.n_queries <= i < self.n_queries:
            raise OptionError(f"i must be a query position in [0, {self.n_queries}), however: {i=}")
        top = _check_k(top, len(self.train_labels), "top")
        i = int(i) % self.n_queries
        w = self.weight_fn(i, i + 1)[0]
        contrib = w * self.y_train
        order = np.argsort(-np.abs(contrib), kind="stable")[:top]
        pred = float(contrib.sum()) + (0.0 if self.base is None else float(self.base[i]))
        frame = pd.DataFrame({"weight": w[order], "y": self.y_train[order],
                              "contribution": contrib[order]},
                             index=pd.Index(np.asarray(self.train_labels)[order], name="train_label"))
        attended = float(contrib.sum())
        frame["share"] = frame["contribution"] / attended if attended != 0 else np.nan
        frame.attrs["prediction"] = pred
        frame.attrs["query"] = self.query_labels[i]
        return frame


    def by_cluster(self, cluster: Any = None) -> pd.DataFrame:
        """Each query's attention weights on the training rows, summed by cluster.

        Parameters
        ----------
        cluster : str, array-like or Series, optional
            Cluster of each training row: a column of the data the fit was given, ids per
            data row (a Series is aligned on the data's index), as for
            ``with_vcov("cluster", cluster=...)``; by default the clusters of the fit's
            cluster-robust covariance. Without a fit behind the weights: one id per training
            row.

        Returns
        -------
        DataFrame, shape (J, G)
            Rows: queries; columns: clusters (sorted). Each row sums to the query's weight
            sum (1 with an intercept); computed chunk by chunk, nothing J×N is kept.

        Examples
        --------
        >>> import pandas as pd
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df)
        >>> decade = (df["YEAR"] // 10 * 10).astype(int).rename("decade")
        >>> shares = fit.attention(df.iloc[[15]]).by_cluster(decade)
        >>> shares.columns.tolist()
        [1940, 1950, 1960]
        >>> print(shares.round(3).to_string())
        decade   1940   1950  1960
        15     -0.295  0.655  0.64
        >>> float(round(shares.sum(axis=1).iloc[0], 12))   # the weights sum to one
        1.0
        """
        codes, names = self._train_clusters(cluster)
        out = np.empty((self.n_queries, len(names)))
        ind = _cluster_indicator(codes, len(names))  # (G, N) sparse
        for start, stop, w in self.chunks():
            out[start:stop] = (ind @ w.T).T
        return pd.DataFrame(out, index=self.query_labels, columns=names)

    def own_cluster(self, cluster: Any = None, *, query_clusters: Any = None) -> pd.DataFrame:
        """How much of each prediction comes from the query's own cluster and from the others.

        Parameters
        ----------
        cluster : optional
            Clusters of the training rows, as for :meth:`by_cluster`.
        query_clusters : array-like, optional
            The cluster of each query (J ids, matched to the training clusters' names);
            not needed when the queries are the training rows.

        Returns
        -------
        DataFrame, shape (J, 4)
            ``cluster`` (the query's), ``own`` (weight on its own cluster's training rows;
            0 when no training row is in it), ``others`` (weight on the other clusters) and
            ``own_share`` (own over the weight sum).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import longley
        >>> df = longley.load_pandas().data
        >>> fit = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df)
        >>> decade = (df["YEAR"] // 10 * 10).astype(int)
        >>> own = fit.attention().own_cluster(decade)     # training rows as queries
        >>> own.columns.tolist()
        ['cluster', 'own', 'others', 'own_share']
        >>> print(f"{own['own_share'].median():.3f}")
        0.638
        """
        table = self.by_cluster(cluster)
        names = table.columns
        if query_clusters is None:
            if not self.queries_are_training:
                raise OptionError("the clusters of new queries are not known: pass "
                                  "query_clusters= (one id per query)")
            codes, _ = self._train_clusters(cluster)
        else:
            ids = np.asarray(query_clusters, dtype=object).ravel()
            if ids.shape[0] != self.n_queries:
                raise OptionError(f"query_clusters must have one id per query: there are "
                                  f"{self.n_queries} queries, however query_clusters has "
                                  f"{ids.shape[0]} entries")
            codes = np.asarray(names.get_indexer(pd.Index(ids)), dtype=np.int64)
        values = table.to_numpy()
        total = values.sum(axis=1)
        own = np.where(codes >= 0, values[np.arange(self.n_queries), np.maximum(codes, 0)], 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = own / total
        cluster_of = [names[c] if c >= 0 else (query_clusters[i] if query_clusters is not None
                                               else None) for i, c in enumerate(codes)]
        return pd.DataFrame({"cluster": cluster_of, "own": own, "others": total - own,
                             "own_share": share}, index=self.query_labels)

    def _train_clusters(self, cluster: Any) -> tuple[IntArray, pd.Index]:
        """Cluster codes of the training rows and the cluster names."""
        from attnreg.inference.vcov.cluster import cluster_codes, factorize_ids

        source = self.cluster_source
        if cluster is None:
            spec = getattr(source, "vcov_spec", None)
            ids = spec.option("cluster") if spec is not None else None
            if ids is None or getattr(ids, "n_dims", 0) != 1:
                raise OptionError("by_cluster needs cluster= (the fit's covariance is not "
                                  "clustered one-way)")
            return ids.codes[:, 0], ids.levels[0]
        if source is not None:
            return cluster_codes(source, cluster)
        return factorize_ids(cluster, self.train_labels)


def _cluster_indicator(codes: IntArray, n_groups: int) -> Any:
    import scipy.sparse as sps

    return sps.csr_matrix((np.ones(codes.size), (codes, np.arange(codes.size))),
                          shape=(n_groups, codes.size))


def _check_k(k: int, n: int, name: str = "k") -> int:
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 1:
        raise OptionError(f"{name} must be a positive integer, however: {name}={k!r}")
    return int(min(k, n))


def _top_k_rows(w: FloatArray, k: int, by: str) -> tuple[IntArray, FloatArray]:
    key = np.abs(w) if by == "abs" else w
    part = np.argpartition(-key, k - 1, axis=1)[:, :k]
    part_key = np.take_along_axis(key, part, axis=1)
    order = np.argsort(-part_key, axis=1, kind="stable")
    idx = np.take_along_axis(part, order, axis=1)
    return idx, np.take_along_axis(w, idx, axis=1)


@dataclass(frozen=True)
class Embedding:
    """The linear attention embedding of a spectral fit.

    Attributes
    ----------
    encoder : DataFrame, shape (n_coef, n_factors)
        W: factor scores are F = X W (rows: design columns, columns: factors; the first factor
        is the intercept's constant when there is one).
    omega : DataFrame, shape (n_coef, n_coef)
        Ω = W W', the metric of the attention: ω_ji = w_i x*_j' Ω x_i.
    train_factors : DataFrame, shape (N, n_factors)
        F of the training rows. With weights w, F' diag(w) F = diag(1, f): the identity for OLS.

    Examples
    --------
    >>> import numpy as np
    >>> import attnreg as ar
    >>> from statsmodels.datasets import longley
    >>> df = longley.load_pandas().data
    >>> emb = ar.attnreg("TOTEMP ~ GNP + UNEMP", data=df).embedding
    >>> F = emb.train_factors.to_numpy()
    >>> bool(np.allclose(F.T @ F, np.eye(F.shape[1])))    # OLS: orthonormal factors
    True
    >>> emb.omega.shape
    (3, 3)
    """

    encoder: pd.DataFrame
    omega: pd.DataFrame
    train_factors: pd.DataFrame

    def factors(self, X: FloatArray, labels: pd.Index) -> pd.DataFrame:
        """Factor scores F = X W of design rows ``X`` (shape (J, n_coef))."""
        return pd.DataFrame(X @ self.encoder.to_numpy(), index=labels, columns=self.encoder.columns)


def linear_weight_fn(F_query: FloatArray, F_train: FloatArray, w_train: FloatArray) -> WeightFn:
    """``weight_fn`` for bilinear attention ω = F_query diag(w) F_train'."""
    return _BilinearWeights(F_query, F_train * w_train[:, None])


@dataclass(frozen=True)
class _BilinearWeights:
    """``weight_fn(start, stop) = F_query[start:stop] @ keys'`` (a class, so it pickles)."""

    F_query: FloatArray  # (J, d)
    keys: FloatArray  # (N, d)

    def __call__(self, start: int, stop: int) -> FloatArray:
        return self.F_query[start:stop] @ self.keys.T
