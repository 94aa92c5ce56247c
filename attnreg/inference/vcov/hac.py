"""HAC covariances with sandwich's conventions: kernels, automatic bandwidths, prewhitening.

The ``"HAC"`` estimator of :data:`~attnreg.inference.vcov.registry.VCOV_REGISTRY`. Its options
follow R's sandwich package (``NeweyWest``, ``vcovHAC``, ``kernHAC``, ``bwAndrews``,
``bwNeweyWest``, ``kweights``, ``meatHAC``):

- ``maxlags=L`` (an int): Bartlett weights 1 − j/(L + 1), j ≤ L (``NeweyWest(fit, lag = L)``);
  ``maxlags="newey-west"``: L = floor of the Newey–West (1994) bandwidth
  (``NeweyWest(fit)``'s lag); neither and no ``kernel`` / ``bandwidth``: the fixed
  L = floor(4 (n/100)^(2/9)) (attnreg's historic default).
- ``kernel="bartlett" | "parzen" | "qs"`` with ``bandwidth=b`` (a number: weights k(j/b), as
  ``kernHAC(bw = b)``), ``"andrews"`` (Andrews 1991, AR(1) approximation: ``bwAndrews``;
  the default once a kernel is named) or ``"newey-west"`` (``bwNeweyWest``, unfloored).
  Kernel weights below 1e-7 in absolute value end the lags (``weightsAndrews``' ``tol``).
- ``prewhite=p`` (True is 1): the scores are prewhitened by a VAR(p) fitted by least squares
  without intercept, the long-run covariance of its residuals is recoloured by
  D = (I − Σ A_l)⁻¹ (``meatHAC``); the automatic bandwidths are chosen on the residuals.
- ``adjust=True``: times n/(n − edf) (sandwich's n/(n − k) for OLS).

The scores are those of the spectral machinery (s_i = ẽ_i [c_i, U_i], an invertible linear
map of sandwich's x̃_i ẽ_i for a full-rank OLS fit). Kernel sums and the VAR fit are
equivariant under that map; the bandwidths are not (each column of sandwich's ``estfun`` is
weighted alone, the intercept's with 0), so they are computed on the scores mapped back to
the design's own columns, x̃_i = [√w_i, √w_i x̄ + d ∘ (V S U_i')].
"""

from __future__ import annotations

import math
import numbers
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.linalg as sla

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.inference.vcov.hac_kernels import (
    BANDWIDTH_RULES,
    KERNEL_TITLES,
    KERNELS,
    WEIGHT_TOL,
    bw_andrews,
    bw_newey_west,
    kernel_weights,
    long_run,
    prewhiten,
)
from attnreg.inference.vcov.registry import (
    CovarianceEstimator,
    MiddleInputs,
    VcovSpec,
    check_lags,
    register_vcov,
)
from attnreg.inference.vcov.scorestats import ScoreNeeds, ScoreStats

if TYPE_CHECKING:
    from attnreg.linear.spectral import Spectrum

#: The kernels, bandwidth rules and prewhitening are in :mod:`attnreg.inference.vcov.hac_kernels`
#: (imported here for the callers that know them from this module).
__all__ = ["KERNELS", "HACEstimator", "bw_andrews", "bw_newey_west", "hac_bandwidth",
           "kernel_weights"]


def _design_map(sp: Spectrum) -> FloatArray:
    """L with sandwich's scores x̃_i ẽ_i = L s_i for the spectral scores s_i (active part).

    Shape (n_kept [+ 1], rank [+ 1]): intercept row and column first when there is one.
    """
    d = sp.scale[sp.kept]
    B = (sp.V * sp.s) * d[:, None]  # (n_kept, rank): x̃_kept − √w x̄ = B U_i'
    if sp.intercept is None:
        return B
    top = np.r_[sp.sum_w, np.zeros(sp.rank)]
    return np.vstack([top, np.column_stack([sp.sum_w * sp.center[sp.kept], B])])


def _scores(sp: Spectrum, e: FloatArray) -> FloatArray:
    """The spectral scores e_i [c_i, U_i], shape (n_obs, rank [+ 1]) (no intercept part without one)."""
    first = 1 if sp.intercept is not None else 0
    S = np.empty((sp.n_obs, first + sp.rank))
    if first:
        S[:, 0] = sp.sqrt_w / sp.sum_w * e
    for start, stop, U in sp.U.blocks():
        np.multiply(U, e[start:stop, None], out=S[start:stop, first:])
    return S


def _lag_weights(sp: Spectrum, spec: VcovSpec, R: FloatArray) -> FloatArray:
    """The kernel weights w_0, w_1, ... of the spec on the (prewhitened) scores ``R``."""
    n = R.shape[0]
    prewhite = int(spec.option("prewhite", 0))
    kernel = spec.option("kernel", "bartlett")
    rule = spec.option("bandwidth") or spec.option("lag_rule")  # None: fixed maxlags
    bw = (_bandwidth(sp, R, kernel, rule, prewhite) if isinstance(rule, str)
          else math.nan if rule is None else float(rule))
    if spec.maxlags is not None or spec.option("lag_rule") is not None:
        lags = spec.maxlags if spec.maxlags is not None else math.floor(bw)
        lags = min(lags, n - 1)  # sandwich: "more weights than observations, only first n used"
        return 1.0 - np.arange(lags + 1) / (lags + 1.0)
    w = kernel_weights(np.arange(n) / bw, kernel)
    return w[: int(np.flatnonzero(np.abs(w) > WEIGHT_TOL).max()) + 1]


def _bandwidth(sp: Spectrum, R: FloatArray, kernel: str, rule: str, prewhite: int) -> float:
    """The ``rule``'s bandwidth for the (prewhitened) spectral scores ``R``, shape (n, k)."""
    EF = R @ _design_map(sp).T  # sandwich's estfun columns, the intercept's first
    choose = bw_andrews if rule == "andrews" else bw_newey_west
    return choose(EF, kernel, intercept=sp.intercept is not None, prewhite=prewhite)


def hac_bandwidth(fit: Any, kernel: str = "qs", rule: str = "andrews",
                  prewhite: int | bool = False) -> float:
    """The automatic HAC bandwidth of a fit, unfloored (sandwich's ``bwAndrews`` /
    ``bwNeweyWest(fit, kernel = , prewhite = )``).

    Parameters
    ----------
    fit : LinearResults
    kernel : {"bartlett", "parzen", "qs"}
    rule : {"andrews", "newey-west"}
    prewhite : bool or int
        VAR order of the prewhitening the bandwidth is chosen after.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> from attnreg.inference.vcov.hac import hac_bandwidth
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"x": rng.normal(size=200)})
    >>> df["y"] = df["x"] + np.convolve(rng.normal(size=203), np.ones(4))[3:203]
    >>> fit = ar.attnreg("y ~ x", df)
    >>> print(f"{hac_bandwidth(fit):.3f} {hac_bandwidth(fit, 'bartlett', 'newey-west'):.3f}")
    1.974 4.452
    """
    options = HACEstimator().check({"kernel": kernel, "bandwidth": rule, "prewhite": prewhite})
    if rule not in BANDWIDTH_RULES:
        raise OptionError(f"rule must be 'andrews' or 'newey-west', however: {rule=}")
    S = _scores(fit.spectrum, np.asarray(fit.weighted_resid, dtype=float))
    p = options["prewhite"]
    R = prewhiten(S, p)[0] if p > 0 else S
    return _bandwidth(fit.spectrum, R, options["kernel"], rule, p)


class HACEstimator(CovarianceEstimator):
    """HAC (kernel) covariance of the scores in row order, with sandwich's options."""

    name = "HAC"
    needs_hat = False  # the scores alone
    option_names = ("maxlags", "adjust", "kernel", "bandwidth", "prewhite")

    def check(self, options: dict[str, Any]) -> dict[str, Any]:
        options = super().check(options)
        maxlags, bandwidth = options.get("maxlags"), options.get("bandwidth")
        kernel = options.get("kernel")
        if kernel is not None:
            if not isinstance(kernel, str) or kernel.lower() not in KERNELS:
                raise OptionError(f"kernel must be one of 'bartlett', 'parzen', 'qs', "
                                  f"however: kernel={kernel!r}")
            kernel = KERNELS[kernel.lower()]
        if maxlags is not None and bandwidth is not None:
            raise OptionError(f"give maxlags (Bartlett lag truncation) or bandwidth (the "
                              f"kernel's), not both, however: maxlags={maxlags!r}, "
                              f"bandwidth={bandwidth!r}")
        if maxlags is not None and kernel not in (None, "bartlett"):
            raise OptionError(f"maxlags is the Bartlett kernel's lag truncation; give "
                              f"bandwidth= for the {kernel!r} kernel, however: "
                              f"maxlags={maxlags!r}, kernel={kernel!r}")
        if maxlags is not None and maxlags != "newey-west":
            maxlags = check_lags(maxlags)
        if bandwidth is not None and bandwidth not in BANDWIDTH_RULES and not (
                isinstance(bandwidth, numbers.Real) and not isinstance(bandwidth, bool)
                and math.isfinite(bandwidth) and float(bandwidth) > 0):
            raise OptionError(f"bandwidth must be a positive number, 'andrews' or "
                              f"'newey-west', however: bandwidth={bandwidth!r}")
        return {"maxlags": maxlags, "adjust": _check_bool("adjust", options.get("adjust")),
                "kernel": kernel, "bandwidth": bandwidth,
                "prewhite": _check_prewhite(options.get("prewhite"))}

    def bind(self, options: dict[str, Any], *, n_obs: int | None = None,
             design: Any = None) -> VcovSpec:
        maxlags, bandwidth, kernel = options["maxlags"], options["bandwidth"], options["kernel"]
        prewhite = options["prewhite"]
        if n_obs is not None and prewhite >= n_obs - 1:
            raise OptionError(f"prewhite must be smaller than the number of observations "
                              f"({n_obs}) less 1, however: {prewhite=}")
        extra: dict[str, Any] = {"prewhite": prewhite}
        if maxlags is None and bandwidth is None and kernel is None:
            maxlags = int(np.floor(4 * ((n_obs or 100) / 100.0) ** (2.0 / 9.0)))
        if maxlags == "newey-west":
            extra["lag_rule"], maxlags = "newey-west", None
        elif maxlags is None:
            extra["kernel"] = kernel or "bartlett"
            extra["bandwidth"] = "andrews" if bandwidth is None else bandwidth
        if n_obs is not None and maxlags is not None and maxlags >= n_obs:
            raise OptionError(f"maxlags must be smaller than the number of observations "
                              f"({n_obs}), however: {maxlags=}")
        return VcovSpec("HAC", maxlags, options["adjust"], options=tuple(sorted(extra.items())))

    streamed_refusal = ("a chunked fit's HAC is Bartlett with fixed maxlags, without "
                        "prewhitening; kernel=, bandwidth=, prewhite= and "
                        "maxlags='newey-west' need the fit in memory")

    def score_needs(self, spec: VcovSpec) -> ScoreNeeds | None:
        """NeweyWest(lag = L, prewhite = FALSE): the Bartlett-lagged cross-products; None
        (the scores whole) for kernels, bandwidth rules and prewhitening."""
        if spec.maxlags is None or int(spec.option("prewhite", 0)):
            return None
        return ScoreNeeds(cross=True, maxlags=int(spec.maxlags))

    def middle_from_scores(self, spec: VcovSpec, stats: ScoreStats) -> FloatArray:
        assert stats.cross is not None
        middle = np.array(stats.cross)
        if spec.adjust:
            middle *= stats.n_obs / stats.df_resid if stats.df_resid > 0 else np.nan
        return middle

    def middle(self, sp: Spectrum, spec: VcovSpec, inputs: MiddleInputs) -> FloatArray:
        if self.score_needs(spec) is not None:
            return super().middle(sp, spec, inputs)
        prewhite = int(spec.option("prewhite", 0))
        S = _scores(sp, inputs.resid_w)
        R, recolour = prewhiten(S, prewhite) if prewhite > 0 else (S, None)
        omega = long_run(R, _lag_weights(sp, spec, R))
        if recolour is not None:  # D Ω D' with D = (I − Σ A)⁻¹: two solves
            omega = sla.solve(recolour, sla.solve(recolour, omega).T).T
        if spec.adjust:
            omega *= sp.n_obs / inputs.df_resid if inputs.df_resid > 0 else np.nan
        if sp.intercept is not None:
            return (omega + omega.T) / 2.0
        middle = np.zeros((1 + sp.rank, 1 + sp.rank))
        middle[1:, 1:] = (omega + omega.T) / 2.0
        return middle

    def label_fit(self, spec: VcovSpec, fit: Any) -> str:
        """The label with the lag or bandwidth the rule chose on ``fit``."""
        rule = spec.option("bandwidth") or spec.option("lag_rule")
        if not isinstance(rule, str):
            return self.label(spec)
        S = _scores(fit.spectrum, np.asarray(fit.weighted_resid, dtype=float))
        p = int(spec.option("prewhite", 0))
        R = prewhiten(S, p)[0] if p > 0 else S
        return self.label(spec, _bandwidth(fit.spectrum, R, spec.option("kernel", "bartlett"),
                                           rule, p))

    def label(self, spec: VcovSpec, chosen: float | None = None) -> str:
        """The kernel, lags or bandwidth (the rule's choice ``chosen`` when given),
        prewhitening and adjustment."""
        p = int(spec.option("prewhite", 0))
        parts = []
        if spec.maxlags is not None or spec.option("lag_rule"):
            lags = (f"{spec.maxlags} lags" if spec.maxlags is not None
                    else "lags by the Newey-West (1994) rule" if chosen is None
                    else f"{math.floor(chosen)} lags (Newey-West (1994) rule)")
            parts += ["Newey-West", "Bartlett kernel", lags]
        else:
            bw = spec.option("bandwidth")
            rules = {"andrews": "Andrews (1991) AR(1) bandwidth",
                     "newey-west": "Newey-West (1994) bandwidth"}
            text = rules[bw] if isinstance(bw, str) else f"bandwidth {bw:g}"
            if isinstance(bw, str) and chosen is not None:
                text += f" {chosen:.4g}"
            parts += [f"{KERNEL_TITLES[spec.option('kernel')]} kernel", text]
        if p:
            parts.append(f"VAR({p}) prewhitened")
        if spec.adjust:
            parts.append("adjusted")
        return f"HAC ({', '.join(parts)})"


def _check_bool(name: str, value: Any) -> bool:
    if value is None:
        return False
    if not isinstance(value, (bool, np.bool_)):
        raise OptionError(f"{name} must be True or False, however: {name}={value!r}")
    return bool(value)


def _check_prewhite(value: Any) -> int:
    """``prewhite`` as the VAR order: False/None 0, True 1, or a non-negative int."""
    if value is None or value is False:
        return 0
    if value is True:
        return 1
    if isinstance(value, (int, np.integer)) and value >= 0:
        return int(value)
    raise OptionError(f"prewhite must be True, False or a VAR order (a non-negative "
                      f"integer), however: prewhite={value!r}")


register_vcov(HACEstimator())
