"""Tests of predictive ability on plain arrays: the Giacomini–White test of conditional
predictive ability and the forecast-encompassing test (Harvey, Leybourne and Newbold), with
the loss and autocovariance helpers the comparison of forecasts shares.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import stats

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, InferenceWarning, OptionError

__all__ = ["GW_MIN_OBS", "EncompassingResult", "GiacominiWhiteResult", "as_vector", "autocov",
           "check_horizon", "encompassing_test", "giacomini_white", "hln_factor", "loss_values"]

#: Fewest loss differentials n for which the Giacomini-White test is reported without a
#: small-sample note (and warning). At h = 1 the statistic is n times an uncentred R², so it
#: never exceeds n, and the χ²(2) test is undersized in small samples: in a Monte Carlo of
#: 4,000 draws of iid differentials (normal, or differences of squared normals) the 5 % test
#: rejects 0.6-1.2 % of the time at n = 10, 2.2-3.3 % at n = 20 and 3.0-3.7 % at n = 30
#: (4.2-4.6 % at n = 200). With n ≤ q (the number of instruments) the statistic is n
#: whatever the data, and the test is refused.
GW_MIN_OBS = 30


# ---------------------------------------------------------------------------- small helpers

def loss_values(errors: FloatArray, loss: str) -> FloatArray:
    """The losses of forecast errors (same shape): squared or absolute."""
    if loss not in ("squared", "absolute"):
        raise OptionError(f"loss must be 'squared' or 'absolute', however: {loss=}.")
    return errors**2 if loss == "squared" else np.abs(errors)


def autocov(x: FloatArray, max_lag: int) -> FloatArray:
    """Autocovariances ``gamma_0..gamma_max_lag`` of ``x`` (divisor n), shape (max_lag + 1,)."""
    dev = x - x.mean()
    n = dev.size
    return np.array([dev[k:] @ dev[: n - k] / n for k in range(max_lag + 1)])


def hln_factor(n: int, h: int) -> float:
    """Harvey–Leybourne–Newbold (1997) small-sample factor ``sqrt((n + 1 - 2h + h(h-1)/n) / n)``."""
    return math.sqrt((n + 1 - 2 * h + h * (h - 1) / n) / n)


def check_horizon(h: object, n: int) -> int:
    """The forecast horizon ``h`` checked against ``n`` observations."""
    if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or not 1 <= h < n:
        raise OptionError(f"h must be an integer in 1..{n - 1} (n_obs - 1), however: {h=}.")
    return int(h)


def as_vector(x: object, name: str) -> FloatArray:
    """``x`` as a 1-D float array of at least 3 values (``name`` names it in errors)."""
    out = np.asarray(x, dtype=np.float64)
    if out.ndim != 1 or out.size < 3:
        raise DataError(f"{name} must be a 1-D array of at least 3 values, however: shape={out.shape}.")
    if not np.isfinite(out).all():
        raise DataError(f"{name} contains NaN or inf; drop those forecasts first.")
    return out


# ------------------------------------------------------------------------- Giacomini–White

class GiacominiWhiteResult(NamedTuple):
    """Giacomini–White (2006) test of equal conditional predictive ability.

    Attributes
    ----------
    statistic : float
        Wald statistic ``n Z̄' Ω̂⁻¹ Z̄`` (for h = 1: ``n R²`` of the regression of a constant
        on ``Z``).
    p_value : float
        ``P(χ²(q) > statistic)``.
    df : int
        q, the number of instruments.
    n_obs : int
        n, the loss differentials used (the first h have no lagged differential).
    mean_loss_diff : float
        Mean of ``d_t = L(model) − L(benchmark)`` over those n (negative: the model loses less).
    share_model_better : float
        GW's decision rule: share of the n dates where the fitted conditional expectation
        ``δ̂' h_t`` of ``d`` is negative (the model expected to lose less).
    h : int
        Forecast horizon.
    """

    statistic: float
    p_value: float
    df: int
    n_obs: int
    mean_loss_diff: float
    share_model_better: float
    h: int


def giacomini_white(loss_diff: object, h: int = 1, conditional: bool = True) -> GiacominiWhiteResult:
    """Giacomini–White (2006) test of conditional predictive ability.

    With the loss differentials ``d_t = L(e_model,t) − L(e_bench,t)`` in target order and the
    instruments ``h_t = (1, d_{t−h})`` (the last differential observed at the origin of
    ``d_t``; only ``1`` when ``conditional`` is False, the unconditional test), let
    ``Z_t = h_t d_t`` for the n = T − h dates that have an instrument. The statistic is
    ``n Z̄' Ω̂⁻¹ Z̄``, referred to χ²(q), q = 2. For h = 1, ``Ω̂ = Z'Z / n`` (the uncentred
    second moment; the statistic equals n times the uncentred R² of the regression of a
    constant on ``Z``, as in the paper); for h > 1, Ω̂ is the Newey–West estimate of the
    demeaned ``Z`` with ``h − 1`` lags and Bartlett weights ``1 − j/h`` (the authors' code).

    Parameters
    ----------
    loss_diff : array_like, shape (T,)
        Loss differentials in target-date order.
    h : int, default 1
        Forecast horizon.
    conditional : bool, default True
        Instruments ``(1, d_{t−h})``; False gives the unconditional test (instrument 1,
        a Diebold–Mariano-type Wald test).

    Returns
    -------
    GiacominiWhiteResult

    Raises
    ------
    DataError
        If Ω̂ is singular (e.g. identical forecasts), or if n ≤ q: with no more differentials
        than instruments the statistic equals n whatever the data (at h = 1, n R² with
        R² = 1), so it carries no information.

    Warns
    -----
    InferenceWarning
        If n < ``GW_MIN_OBS`` (30): the χ² approximation is poor there (the test rejects
        far less often than its level; see ``GW_MIN_OBS``).

    Examples
    --------
    >>> d = np.random.default_rng(1).normal(size=41)
    >>> res = giacomini_white(d)
    >>> round(res.statistic, 4), round(res.p_value, 4), res.df, res.n_obs
    (0.182, 0.913, 2, 40)
    >>> giacomini_white([0.3, -0.5, 0.1])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnreg.exceptions.DataError: the Giacomini-White test needs more loss differentials ... n_obs=2 ...
    """
    d = as_vector(loss_diff, "loss_diff")
    h = check_horizon(h, d.size - 1)
    if conditional:
        target, instruments = d[h:], np.column_stack([np.ones(d.size - h), d[:-h]])
    else:
        target, instruments = d, np.ones((d.size, 1))
    Z = instruments * target[:, None]
    n, q = Z.shape
    if n <= q:
        raise DataError(f"the Giacomini-White test needs more loss differentials than its {q} "
                        f"instrument(s), however: n_obs={n} (with n <= q the statistic is n "
                        "whatever the data); compare more forecasts")
    if n < GW_MIN_OBS:
        from attnreg._warn import warn_user

        warn_user(f"the Giacomini-White test uses {n} loss differentials, fewer than "
                  f"{GW_MIN_OBS}: its chi-squared({q}) p-value is unreliable (the test rejects "
                  "far less often than its level)", InferenceWarning)
    zbar = Z.mean(axis=0)
    if h == 1:
        omega = Z.T @ Z / n
    else:
        dev = Z - zbar
        omega = dev.T @ dev / n
        for j in range(1, h):
            g = dev[j:].T @ dev[:-j] / n
            omega += (1.0 - j / h) * (g + g.T)
    try:
        solved = np.linalg.solve(omega, zbar)
    except np.linalg.LinAlgError:
        raise DataError("the Giacomini-White covariance is singular; do the two forecasts "
                        "differ?") from None
    statistic = float(n * zbar @ solved)
    delta = np.linalg.lstsq(instruments, target, rcond=None)[0]
    better = float(np.mean(instruments @ delta < 0.0))
    return GiacominiWhiteResult(statistic, float(stats.chi2.sf(statistic, q)), q, n,
                                float(target.mean()), better, h)


# ---------------------------------------------------------------------------- encompassing

class EncompassingResult(NamedTuple):
    """Harvey–Leybourne–Newbold (1998) test that forecast 1 encompasses forecast 2.

    Attributes
    ----------
    statistic : float
        HLN-corrected t statistic of the mean of ``e1 (e1 − e2)``.
    p_value : float
        One-sided, ``P(t(n−1) > statistic)``: small values reject that forecast 1
        encompasses forecast 2 (forecast 2 carries information forecast 1 lacks).
    weight : float
        λ̂, the least-squares slope of ``e1`` on ``e1 − e2``: the weight on forecast 2 in the
        best combination ``(1 − λ) f1 + λ f2``.
    h : int
    n_obs : int
    """

    statistic: float
    p_value: float
    weight: float
    h: int
    n_obs: int


def encompassing_test(e1: object, e2: object, h: int = 1) -> EncompassingResult:
    """Forecast encompassing test of Harvey, Leybourne & Newbold (1998), modified (MHLN).

    H₀: forecast 1 encompasses forecast 2 — in ``e1_t = λ (e1_t − e2_t) + ε_t``, λ = 0.
    With ``d_t = e1_t (e1_t − e2_t)``, the statistic is ``d̄ / sqrt(V / n)`` times the HLN
    (1997) factor ``sqrt((n + 1 − 2h + h(h−1)/n) / n)``, where V is the long-run variance
    ``γ₀ + 2 Σ_{k=1}^{h−1} γ_k`` (autocovariances with divisor n, as in the Diebold–Mariano
    test; Bartlett weights ``1 − k/h`` if that is not positive), compared one-sided with
    Student-t(n − 1). For h = 1 it is the one-sample t statistic of ``d``.

    Parameters
    ----------
    e1, e2 : array_like, shape (n_obs,)
        Forecast errors ``y − f`` of forecasts 1 and 2, aligned by target date.
    h : int, default 1
        Forecast horizon.

    Returns
    -------
    EncompassingResult

    Examples
    --------
    >>> e_bench = [1.2, -0.8, 2.1, 0.4, -1.5, 0.9, 1.7, -0.3]
    >>> e_model = [0.5, -0.4, 1.1, 0.6, -0.9, 0.2, 0.8, -0.5]
    >>> res = encompassing_test(e_bench, e_model)     # does the benchmark encompass the model?
    >>> round(res.statistic, 4), round(res.p_value, 4), round(res.weight, 3)
    (2.8898, 0.0117, 1.823)
    """
    a, b = as_vector(e1, "e1"), as_vector(e2, "e2")
    if a.size != b.size:
        raise DataError(f"e1 and e2 must have one length, however: {a.size} and {b.size}.")
    n = a.size
    h = check_horizon(h, n)
    diff = a - b
    d = a * diff
    gamma = autocov(d, h - 1)
    lrv = float(gamma[0] + 2.0 * gamma[1:].sum())
    if not lrv > 0.0:
        lrv = float(gamma[0] + 2.0 * (1.0 - np.arange(1, h) / h) @ gamma[1:])
    if not lrv > 0.0:
        raise DataError("e1 (e1 - e2) has zero variance; the two forecasts tie exactly.")
    statistic = float(d.mean() / math.sqrt(lrv / n)) * hln_factor(n, h)
    weight = float(a @ diff / (diff @ diff))
    return EncompassingResult(statistic, float(stats.t(df=n - 1).sf(statistic)), weight, h, n)
