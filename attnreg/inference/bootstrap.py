"""The bootstrap of a linear fit: wild (cluster), pairs and residual, vectorised over replications.

:class:`Bootstrap` is a mixin of :class:`~attnreg.linear.results.LinearResults`; its
:meth:`~Bootstrap.bootstrap` returns a :class:`BootstrapResults` with bootstrap standard
errors, percentile and studentized (bootstrap-t) intervals, the replications, and for a
hypothesis the wild cluster bootstrap p-value (WCR, or WCU with ``impose_null=False``) of
Cameron, Gelbach and Miller (2008), as Stata's ``boottest`` and the ``wildboottest`` package.

The algebra. Every spectral fit is linear in the weighted response ỹ = sqrt(w) y
(:mod:`attnreg.inference.vcov.registry`): with the scores z_i = [c_i, U_i] (c = sqrt(w)/Σw, U the
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

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import DataError, OptionError
from attnreg.inference.bootstrap_draws import WILD_WEIGHTS
from attnreg.inference.bootstrap_results import BootstrapResults
from attnreg.inference.bootstrap_run import BootstrapRun
from attnreg.inference.contract import LinearFitContract
from attnreg.inference.restrictions import format_restriction, parse_restrictions
from attnreg.inference.tstats import check_level
from attnreg.inference.vcov.cluster import cluster_ids

if TYPE_CHECKING:
    from attnreg.linear.rules import SpectralRule

__all__ = ["BOOTSTRAP_KINDS", "Bootstrap"]

#: the ``kind`` choices of :meth:`Bootstrap.bootstrap`
BOOTSTRAP_KINDS = ("wild", "pairs", "residual")


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
            :mod:`attnreg.inference.bootstrap`.
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
            :func:`~attnreg.inference.restrictions.parse_restrictions`) tested by the wild
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
        run = BootstrapRun(self, kind, weights, codes, n_groups, reps, rng, restr,
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

