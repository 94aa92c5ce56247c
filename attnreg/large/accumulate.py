"""Pass 2 of a chunked fit: each chunk's design, and the R factor of all chunks, merged exactly.

:func:`chunk_design` builds one chunk's rows of the design with the spec of pass 1 (patsy's
design infos: the same columns, levels and transform statistics as in memory), drops and
counts the rows with missing values, applies ``subset`` and the weights.

:class:`RFactor` is the triangular factor of the weighted, centred design and response.

Centring. The in-memory fit centres the columns on their weighted means before its QR, so
that an offset (a column of years, 1e6 + noise) costs no digits. Over chunks the means are
not known in advance. Each chunk is therefore centred on its *own* weighted means (exact
within the chunk) and factorised by :func:`attnreg.linear._tallqr.streaming_r`, giving

    [√w | √w (X − c_a)]  =  Q_a R_a,   R_a = [[√Σw_a, 0], [0, R̃_a]]

(the first column, √w, is orthogonal to the chunk-centred columns). Two factors with means
c_a and c_b are merged around the pooled mean c = (Σw_a c_a + Σw_b c_b)/(Σw_a + Σw_b): since
X − c = (X − c_a) + 1 (c_a − c)', each factor's first row gains √Σw (c_a − c) — a change of
the size of the difference of the chunks' means, not of the means themselves — and the
stacked factors are re-triangularised by a Householder QR (the TSQR combine step). The
final R's trailing block is the R of the design centred on its exact weighted means, to
rounding of the centred data's size: the same accuracy as centring first. (Accumulating the
uncentred [1 | X] instead would lose log10(|mean| / sd) digits per column, and a second pass
for the means would cost a read of the data.) Without an intercept nothing is centred, as
in memory.

Examples
--------
>>> import numpy as np, pandas as pd
>>> from attnreg.large.sources import as_source
>>> from attnreg.large.spec import learn_spec
>>> from attnreg.large.accumulate import RFactor, chunk_design
>>> rng = np.random.default_rng(0)
>>> df = pd.DataFrame({"x": 1e6 + rng.normal(size=50)})
>>> df["y"] = 2 * df.x + rng.normal(size=50)
>>> src = as_source(df, chunk_rows=20)
>>> spec = learn_spec("y ~ x", src)
>>> parts = [RFactor.from_chunk(chunk_design(spec, f), spec) for f in src.frames(["x", "y"])]
>>> total = parts[0].merge(parts[1]).merge(parts[2])
>>> total.n_obs, total.n_coef
(50, 2)
>>> R = total.centred_r()            # R of [x − x̄ | y − ȳ]
>>> xc = df.x - df.x.mean()
>>> bool(np.isclose(abs(R[0, 0]), np.sqrt(xc @ xc), rtol=1e-12))
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import patsy
import scipy.linalg as sla

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import DataError, OptionError
from attnreg.linear.scaling import unit_weights
from attnreg.large.spec import ChunkSpec

__all__ = ["ChunkDesign", "RFactor", "chunk_design"]


@dataclass(frozen=True)
class ChunkDesign:
    """One chunk's rows of the design.

    Attributes
    ----------
    X : ndarray, shape (m, n_coef)
        Design rows (C-contiguous float64), rows of weight zero left out.
    y : ndarray, shape (m,)
    weights : ndarray, shape (m,) or None
    rows : ndarray of int, shape (m,)
        Positions of these rows within the chunk's frame.
    labels : pandas.Index
        Their row labels (global row numbers for files, arrow and polars).
    n_dropped : int
        Rows dropped for missing values (formula variables or weights).
    n_excluded : int
        Rows excluded by ``subset``.
    n_zero_weight : int
        Rows of weight zero (left out of the fit, as R's ``lm``).
    n_read : int
        Rows of the chunk.
    """

    X: FloatArray
    y: FloatArray
    weights: FloatArray | None
    rows: IntArray
    labels: pd.Index = field(repr=False)
    n_dropped: int = 0
    n_excluded: int = 0
    n_zero_weight: int = 0
    n_read: int = 0

    @property
    def n_obs(self) -> int:
        """Rows of the chunk in the fit."""
        return int(self.X.shape[0])


def _build(spec: ChunkSpec, frame: pd.DataFrame) -> tuple[FloatArray, FloatArray, IntArray]:
    """(y, X, rows kept) of a chunk with the spec's design infos (patsy's NA rule: drop)."""
    try:
        from attnreg.formula.builder import _design_matrix, _eval_factor
    except ImportError:  # pragma: no cover - the builder's fast helpers moved
        _design_matrix = None  # type: ignore[assignment]
    na = patsy.NAAction("drop")
    n = frame.shape[0]
    if _design_matrix is None:  # pragma: no cover - the public route
        positional = frame.set_axis(pd.RangeIndex(n), axis=0)
        y_df, X_df = patsy.build_design_matrices([spec.y_info, spec.x_info], positional,
                                                 NA_action=na, return_type="dataframe")
        rows = np.asarray(X_df.index, dtype=np.int64)
        return (y_df.to_numpy(dtype=np.float64)[:, 0], np.ascontiguousarray(X_df.to_numpy(float)),
                rows)
    values: dict[Any, Any] = {}
    good: Any = None
    for info in (spec.y_info, spec.x_info):
        for factor_info in info.factor_infos.values():
            if factor_info in values:
                continue
            value, is_na, _ = _eval_factor(factor_info, frame, na)
            if value.shape[0] != n:
                raise patsy.PatsyError(f"factor {factor_info.factor.name()} gave {value.shape[0]} "
                                       f"rows for a chunk of {n}", factor_info.factor)
            values[factor_info] = value
            if is_na is not None and is_na.any():
                good = ~is_na if good is None else good & ~is_na
    if good is None:
        rows = np.arange(n, dtype=np.int64)
    else:
        rows = np.flatnonzero(good)
        values = {k: v[good] for k, v in values.items()}
    y = _design_matrix(spec.y_info, values, rows.size)[:, 0]
    X = _design_matrix(spec.x_info, values, rows.size)
    return np.ascontiguousarray(y), X, rows


def chunk_design(spec: ChunkSpec, frame: pd.DataFrame) -> ChunkDesign:
    """Build one chunk's design with the spec of pass 1.

    Parameters
    ----------
    spec : ChunkSpec
    frame : DataFrame
        A chunk from :meth:`ChunkSource.frames` with ``uses=spec.uses`` (input rules applied)
        and the columns of :meth:`ChunkSpec.read_columns`.

    Returns
    -------
    ChunkDesign

    Raises
    ------
    DataError
        Non-finite values (column and row named), negative weights, missing values with
        ``na_action="raise"`` (the first row named).
    """
    from attnreg.formula.builder import check_finite
    from attnreg.formula.design import _subset_mask, _translate_patsy_error

    n = frame.shape[0]
    mask: Any
    try:
        y, X, rows = _build(spec, frame)
    except patsy.PatsyError as exc:
        raise _translate_patsy_error(exc, "data") from None
    n_dropped = n - rows.size
    keep_mask = np.ones(rows.size, dtype=bool)
    w = None
    if spec.weights is not None:
        try:
            w_all = np.asarray(frame[spec.weights], dtype=np.float64)
        except (TypeError, ValueError):
            raise DataError(f"weights column {spec.weights!r} must be numeric") from None
        w = w_all[rows]
        ok = ~np.isnan(w)
        n_dropped += int((~ok).sum())
        keep_mask &= ok
    if spec.na_action == "raise" and n_dropped:
        bad = np.ones(n, dtype=bool)
        bad[rows[keep_mask]] = False
        first = frame.index[int(np.argmax(bad))]
        raise DataError(f"na_action='raise': rows have missing values; the first is row {first!r}")
    n_excluded = 0
    if spec.subset is not None:
        mask = _subset_mask(frame, spec.subset) if n else np.zeros(0, dtype=bool)
        sel = mask[rows]
        n_excluded = int((~mask).sum())
        # rows excluded by subset are not counted as dropped for NA
        n_dropped -= int((~mask[np.setdiff1d(np.arange(n), rows)]).sum()) if n_dropped else 0
        keep_mask &= sel
    n_zero = 0
    if w is not None:
        wk = w[keep_mask]
        bad = ~np.isfinite(wk) | (wk < 0)
        if bad.any():
            i = np.flatnonzero(keep_mask)[int(np.argmax(bad))]
            raise DataError(f"weights must be finite and non-negative; row "
                            f"{frame.index[rows[i]]!r} has weight {float(w[i])!r}")
        zero = keep_mask & (w == 0)
        n_zero = int(zero.sum())
        keep_mask &= w != 0
    if not keep_mask.all():
        rows, X, y = rows[keep_mask], X[keep_mask], y[keep_mask]
        w = None if w is None else w[keep_mask]
    X = np.ascontiguousarray(X)
    labels = frame.index[rows]
    check_finite(X, spec.column_names, labels, "data")
    check_finite(y[:, None], [spec.response_name], labels, "data")
    return ChunkDesign(X=X, y=y, weights=w, rows=rows, labels=labels, n_dropped=int(n_dropped),
                       n_excluded=n_excluded, n_zero_weight=n_zero, n_read=n)


@dataclass(frozen=True)
class RFactor:
    """R of the weighted, centred [X | y] of some rows, mergeable with others (TSQR).

    Attributes
    ----------
    R : ndarray, shape (p + 1, p + 1) or (p, p)
        Upper triangular. With an intercept: the R of [√w | √w (X_c − c) | √w (y − c_y)]
        (p = n_coef: the intercept column is replaced by √w and the centring is stored in
        :attr:`center`); without one, the R of [√w X | √w y] (p = n_coef + 1 columns).
    center : ndarray, shape (n_coef + 1,)
        The weighted means the columns (intercept excluded) and the response were centred on
        (zeros without an intercept; the intercept's own entry is 0).
    n_obs : int
        Rows in the fit.
    sum_w : float
        Σ w (``n_obs`` without weights).
    intercept : bool
    weighted : bool
    n_dropped, n_excluded, n_zero_weight, n_read : int
        Row counts (missing values, ``subset``, weight zero, rows read).
    sum_log_w : float
        Σ log w (the log-likelihood of a weighted fit).
    sums : ndarray, shape (n_coef + 1,)
        Σ w [X | y] per column, added over the chunks (the means are ``sums / sum_w``, as the
        in-memory fit's; see :meth:`means`).
    """

    R: FloatArray
    center: FloatArray
    n_obs: int
    sum_w: float
    intercept: bool
    weighted: bool
    n_dropped: int = 0
    n_excluded: int = 0
    n_zero_weight: int = 0
    n_read: int = 0
    sum_log_w: float = 0.0
    sums: FloatArray | None = field(default=None, repr=False)

    @property
    def n_coef(self) -> int:
        """Number of design columns (the intercept included)."""
        return int(self.center.size - 1)

    @classmethod
    def empty(cls, n_coef: int, intercept: bool, weighted: bool) -> RFactor:
        """The factor of no rows (the neutral element of :meth:`merge`)."""
        k = n_coef + 1
        return cls(R=np.zeros((k, k)), center=np.zeros(k), n_obs=0, sum_w=0.0,
                   intercept=intercept, weighted=weighted, sums=np.zeros(k))

    @classmethod
    def from_chunk(cls, chunk: ChunkDesign, spec: ChunkSpec | None = None, *,
                   intercept: bool | None = None) -> RFactor:
        """The factor of one chunk's rows (a streaming Householder QR, leaf by leaf).

        Parameters
        ----------
        chunk : ChunkDesign
        spec : ChunkSpec, optional
            Says whether the design has an intercept (column 0); or give ``intercept``.
        intercept : bool, optional

        Returns
        -------
        RFactor
        """
        from attnreg.linear._tallqr import streaming_r

        has_int = spec.intercept if spec is not None else bool(intercept)
        X, y, w = chunk.X, chunk.y, chunk.weights
        n, p = X.shape
        weighted = w is not None
        counts: dict[str, Any] = {"n_dropped": chunk.n_dropped, "n_excluded": chunk.n_excluded,
                  "n_zero_weight": chunk.n_zero_weight, "n_read": chunk.n_read}
        slw = float(np.log(w).sum()) if w is not None and n else 0.0
        if n == 0:
            return cls(R=np.zeros((p + 1, p + 1)), center=np.zeros(p + 1), n_obs=0, sum_w=0.0,
                       intercept=has_int, weighted=weighted, sums=np.zeros(p + 1), **counts)
        sqrt_w = None if w is None else np.sqrt(w)
        sum_w = float(w.sum()) if w is not None else float(n)
        wv = w if w is not None else unit_weights(n)
        sums = np.r_[np.asarray(wv @ X, dtype=np.float64), float(wv @ y)]
        if has_int:
            cols = np.arange(1, p, dtype=np.int64)
            mean = sums[:p] / sum_w
            mean[0] = 0.0
            y_mean = float(sums[p]) / sum_w
            # one refinement of the means (as R's mean()): centred sums are then ~ 0 exactly
            mean[1:] += (wv @ (X[:, 1:] - mean[1:])) / sum_w
            y_mean += float(wv @ (y - y_mean)) / sum_w
            Rt = streaming_r(X, y, cols, mean, sqrt_w, y_mean)
            R = np.zeros((p + 1, p + 1))
            R[0, 0] = np.sqrt(sum_w)
            R[1:, 1:] = Rt
            center = np.r_[mean, y_mean]
        else:
            cols = np.arange(p, dtype=np.int64)
            R = streaming_r(X, y, cols, np.zeros(p), sqrt_w, 0.0)
            center = np.zeros(p + 1)
        return cls(R=_positive_diagonal(R), center=center, n_obs=n, sum_w=sum_w,
                   intercept=has_int, weighted=weighted, sum_log_w=slw, sums=sums, **counts)

    def merge(self, other: RFactor) -> RFactor:
        """The factor of the rows of both (the TSQR combine step; associative, any order).

        Parameters
        ----------
        other : RFactor
            Of the same design (same columns, intercept and weighting).

        Returns
        -------
        RFactor
        """
        if other.R.shape != self.R.shape or other.intercept != self.intercept:
            raise OptionError(f"cannot merge R factors of different designs (shapes "
                              f"{self.R.shape} and {other.R.shape})")
        counts: dict[str, Any] = {"n_dropped": self.n_dropped + other.n_dropped,
                  "n_excluded": self.n_excluded + other.n_excluded,
                  "n_zero_weight": self.n_zero_weight + other.n_zero_weight,
                  "n_read": self.n_read + other.n_read,
                  "sum_log_w": self.sum_log_w + other.sum_log_w}
        weighted = self.weighted or other.weighted
        if other.n_obs == 0 or self.n_obs == 0:
            base = other if self.n_obs == 0 else self
            return RFactor(R=base.R, center=base.center, n_obs=base.n_obs, sum_w=base.sum_w,
                           intercept=self.intercept, weighted=weighted, sums=base.sums, **counts)
        sum_w = self.sum_w + other.sum_w
        Ra, Rb = self.R.copy(), other.R.copy()
        if self.intercept:
            # pooled mean, as the difference added to one side (exact when both are equal)
            center = self.center + (other.center - self.center) * (other.sum_w / sum_w)
            center[0] = 0.0
            Ra[0, 1:] += np.sqrt(self.sum_w) * (self.center - center)[1:]
            Rb[0, 1:] += np.sqrt(other.sum_w) * (other.center - center)[1:]
        else:
            center = self.center
        R = sla.qr(np.vstack([Ra, Rb]), mode="r", check_finite=False)[0][: Ra.shape[0]]
        sums = None if self.sums is None or other.sums is None else self.sums + other.sums
        return RFactor(R=_positive_diagonal(np.triu(R)), center=center,
                       n_obs=self.n_obs + other.n_obs, sum_w=sum_w, intercept=self.intercept,
                       weighted=weighted, sums=sums, **counts)

    def centred_r(self) -> FloatArray:
        """R of the centred, weighted [X | y] without the intercept column, shape (k+1, k+1).

        What :func:`attnreg.linear._tallqr.streaming_r` gives in memory (k = non-intercept
        columns). With R = [[r00, r01], [0, R11]] the R of [√w | √w (X − c)], R11ᵀR11 =
        ZᵀZ − r01ᵀr01 is the cross-product of the columns centred on their exact weighted
        means whatever the shift c: R11 is that R.
        """
        return self.R[1:, 1:] if self.intercept else self.R

    def means(self) -> FloatArray:
        """Weighted means of the columns (intercept excluded: 0) and the response, shape
        (n_coef + 1,) (zeros without an intercept).

        ``sums / sum_w``: the column sums added over the chunks, divided once, which is what
        the in-memory fit computes (one weighted sum per column). Not ``c + r01 / r00``: in
        exact arithmetic the same number, but the computed r01 carries the
        re-triangularisations' rounding, of the size of the centred columns' norms
        (ε ‖√w (x − x̄)‖), and the chunks' refined means carry rounding of the size of the
        columns' spread; on an ill-conditioned design a mean off by ε·sd moves the
        intercept's standard error by about cond(Z)² ε sd |v'x̄| / (1/Σw + x̄'Ωx̄)
        (v the near-null direction): two digits on ``benchmarks/large_accuracy.py``'s design.
        """
        if not self.intercept or self.n_obs == 0:
            return np.zeros_like(self.center)
        out = self.center.copy() if self.sums is None else self.sums / self.sum_w
        out[0] = 0.0
        return out

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_rfactor, (self.R, self.center, self.n_obs, self.sum_w, self.intercept,
                           self.weighted, self.n_dropped, self.n_excluded, self.n_zero_weight,
                           self.n_read, self.sum_log_w, self.sums))


def _rfactor(*args: Any) -> RFactor:
    return RFactor(*args)


def _positive_diagonal(R: FloatArray) -> FloatArray:
    """R with rows multiplied by ±1 so that its diagonal is non-negative (a canonical form)."""
    sign = np.where(np.diag(R) < 0, -1.0, 1.0)
    return np.asarray(R * sign[:, None])
