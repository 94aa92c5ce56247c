"""The column space of a fit's weighted design, which the diagnostic tests' auxiliary
regressions reuse: q₀ = √w / ‖√w‖ (with an intercept) and the left singular vectors U span it,
so a regression of any vector v on X̃ is [q₀ U][q₀ U]' v, and a regression on [X̃ L] for a few
extra columns L is that plus the regression on L with X̃ partialled out (Frisch–Waugh–Lovell).
Also the rows of the tests' table.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from attnreg._typing import FloatArray
from attnreg.inference.contract import LinearFitContract

if TYPE_CHECKING:
    from attnreg.linear.spectral import Spectrum

__all__ = ["aux_rank", "coords", "df_text", "extra_ss", "intercept_direction",
           "partial_out", "projected_ss", "resid_scaled", "row_weights", "table_row"]


def intercept_direction(sp: Spectrum) -> FloatArray | None:
    """√w / ‖√w‖, the intercept's direction in the weighted column space (None without one)."""
    if sp.intercept is None:
        return None
    return np.asarray(sp.sqrt_w / math.sqrt(sp.sum_w), dtype=np.float64)


def coords(sp: Spectrum, v: FloatArray) -> tuple[float, FloatArray]:
    """(q₀'v, U'v) for v of shape (n_obs,) or (n_obs, m)."""
    q0 = intercept_direction(sp)
    return (0.0 if q0 is None else q0 @ v), sp.U.t_dot(v)  # type: ignore[return-value]


def projected_ss(sp: Spectrum, v: FloatArray) -> float:
    """‖P v‖² with P the projection on the columns of X̃ (its estimable part)."""
    a, b = coords(sp, v)
    return float(np.square(a) + b @ b)


def partial_out(sp: Spectrum, L: FloatArray) -> FloatArray:
    """(I − P) L for L of shape (n_obs, m): the columns of L with X̃ partialled out."""
    q0 = intercept_direction(sp)
    out = L - sp.U.dot(sp.U.t_dot(L))
    if q0 is not None:
        out -= np.outer(q0, q0 @ L)
    return out


def extra_ss(sp: Spectrum, e: FloatArray, L: FloatArray) -> tuple[float, int]:
    """What extra columns L add to the regression of the residuals e (⟂ X̃) on X̃: the sum of
    squares e' P_(ML) e of its fitted values, and the rank of ML."""
    ML = partial_out(sp, L)
    coef, _, rank, _ = np.linalg.lstsq(ML, e, rcond=None)
    fitted = ML @ coef
    return float(fitted @ fitted), int(rank)


def aux_rank(sp: Spectrum) -> int:
    """The rank of the auxiliary regressions' base design: rank of X̃ (plus the intercept)."""
    return sp.rank + (0 if sp.intercept is None else 1)


def resid_scaled(fit: LinearFitContract) -> tuple[FloatArray, FloatArray]:
    """(e, √w e) of the rows in the fit, divided by the spectrum's ``y_scale`` (exactly)."""
    ew = fit._resid_ws
    x = fit.spectrum.y_exponent
    e = np.ldexp(fit._resid_fit, -x) if x else fit._resid_fit
    return e, ew


def row_weights(fit: LinearFitContract) -> FloatArray:
    """The fit's prior weights (ones without), shape (n_obs,)."""
    w = fit.design.weights
    return np.ones(fit.nobs) if w is None else np.asarray(w, dtype=np.float64)


def table_row(test: str, statistic: float, df: str, p_value: float, note: str = "") -> dict[str, Any]:
    """One row of a :class:`~attnreg.diagnostics.battery.DiagnosticTable`."""
    return {"test": test, "statistic": float(statistic), "df": df, "p_value": float(p_value),
            "note": note}


def df_text(*df: float) -> str:
    """Degrees of freedom as the table shows them (``"2, 37"``)."""
    return ", ".join(f"{d:g}" for d in df)
