"""The optimum of an ill-conditioned GLM to the accuracy the data carry: iterative refinement
with the score in twice the working precision.

At the optimum reached by the QR steps, the score X'W(y − μ)/μ'(η) is zero only to its
rounding: the linear predictor η = Xβ loses digits to cancellation, and the score's sum
loses more; Newton's step from there moves β by the condition number of √W X, squared,
times that rounding. On a design whose columns are nearly collinear (condition 1e6 after
scaling the columns) every float64 IRLS, attnreg's QR steps included, stops 8–10 digits
short. Computing η and the score with compensated dot products
(:mod:`attnreg.compensated`) and solving for the correction with the R factor of the last QR
step converges to the optimum of the float64 data: each step shrinks the error by about
cond² · eps, the score's rounding is eps² instead of eps.

The refinement runs only where it can matter: when the condition number of the
column-scaled R exceeds :data:`REFINE_COND` (well-conditioned fits are at their optimum to
14–15 digits already), and it stops when a correction is below the coefficients' rounding,
stops shrinking, or the contraction cannot hold (condition above 1e7).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular
from scipy.linalg.lapack import dtrcon

from attnreg._typing import FloatArray
from attnreg.compensated import column_dots, row_dots
from attnreg.glm.scoring import EPS, Problem

__all__ = ["MAX_REFINE", "REFINE_COND", "Refined", "refine", "scaled_condition"]

#: the column-scaled condition number of R above which the optimum is refined
REFINE_COND = 1e3
#: above this condition the correction's contraction, about cond² · eps, is not below 1
CONTRACTION_LIMIT = 1e7
#: refinement steps at most (each shrinks the error by cond² · eps or more)
MAX_REFINE = 6


@dataclass(frozen=True)
class Refined:
    """The refined point: coefficients, η, μ, the deviance and the steps taken."""

    coef: FloatArray
    eta: FloatArray
    mu: FloatArray
    deviance: float
    steps: int


def scaled_condition(r: FloatArray) -> float:
    """An estimate of the condition number of R with its columns scaled to unit norm
    (LAPACK's trcon, 1-norm): the conditioning of the fit, whatever the columns' units."""
    if r.size == 0:
        return 1.0
    norms = np.linalg.norm(r, axis=0)
    if not (norms > 0).all():
        return np.inf
    rcond, info = dtrcon(np.asfortranarray(r / norms), norm="1", uplo="U", diag="N")
    return 1.0 / rcond if info == 0 and rcond > 0 else np.inf


def _score(p: Problem, coef: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray] | None:
    """(η, μ, X'W(y − μ)/μ'(η)) at ``coef``, η and the score compensated; None when the
    point is not valid."""
    eta = row_dots(p.X, coef, p.offset)
    mu = p.link.linkinv(eta)
    if not p.valid(eta, mu):
        return None
    var, d = p.family.variance(mu), p.link.mu_eta(eta)
    if not (np.isfinite(var).all() and (var > 0).all()):
        return None
    return eta, mu, column_dots(p.X, p.wt * d * (p.y - mu) / var)


def refine(p: Problem, coef: FloatArray, r: FloatArray) -> Refined | None:
    """Refine the optimum ``coef`` with the R of its last QR step (shape (k, k)); None when
    the fit is well conditioned, or too ill-conditioned for the refinement to converge."""
    cond = scaled_condition(r)
    if not REFINE_COND < cond < CONTRACTION_LIMIT:
        return None
    point = _score(p, coef)
    if point is None:
        return None
    last, steps = np.inf, 0
    for _ in range(MAX_REFINE):
        eta, mu, score = point
        delta = solve_triangular(r, solve_triangular(r, score, trans="T"))
        size = float(np.max(np.abs(delta) / np.maximum(np.abs(coef), EPS)))
        if not np.isfinite(size) or size >= last / 2:  # not converging: keep this point
            break
        new = _score(p, coef + delta)
        if new is None:
            break
        coef, point, last, steps = coef + delta, new, size, steps + 1
        if size <= EPS:
            break
    eta, mu, _ = point
    return Refined(coef, eta, mu, p.deviance(mu), steps)
