"""HC4, HC4m and HC5: leverage-adjusted sandwiches (Cribari-Neto), as sandwich's ``vcovHC``.

Each divides the squared (weighted) residual e_i² by a power of 1 − h_i that grows with the
leverage relative to its mean, p/n with p = round(Σ h_i) (sandwich rounds the trace):

    HC4:   e² / (1 − h)^δ,        δ = min(4, n h / p)
    HC4m:  e² / (1 − h)^δ,        δ = min(γ₁, n h / p) + min(γ₂, n h / p),  γ = (1, 1.5)
    HC5:   e² / (1 − h)^(δ/2),    δ = min(n h / p, max(4, n k max(h) / p)),  k = 0.7

with sandwich's default constants. Weighted fits use √w e and the weighted hat values, as
``vcovHC`` does for ``lm(weights = )``. For ridge and PCR, h is the smoother's hat value and
p = round(tr H).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from attnreg._typing import FloatArray
from attnreg.inference.vcov.registry import (
    CovarianceEstimator,
    MiddleInputs,
    VcovSpec,
    register_vcov,
)
from attnreg.inference.vcov.scorestats import cross_products

if TYPE_CHECKING:
    from attnreg.linear.spectral import Spectrum

__all__ = ["HC4M_GAMMA", "HC5_K", "leverage_exponent"]

#: HC4m's (γ₁, γ₂), sandwich's default (Cribari-Neto and da Silva 2011)
HC4M_GAMMA = (1.0, 1.5)
#: HC5's k, sandwich's default (Cribari-Neto, Souza and Vasconcellos 2007)
HC5_K = 0.7


def leverage_exponent(kind: str, hat: FloatArray) -> FloatArray:
    """The exponent δ_i with ω_i = e_i² / (1 − h_i)^δ_i (HC5's halved), shape (n_obs,).

    Examples
    --------
    >>> import numpy as np
    >>> from attnreg.inference.vcov.hc45 import leverage_exponent
    >>> h = np.array([0.1, 0.2, 0.3, 0.9, 0.5])   # p = round(2.0) = 2, n h / p = 2.5 h
    >>> leverage_exponent("HC4", h).tolist()
    [0.25, 0.5, 0.75, 2.25, 1.25]
    """
    n = hat.size
    # sandwich: as.integer(round(sum(diaghat))); at least 1 (a ridge fit without intercept
    # may have tr(H) < 0.5, where sandwich would divide by zero)
    p = max(1, int(np.round(hat.sum())))
    ratio = n * hat / p
    if kind == "HC4":
        return np.minimum(4.0, ratio)
    if kind == "HC4m":
        return np.minimum(HC4M_GAMMA[0], ratio) + np.minimum(HC4M_GAMMA[1], ratio)
    return np.minimum(ratio, max(4.0, n * HC5_K * hat.max() / p)) / 2.0


class LeverageHC(CovarianceEstimator):
    """HC4, HC4m or HC5 (sandwich's ``vcovHC(type = )``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def middle(self, sp: Spectrum, spec: VcovSpec, inputs: MiddleInputs) -> FloatArray:
        delta = leverage_exponent(self.name, inputs.hat)
        with np.errstate(divide="ignore", invalid="ignore"):
            scaled = inputs.resid_w / (1.0 - inputs.hat) ** (delta / 2.0)
        return cross_products(sp, scaled, 0)

    def label(self, spec: VcovSpec) -> str:
        return f"heteroskedasticity-robust {self.name}"


for _name in ("HC4", "HC4m", "HC5"):
    register_vcov(LeverageHC(_name))
