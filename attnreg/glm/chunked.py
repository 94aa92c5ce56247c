"""IRLS beyond memory: a GLM fitted over data read chunk by chunk (files, arrow, polars, dask).

Each pass over the chunks evaluates one set of coefficients β: per chunk the linear predictor
η = Xβ + offset, the means μ, the deviance and the checks of ``glm.fit``, and the weighted
least-squares system of the next Fisher scoring step, the R factor of [√W X | √W z]
(W the working weights, z the working response) merged across chunks by a tall QR. So every
iteration of the in-memory IRLS (:func:`attnreg.glm.irls.irls`: R's starting values,
step-halving, R's stopping rule, then on to the optimum) is one pass here, with the same
numbers: the coefficients solve the same triangular systems, and equal the in-memory fit to
rounding. Memory holds one chunk and (k + 1)² numbers.

The aliased columns are found, as in memory, on the R factor of √(prior weights) X (the first
pass); the statistics of the final μ (Pearson's χ² for the dispersion, the terms of the AIC,
the null deviance, the sandwich meats) come from one more pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.linalg import qr, solve_triangular

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import DataError
from attnreg.exceptions import DataError as ConvergenceError
from attnreg.formula.frame import names_in
from attnreg.glm.families import Family
from attnreg.glm.irls import aliased_from_factor
from attnreg.glm.links import Link
from attnreg.glm.offset import evaluate_offset

if TYPE_CHECKING:
    from attnreg.glm.chunked_vcov import ScoreAccumulator
    from attnreg.large.meat import MeatPart

__all__ = ["ChunkData", "Pass", "aliased_from_factor", "chunked_irls", "final_pass"]

EPS = float(np.finfo(np.float64).eps)
#: a fitted mean this close to the boundary keeps a fit from certifying itself free of
#: separation (as the in-memory fit, :func:`attnreg.glm.registration._certified`)
NEAR = 1e-10


@dataclass
class ChunkData:
    """What the passes read: the chunks' design rows, offsets and cluster ids.

    Attributes
    ----------
    spec : ChunkSpec
    source : ChunkSource
    family, link : Family, Link
    offset : str or None
        A column or an expression of columns.
    keys : tuple of str
        Columns of cluster or period ids (read by the final pass only).
    progress : bool
    separated : list of (ndarray, float)
        Separating directions ``b`` (over every design column) with their tolerance: rows
        with ``|x b| > tol`` for one of them are left out of every pass (separation="drop").
    """

    spec: Any
    source: Any
    family: Family
    link: Link
    offset: str | None = None
    keys: tuple[str, ...] = ()
    progress: bool = False
    n_dropped: int = field(default=0, init=False)
    separated: list[tuple[FloatArray, float]] = field(default_factory=list, init=False)

    def _extra(self, with_cluster: bool) -> tuple[str, ...]:
        cols = set(self.source.columns)
        extra: list[str] = []
        if self.offset is not None:
            extra = [self.offset] if self.offset in cols else [
                n for n in names_in(self.offset) if n in cols]
        if with_cluster:
            extra.extend(k for k in self.keys if k not in extra)
        return tuple(extra)

    def chunks(self, label: str, with_cluster: bool = False
               ) -> Iterator[tuple[FloatArray, FloatArray, FloatArray, FloatArray, Any]]:
        """``(X, y, prior weights, offset, key columns or None)`` of every chunk, in row order."""
        for X, y, wt, off, ids, _ in self.labelled(label, with_cluster):
            yield X, y, wt, off, ids

    def labelled(self, label: str, with_cluster: bool = False
                 ) -> Iterator[tuple[FloatArray, FloatArray, FloatArray, FloatArray, Any, Any]]:
        """:meth:`chunks` with the rows' labels last."""
        from attnreg.large.columns import chunk_design
        from attnreg.large.passes import frames_of

        spec = self.spec
        dropped = 0
        for frame in frames_of(self.source, spec, spec.read_columns(self._extra(with_cluster)),
                               label, self.progress):
            d = chunk_design(spec, frame)
            dropped += d.n_dropped
            if d.n_obs == 0:
                continue
            wt = np.ones(d.n_obs) if d.weights is None else d.weights
            off = np.zeros(d.n_obs)
            if self.offset is not None:
                off = evaluate_offset(self.offset, frame, spec.eval_env, "data")[d.rows]
                if not np.isfinite(off).all():
                    raise DataError(f"offset {self.offset!r} is missing or not finite in "
                                    f"{int((~np.isfinite(off)).sum())} row(s) of the chunk "
                                    f"starting at row {frame.index[0]}; drop them with subset= "
                                    "or fill them")
            ids = None
            if with_cluster and self.keys:
                ids = frame[list(self.keys)].iloc[d.rows].reset_index(drop=True)
            labels = frame.index[d.rows]
            keep = np.ones(d.n_obs, dtype=bool)
            for b, tol in self.separated:
                keep &= np.abs(d.X @ b) <= tol
            if not keep.all():
                yield (d.X[keep], d.y[keep], wt[keep], off[keep],
                       None if ids is None else ids.loc[keep].reset_index(drop=True),
                       labels[keep])
                continue
            yield d.X, d.y, wt, off, ids, labels
        self.n_dropped = dropped


def _merge(T: FloatArray, block: FloatArray) -> FloatArray:
    """The R factor of [T; block] (a tall QR step)."""
    if block.shape[0] == 0:
        return T
    return np.triu(qr(np.vstack([T, block]), mode="r", check_finite=False)[0][:T.shape[1]])


@dataclass(frozen=True)
class Pass:
    """One pass at a set of coefficients (None: R's starting values).

    Attributes
    ----------
    deviance : float
    valid : bool
        η and μ inside the link's and family's domains.
    T : ndarray, shape (k + 1, k + 1)
        R factor of [√W X | √W z] of every row (all design columns).
    n_obs : int
    sum_wy, sum_w : float
        Σ wt y and Σ wt (the null model's mean).
    """

    deviance: float
    valid: bool
    T: FloatArray
    n_obs: int
    sum_wy: float
    sum_w: float


def scan(data: ChunkData, coef: FloatArray | None, kept: IntArray, label: str) -> Pass:
    """One pass over the chunks at ``coef`` (coefficients of the ``kept`` columns)."""
    fam, link = data.family, data.link
    k = data.spec.n_coef
    T = np.zeros((0, k + 1))
    dev, valid, n, swy, sw = 0.0, True, 0, 0.0, 0.0
    for X, y, wt, off, _ in data.chunks(label):
        if coef is None:
            eta = link.linkfun(fam.initialize(y, wt, link.name))
            mu = link.linkinv(eta)
            if not (link.valideta(eta) and fam.validmu(mu)):
                raise ConvergenceError(f"cannot find valid starting values for family "
                                       f"{fam.name!r} with link {link.name!r}: the response "
                                       "is outside its range")
        else:
            eta = X[:, kept] @ coef + off
            mu = link.linkinv(eta)
        with np.errstate(invalid="ignore", divide="ignore"):
            dev += float(np.sum(fam.dev_resids(y, mu, wt)))
        valid = valid and bool(link.valideta(eta) and fam.validmu(mu))
        n, swy, sw = n + y.size, swy + float(wt @ y), sw + float(wt.sum())
        if not (valid and np.isfinite(dev)):
            continue  # the step is halved: its system is not needed
        var = fam.variance(mu)
        if not np.isfinite(var).all() or (var == 0).any():
            raise ConvergenceError("0s or NAs in V(mu): a fitted mean reached the boundary of "
                                   "the family's range; check for separation")
        d = link.mu_eta(eta)
        z = eta - off + (y - mu) / d
        w = np.sqrt(wt * d ** 2 / var)
        T = _merge(T, np.column_stack([X, z]) * w[:, None])
    if T.shape[0] < k + 1:
        T = np.vstack([T, np.zeros((k + 1 - T.shape[0], k + 1))])
    return Pass(dev, valid, T, n, swy, sw)


def solve_step(T: FloatArray, kept: IntArray) -> tuple[FloatArray, FloatArray]:
    """Coefficients of the kept columns and their R, from the R factor of all columns."""
    k = T.shape[1] - 1
    sub = np.triu(qr(T[:, np.r_[kept, k]], mode="r", check_finite=False)[0])
    m = kept.size
    R, qz = sub[:m, :m], sub[:m, m]
    coef = solve_triangular(R, qz)
    if not np.isfinite(coef).all():
        raise ConvergenceError("non-finite coefficients in an IRLS step; give other data or a "
                               "different link")
    return coef, R


def weights_factor(data: ChunkData) -> FloatArray:
    """R factor of √(prior weights) X over every chunk, shape (k, k)."""
    k = data.spec.n_coef
    T = np.zeros((0, k))
    for X, _y, wt, _off, _ in data.chunks("attnreg GLM pass 2 (aliasing): rows"):
        T = _merge(T, X * np.sqrt(wt)[:, None])
    return np.vstack([T, np.zeros((max(0, k - T.shape[0]), k))])


@dataclass(frozen=True)
class IrlsPath:
    """The chunked IRLS's converged state (as :class:`attnreg.glm.irls.IrlsFit`, no rows)."""

    coef: FloatArray
    r: FloatArray
    deviance: float
    iter: int
    iter_r: int
    converged: bool
    boundary: bool
    n_halved: int
    first: Pass
    final_step: float = float("inf")


class _Steps:
    """Fisher scoring steps, each a pass; R's step-halving."""

    def __init__(self, data: ChunkData, kept: IntArray, maxit: int) -> None:
        self.data, self.kept, self.maxit, self.n_halved, self.count = data, kept, maxit, 0, 0

    def at(self, coef: FloatArray, old: FloatArray | None) -> tuple[FloatArray, Pass, bool]:
        self.count += 1
        p = scan(self.data, coef, self.kept, f"attnreg GLM IRLS pass {self.count + 2}: rows")
        halved, tries = False, 1
        while not (np.isfinite(p.deviance) and p.valid):
            if old is None:
                raise ConvergenceError("no valid set of coefficients has been found: the "
                                       "starting values give an invalid fit")
            if tries > self.maxit:
                raise ConvergenceError("cannot correct the step size by halving")
            tries, halved = tries + 1, True
            self.n_halved += 1 if tries == 2 else 0
            coef = (coef + old) / 2
            p = scan(self.data, coef, self.kept, "attnreg GLM IRLS pass (halved step): rows")
        return coef, p, halved


def chunked_irls(data: ChunkData, kept: IntArray, *, epsilon: float = 1e-8, maxit: int = 25,
                 exact_r: bool = False) -> IrlsPath:
    """IRLS with R's ``glm.fit`` conventions, one pass over the chunks per iteration.

    Parameters
    ----------
    data : ChunkData
    kept : ndarray of int
        Design columns estimated (the aliased ones left out).
    epsilon, maxit, exact_r
        As :func:`attnreg.glm.irls.irls`.

    Returns
    -------
    IrlsPath
    """
    steps = _Steps(data, kept, maxit)
    first = scan(data, None, kept, "attnreg GLM IRLS pass 3 (starting values): rows")
    current, dev_old, old = first, first.deviance, None
    converged, boundary, it = False, False, 0
    coef, r = np.zeros(kept.size), np.zeros((kept.size, kept.size))
    while it < maxit:
        it += 1
        coef, r = solve_step(current.T, kept)
        coef, current, boundary = steps.at(coef, old)
        if abs(current.deviance - dev_old) / (abs(current.deviance) + 0.1) < epsilon:
            converged = True
            break
        dev_old, old = current.deviance, coef
    iter_r = it
    step = float("inf")
    if converged and not exact_r:
        last = np.inf
        for _ in range(maxit):
            new, r_new = solve_step(current.T, kept)
            new, p_new, halved = steps.at(new, coef)
            change = float(np.max(np.abs(new - coef), initial=0.0))
            scale = float(np.max(np.abs(new), initial=0.0))
            step = change / max(scale, 1.0)
            if change >= last and change > 0:  # rounding noise: keep the previous step
                break
            coef, r, current, boundary, it = new, r_new, p_new, halved, it + 1
            if change <= 4 * EPS * scale:
                break
            last = change
    return IrlsPath(coef, r, current.deviance, it, iter_r, converged, boundary, steps.n_halved,
                    first, step)


@dataclass(frozen=True)
class FinalStats:
    """Sums over the rows at the final coefficients (one more pass)."""

    pearson: float
    aic_terms: dict[str, float]
    null_deviance: float
    n_boundary: int
    scores: MeatPart | None
    n_near: int = 0


def final_pass(data: ChunkData, kept: IntArray, coef: FloatArray, *, null_mean: float | None,
               scores: ScoreAccumulator | None, null: bool = True) -> FinalStats:
    """Pearson's χ², the AIC's sums, the null deviance (``null_mean``: μ of the intercept-only
    model; None: μ = linkinv(offset); ``null=False``: not computed, NaN) and what the
    covariance in use needs of the scores (``scores``, :mod:`attnreg.glm.chunked_vcov`), at
    ``coef``."""
    fam, link = data.family, data.link
    sums = dict.fromkeys(("n", "sw", "slogw", "swlogy", "sw_y_mu", "swlogmu", "additive"), 0.0)
    pearson, null_dev, n_boundary, n_near = 0.0, 0.0, 0, 0
    tiny = 10 * EPS
    for X, y, wt, off, ids in data.chunks("attnreg GLM final pass: rows",
                                          with_cluster=scores is not None):
        eta = X[:, kept] @ coef + off
        mu = link.linkinv(eta)
        var = fam.variance(mu)
        pearson += float(np.sum(wt * (y - mu) ** 2 / var))
        if null:
            mu0 = np.full(y.size, null_mean) if null_mean is not None else link.linkinv(off)
            null_dev += float(np.sum(fam.dev_resids(y, mu0, wt)))
        n_boundary += int(near_boundary(mu, fam.name, tiny).sum())
        n_near += int(near_boundary(mu, fam.name, NEAR).sum())
        _add_aic_sums(sums, fam, y, mu, wt)
        if scores is not None:
            d_mu = link.mu_eta(eta)
            scores.add(X[:, kept], wt * d_mu * (y - mu) / var, wt * d_mu ** 2 / var, ids)
    return FinalStats(pearson, sums, null_dev if null else float("nan"), n_boundary,
                      None if scores is None else scores.part, n_near)


def near_boundary(mu: FloatArray, family: str, tol: float) -> Any:
    """Rows whose fitted mean is within ``tol`` of 0 (or of 1, binomial); none for the
    families without a boundary that a separation reaches."""
    if family == "binomial":
        return (mu < tol) | (mu > 1 - tol)
    if family == "poisson":
        return mu < tol
    return np.zeros(mu.shape, dtype=bool)


def _add_aic_sums(sums: dict[str, float], fam: Family, y: FloatArray, mu: FloatArray,
                  wt: FloatArray) -> None:
    sums["n"] += y.size
    sums["sw"] += float(wt.sum())
    sums["slogw"] += float(np.sum(np.log(wt)))
    if fam.name in ("binomial", "poisson"):  # row by row: −2 Σ log-likelihood
        sums["additive"] += fam.aic(y, mu, wt, 0.0)
    elif fam.name in ("Gamma", "inverse.gaussian"):
        sums["swlogy"] += float(np.sum(wt * np.log(y)))
        sums["sw_y_mu"] += float(np.sum(wt * y / mu))
        sums["swlogmu"] += float(np.sum(wt * np.log(mu)))


def aic_from_sums(fam: Family, s: dict[str, float], dev: float) -> float:
    """R's family ``aic`` (without the 2 rank) from the sums of :func:`final_pass`."""
    from scipy.special import gammaln

    if fam.name in ("binomial", "poisson"):
        return s["additive"]
    if fam.name == "gaussian":
        n = s["n"]
        return float(n * (np.log(2 * np.pi * dev / n) + 1) + 2 - s["slogw"])
    if fam.name == "Gamma":  # Σ wt log dgamma(y; a, scale = μ/a), a = Σwt / deviance
        a = s["sw"] / dev
        ll = ((a - 1) * s["swlogy"] - a * s["sw_y_mu"] - gammaln(a) * s["sw"]
              - a * s["swlogmu"] + a * np.log(a) * s["sw"])
        return float(-2 * ll + 2)
    sw = s["sw"]  # inverse.gaussian
    return float(sw * (np.log(dev / sw * 2 * np.pi) + 1) + 3 * s["swlogy"] + 2)
