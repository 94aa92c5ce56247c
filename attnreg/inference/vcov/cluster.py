"""Cluster-robust covariances: one-way and multi-way (CGM), CR2 (Bell–McCaffrey), Driscoll–Kraay.

All of them fit the spectral structure of :mod:`attnreg.inference.vcov.registry`: the covariance is
M [c U]' Σ [c U] M', and a cluster meat is Σ_g s_g s_g' with s_g = Σ_{i∈g} v_i [c_i, U_i]
the sum of the scores of cluster g (v the weighted residuals, adjusted for CR2). Score sums
are products of a sparse cluster indicator with the row blocks of U: no loop over rows or
clusters in Python, and nothing n_obs × n_obs.

- ``"cluster"``, ``type="HC1"`` (default) or ``"HC0"``: sandwich's ``vcovCL``. Each
  cluster dimension (and, for multi-way clustering, each intersection of dimensions, with
  the sign (−1)^(|S|+1) of Cameron, Gelbach and Miller) is multiplied by G_S/(G_S − 1)
  (``cadjust=True``, as sandwich), and HC1 multiplies the whole by (n − 1)/(n − K), with
  n − K the residual df (n − tr(H) for ridge and PCR). A multi-way matrix that is not
  positive semi-definite has its negative eigenvalues set to zero (``fix=True``, as
  ``vcovCL(fix = TRUE)``; on the coefficients' own scale, as sandwich).
- ``type="CR2"``: ``clubSandwich::vcovCR(type = "CR2")``. The residuals of cluster g are
  multiplied by G_g^(-1/2), G_g = [(I − H) Θ (I − H)']_gg with the working model Θ = I on
  the response's scale (clubSandwich's target for ``lm``, with or without weights; without
  weights and for OLS G_g = I − H_gg); computed in :mod:`attnreg.inference.vcov.cr2`. ``cadjust``
  does not apply to it (clubSandwich has no G/(G − 1) factor) and is refused. An estimator
  whose working model is the inverse of its weights (clubSandwich's ``inverse_var = TRUE``:
  a glm) hands over the working variances as ``working_variance=`` (one per row;
  :mod:`attnreg.inference.vcov.cr2_target`).
- ``"DK"`` (``"driscoll_kraay"``): ``plm::vcovSCC`` — the Newey–West (Bartlett) long-run
  covariance of the per-period score sums, periods in sorted order, default lag
  floor(T^(1/4)) with T the number of periods; ``type="HC0"`` (default), ``"HC1"``
  (n/(n − K)) or ``"sss"`` (T/(T − 1) · (n − 1)/(n − K)).

t and F use G − 1 degrees of freedom (the smallest G − 1 over the dimensions for multi-way
clustering, as fixest) unless ``df="residual"``, or, with ``type="CR2"``,
``df="satterthwaite"``: clubSandwich's Satterthwaite df per coefficient and HTZ Wald tests
(:mod:`attnreg.inference.vcov.satterthwaite`); Driscoll–Kraay uses the residual df, as
``lmtest::coeftest`` on plm. For ridge and PCR every covariance is conditional on the
chosen λ or k.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.linalg as sla

from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.exceptions import InferenceWarning, OptionError
from attnreg.inference.vcov.cluster_columns import ClusterCounts, column_names
from attnreg.inference.vcov.cluster_ids import (
    ClusterIds,
    check_cluster_argument,
    cluster_codes,
    cluster_ids,
    factorize_ids,
)
from attnreg.inference.vcov.registry import (
    CovarianceEstimator,
    MiddleInputs,
    VcovSpec,
    check_lags,
    register_vcov,
)
from attnreg.inference.vcov.cr2_target import WorkingVariances, cr2_target_residuals
from attnreg.inference.vcov.scorestats import ScoreNeeds, ScoreStats, group_score_sums, subsets

if TYPE_CHECKING:
    from attnreg.linear.spectral import Spectrum

#: ``ClusterIds`` and the functions that resolve ids are in :mod:`attnreg.inference.vcov.cluster_ids`
#: (imported here for the callers that know them from this module).
__all__ = ["CLUSTER_TYPES", "DK_TYPES", "ClusterIds", "check_cluster_argument", "cluster_codes",
           "cluster_ids", "factorize_ids", "group_score_sums", "psd_fix", "wald_from_vcov"]

#: Small-sample types of ``with_vcov("cluster", type=...)``.
CLUSTER_TYPES = ("HC1", "HC0", "CR2")
#: Small-sample types of ``with_vcov("DK", type=...)`` (plm's names).
DK_TYPES = ("HC0", "HC1", "sss")

_DF_CHOICES = ("cluster", "residual", "satterthwaite")


def _check_choice(name: str, value: Any, choices: Iterable[str]) -> str:
    choices = tuple(choices)
    if not isinstance(value, str) or value not in choices:
        raise OptionError(f"{name} must be one of {', '.join(map(repr, choices))}, however: "
                          f"{name}={value!r}")
    return value


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise OptionError(f"{name} must be True or False, however: {name}={value!r}")
    return bool(value)


def _working_variance(value: Any, kind: str, df: str) -> dict[str, WorkingVariances]:
    """``{"working_variance": θ}`` when given (CR2 only, without Satterthwaite df), else {}."""
    if value is None:
        return {}
    if kind != "CR2" or df == "satterthwaite":
        raise OptionError("working_variance (an inverse-variance working model, as "
                          "clubSandwich's vcovCR of a glm) applies to type='CR2' with "
                          f"df='cluster' or 'residual', however: type={kind!r}, df={df!r}")
    return {"working_variance": WorkingVariances.check(value)}


def _join(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


class _Cluster(CovarianceEstimator):
    """Cluster-robust (one-way and multi-way) covariances: sandwich's vcovCL, clubSandwich CR2."""

    name = "cluster"
    option_names = ("cluster", "type", "cadjust", "df", "fix", "working_variance")
    needs_hat = False  # CR2's adjustment uses the blocks of H, from the filter factors

    def check(self, options: dict[str, Any]) -> dict[str, Any]:
        options = super().check(options)
        check_cluster_argument(options.get("cluster"))
        kind = _check_choice("type", options.get("type") or "HC1", CLUSTER_TYPES)
        if kind == "CR2" and options.get("cadjust") is not None:
            raise OptionError(
                "cadjust applies to type='HC1' and 'HC0' (sandwich's G/(G - 1) factor); "
                "type='CR2' is clubSandwich's vcovCR, whose small-sample correction is the "
                f"adjustment of each cluster's residuals, with no such factor, however: "
                f"cadjust={options['cadjust']!r}; drop cadjust=")
        df = _check_choice("df", options.get("df") or "cluster", _DF_CHOICES)
        if df == "satterthwaite" and kind != "CR2":
            raise OptionError(
                "df='satterthwaite' needs type='CR2' (clubSandwich's coef_test(test = "
                f"'Satterthwaite') and Wald_test(test = 'HTZ')), however: type={kind!r}")
        checked = {"cluster": options["cluster"], "type": kind,
                   "cadjust": _check_bool("cadjust", options.get("cadjust", True)),
                   "df": df, "fix": _check_bool("fix", options.get("fix", True))}
        return {**checked, **_working_variance(options.get("working_variance"), kind, df)}

    def bind(self, options: dict[str, Any], *, n_obs: int | None = None,
             design: Any = None) -> VcovSpec:
        if design is None:
            raise OptionError("vcov 'cluster' needs the fit's design to resolve its ids")
        ids = cluster_ids(design, options["cluster"])
        if options["type"] == "CR2" and ids.n_dims > 1:
            raise OptionError(f"type='CR2' is one-way only (as clubSandwich), however cluster "
                              f"gives {ids.n_dims} dimensions ({', '.join(ids.names)})")
        bound = {**options, "cluster": ids}
        return VcovSpec(self.name, options=tuple(sorted(bound.items())))

    def middle(self, sp: Spectrum, spec: VcovSpec, inputs: MiddleInputs) -> FloatArray:
        if spec.option("type") != "CR2":
            return super().middle(sp, spec, inputs)
        from attnreg.inference.vcov.cr2 import cr2_residuals  # (cr2 imports this module)

        ids: ClusterIds = spec.option("cluster")
        f = np.ones(sp.rank) if inputs.f is None else inputs.f
        G = ids.n_clusters[0]
        theta = spec.option("working_variance")
        v = (cr2_residuals(sp, inputs.resid_w, f, ids.codes[:, 0], G) if theta is None else
             cr2_target_residuals(sp, inputs.resid_w, f, ids.codes[:, 0], G, theta))
        S = group_score_sums(sp, v, ids.codes[:, 0], G)
        return S.T @ S

    streamed_refusal = ("type='CR2' needs each cluster's block of the hat matrix, which a "
                        "chunked fit does not form; use type='HC1' or 'HC0'")

    def bind_streamed(self, options: dict[str, Any], *, n_obs: int | None) -> VcovSpec:
        bound = {**options, "cluster": column_names(options["cluster"])}
        return VcovSpec(self.name, options=tuple(sorted(bound.items())))

    def bind_stats(self, spec: VcovSpec, stats: ScoreStats) -> VcovSpec:
        names = spec.option("cluster")
        counts = ClusterCounts(names, tuple(S.shape[0] for S in stats.sums[:len(names)]))
        bound = {**dict(spec.options), "cluster": counts}
        return VcovSpec(self.name, options=tuple(sorted(bound.items())))

    def score_needs(self, spec: VcovSpec) -> ScoreNeeds | None:
        """Score sums per cluster of each intersection of the dimensions (CR2: None)."""
        if spec.option("type") == "CR2":
            return None
        keys = spec.option("cluster")
        return ScoreNeeds(groups=subsets(len(keys.names) if hasattr(keys, "names")
                                         else len(keys)), keys=keys)

    def middle_from_scores(self, spec: VcovSpec, stats: ScoreStats) -> FloatArray:
        """Σ_S (−1)^(|S|+1) a_S Σ_g s_g s_g' over the intersections S (CGM), a_S =
        G_S/(G_S − 1) with ``cadjust``; HC1 times (n − 1)/df_resid."""
        k = 1 + stats.rank
        meat = np.zeros((k, k))
        for dims, S in zip(self.score_needs(spec).groups, stats.sums, strict=True):  # type: ignore[union-attr]
            n_groups = S.shape[0]
            adj = n_groups / (n_groups - 1.0) if spec.option("cadjust") and n_groups > 1 else 1.0
            meat += (-1) ** (len(dims) + 1) * adj * (S.T @ S)
        if spec.option("type") == "HC1":
            df = stats.df_resid
            meat *= (stats.n_obs - 1.0) / df if df > 0 else np.nan
        return meat

    def adjust_vcov(self, spec: VcovSpec, Vz: FloatArray, E: IntArray) -> FloatArray:
        ids: ClusterIds = spec.option("cluster")
        if ids.n_dims == 1 or not spec.option("fix"):
            return Vz
        return psd_fix(Vz, E)

    def label(self, spec: VcovSpec) -> str:
        ids: ClusterIds = spec.option("cluster")
        ways = {1: "", 2: ", two-way"}.get(ids.n_dims, f", {ids.n_dims}-way")
        counts = _join([str(g) for g in ids.n_clusters])
        df = {"cluster": f"t and F on {self.df_inference(spec, np.nan):g} df",
              "residual": "t and F on the residual df",
              "satterthwaite": "t on Satterthwaite df, F: HTZ"}[spec.option("df")]
        return (f"cluster-robust ({spec.option('type')}{ways}) by {_join(list(ids.names))}, "
                f"{counts} clusters; {df}")

    def df_inference(self, spec: VcovSpec, df_resid: float) -> float:
        if spec.option("df") == "residual":
            return df_resid
        if spec.option("df") == "satterthwaite":
            return float("nan")  # one per coefficient or restriction set: see satterthwaite
        return float(min(spec.option("cluster").n_clusters) - 1)


def psd_fix(Vz: FloatArray, E: IntArray) -> FloatArray:
    """V_z with the negative eigenvalues of V = diag(2^E) V_z diag(2^E) set to 0 (sandwich's
    ``fix=TRUE``, on the coefficients' own scale); NaN rows (aliased) are left out. Where V
    itself is not finite at the data's scale the eigenvalues of V_z are clipped instead."""
    ok = np.flatnonzero(np.isfinite(np.diag(Vz)))
    if ok.size == 0:
        return Vz
    block = Vz[np.ix_(ok, ok)]
    shift = E[ok][:, None] + E[ok][None, :]
    with np.errstate(over="ignore", under="ignore"):
        V = np.ldexp(block, shift)
    on_scale = bool(np.isfinite(V).all())
    target = V if on_scale else block
    vals, vecs = np.linalg.eigh(target)
    if vals.min() >= 0:
        return Vz
    fixed = (vecs * np.maximum(vals, 0.0)) @ vecs.T
    if on_scale:
        fixed = np.ldexp(fixed, -shift)
    out = Vz.copy()
    out[np.ix_(ok, ok)] = (fixed + fixed.T) / 2.0
    return out


class _DriscollKraay(CovarianceEstimator):
    """Driscoll–Kraay: HAC of the cross-sectional score sums per period (plm's vcovSCC)."""

    name, aliases = "DK", ("driscoll_kraay",)
    option_names = ("time", "maxlags", "type")
    needs_hat = False

    def check(self, options: dict[str, Any]) -> dict[str, Any]:
        options = super().check(options)
        if options.get("time") is None:
            raise OptionError("vcov 'DK' needs time=: the column (or ids) of the time period")
        check_cluster_argument(options["time"], "time")
        if options.get("maxlags") is not None:
            check_lags(options["maxlags"])
        return {"time": options["time"], "maxlags": options.get("maxlags"),
                "type": _check_choice("type", options.get("type") or "HC0", DK_TYPES)}

    def bind(self, options: dict[str, Any], *, n_obs: int | None = None,
             design: Any = None) -> VcovSpec:
        if design is None:
            raise OptionError("vcov 'DK' needs the fit's design to resolve its periods")
        ids = cluster_ids(design, options["time"], what="time")
        if ids.n_dims != 1:
            raise OptionError(f"time must be one column or vector, however it gives "
                              f"{ids.n_dims} ({', '.join(ids.names)})")
        n_periods = ids.n_clusters[0]
        maxlags = options["maxlags"]
        if maxlags is None:
            maxlags = int(np.floor(n_periods ** 0.25))
        if maxlags >= n_periods:
            raise OptionError(f"maxlags must be smaller than the number of periods "
                              f"({n_periods}), however: {maxlags=}")
        return VcovSpec(self.name, int(maxlags),
                        options=(("time", ids), ("type", options["type"])))

    def bind_streamed(self, options: dict[str, Any], *, n_obs: int | None) -> VcovSpec:
        names = column_names(options["time"], "time")
        if len(names) != 1:
            raise OptionError(f"time must be one column, however: time={options['time']!r}")
        return VcovSpec(self.name, options["maxlags"],
                        options=(("time", names), ("type", options["type"])))

    def bind_stats(self, spec: VcovSpec, stats: ScoreStats) -> VcovSpec:
        T = stats.sums[0].shape[0]
        maxlags = spec.maxlags if spec.maxlags is not None else int(np.floor(T ** 0.25))
        if maxlags >= T:
            raise OptionError(f"maxlags must be smaller than the number of periods ({T}), "
                              f"however: maxlags={maxlags}")
        counts = ClusterCounts(spec.option("time"), (T,))
        return VcovSpec(self.name, int(maxlags),
                        options=(("time", counts), ("type", spec.option("type"))))

    def score_needs(self, spec: VcovSpec) -> ScoreNeeds:
        """The score sums per period, periods in sorted order."""
        return ScoreNeeds(groups=((0,),), keys=spec.option("time"), ordered=True)

    def middle_from_scores(self, spec: VcovSpec, stats: ScoreStats) -> FloatArray:
        """The Bartlett long-run covariance of the per-period sums, with plm's factor."""
        S = stats.sums[0]
        T = S.shape[0]
        meat = S.T @ S
        maxlags = spec.maxlags or 0
        for lag in range(1, maxlags + 1):
            gamma = S[lag:].T @ S[:-lag]
            meat += (1.0 - lag / (maxlags + 1.0)) * (gamma + gamma.T)
        kind, n, df = spec.option("type"), stats.n_obs, stats.df_resid
        if kind != "HC0":
            factor = n / df if kind == "HC1" else T / (T - 1.0) * (n - 1.0) / df
            meat *= factor if df > 0 else np.nan
        return meat

    def label(self, spec: VcovSpec) -> str:
        ids: ClusterIds = spec.option("time")
        return (f"Driscoll-Kraay ({spec.option('type')}, Bartlett kernel, {spec.maxlags} lags) "
                f"by {ids.names[0]}, {ids.n_clusters[0]} periods")


register_vcov(_Cluster())
register_vcov(_DriscollKraay())


def wald_from_vcov(Vz: FloatArray, E: IntArray, coef: FloatArray,
                   slopes: IntArray) -> tuple[float, int]:
    """b' V⁻¹ b / q of the ``slopes`` under V = diag(2^E) V_z diag(2^E), from V_z (exact:
    the statistic does not change under the diagonal rescaling). NaN, with an
    :class:`~attnreg.exceptions.InferenceWarning`, where V is singular on them."""
    q = int(slopes.size)
    if not q:
        return float("nan"), 0
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        bz = np.ldexp(coef[slopes], -E[slopes])
    try:
        factor = sla.cho_factor(Vz[np.ix_(slopes, slopes)], lower=True)
    except (np.linalg.LinAlgError, ValueError):
        warn_user("the covariance of the slopes is singular (or not finite), so the joint "
                  "Wald F test is not defined: NaN", InferenceWarning)
        return float("nan"), q
    return float(bz @ sla.cho_solve(factor, bz)) / q, q

