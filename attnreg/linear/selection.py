"""Choosing ridge's λ and PCR's k in closed form from the spectrum: GCV and leave-one-out.

    GCV(f)  = n · RSS(f) / (n − tr H(f))²
    LOO(f)  = (1/n) Σ_i ( ẽ_i(f) / (1 − h_ii(f)) )²       (the hat-matrix shortcut)

where ẽ = sqrt(w) e are the weighted residuals. Both come from U, s and U'ỹ: no refits.
The LOO shortcut is the leave-one-out error of the smoother H(f) with the filter held fixed.
For ridge that is exactly the error of refitting without row i at the same λ (and the same
standardisation). For PCR it is not a refit: the components stay those of all n rows, while a
refit would recompute them without row i.

The criteria are computed on the spectrum's rescaled response (``Spectrum.y_scale``: the
choice does not depend on the response's scale) and reported on the response's own scale.
"""

from __future__ import annotations

from dataclasses import dataclass


import numpy as np
from scipy.optimize import minimize_scalar

from attnreg._warn import warn_user
from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError, ScaleWarning
from attnreg.linear.spectral import Spectrum
from attnreg.linear.filters import hat_diagonal, pcr_filter, ridge_filter, rss_of_filter

CRITERIA = ("gcv", "loo")
_GRID_SIZE = 100
#: Brent's refinement of ridge's λ stops within this distance in log λ
LOG_LAMBDA_XATOL = 1e-6


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
        Criterion at each candidate (on the response's scale: inf or 0, with a
        :class:`~attnreg.exceptions.ScaleWarning`, where that leaves the float64 range).
    """

    criterion: str
    value: float
    grid: FloatArray
    scores: FloatArray


def _unscaled_scores(sp: Spectrum, scores: FloatArray) -> FloatArray:
    """Criterion values (mean squares of the rescaled response) on the response's scale."""
    e = sp.y_exponent
    if not e:
        return scores
    with np.errstate(over="ignore", under="ignore"):
        out = np.ldexp(scores, 2 * e)
    ok = np.isfinite(scores) & (scores > 0)
    if np.any(ok & ~((out >= np.finfo(np.float64).tiny) & np.isfinite(out))):
        warn_user("the selection criterion's values are outside the float64 range at the "
                      "response's scale: reported as inf or 0; the choice was made on the "
                      "response divided by a power of two and is unaffected", ScaleWarning)
    return out


def _intercept_hat(sp: Spectrum) -> FloatArray:
    return sp.sqrt_w**2 / sp.sum_w if sp.intercept is not None else np.zeros(sp.n_obs)


def gcv_scores(sp: Spectrum, F: FloatArray, Fc: FloatArray | None = None) -> FloatArray:
    """GCV of each filter column of ``F`` (shape (rank, G)).

    ``Fc`` = 1 − F, when it is known more accurately than by subtraction (ridge: λ/(s² + λ));
    n − tr H = (n − [intercept] − rank) + Σ (1 − f) and the RSS use it, so the criterion stays
    accurate where H is close to the identity (λ → 0 on a wide design).

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> from attnreg.linear.selection import gcv_scores, loo_scores
    >>> F = np.column_stack([filters.pcr_filter(sp.s, k) for k in (1, 3, 5)])
    >>> print(np.round(gcv_scores(sp, F)), np.round(loo_scores(sp, F)))
    [1537618.  314892.  134296.] [1456180.  291011.  160076.]
    """
    n = sp.n_obs
    Fc = 1.0 - F if Fc is None else Fc
    free = n - (1.0 if sp.intercept is not None else 0.0) - sp.rank + Fc.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = n * rss_of_filter(sp, F, Fc) / free**2
    return np.where(free > 0, out, np.inf)


def loo_scores(sp: Spectrum, F: FloatArray, Fc: FloatArray | None = None) -> FloatArray:
    """Mean squared leave-one-out error of each filter column of ``F`` (shape (rank, G)).

    With ``Fc`` = 1 − F (see :func:`gcv_scores`) the residuals and 1 − h are computed as
    (OLS part) + U (Fc ∘ U'ỹ) and (1 − h_OLS) + (U ∘ U) Fc: no cancellation as h → 1.
    """
    Fc = 1.0 - F if Fc is None else Fc
    total = np.zeros(F.shape[1])
    h0 = _intercept_hat(sp)
    shrunk = Fc * sp.uty[:, None]  # (rank, G)
    yt = sp.ytilde
    for start, stop, U in sp.U.blocks():
        resid_ols = yt[start:stop] - U @ sp.uty
        resid = resid_ols[:, None] + U @ shrunk
        U2 = U * U
        free_ols = np.maximum(1.0 - h0[start:stop] - U2.sum(axis=1), 0.0)
        one_minus_h = free_ols[:, None] + U2 @ Fc
        with np.errstate(divide="ignore", invalid="ignore"):
            total += np.sum((resid / one_minus_h) ** 2, axis=0)
    out = total / sp.n_obs
    return np.where(np.isfinite(out), out, np.inf)


def select_lambda(sp: Spectrum, criterion: str) -> Selection:
    """Ridge λ minimising GCV or LOO: a log grid over the spectrum, then Brent refinement.

    LOO passes over every row at each candidate, so U is formed once for it (GCV needs
    only the spectrum and U'ỹ).

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> from attnreg.linear.selection import select_lambda
    >>> sel = select_lambda(sp, "gcv")
    >>> print(sel.criterion, f"{sel.value:.4g}", sel.grid.size)
    gcv 0.002015 100
    """
    if criterion == "loo":
        sp = sp.with_stored_u()
    scores_fn = gcv_scores if criterion == "gcv" else loo_scores
    with np.errstate(over="ignore"):
        s2 = sp.s**2
        top = float(s2.max()) if s2.size else 1.0
        searchable = np.isfinite(top * 1e2)
    if not searchable:
        raise OptionError(f"no ridge penalty can be searched: the largest singular value of the "
                          f"unstandardised predictors ({float(sp.s[0]):.3g}) squares to beyond "
                          "the float64 range; use standardize=True or rescale the predictors")
    grid = np.logspace(np.log10(top) - 8, np.log10(top) + 2, _GRID_SIZE)
    F = s2[:, None] / (s2[:, None] + grid[None, :])
    scores = scores_fn(sp, F, grid[None, :] / (s2[:, None] + grid[None, :]))
    best = int(np.argmin(scores))
    lo, hi = np.log(grid[max(best - 1, 0)]), np.log(grid[min(best + 1, grid.size - 1)])

    def objective(log_lam: float) -> float:
        lam = float(np.exp(log_lam))
        comp = lam / (s2 + lam)
        return float(scores_fn(sp, ridge_filter(sp.s, lam)[:, None], comp[:, None])[0])

    value = float(grid[best])
    if hi > lo:
        res = minimize_scalar(objective, bounds=(lo, hi), method="bounded",
                              options={"xatol": LOG_LAMBDA_XATOL})
        if res.fun <= scores[best]:
            value = float(np.exp(res.x))
    return Selection(criterion, value, grid, _unscaled_scores(sp, scores))


def select_k(sp: Spectrum, criterion: str) -> Selection:
    """PCR's number of components minimising GCV or LOO over k = 1..rank.

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> from attnreg.linear.selection import select_k
    >>> sel = select_k(sp, "gcv")
    >>> sel.value, sel.grid.tolist()
    (5.0, [1.0, 2.0, 3.0, 4.0, 5.0])
    """
    ks = np.arange(1, sp.rank + 1)
    if ks.size == 0:
        raise OptionError("PCR needs at least one non-constant predictor: the predictors have rank 0")
    F = np.stack([pcr_filter(sp.s, int(k)) for k in ks], axis=1) if ks.size else np.zeros((0, 0))
    scores = (gcv_scores if criterion == "gcv" else loo_scores)(sp, F)
    return Selection(criterion, float(ks[int(np.argmin(scores))]), ks.astype(float),
                     _unscaled_scores(sp, scores))


def loo_residuals(sp: Spectrum, f: FloatArray) -> FloatArray:
    """Weighted leave-one-out residuals ẽ_i / (1 − h_ii) of one filter, shape (n_obs,).

    On the response's own scale.

    Examples
    --------
    >>> import numpy as np
    >>> from statsmodels.datasets import longley
    >>> from attnreg.linear import filters, spectral
    >>> df = longley.load_pandas().data
    >>> X = np.column_stack([np.ones(16), df[["GNP", "UNEMP", "ARMED", "POP", "YEAR"]]])
    >>> y = df["TOTEMP"].to_numpy()
    >>> sp = spectral.decompose(X, y, intercept=0, weights=None, scaling="sd")
    >>> from attnreg.linear.selection import loo_residuals
    >>> r = loo_residuals(sp, filters.ols_filter(sp.s))
    >>> print(f"{np.mean(r**2):.1f}")  # the LOO score of OLS (PRESS / n)
    160076.3
    """
    resid = sp.ytilde - sp.U.dot(f * sp.uty)
    out = resid / (1.0 - hat_diagonal(sp, f))
    return np.ldexp(out, sp.y_exponent) if sp.y_exponent else out
