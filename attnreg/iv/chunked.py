r"""IV beyond memory: the two passes over the chunks and the fit from one merged R factor.

Pass 1 reads every chunk's rows of ``A = [X, Z, D, y]`` (exogenous regressors, excluded
instruments, endogenous regressors, response; one model frame, so a row with a missing value
in any of them is dropped as in memory) and merges the R factors of ``sqrt(w) A`` across
chunks by a tall QR, with ``n``, ``Σ w`` and ``Σ w A``. The weights are then rescaled to mean
one (as in memory): ``P = R / sqrt(w̄)`` is upper triangular with ``P'P = M'M``,
``M = sqrt(w / w̄) A``. Every 2SLS, LIML and Fuller estimate and every classical statistic is a
function of ``M'M`` and ``n`` only, so the in-memory estimators run on the ``p`` rows of ``P``
(``p = k1 + nz + k2 + 1``) and give the same numbers.

Pass 2 evaluates the per-row contributions the robust statistics need: each is
``h_i = (m_i'C) (m_i'c)`` with ``m_i`` a row of ``M`` and ``C``, ``c`` found on ``P``
(a quantity ``B`` computed on the rows of ``P`` is ``P C`` with ``C = P^{-1} B``, one
triangular solve, and is ``M C`` on the data's rows). Their cross-products (or, under a cluster
covariance, the products of their per-cluster sums) are kept as one small triangular factor
``F`` with ``F'F = Σ h_i h_i'``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
import patsy
from scipy.linalg import qr, solve_triangular

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import DataError, FormulaError
from attnreg.iv._design import IVDesign, make_design
from attnreg.iv.estimators import IVFit, kclass, liml, liml_kappa, tsls

__all__ = ["IVChunks", "IVLayout", "MeatFactor", "Merged", "first_pass", "fit_merged",
           "iv_layout", "score_pass"]

#: Residuals kept for the summary's quantiles up to this many rows (none beyond).
RESIDUALS_KEPT = 200_000


@dataclass(frozen=True)
class IVLayout:
    """Where each IV role sits among the columns of the combined design.

    Attributes
    ----------
    x, z, d : ndarray of int
        Design columns of the exogenous regressors, excluded instruments, endogenous regressors.
    exog_names, endog_names, instrument_names : tuple of str
    regressor_terms : tuple of str
        The terms of the exogenous and endogenous regressors (those of new rows' designs).
    """

    x: IntArray
    z: IntArray
    d: IntArray
    exog_names: tuple[str, ...]
    endog_names: tuple[str, ...]
    instrument_names: tuple[str, ...]
    regressor_terms: tuple[str, ...] = ()

    @property
    def sizes(self) -> tuple[int, int, int]:
        """``(k1, nz, k2)``."""
        return int(self.x.size), int(self.z.size), int(self.d.size)


def _terms(part: str) -> list[str]:
    try:
        desc = patsy.ModelDesc.from_formula("~ " + part)
    except patsy.PatsyError as exc:
        raise FormulaError(f"could not parse {part!r}: {exc}") from None
    return [t.name() for t in desc.rhs_termlist if t.factors]


def iv_layout(x_info: Any, endogenous: str, instruments: str) -> IVLayout:
    """The roles of the combined design's columns (``x_info`` a patsy DesignInfo of
    ``y ~ x + d + z``), split by term as :func:`attnreg.iv.frame.build_iv_frame` does."""
    from attnreg.formula.poly import r_column_names

    endog, instr = set(_terms(endogenous)), set(_terms(instruments))
    slices = x_info.term_name_slices
    role = {t: "z" if t in instr else "d" if t in endog else "x" for t in x_info.term_names}
    terms = {r: [t for t in x_info.term_names if role[t] == r] for r in "xzd"}
    cols = {r: np.array([j for t in terms[r] for j in range(slices[t].start, slices[t].stop)],
                        dtype=np.intp) for r in "xzd"}
    reg = r_column_names(x_info.subset(terms["x"] + terms["d"]))
    return IVLayout(x=cols["x"], z=cols["z"], d=cols["d"], exog_names=tuple(reg[:cols["x"].size]),
                    endog_names=tuple(reg[cols["x"].size:]),
                    instrument_names=tuple(r_column_names(x_info.subset(terms["z"]))),
                    regressor_terms=tuple(terms["x"] + terms["d"]))


@dataclass
class IVChunks:
    """What the passes read: every chunk's rows of ``[X, Z, D, y]``, weights and cluster ids.

    Attributes
    ----------
    spec : ChunkSpec
        The combined design ``y ~ x + d + z`` learned over every chunk.
    source : ChunkSource
    layout : IVLayout
    cluster : str or None
        The column of cluster ids (read by pass 2 only).
    progress : bool
    """

    spec: Any
    source: Any
    layout: IVLayout
    cluster: str | None = None
    progress: bool = False
    n_dropped: int = field(default=0, init=False)

    def chunks(self, label: str, with_cluster: bool = False
               ) -> Iterator[tuple[FloatArray, FloatArray, Any]]:
        """``(A, w, ids)`` per chunk: ``A`` (m, p) the rows of ``[X, Z, D, y]``, ``w`` (m,) the
        prior weights (ones without), ``ids`` the cluster ids (or None)."""
        from attnreg.large.columns import chunk_design
        from attnreg.large.passes import frames_of

        spec, lay = self.spec, self.layout
        extra = (self.cluster,) if with_cluster and self.cluster is not None else ()
        dropped = 0
        for frame in frames_of(self.source, spec, spec.read_columns(extra), label, self.progress):
            d = chunk_design(spec, frame)
            dropped += d.n_dropped
            if d.n_obs == 0:
                continue
            A = np.column_stack([d.X[:, lay.x], d.X[:, lay.z], d.X[:, lay.d], d.y])
            w = np.ones(d.n_obs) if d.weights is None else d.weights
            ids = None
            if extra:
                ids = frame[self.cluster].to_numpy()[d.rows]
                if pd.isna(ids).any():
                    raise DataError(f"cluster {self.cluster!r} has missing values in the rows "
                                    "used; fill them or drop those rows first")
            yield A, w, ids
        self.n_dropped = dropped


def _merge(T: FloatArray, block: FloatArray, sqrt_w: FloatArray | None = None) -> FloatArray:
    """The R factor of ``[T; sqrt_w * block]``: the chunk's R by the package's cache-blocked
    tall QR (:func:`attnreg.linear.tallqr.streaming_r`), then one small QR with ``T``."""
    from attnreg.linear.tallqr import streaming_r

    k = block.shape[1]
    Rb = streaming_r(np.ascontiguousarray(block[:, :-1]), np.ascontiguousarray(block[:, -1]),
                     np.arange(k - 1), np.zeros(k - 1), sqrt_w, 0.0)
    stacked = np.vstack([T, Rb])
    return np.triu(qr(stacked, mode="r", check_finite=False)[0][:k])


@dataclass(frozen=True)
class Merged:
    """What pass 1 keeps: ``P`` (the R factor at mean-one weights) and a few sums.

    Attributes
    ----------
    P : ndarray, shape (p, p)
        Upper triangular, ``P'P = M'M``, ``M = sqrt(w / w̄) [X, Z, D, y]``.
    n : int
        Rows used.
    mean_w : float
        ``w̄ = Σ w / n`` (1 without weights).
    wsum : ndarray, shape (p,)
        ``Σ w_i a_i`` over the rows ``a_i`` of ``[X, Z, D, y]`` (raw weights).
    k1, nz, k2 : int
    """

    P: FloatArray
    n: int
    mean_w: float
    wsum: FloatArray
    k1: int
    nz: int
    k2: int

    @cached_property
    def design(self) -> IVDesign:
        """The in-memory IV design of the ``p`` rows of ``P`` (its ``n`` is ``p``)."""
        k1, nz, k2, P = self.k1, self.nz, self.k2, self.P
        return make_design(P[:, -1], P[:, :k1] if k1 else None, P[:, k1 + nz:k1 + nz + k2],
                           P[:, k1:k1 + nz])

    def to_rows(self, B: FloatArray, response: bool = False) -> FloatArray:
        """``C = P^{-1} B`` (shape as ``B``): ``B`` computed on the rows of ``P`` is ``M C``.

        Without ``response`` (B a combination of the columns of X, Z and D only) the
        response's coefficient is 0 and the others solve the leading block: a well-fitted
        response (a small last diagonal of ``P``) cannot amplify rounding then.
        """
        if response:
            return solve_triangular(self.P, B)
        C = np.zeros(B.shape)
        C[:-1] = solve_triangular(self.P[:-1, :-1], B[:-1])
        return C


def first_pass(data: IVChunks) -> Merged:
    """Pass 1: the merged R factor of ``sqrt(w) [X, Z, D, y]``, n, Σ w and Σ w a."""
    k1, nz, k2 = data.layout.sizes
    p = k1 + nz + k2 + 1
    T = np.zeros((0, p))
    n, sum_w, wsum = 0, 0.0, np.zeros(p)
    for A, w, _ in data.chunks("attnreg IV pass 1: R factor"):
        T = _merge(T, A, np.sqrt(w))
        n, sum_w, wsum = n + A.shape[0], sum_w + float(w.sum()), wsum + w @ A
    if n <= k1 + nz:
        raise DataError(f"too few rows: n = {n} must exceed the {k1 + nz} instruments "
                        "(exogenous regressors and excluded instruments)")
    if T.shape[0] < p:
        T = np.vstack([T, np.zeros((p - T.shape[0], p))])
    mean_w = sum_w / n
    return Merged(P=T / np.sqrt(mean_w), n=n, mean_w=mean_w, wsum=wsum, k1=k1, nz=nz, k2=k2)


def fit_merged(m: Merged, method: str, alpha: float) -> IVFit:
    """The 2SLS, LIML or Fuller fit of the rows of ``P`` (the in-memory estimators; Fuller's
    κ uses the data's n). Its ``resid``, ``wresid`` and ``scores`` are those of ``P``'s rows."""
    d = m.design
    args = (d.y, d.X if m.k1 else None, d.D, d.Z)
    if method in ("tsls", "2sls"):
        return tsls(*args)
    if method == "liml":
        return liml(*args)
    k_liml = liml_kappa(*args)  # Fuller: κ_LIML − α/(n − L), as the in-memory fit
    fit = kclass(*args, kappa=k_liml - alpha / (m.n - m.k1 - m.nz))
    return IVFit(method="Fuller", coef=fit.coef, bread=fit.bread, scores=fit.scores,
                 homoskedastic_meat=fit.homoskedastic_meat, resid=fit.resid,
                 wresid=fit.wresid, kappa=fit.kappa, liml_kappa=k_liml,
                 n_instruments=fit.n_instruments)


@dataclass(frozen=True)
class MeatFactor:
    """What pass 2 keeps: ``F`` with ``F'F = Σ h_i h_i'`` (or ``Σ_g h_g h_g'`` of the
    per-cluster sums), the contributions' columns stacked.

    Attributes
    ----------
    F : ndarray, shape (m, m)
    n_clusters : int or None
    resid : ndarray or None
        ``sqrt(w) e`` of every row (the summary's quantiles) when at most
        :data:`RESIDUALS_KEPT` rows, else (or with ``residuals=False``) None.
    """

    F: FloatArray
    n_clusters: int | None
    resid: FloatArray | None

    def block(self, cols: slice) -> FloatArray:
        """A triangular factor of the contributions in ``cols`` alone."""
        return np.triu(qr(self.F[:, cols], mode="r", check_finite=False)[0][:cols.stop - cols.start])


def score_pass(data: IVChunks, m: Merged, maps: list[tuple[FloatArray, FloatArray]],
               coef: FloatArray, clustered: bool, residuals: bool = True) -> MeatFactor:
    """Pass 2: the contributions ``(m_i'C) (m_i'c)`` of every pair ``(C, c)`` in ``maps``
    (shapes (p, m_j) and (p,)), and the residuals at ``coef`` (order ``[X, D]``) unless
    ``residuals`` is False or there are more than :data:`RESIDUALS_KEPT` rows."""
    k1, nz = m.k1, m.nz
    c_e = np.concatenate([-coef[:k1], np.zeros(nz), -coef[k1:], [1.0]])
    width = sum(C.shape[1] for C, _ in maps)
    T, resid = np.zeros((0, width)), []
    sums: pd.DataFrame | None = None
    keep = residuals and m.n <= RESIDUALS_KEPT
    for A, w, ids in data.chunks("attnreg IV pass 2: scores", with_cluster=clustered):
        M = A * np.sqrt(w / m.mean_w)[:, None]
        H = np.hstack([(M @ C) * (M @ c)[:, None] for C, c in maps])
        if clustered:  # running per-cluster sums: memory holds one row per cluster
            part = pd.DataFrame(H).groupby(ids, sort=False).sum()
            sums = part if sums is None else pd.concat([sums, part]).groupby(level=0, sort=False).sum()
        else:
            T = _merge(T, H)
        if keep:
            resid.append((A @ c_e) * np.sqrt(w))
    g = None
    if sums is not None:
        S = sums.to_numpy()
        g = int(S.shape[0])
        T = np.triu(qr(S, mode="r", check_finite=False)[0][:width])
    if T.shape[0] < width:
        T = np.vstack([T, np.zeros((width - T.shape[0], width))])
    return MeatFactor(F=T, n_clusters=g, resid=np.concatenate(resid) if keep else None)
