"""Choosing ridge's λ and PCR's k in closed form from the spectrum: GCV and exact leave-one-out.

    GCV(f)  = n · RSS(f) / (n − tr H(f))²
    LOO(f)  = (1/n) Σ_i ( ẽ_i(f) / (1 − h_ii(f)) )²       (exact for any fixed filter)

where ẽ = sqrt(w) e are the weighted residuals. Both come from U, s and U'ỹ: no refits.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.spectral import Spectrum, hat_diagonal, pcr_filter, ridge_filter, rss_of_filter

CRITERIA = ("gcv", "loo")
_GRID_SIZE = 100
_CHUNK_ROWS = 16384


@dataclass(frozen=True)
class Selection:
    """How a tuning parameter was chosen.

    Attributes
    ----------
    criterion : str
        ``"gcv"``, ``"loo"`` or ``"fixed"`` (given by the user).
    value : float
        The chosen λ or k.
    grid : ndarray, shape (G,)
        Candidate values evaluated (empty when fixed).
    scores : ndarray, shape (G,)
        Criterion at each candidate.
    """

    criterion: str
    value: float
    grid: FloatArray
    scores: FloatArray


def _intercept_hat(sp: Spectrum) -> FloatArray:
    return sp.sqrt_w**2 / sp.sum_w if sp.intercept is not None else np.zeros(sp.n_obs)


def gcv_scores(sp: Spectrum, F: FloatArray) -> FloatArray:
    """GCV of each filter column of ``F`` (shape (rank, G))."""
    n = sp.n_obs
    edf = F.sum(axis=0) + (1.0 if sp.intercept is not None else 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = n * rss_of_filter(sp, F) / (n - edf) ** 2
    return np.where(edf < n, out, np.inf)


def loo_scores(sp: Spectrum, F: FloatArray) -> FloatArray:
    """Mean squared leave-one-out error of each filter column of ``F`` (shape (rank, G))."""
    total = np.zeros(F.shape[1])
    h0 = _intercept_hat(sp)
    fitted_coef = F * sp.uty[:, None]  # (rank, G)
    for start in range(0, sp.n_obs, _CHUNK_ROWS):
        stop = min(start + _CHUNK_ROWS, sp.n_obs)
        U = sp.U[start:stop]
        resid = sp.ytilde[start:stop, None] - U @ fitted_coef
        h = (U * U) @ F + h0[start:stop, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            total += np.sum((resid / (1.0 - h)) ** 2, axis=0)
    out = total / sp.n_obs
    return np.where(np.isfinite(out), out, np.inf)


def select_lambda(sp: Spectrum, criterion: str) -> Selection:
    """Ridge λ minimising GCV or LOO: a log grid over the spectrum, then Brent refinement."""
    scores_fn = gcv_scores if criterion == "gcv" else loo_scores
    s2 = sp.s**2
    top = float(s2.max()) if s2.size else 1.0
    grid = np.logspace(np.log10(top) - 8, np.log10(top) + 2, _GRID_SIZE)
    F = s2[:, None] / (s2[:, None] + grid[None, :])
    scores = scores_fn(sp, F)
    best = int(np.argmin(scores))
    lo, hi = np.log(grid[max(best - 1, 0)]), np.log(grid[min(best + 1, grid.size - 1)])

    def objective(log_lam: float) -> float:
        return float(scores_fn(sp, ridge_filter(sp.s, float(np.exp(log_lam)))[:, None])[0])

    value = float(grid[best])
    if hi > lo:
        res = minimize_scalar(objective, bounds=(lo, hi), method="bounded",
                              options={"xatol": 1e-6})
        if res.fun <= scores[best]:
            value = float(np.exp(res.x))
    return Selection(criterion, value, grid, scores)


def select_k(sp: Spectrum, criterion: str) -> Selection:
    """PCR's number of components minimising GCV or LOO over k = 1..rank."""
    ks = np.arange(1, sp.rank + 1)
    if ks.size == 0:
        raise OptionError("PCR needs at least one non-constant predictor: the predictors have rank 0")
    F = np.stack([pcr_filter(sp.s, int(k)) for k in ks], axis=1) if ks.size else np.zeros((0, 0))
    scores = (gcv_scores if criterion == "gcv" else loo_scores)(sp, F)
    return Selection(criterion, float(ks[int(np.argmin(scores))]), ks.astype(float), scores)


def loo_residuals(sp: Spectrum, f: FloatArray) -> FloatArray:
    """Weighted leave-one-out residuals ẽ_i / (1 − h_ii) of one filter, shape (n_obs,)."""
    resid = sp.ytilde - sp.U @ (f * sp.uty)
    return resid / (1.0 - hat_diagonal(sp, f))
