"""The bootstrap of a linear fit: wild (cluster), pairs and residual, vectorised over replications.

:class:`Bootstrap` is a mixin of :class:`~attnreg.linear.results.LinearResults`; its
:meth:`~Bootstrap.bootstrap` returns a :class:`BootstrapResults` with bootstrap standard
errors, percentile and studentized (bootstrap-t) intervals, the replications, and for a
hypothesis the wild cluster bootstrap p-value (WCR, or WCU with ``impose_null=False``) of
Cameron, Gelbach and Miller (2008), as Stata's ``boottest`` and the ``wildboottest`` package.

The algebra. Every spectral fit is linear in the weighted response ỹ = sqrt(w) y
(:mod:`attnreg.linear.inference`): with the scores z_i = [c_i, U_i] (c = sqrt(w)/Σw, U the
left singular vectors; k = 1 + rank of them) the coefficients are b = M Σ_i z_i ỹ_i and the
weighted hat matrix is H = Z D Z' with D = diag(Σw, f) (f the filter factors: 1 for OLS).
A wild bootstrap sample ỹ* = ŷ + u ⊙ v (u the residuals, v_g one weight per cluster) gives

    b* − b̂ = M S' v,              S_g = Σ_{i∈g} z_i u_i    (G × k score sums of u),
    s*_g = v_g S_g − C_g D S' v,  C_g = Σ_{i∈g} z_i z_i'   (the scores of the refit's residuals),

so the cluster-robust (CR1) variance of any row l of M, factor · Σ_g (l' s*_g)², costs
O(G · K · k) per replication and nothing of size n_obs: the "fast and wild" algebra of
Roodman, MacKinnon, Nielsen and Webb (2019). All replications of a block are one matrix
product; blocks bound the memory (about 2**22 numbers each). Without clusters (the
heteroskedastic wild bootstrap) each row is its own cluster and the refit's residuals are
formed block by block of rows instead.

- ``kind="wild"``: ŷ + û ⊙ v with û the fit's residuals. The bootstrap t of coefficient j
  is (b*_j − b̂_j) / se*_j with se* the CR1 (``cluster=``: G/(G − 1) · (n − 1)/(n − K),
  sandwich's ``vcovCL`` default and ``boottest``'s) or HC1 (n/(n − K)) standard error of
  the refit. With ``hypothesis=``: the residuals of the fit with R b = r imposed (WCR), the
  bootstrap t (one restriction) or Wald F = W/q (several) with the CR1/HC1 covariance of
  each replication, and the symmetric p-value share{|t*| > |t̂|} (W* > Ŵ); values within a
  relative 1e-9 of the original statistic count as ties, not as exceedances (with full
  enumeration the draws v = ±1 reproduce it exactly). ``impose_null=False``: WCU.
- ``kind="residual"``: ŷ + e* with e* drawn with replacement from the centred weighted
  residuals times sqrt(n / (n − K)) (so that the bootstrap variance is the classical one in
  expectation); the bootstrap t uses the classical standard error of the refit.
- ``kind="pairs"``: rows (or, with ``cluster=``, whole clusters) drawn with replacement and
  the model refitted. Drawing rows is refitting with integer frequency weights, so all the
  refits of a block are one batched k × k solve on the orthonormal scores [sqrt(w), U]
  (well conditioned: their Gram matrix is I for the original sample); a replication whose
  resampled design is singular is left out (NaN, with a warning). The bootstrap t uses the
  HC1 / CR1 standard error of each refit (each drawn copy of a cluster its own cluster).

Ridge and PCR: the wild and residual bootstraps are conditional on λ or k (the linear map
M is fixed) and the replications are b̂ + M (u ⊙ v), the sampling variation of the linear
smoother around the fit (as its sandwich covariances are); the pairs bootstrap would have to
re-standardise and re-select λ or k on every sample and is refused, and so is the null
imposed by a restricted fit (``hypothesis`` with ``impose_null=True``).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from attnreg._progress import Progress
from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.exceptions import DataError, InferenceWarning, OptionError
from attnreg.linear._contract import LinearFitContract
from attnreg.linear._restrictions import format_restriction, parse_restrictions
from attnreg.linear.cluster import cluster_ids, group_score_sums
from attnreg.linear.inference import coef_map
from attnreg.linear.spectral import Spectrum
from attnreg.linear.rules import SpectralRule
from attnreg.linear.views import check_level
from attnreg.report import render_figures
from attnreg.report.figures import BootstrapSetup, BootstrapTestResult, IntervalLevel
from attnreg.report.sections import Coefficients
from attnreg.report.summary import Summary

__all__ = ["BOOTSTRAP_KINDS", "WILD_WEIGHTS", "Bootstrap", "BootstrapResults", "BootstrapTest",
           "draw_rows", "draw_weights", "enumerate_signs"]

#: the ``kind`` choices of :meth:`Bootstrap.bootstrap`
BOOTSTRAP_KINDS = ("wild", "pairs", "residual")
#: the ``weights`` choices of the wild bootstrap
WILD_WEIGHTS = ("rademacher", "webb", "mammen", "normal")
#: numbers per block of replications (the largest temporary array of a block)
_BLOCK_NUMBERS = 1 << 22
#: bootstrap statistics within this relative distance of the original one are ties
_TIE_TOL = 1e-9

_WEBB = np.array([-math.sqrt(1.5), -1.0, -math.sqrt(0.5), math.sqrt(0.5), 1.0, math.sqrt(1.5)])
_SQ5 = math.sqrt(5.0)
_MAMMEN_LOW, _MAMMEN_HIGH = -(_SQ5 - 1.0) / 2.0, (_SQ5 + 1.0) / 2.0
_MAMMEN_P = (_SQ5 + 1.0) / (2.0 * _SQ5)  # probability of the low value


# ------------------------------------------------------------------------------ draws

def draw_weights(rng: np.random.Generator, weights: str, reps: int, n_groups: int) -> FloatArray:
    """Wild bootstrap weights, one per cluster and replication, shape (reps, n_groups).

    Rademacher ±1 (probability 1/2 each), Webb's six points ±sqrt(1/2), ±1, ±sqrt(3/2)
    (1/6 each), Mammen's two points −(√5 − 1)/2 and (√5 + 1)/2 (probabilities
    (√5 + 1)/(2√5) and (√5 − 1)/(2√5)), or standard normal. Drawn from uniforms (normals)
    in row order, so drawing the rows in blocks from one generator gives the same matrix.

    Parameters
    ----------
    rng : numpy.random.Generator
    weights : {"rademacher", "webb", "mammen", "normal"}
    reps, n_groups : int

    Returns
    -------
    ndarray, shape (reps, n_groups)

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.linear.bootstrap import draw_weights
    >>> v = draw_weights(np.random.default_rng(1), "rademacher", 3, 4)
    >>> v.shape, sorted(set(v.ravel().tolist()))
    ((3, 4), [-1.0, 1.0])
    >>> w = draw_weights(np.random.default_rng(1), "webb", 2000, 50)
    >>> print(f"{abs(w.mean()) < 0.01} {w.var():.2f}")  # mean 0, variance 1
    True 1.00
    """
    shape = (int(reps), int(n_groups))
    if weights == "normal":
        return rng.standard_normal(shape)
    u = rng.random(shape)
    if weights == "rademacher":
        return np.where(u < 0.5, 1.0, -1.0)
    if weights == "webb":
        return _WEBB[np.minimum((u * 6.0).astype(np.int64), 5)]
    if weights == "mammen":
        return np.where(u < _MAMMEN_P, _MAMMEN_LOW, _MAMMEN_HIGH)
    raise OptionError(f"weights must be one of {', '.join(map(repr, WILD_WEIGHTS))}, however: "
                      f"weights={weights!r}")


def enumerate_signs(n_groups: int, start: int = 0, stop: int | None = None) -> FloatArray:
    """Rows ``start:stop`` of all 2^G Rademacher sign vectors, shape (stop − start, G).

    In the order of ``itertools.product([-1, 1], repeat=G)`` (the first cluster changes
    slowest), as ``boottest`` and ``wildboottest`` enumerate them.

    Examples
    --------
    >>> from attnreg.linear.bootstrap import enumerate_signs
    >>> enumerate_signs(2).tolist()
    [[-1.0, -1.0], [-1.0, 1.0], [1.0, -1.0], [1.0, 1.0]]
    """
    stop = 2 ** n_groups if stop is None else stop
    b = np.arange(start, stop, dtype=np.int64)
    bits = (b[:, None] >> np.arange(n_groups - 1, -1, -1, dtype=np.int64)[None, :]) & 1
    return np.asarray(2.0 * bits - 1.0, dtype=np.float64)


def draw_rows(rng: np.random.Generator, reps: int, m: int) -> IntArray:
    """Indices 0 … m − 1 drawn uniformly with replacement, shape (reps, m).

    From uniforms in row order (block-invariant as :func:`draw_weights`).

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.linear.bootstrap import draw_rows
    >>> idx = draw_rows(np.random.default_rng(0), 2, 5)
    >>> idx.shape, bool(((idx >= 0) & (idx < 5)).all())
    ((2, 5), True)
    """
    u = rng.random((int(reps), int(m)))
    return np.minimum((u * m).astype(np.int64), m - 1)


# ------------------------------------------------------------------------------ results

def _tail_share(draws: FloatArray, observed: FloatArray) -> FloatArray:
    """Share of ``draws`` (reps × m) above ``observed`` (m), ties (relative 1e-9) excluded."""
    ok = np.isfinite(draws)
    with np.errstate(invalid="ignore"):
        above = draws > observed * (1.0 + _TIE_TOL) + _TIE_TOL * np.finfo(float).tiny
    counts = (above & ok).sum(axis=0)
    total = ok.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(total > 0, counts / np.maximum(total, 1), np.nan)
    return np.where(np.isfinite(observed), out, np.nan)


@dataclass(frozen=True, eq=False)
class BootstrapTest:
    """A wild (cluster) bootstrap test of linear restrictions R b = r.

    Attributes
    ----------
    restrictions : tuple of str
        The restrictions, as text.
    statistic : float
        The original t (one restriction) or Wald F = W/q (several) under the CR1 / HC1
        covariance.
    p_value : float
        Symmetric bootstrap p-value: share of |t*| > |t̂| (of F* > F̂).
    draws : ndarray, shape (reps,)
        The bootstrap statistics t* (or F*).
    form : str
        ``"t"`` or ``"F"``.
    q : int
        Number of restrictions.
    impose_null : bool
        WCR (True: residuals of the restricted fit) or WCU.
    covariance : str
        The covariance of the statistic, in words.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.normal(size=60), "g": np.repeat(np.arange(15), 4)})
    >>> df["y"] = 0.2 * df.x + rng.normal(size=60)
    >>> test = ar.attnreg("y ~ x", df).bootstrap(cluster="g", seed=0, hypothesis="x = 0").test
    >>> test.name, test.form, test.draws.shape
    ('WCR', 't', (999,))
    >>> test.to_frame().columns.tolist()
    ['statistic', 'p.value', 'form', 'q', 'bootstrap']
    """

    restrictions: tuple[str, ...]
    statistic: float
    p_value: float
    draws: FloatArray
    form: str
    q: int
    impose_null: bool
    covariance: str

    @property
    def name(self) -> str:
        """``"WCR"`` or ``"WCU"`` (with clusters), ``"WR"`` or ``"WU"`` (without)."""
        c = "C" if self.covariance.startswith("CR1") else ""
        return f"W{c}{'R' if self.impose_null else 'U'}"

    def to_frame(self) -> pd.DataFrame:
        """The test as one row: ``statistic``, ``p.value``, ``form``, ``q``, ``bootstrap``."""
        return pd.DataFrame({"statistic": [self.statistic], "p.value": [self.p_value],
                             "form": [self.form], "q": [self.q], "bootstrap": [self.name]},
                            index=pd.Index([", ".join(self.restrictions)], name="hypothesis"))

    def figures(self) -> BootstrapTestResult:
        """The test as a section of a summary (numbers)."""
        return BootstrapTestResult(self.name, ", ".join(self.restrictions), self.impose_null,
                                   self.form, float(self.statistic), float(self.p_value),
                                   int(self.draws.size))

    def lines(self) -> list[str]:
        """The test in words (the report's footer)."""
        return render_figures.text(self.figures())[1:]

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def __repr__(self) -> str:
        return str(self)


@dataclass(frozen=True, eq=False)
class BootstrapResults:
    """The bootstrap of a linear fit (see :meth:`Bootstrap.bootstrap`). Immutable; pickles.

    Attributes
    ----------
    kind : str
        ``"wild"``, ``"pairs"`` or ``"residual"``.
    weights : str or None
        The wild weights (None for the other kinds).
    cluster : str or None
        The clustering variable (wild: the weights are drawn per cluster; pairs: clusters
        are drawn).
    n_clusters : int or None
    reps : int
        Replications made (2^G under full enumeration).
    reps_requested : int
    enumerated : bool
        Whether all 2^G Rademacher sign vectors were used (full enumeration).
    seed : int or None
    level : float
        Coverage of the intervals.
    method : str
        The fit's method.
    coef : Series, shape (K,)
        The fit's coefficients b̂.
    std_err_analytic : Series, shape (K,)
        The analytic standard errors the bootstrap t studentizes with (:attr:`se_type`).
    std_err : Series, shape (K,)
        Bootstrap standard errors: the standard deviation of the replications (ddof 1).
    replications : ndarray, shape (reps, K)
        The bootstrap coefficients b* (NaN columns for aliased coefficients; NaN rows for
        failed pairs refits).
    t_replications : ndarray, shape (reps, K)
        The bootstrap t statistics (b* − b̂) / se*.
    percentile : DataFrame, shape (K, 2)
        Percentile intervals (quantiles of b*, numpy's linear interpolation).
    studentized : DataFrame, shape (K, 2)
        Bootstrap-t intervals b̂ − q_{1−α/2}(t*) se, b̂ − q_{α/2}(t*) se.
    p_value : Series, shape (K,)
        Symmetric bootstrap-t p-values of b_j = 0 (null not imposed): share of
        abs(t*_j) > abs(b̂_j / se_j).
    test : BootstrapTest or None
        The test of ``hypothesis``.
    se_type : str
        The analytic standard error, in words.
    n_failed : int
        Pairs refits left out (singular resampled design).
    note : str
        What the bootstrap is conditional on (ridge, PCR), else empty.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.normal(size=80)})
    >>> df["y"] = 1 + 0.5 * df.x + rng.normal(size=80) * (1 + df.x.abs())
    >>> bs = ar.attnreg("y ~ x", df).bootstrap("pairs", reps=499, seed=3)
    >>> bs.replications.shape, bs.se_type
    ((499, 2), 'HC1 (heteroskedasticity-robust)')
    >>> bs.conf_int("percentile").columns.tolist()
    ['2.5 %', '97.5 %']
    >>> print(str(bs).splitlines()[1])
    Pairs bootstrap: 499 replications, seed 3
    """

    kind: str
    weights: str | None
    cluster: str | None
    n_clusters: int | None
    reps: int
    reps_requested: int
    enumerated: bool
    seed: int | None
    level: float
    method: str
    coef: pd.Series
    std_err_analytic: pd.Series
    std_err: pd.Series
    replications: FloatArray
    t_replications: FloatArray
    percentile: pd.DataFrame
    studentized: pd.DataFrame
    p_value: pd.Series
    test: BootstrapTest | None
    se_type: str
    n_failed: int = 0
    note: str = ""

    @property
    def names(self) -> list[str]:
        """Coefficient names."""
        return list(self.coef.index)

    def conf_int(self, kind: str = "studentized") -> pd.DataFrame:
        """The intervals at :attr:`level`: ``"studentized"`` (bootstrap-t) or ``"percentile"``."""
        if kind not in ("studentized", "percentile"):
            raise OptionError(f"kind must be 'studentized' or 'percentile', however: {kind=}")
        return (self.studentized if kind == "studentized" else self.percentile).copy()

    def to_frame(self) -> pd.DataFrame:
        """One row per coefficient, broom-style columns.

        ``estimate``, ``std.error`` (analytic), ``boot.std.error``, ``boot.p.value``,
        ``percentile.low``, ``percentile.high``, ``studentized.low``, ``studentized.high``.
        """
        return pd.DataFrame({
            "estimate": self.coef, "std.error": self.std_err_analytic,
            "boot.std.error": self.std_err, "boot.p.value": self.p_value,
            "percentile.low": self.percentile.iloc[:, 0],
            "percentile.high": self.percentile.iloc[:, 1],
            "studentized.low": self.studentized.iloc[:, 0],
            "studentized.high": self.studentized.iloc[:, 1]}, index=self.coef.index)

    def summary(self) -> Summary:
        """The report: estimates, analytic and bootstrap SEs and p-values, both intervals, the
        test."""
        setup = BootstrapSetup(self.kind, self.cluster, self.n_clusters, self.weights,
                               int(self.reps), bool(self.enumerated), self.seed, self.se_type,
                               int(self.n_failed), self.note)
        table = pd.DataFrame({"Estimate": self.coef, "Std. Error": self.std_err_analytic,
                              "Boot. SE": self.std_err, "Boot. p": self.p_value},
                             index=self.coef.index)
        lo, hi = self.percentile.columns
        ci = pd.DataFrame({f"Pct. {lo}": self.percentile.iloc[:, 0],
                           f"Pct. {hi}": self.percentile.iloc[:, 1],
                           f"Stud. {lo}": self.studentized.iloc[:, 0],
                           f"Stud. {hi}": self.studentized.iloc[:, 1]}, index=self.coef.index)
        test = () if self.test is None else (self.test.figures(),)
        return Summary("Bootstrap", (
            setup, Coefficients(table, stars=False, heading=False),
            IntervalLevel(float(self.level),
                          "intervals: percentile (Pct.) and bootstrap-t (Stud.)"),
            Coefficients(ci, stars=False, heading=False), *test))

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def to_latex(self) -> str:
        """The report's tables as LaTeX tabulars (:meth:`Summary.to_latex`)."""
        return self.summary().to_latex()

    def to_markdown(self) -> str:
        """The report as Markdown (:meth:`Summary.to_markdown`)."""
        return self.summary().to_markdown()


# ------------------------------------------------------------------------------ engines

def _c_scores(sp: Spectrum) -> FloatArray:
    return sp.sqrt_w / sp.sum_w if sp.intercept is not None else np.zeros(sp.n_obs)


def _z_blocks(sp: Spectrum) -> Any:
    """(lo, hi, Z[lo:hi]) with the score rows z_i = [c_i, U_i]."""
    c = _c_scores(sp)
    for lo, hi, U in sp.U.blocks():
        yield lo, hi, np.column_stack([c[lo:hi], U])


def _cluster_grams(sp: Spectrum, codes: IntArray, n_groups: int) -> FloatArray:
    """C_g = Σ_{i∈g} z_i z_i', shape (G, k, k)."""
    import scipy.sparse as sps

    k = 1 + sp.rank
    out = np.zeros((n_groups, k * k))
    step = max(1, _BLOCK_NUMBERS // (k * k))
    for lo, hi, Z in _z_blocks(sp):
        for a in range(0, hi - lo, step):
            b = min(a + step, hi - lo)
            outer = np.einsum("bi,bj->bij", Z[a:b], Z[a:b]).reshape(b - a, k * k)
            ind = sps.csr_matrix((np.ones(b - a), (codes[lo + a:lo + b], np.arange(b - a))),
                                 shape=(n_groups, b - a))
            out += ind @ outer
    return out.reshape(n_groups, k, k)


class _WildCluster:
    """Wild cluster bootstrap of the rows L (m × k) of the coefficient map, residuals u."""

    def __init__(self, sp: Spectrum, L: FloatArray, u: FloatArray, codes: IntArray,
                 n_groups: int, d: FloatArray, grams: FloatArray) -> None:
        self.L, self.G, self.m = L, n_groups, L.shape[0]
        self.S = group_score_sums(sp, u, codes, n_groups)  # (G, k)
        self.A = self.S @ L.T  # (G, m): the projected score sums l' S_g
        k = L.shape[1]
        self.T = np.einsum("al,glj->gaj", L, grams * d[None, None, :]).reshape(-1, k)

    def width(self) -> int:
        """Numbers held per replication."""
        return self.G * self.m + self.G

    def plain(self) -> FloatArray:
        """Σ_g (L S_g)(L S_g)', shape (m, m): the meat of the fit's own covariance."""
        return self.A.T @ self.A

    def run(self, V: FloatArray, full: bool) -> tuple[FloatArray, FloatArray]:
        """(L S'v, Σ_g (l' s*_g)²) for the rows v of V (B × G); (m, B) and (m, B) or (B, m, m)."""
        W = self.S.T @ V.T  # (k, B)
        num = self.L @ W
        sc = V.T[:, None, :] * self.A[:, :, None]
        sc -= (self.T @ W).reshape(self.G, self.m, -1)  # (G, m, B)
        if full:
            return num, np.einsum("gib,gjb->bij", sc, sc)
        return num, np.einsum("gib,gib->ib", sc, sc)


class _WildRows:
    """Wild bootstrap with each row its own cluster (heteroskedastic): row blocks."""

    def __init__(self, sp: Spectrum, L: FloatArray, u: FloatArray, d: FloatArray) -> None:
        self.sp, self.L, self.u, self.d, self.m = sp, L, u, d, L.shape[0]
        self.G = sp.n_obs
        meat = np.zeros((self.m, self.m))
        for lo, hi, Z in _z_blocks(sp):
            P = (Z @ L.T) * u[lo:hi, None]
            meat += P.T @ P
        self._plain = meat

    def width(self) -> int:
        return 2 * self.G + self.m * self.m

    def plain(self) -> FloatArray:
        return self._plain

    def run(self, V: FloatArray, full: bool) -> tuple[FloatArray, FloatArray]:
        k = self.L.shape[1]
        W = np.zeros((k, V.shape[0]))
        for lo, hi, Z in _z_blocks(self.sp):
            W += Z.T @ (self.u[lo:hi, None] * V[:, lo:hi].T)
        num = self.L @ W
        DW = self.d[:, None] * W
        var = np.zeros((V.shape[0], self.m, self.m)) if full else np.zeros((self.m, V.shape[0]))
        for lo, hi, Z in _z_blocks(self.sp):
            e = self.u[lo:hi, None] * V[:, lo:hi].T - Z @ DW  # refit residuals (rows, B)
            P = Z @ self.L.T  # (rows, m)
            if full:
                var += np.einsum("ia,ic,ib->bac", P, P, e * e)
            else:
                var += (P * P).T @ (e * e)
        return num, var


# ------------------------------------------------------------------------------ the mixin

def _check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise OptionError(f"{name} must be one of {', '.join(map(repr, choices))}, however: "
                          f"{name}={value!r}")
    return value


def _check_options(kind: Any, cluster: Any, reps: Any, weights: Any, seed: Any,
                   hypothesis: Any, impose_null: Any, level: Any, progress: Any,
                   rule: SpectralRule) -> tuple[str, str | None, int]:
    kind = _check_choice("kind", kind, BOOTSTRAP_KINDS)
    if not isinstance(reps, (int, np.integer)) or isinstance(reps, bool) or reps < 1:
        raise OptionError(f"reps must be a positive integer, however: reps={reps!r}")
    if weights is not None and kind != "wild":
        raise OptionError(f"weights applies to kind='wild' (the wild bootstrap's multipliers), "
                          f"however: kind={kind!r}, weights={weights!r}")
    if kind == "wild":
        weights = _check_choice("weights", "rademacher" if weights is None else weights,
                                WILD_WEIGHTS)
    if not (seed is None or isinstance(seed, np.random.Generator)
            or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0)):
        raise OptionError(f"seed must be None, a non-negative integer or a numpy Generator, "
                          f"however: seed={seed!r}")
    if not isinstance(impose_null, (bool, np.bool_)):
        raise OptionError(f"impose_null must be True or False, however: {impose_null=}")
    check_level(level)
    if not (isinstance(progress, bool) or callable(progress)):
        raise OptionError(f"progress must be True, False or a callable, however: {progress=}")
    if kind == "residual" and cluster is not None:
        raise OptionError("cluster does not apply to kind='residual' (it resamples residuals "
                          "across all rows, assuming iid errors); use kind='wild' or 'pairs' "
                          "with cluster=")
    method = rule.name
    if kind == "pairs" and not rule.least_squares:
        raise OptionError(f"kind='pairs' refits on resampled rows, which for {method} would "
                          "re-standardise the columns and re-select the penalty (method "
                          f"{method!r} has no exact hat values: it is penalised by "
                          f"{rule.tuning}); use kind='wild' or 'residual' (conditional on "
                          "lambda or k)")
    if hypothesis is not None:
        if kind != "wild":
            raise OptionError(f"hypothesis needs kind='wild' (the wild cluster bootstrap test), "
                              f"however: kind={kind!r}")
        if not (isinstance(hypothesis, str) or (isinstance(hypothesis, (list, tuple))
                                                and hypothesis
                                                and all(isinstance(h, str) for h in hypothesis))):
            raise OptionError(f"hypothesis must be text such as 'x1 = 0' or 'x1 = x2, x3 = 0' "
                              f"(or a list of such), however: {hypothesis!r}")
        if impose_null and not rule.least_squares:
            raise OptionError(f"impose_null=True needs the restricted fit, which {method} does "
                              "not define; use impose_null=False (WCU, conditional on lambda "
                              "or k)")
    return kind, weights, int(reps)


class Bootstrap(LinearFitContract):
    """The bootstrap of a linear fit (a mixin of ``LinearResults``)."""

    def bootstrap(self, kind: str = "wild", cluster: Any = None, reps: int = 999, *,
                  weights: str | None = None, seed: int | np.random.Generator | None = None,
                  hypothesis: str | Sequence[str] | None = None, impose_null: bool = True,
                  level: float = 0.95,
                  progress: bool | Callable[[int, int], Any] = False) -> BootstrapResults:
        """Bootstrap standard errors, intervals and the wild cluster bootstrap test.

        Parameters
        ----------
        kind : {"wild", "pairs", "residual"}
            Wild (multipliers on the residuals, per cluster with ``cluster=``), pairs (rows
            or clusters drawn with replacement, refitted; OLS only) or residual (residuals
            drawn with replacement; iid errors). The algebra is in
            :mod:`attnreg.linear.bootstrap`.
        cluster : str, array-like or Series, optional
            One clustering dimension, as for ``with_vcov("cluster", cluster=...)``: a column
            of the data, or ids per data row. Wild: one weight per cluster; pairs: clusters
            are drawn. Not for ``kind="residual"``.
        reps : int
            Replications (at least 1). With Rademacher weights and 2^G < reps all 2^G sign
            vectors are used instead (full enumeration, with an
            :class:`~attnreg.exceptions.InferenceWarning`), as ``boottest`` does.
        weights : {"rademacher", "webb", "mammen", "normal"}, optional
            The wild bootstrap's multipliers (default ``"rademacher"``; wild only).
        seed : int, numpy.random.Generator or None
            Seeds a :func:`numpy.random.default_rng`; the same seed gives the same result.
        hypothesis : str or list of str, optional
            Linear restrictions (``"x1 = 0"``, ``"x1 = x2, x3 = 0"``; the grammar of
            :func:`~attnreg.linear.hypotheses.parse_restrictions`) tested by the wild
            (cluster) bootstrap: the t statistic for one restriction, the Wald F = W/q for
            several, with the CR1 (HC1 without clusters) covariance recomputed in every
            replication; ``kind="wild"`` only.
        impose_null : bool
            Draw from the fit with the restrictions imposed (WCR, the default and
            ``boottest``'s) or from the unrestricted fit (WCU). Ridge and PCR: WCU only.
        level : float
            Coverage of the intervals.
        progress : bool or callable
            True shows a progress line on stderr; a callable receives (done, reps) after
            each block of replications. Quiet by default.

        Returns
        -------
        BootstrapResults
            Bootstrap SEs, percentile and studentized intervals, bootstrap-t p-values, the
            replications (reps × K), the test; ``.to_frame()``, prints as a report.

        Raises
        ------
        OptionError
            An invalid argument (named): unknown kind or weights, reps < 1, ``weights`` or
            ``hypothesis`` with a kind they do not apply to, ``cluster`` with the residual
            bootstrap, pairs for ridge/PCR, several clustering dimensions, a restriction on
            an aliased coefficient.
        DataError
            Fewer than one residual degree of freedom.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> import attnreg as ar
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame({"x": rng.normal(size=120), "firm": np.repeat(np.arange(12), 10)})
        >>> df["y"] = 1 + 0.3 * df.x + rng.normal(size=12)[df.firm] + rng.normal(size=120)
        >>> fit = ar.attnreg("y ~ x", data=df)
        >>> bs = fit.bootstrap("wild", cluster="firm", reps=999, seed=1, hypothesis="x = 0")
        >>> bs.reps, bs.n_clusters, bs.replications.shape
        (999, 12, (999, 2))
        >>> print(f"t = {bs.test.statistic:.3f}, WCR p = {bs.test.p_value:.3f}")
        t = 2.595, WCR p = 0.030
        >>> cl = fit.with_vcov("cluster", cluster="firm")
        >>> print(f"{bs.std_err_analytic['x']:.4f} {cl.std_err['x']:.4f}")  # CR1 = vcovCL
        0.1587 0.1587
        >>> bs.to_frame().columns[:4].tolist()
        ['estimate', 'std.error', 'boot.std.error', 'boot.p.value']
        >>> pairs = fit.bootstrap("pairs", cluster="firm", reps=199, seed=2)
        >>> print(f"{pairs.std_err['x']:.3f}")
        0.153
        """
        kind, weights, reps = _check_options(kind, cluster, reps, weights, seed, hypothesis,
                                             impose_null, level, progress, self.rule)
        if not self._df_ok:
            raise DataError("the bootstrap needs at least one residual degree of freedom "
                            f"(n - tr(H) = {self.df_resid:.3g})")
        codes, n_groups, cname = self._bootstrap_clusters(cluster)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        restr = (None if hypothesis is None else
                 self._bootstrap_restrictions(hypothesis))
        run = _Run(self, kind, weights, codes, n_groups, reps, rng, restr,
                   bool(impose_null), progress)
        return run.results(cname, None if isinstance(seed, np.random.Generator)
                           else (None if seed is None else int(seed)), float(level))

    def _bootstrap_clusters(self, cluster: Any) -> tuple[IntArray | None, int, str | None]:
        if cluster is None:
            return None, self.nobs, None
        ids = cluster_ids(self, cluster)
        if ids.n_dims != 1:
            raise OptionError(f"cluster: the bootstrap takes one clustering dimension, however "
                              f"cluster gives {ids.n_dims} ({', '.join(ids.names)})")
        return ids.codes[:, 0].copy(), ids.n_clusters[0], ids.names[0]

    def _bootstrap_restrictions(self, hypothesis: Any) -> tuple[FloatArray, FloatArray,
                                                                 list[str]]:
        R, r = parse_restrictions(self.names, hypothesis)
        aliased = [int(j) for j in self.spectrum.aliased]
        hit = [self.names[j] for j in aliased if np.any(R[:, j] != 0)]
        if hit:
            raise OptionError(f"hypothesis restricts aliased coefficient(s) {', '.join(hit)}: "
                              "they are not estimable, so no restriction on them can be tested")
        if np.linalg.matrix_rank(R / np.abs(R).max(axis=1, keepdims=True)) < R.shape[0]:
            raise OptionError("hypothesis: the restrictions are linearly dependent; drop the "
                              "redundant one(s)")
        labels = [format_restriction(self.names, R[i], float(r[i])) for i in range(R.shape[0])]
        return R, r, labels


class _Run:
    """One bootstrap: the prepared maps, the replications block by block, the results."""

    def __init__(self, fit: Any, kind: str, weights: str | None, codes: IntArray | None,
                 n_groups: int, reps: int, rng: np.random.Generator,
                 restr: tuple[FloatArray, FloatArray, list[str]] | None, impose_null: bool,
                 progress: bool | Callable[[int, int], Any]) -> None:
        self.fit, self.kind, self.weights, self.codes, self.G = fit, kind, weights, codes, n_groups
        self.rng, self.restr, self.impose_null, self.progress = rng, restr, impose_null, progress
        self.reps_requested = reps
        sp: Spectrum = fit.spectrum
        self.sp = sp
        K = len(fit.names)
        self.K = K
        Mz, E = coef_map(sp, fit.filtered.f, K)
        self.Mz, self.E = Mz, np.asarray(E, dtype=np.int64)
        self.d = np.r_[sp.sum_w if sp.intercept is not None else 0.0, fit.filtered.f]
        self.est = np.asarray(fit._estimable, dtype=np.int64)
        self.dead = np.setdiff1d(np.arange(K), self.est)
        self.bz = np.ldexp(fit._coef_zeroed, -self.E)
        self.u = np.asarray(fit._resid_ws, dtype=np.float64)
        n, edf = sp.n_obs, fit.edf
        df = n - edf
        if codes is None:
            self.factor = n / df
        else:
            self.factor = n_groups / (n_groups - 1.0) * (n - 1.0) / df
        self.enumerated = False
        if kind == "wild":
            if weights == "rademacher" and n_groups < 63 and 2 ** n_groups < reps:
                self.enumerated = True
                reps = 2 ** n_groups
                warn_user(f"with {n_groups} {'clusters' if codes is not None else 'rows'} the "
                          f"Rademacher weights have only 2^{n_groups} = {reps} distinct draws, "
                          f"fewer than reps: all {reps} sign vectors are used (full "
                          "enumeration)", InferenceWarning)
            elif weights in ("webb", "mammen"):
                points = 6 if weights == "webb" else 2
                if n_groups * math.log(points) < math.log(reps):
                    warn_user(f"with {n_groups} clusters the {weights} weights have only "
                              f"{points}^{n_groups} = {points ** n_groups} distinct draws, "
                              f"fewer than reps = {reps}: draws repeat", InferenceWarning)
        self.reps = reps

    # -------------------------------------------------------------- labels
    def se_type(self) -> str:
        if self.kind == "residual":
            return "classical standard errors (iid errors)"
        if self.codes is None:
            return "HC1 (heteroskedasticity-robust)"
        return f"CR1 (vcovCL's HC1) by cluster, {self.G} clusters"

    def note(self) -> str:
        fit, rule = self.fit, self.fit.rule
        if rule.least_squares:
            return ""
        value = getattr(fit, rule.tuning)
        if rule.counts:
            return (f"Conditional on {rule.parameter} = {value} components ({rule.label}): "
                    "b* = b + M e*.")
        return f"Conditional on {rule.parameter} = {value:.5g} ({rule.label}): b* = b + M e*."

    # -------------------------------------------------------------- blocks
    def _blocks(self, width: int) -> Any:
        step = max(1, _BLOCK_NUMBERS // max(width, 1))
        enabled = self.progress is True
        with Progress(self.reps, "bootstrap", enabled=enabled) as bar:
            for lo in range(0, self.reps, step):
                hi = min(lo + step, self.reps)
                yield lo, hi
                bar.update(hi)
                if callable(self.progress) and not isinstance(self.progress, bool):
                    self.progress(hi, self.reps)

    def _draws(self, lo: int, hi: int) -> FloatArray:
        if self.enumerated:
            return enumerate_signs(self.G, lo, hi)
        V = draw_weights(self.rng, self.weights or "rademacher", hi - lo, self.G)
        return V

    def _wild_engine(self, L: FloatArray, u: FloatArray,
                     grams: FloatArray | None) -> _WildCluster | _WildRows:
        if self.codes is None:
            return _WildRows(self.sp, L, u, self.d)
        assert grams is not None
        return _WildCluster(self.sp, L, u, self.codes, self.G, self.d, grams)

    # -------------------------------------------------------------- the kinds
    def wild(self) -> tuple[FloatArray, FloatArray, FloatArray, Any]:
        """(δz (reps × K), var_z (reps × K), plain var_z (K), test draws or None)."""
        grams = None if self.codes is None else _cluster_grams(self.sp, self.codes, self.G)
        coef_eng = self._wild_engine(self.Mz, self.u, grams)
        test = self._test_setup(grams) if self.restr is not None else None
        width = coef_eng.width() + (test[0].width() if test is not None else 0)
        delta = np.empty((self.reps, self.K))
        var = np.empty((self.reps, self.K))
        q = 0 if test is None else test[1].shape[0]
        stats_ = np.empty(self.reps) if test is not None else None
        for lo, hi in self._blocks(width + self.G):
            V = self._draws(lo, hi)
            num, v = coef_eng.run(V, full=False)
            delta[lo:hi], var[lo:hi] = num.T, v.T
            if test is not None:
                eng = test[0]
                tnum, tvar = eng.run(V, full=q > 1)
                assert stats_ is not None
                stats_[lo:hi] = self._statistic(tnum, tvar)
        plain = np.diag(coef_eng.plain())
        out_test = None
        if test is not None:
            L = test[1]
            obs_eng = self._wild_engine(L, self.u, grams)  # the original fit's residuals
            R, r, _ = self.restr  # type: ignore[misc]
            Rz, rz = self._scaled_restrictions(R, r)
            num0 = Rz @ self.bz - rz  # R b̂ − r in the rescaled units
            stat0 = self._statistic(num0[:, None], obs_eng.plain()[None] if q > 1
                                    else np.diag(obs_eng.plain())[:, None])
            out_test = (float(stat0[0]), stats_)
        return delta, var, plain, out_test

    def _test_setup(self, grams: FloatArray | None) -> tuple[Any, FloatArray, FloatArray]:
        R, r, _ = self.restr  # type: ignore[misc]
        Rz, rz = self._scaled_restrictions(R, r)
        L = Rz @ self.Mz  # (q, k)
        u = self.u
        if self.impose_null:
            u = self._restricted_residuals(L, Rz @ self.bz - rz)
        return self._wild_engine(L, u, grams), L, u

    def _scaled_restrictions(self, R: FloatArray, r: FloatArray) -> tuple[FloatArray, FloatArray]:
        """R and r in the coefficients' rescaled units, each row divided by a power of two."""
        E = self.E
        with np.errstate(divide="ignore"):
            mag = np.where(R != 0, np.frexp(np.abs(R))[1] + E[None, :], np.iinfo(np.int64).min)
        F = mag.max(axis=1)
        self._F = F
        return np.ldexp(R, E[None, :] - F[:, None]), np.ldexp(r, -F)

    def _restricted_residuals(self, L: FloatArray, excess: FloatArray) -> FloatArray:
        """ũ = û + Z L'λ: residuals of the least-squares fit with L θ = r imposed."""
        sp = self.sp
        gamma_inv = np.r_[1.0 / sp.sum_w if sp.intercept is not None else 0.0,
                          np.ones(sp.rank)]
        lam = np.linalg.solve((L * gamma_inv) @ L.T, excess)
        shift = gamma_inv * (L.T @ lam) * self.d  # = L'λ on the active components
        u = self.u.copy()
        for lo, hi, Z in _z_blocks(sp):
            u[lo:hi] += Z @ shift
        return u

    def _statistic(self, num: FloatArray, var: FloatArray) -> FloatArray:
        """t = num / sqrt(factor var) (one restriction) or F = num' (factor var)⁻¹ num / q."""
        q = num.shape[0]
        if q == 1:
            with np.errstate(invalid="ignore", divide="ignore"):
                return np.asarray(num[0] / np.sqrt(self.factor * var[0]))
        mats = self.factor * var
        out = np.full(num.shape[1], np.nan)
        try:
            sol = np.linalg.solve(mats, num.T[:, :, None])[:, :, 0]
            out = np.einsum("bi,bi->b", num.T, sol) / q
        except np.linalg.LinAlgError:
            for b in range(num.shape[1]):  # only where a replication's covariance is singular
                with contextlib.suppress(np.linalg.LinAlgError):
                    out[b] = num[:, b] @ np.linalg.solve(mats[b], num[:, b]) / q
        return out

    def residual(self) -> tuple[FloatArray, FloatArray, FloatArray]:
        sp, n = self.sp, self.sp.n_obs
        df = n - self.fit.edf
        base = (self.u - self.u.mean()) * math.sqrt(n / df)
        cls = np.einsum("jl,l,jl->j", self.Mz,
                        np.r_[1.0 / sp.sum_w if sp.intercept is not None else 0.0,
                              np.ones(sp.rank)], self.Mz)  # diag of Mz Γ⁻¹ Mz'
        delta = np.empty((self.reps, self.K))
        var = np.empty((self.reps, self.K))
        k = 1 + sp.rank
        for lo, hi in self._blocks(3 * n):
            e = base[draw_rows(self.rng, hi - lo, n)]  # (B, n)
            W = np.zeros((k, hi - lo))
            for a, b, Z in _z_blocks(sp):
                W += Z.T @ e[:, a:b].T
            DW = self.d[:, None] * W
            rss = np.zeros(hi - lo)
            for a, b, Z in _z_blocks(sp):
                res = e[:, a:b].T - Z @ DW
                rss += np.einsum("ib,ib->b", res, res)
            delta[lo:hi] = (self.Mz @ W).T
            var[lo:hi] = (rss / df)[:, None] * cls[None, :]
        plain = self.fit._rss_s / df * cls
        return delta, var, plain

    def pairs(self) -> tuple[FloatArray, FloatArray, FloatArray, int]:
        """Refits on drawn rows (or clusters) as frequency weights, all of a block at once.

        In the orthonormal scores Tn = [sqrt(w)/sqrt(Σw), U] (θn with bz = Mn θn) a refit is
        θn = (Tn' N Tn)⁻¹ Tn' N ỹ with N the counts. Clusters: everything comes from the
        per-cluster sums C_g = Σ Tn_i Tn_i' and t_g = Σ Tn_i ỹ_i (O(G k²) per replication;
        the refit's cluster scores are t_g − C_g θn). Rows: the products Tn_i Tn_i' (upper
        triangle, kept when they fit in 2**24 numbers) weighted by the counts.
        """
        sp, n = self.sp, self.sp.n_obs
        act = np.flatnonzero(self.d > 0)
        ka = act.size
        norm = np.r_[math.sqrt(sp.sum_w) if sp.intercept is not None else 0.0,
                     np.ones(sp.rank)][act]
        Mn = self.Mz[:, act] / norm[None, :]
        y = sp.sqrt_w * sp.y
        iu, il = np.triu_indices(ka)
        n_pack = iu.size
        clustered = self.codes is not None
        grams = None
        if clustered:
            assert self.codes is not None
            scale = np.outer(norm, norm)
            grams = _cluster_grams(sp, self.codes, self.G)
            C = grams[:, act][:, :, act] * scale[None]
            ty = group_score_sums(sp, y, self.codes, self.G)[:, act] * norm[None, :]
            C_pack = C[:, iu, il]
            sizes = np.bincount(self.codes, minlength=self.G).astype(np.float64)
            width = self.G * (ka + 2) + 4 * ka * ka
        else:
            def tn_blocks() -> Any:
                for lo, hi, Z in _z_blocks(sp):
                    yield lo, hi, Z[:, act] * norm[None, :]

            cached = n * n_pack <= 1 << 24
            if cached:
                T_all = np.vstack([t for _, _, t in tn_blocks()]) if n else np.zeros((0, ka))
                outer_all = T_all[:, iu] * T_all[:, il]

            def products() -> Any:
                if cached:
                    yield 0, n, T_all, outer_all
                    return
                for lo, hi, T in tn_blocks():
                    yield lo, hi, T, T[:, iu] * T[:, il]

            width = 3 * n + 4 * ka * ka

        def unpack(packed: FloatArray) -> FloatArray:
            full = np.empty((packed.shape[0], ka, ka))
            full[:, iu, il] = packed
            full[:, il, iu] = packed
            return full

        delta = np.full((self.reps, self.K), np.nan)
        var = np.full((self.reps, self.K), np.nan)
        failed = 0
        for lo, hi in self._blocks(width):
            B = hi - lo
            m = self.G if clustered else n
            idx = draw_rows(self.rng, B, m)
            flat = (idx + m * np.arange(B)[:, None]).ravel()
            cnt = np.bincount(flat, minlength=B * m).reshape(B, m).astype(np.float64)
            if clustered:
                gram, rhs = unpack(cnt @ C_pack), cnt @ ty
            else:
                gram_p, rhs = np.zeros((B, n_pack)), np.zeros((B, ka))
                for a, b, T, outer in products():
                    gram_p += cnt[:, a:b] @ outer
                    rhs += cnt[:, a:b] @ (T * y[a:b, None])
                gram = unpack(gram_p)
            lam, vec = np.linalg.eigh(gram)
            good = lam[:, 0] > lam[:, -1] * 1e-10
            failed += int((~good).sum())
            inv = np.where(good[:, None], 1.0 / np.where(good[:, None], lam, 1.0), 0.0)
            ginv = np.einsum("bij,bj,bkj->bik", vec, inv, vec)
            theta = np.einsum("bij,bj->bi", ginv, rhs)
            if clustered:
                s = ty[None] - np.einsum("gac,bc->bga", C, theta)  # the refits' cluster scores
                meat = np.einsum("bg,bga,bgc->bac", cnt, s, s)
            else:
                meat_p = np.zeros((B, n_pack))
                for a, b, T, outer in products():
                    r = y[a:b, None] - T @ theta.T  # the refits' residuals (rows, B)
                    meat_p += (cnt[:, a:b] * (r * r).T) @ outer
                meat = unpack(meat_p)
            Lb = np.einsum("ja,bac->bjc", Mn, ginv)  # (B, K, ka)
            v = np.einsum("bja,bac,bjc->bj", Lb, meat, Lb)
            n_b = cnt @ sizes if clustered else cnt.sum(1)
            fac = (self.G / (self.G - 1.0) * (n_b - 1.0) / (n_b - self.fit.edf) if clustered
                   else n_b / (n_b - self.fit.edf))
            d = (theta @ Mn.T) - self.bz[None, :]
            d[~good] = np.nan
            v[~good] = np.nan
            delta[lo:hi], var[lo:hi] = d, v * fac[:, None] / self.factor
        if failed:
            warn_user(f"{failed} of {self.reps} pairs bootstrap replications have a singular "
                      "resampled design (a column without variation in the drawn rows) and "
                      "are left out", InferenceWarning)
        plain_eng = self._wild_engine(self.Mz, self.u, grams)  # the fit's own HC1 / CR1
        return delta, var, np.diag(plain_eng.plain()), failed

    # -------------------------------------------------------------- assembly
    def results(self, cname: str | None, seed: int | None, level: float) -> BootstrapResults:
        fit, K, E = self.fit, self.K, self.E
        test_out = None
        failed = 0
        if self.kind == "wild":
            delta, var, plain, test_out = self.wild()
            factor = self.factor
        elif self.kind == "residual":
            delta, var, plain = self.residual()
            factor = 1.0
        else:
            delta, var, plain, failed = self.pairs()
            factor = self.factor
        with np.errstate(invalid="ignore", divide="ignore"):
            se_z = np.sqrt(factor * plain)
            t_rep = delta / np.sqrt(factor * var)
        t_rep[:, self.dead] = np.nan
        coef = fit.coef.to_numpy()
        with np.errstate(over="ignore", invalid="ignore"):
            reps_b = coef[None, :] + np.ldexp(delta, E[None, :])
            se = np.ldexp(se_z, E)
        reps_b[:, self.dead] = np.nan
        se[self.dead] = np.nan
        names = fit.names
        idx = pd.Index(names)
        a = (1.0 - level) / 2.0
        cols = [f"{100 * a:.3g} %", f"{100 * (1 - a):.3g} %"]
        valid = np.isfinite(reps_b[:, self.est]).all(axis=1) if self.est.size else np.ones(
            self.reps, bool)
        ok = reps_b[valid]
        tok = t_rep[valid]
        with np.errstate(invalid="ignore"):
            # from b* − b̂ in the rescaled units: no square leaves float64 at any data scale
            boot_se = (np.ldexp(delta[valid].std(axis=0, ddof=1), E) if ok.shape[0] > 1
                       else np.full(K, np.nan))
            boot_se[self.dead] = np.nan
            pct = (np.quantile(ok, [a, 1 - a], axis=0) if ok.shape[0]
                   else np.full((2, K), np.nan))
            tq = (np.quantile(tok, [a, 1 - a], axis=0) if tok.shape[0]
                  else np.full((2, K), np.nan))
        pct[:, self.dead] = np.nan
        tq[:, self.dead] = np.nan
        stud = np.vstack([coef - tq[1] * se, coef - tq[0] * se])
        with np.errstate(invalid="ignore", divide="ignore"):
            t_obs = np.abs(coef / se)
        p = _tail_share(np.abs(tok), t_obs)
        test = None
        if test_out is not None:
            stat0, draws = test_out
            q = self.restr[0].shape[0]  # type: ignore[index]
            form = "t" if q == 1 else "F"
            if q == 1:
                pv = float(_tail_share(np.abs(draws)[:, None], np.array([abs(stat0)]))[0])
            else:
                pv = float(_tail_share(draws[:, None], np.array([stat0]))[0])
            test = BootstrapTest(restrictions=tuple(self.restr[2]),  # type: ignore[index]
                                 statistic=stat0, p_value=pv, draws=draws, form=form, q=q,
                                 impose_null=self.impose_null, covariance=self.se_type())
        return BootstrapResults(
            kind=self.kind, weights=self.weights, cluster=cname,
            n_clusters=self.G if self.codes is not None else None, reps=self.reps,
            reps_requested=self.reps_requested, enumerated=self.enumerated, seed=seed,
            level=level, method=fit.method, coef=fit.coef.copy(),
            std_err_analytic=pd.Series(se, index=idx, name="std_err"),
            std_err=pd.Series(boot_se, index=idx, name="boot_std_err"),
            replications=reps_b, t_replications=t_rep,
            percentile=pd.DataFrame(pct.T, index=idx, columns=cols),
            studentized=pd.DataFrame(stud.T, index=idx, columns=cols),
            p_value=pd.Series(p, index=idx, name="boot_p_value"), test=test,
            se_type=self.se_type().replace("by cluster", f"by {cname}") if cname else
            self.se_type(), n_failed=failed, note=self.note())

