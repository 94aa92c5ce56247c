"""Out-of-sample forecast evaluation: losses, OOS R², Diebold–Mariano and Clark–West tests.

Every function takes aligned 1-D arrays of equal length (one entry per forecast origin)
and is pure. Test results are NamedTuples, so they unpack as ``statistic, p_value, ...``.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

import numpy as np
from scipy import stats

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, OptionError

__all__ = [
    "ClarkWestResult",
    "CoverageResult",
    "DieboldMarianoResult",
    "clark_west",
    "diebold_mariano",
    "dm_differential",
    "interval_coverage",
    "mae",
    "msfe",
    "msfe_ratio",
    "oos_r2",
    "rmse",
]

Loss = Literal["squared", "absolute"]
Alternative = Literal["two-sided", "less", "greater"]
_LOSSES = ("squared", "absolute")
_ALTERNATIVES = ("two-sided", "less", "greater")


class DieboldMarianoResult(NamedTuple):
    """Diebold–Mariano test of equal predictive accuracy.

    Attributes
    ----------
    statistic : float
        DM statistic (HLN-corrected when ``hln`` was True).
    p_value : float
        p-value for ``alternative`` (Student-t(n-1) with ``hln``, else standard normal).
    mean_loss_diff : float
        Mean of ``d_t = L(e_model) - L(e_bench)``; negative means the model loses less.
    h : int
        Forecast horizon (the long-run variance uses ``h - 1`` autocovariances).
    n_obs : int
        Number of forecasts.
    long_run_variance : float
        Long-run variance of ``d_t`` used in the statistic.
    kernel : {"rectangular", "bartlett"}
        "rectangular" (DM's truncated estimator) unless it was non-positive, in which case
        Bartlett weights ``1 - k/h`` were used instead.
    """

    statistic: float
    p_value: float
    mean_loss_diff: float
    h: int
    n_obs: int
    long_run_variance: float
    kernel: Literal["rectangular", "bartlett"]


class ClarkWestResult(NamedTuple):
    """Clark–West test of equal accuracy for nested models (one-sided: model better).

    Attributes
    ----------
    statistic : float
        t-statistic of the mean adjusted loss differential (Newey–West, ``h - 1`` lags).
    p_value : float
        One-sided standard-normal p-value, ``1 - Phi(statistic)``.
    mean_adj_diff : float
        Mean of ``f_t = (y-b)^2 - [(y-m)^2 - (b-m)^2]``.
    h : int
        Forecast horizon.
    n_obs : int
        Number of forecasts.
    long_run_variance : float
        Newey–West long-run variance of ``f_t``.
    """

    statistic: float
    p_value: float
    mean_adj_diff: float
    h: int
    n_obs: int
    long_run_variance: float


def _vectors(*arrays: object) -> list[FloatArray]:
    """Return the inputs as finite float64 vectors of one common length >= 2."""
    out = [np.asarray(a, dtype=np.float64) for a in arrays]
    lengths = {a.shape for a in out}
    if any(a.ndim != 1 for a in out) or len(lengths) != 1:
        raise DataError(f"expected 1-D arrays of one length, however: shapes={sorted(lengths)}.")
    if out[0].size < 2:
        raise DataError(f"need at least 2 forecasts, however: n_obs={out[0].size}.")
    if not all(np.isfinite(a).all() for a in out):
        raise DataError("the forecasts or outcomes contain NaN or inf; drop those origins first.")
    return out


def _check_horizon(h: object, n_obs: int) -> int:
    """Return ``h`` as an int in 1..n_obs-1, or raise OptionError."""
    if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or not 1 <= h < n_obs:
        raise OptionError(f"h must be an integer in 1..{n_obs - 1} (n_obs - 1), however: {h=}.")
    return int(h)


def _autocov(x: FloatArray, max_lag: int) -> FloatArray:
    """Autocovariances ``gamma_0..gamma_max_lag`` with divisor n, shape (max_lag + 1,)."""
    dev = x - x.mean()
    n = dev.size
    return np.array([dev[k:] @ dev[: n - k] / n for k in range(max_lag + 1)])


def msfe(actual: object, forecast: object) -> float:
    """Mean squared forecast error ``mean((y - f)^2)``.

    Examples
    --------
    >>> msfe([1.0, 2.0], [0.0, 2.0])
    0.5
    """
    y, f = _vectors(actual, forecast)
    return float(np.mean((y - f) ** 2))


def rmse(actual: object, forecast: object) -> float:
    """Root mean squared forecast error ``sqrt(msfe)``.

    Examples
    --------
    >>> rmse([0.0, 0.0], [3.0, 4.0])  # sqrt((9 + 16) / 2)
    3.5355339059327378
    """
    return float(np.sqrt(msfe(actual, forecast)))


def mae(actual: object, forecast: object) -> float:
    """Mean absolute forecast error ``mean(|y - f|)``.

    Examples
    --------
    >>> mae([1.0, 2.0], [0.0, 4.0])
    1.5
    """
    y, f = _vectors(actual, forecast)
    return float(np.mean(np.abs(y - f)))


def msfe_ratio(actual: object, forecast: object, benchmark: object) -> float:
    """MSFE of ``forecast`` over MSFE of ``benchmark`` (below 1: the model wins).

    Examples
    --------
    >>> msfe_ratio([0.0, 0.0], [1.0, 1.0], [2.0, 2.0])
    0.25
    """
    y, f, b = _vectors(actual, forecast, benchmark)
    return float(np.sum((y - f) ** 2) / np.sum((y - b) ** 2))


def oos_r2(actual: object, forecast: object, benchmark: object) -> float:
    """Campbell–Thompson out-of-sample R²: ``1 - sum((y-f)^2) / sum((y-b)^2)``.

    Parameters
    ----------
    actual, forecast, benchmark : array_like, shape (n_obs,)
        Outcomes, model forecasts and benchmark forecasts (usually the recursive mean),
        aligned by origin.

    Returns
    -------
    float
        Positive when the model's MSFE is below the benchmark's; equals ``1 - msfe_ratio``.

    Examples
    --------
    >>> oos_r2([0.0, 0.0], [1.0, 1.0], [2.0, 2.0])
    0.75
    """
    return 1.0 - msfe_ratio(actual, forecast, benchmark)


def _p_value(statistic: float, dist: stats.rv_continuous | stats.rv_frozen, alt: str) -> float:
    """p-value of ``statistic`` under ``dist`` for the given alternative."""
    if alt == "less":
        return float(dist.cdf(statistic))
    if alt == "greater":
        return float(dist.sf(statistic))
    return float(2.0 * dist.sf(abs(statistic)))


def _dm_variance(d: FloatArray, h: int) -> tuple[float, Literal["rectangular", "bartlett"]]:
    """Rectangular long-run variance of ``d`` (h-1 lags), Bartlett if that is not positive."""
    gamma = _autocov(d, h - 1)
    lrv = float(gamma[0] + 2.0 * gamma[1:].sum())
    if lrv > 0.0:
        return lrv, "rectangular"
    weights = 1.0 - np.arange(1, h) / h
    return float(gamma[0] + 2.0 * weights @ gamma[1:]), "bartlett"


def diebold_mariano(
    e_model: object,
    e_bench: object,
    h: int = 1,
    loss: Loss = "squared",
    hln: bool = True,
    alternative: Alternative = "two-sided",
) -> DieboldMarianoResult:
    """Diebold–Mariano (1995) test, with the Harvey–Leybourne–Newbold (1997) correction.

    With ``d_t = L(e_model,t) - L(e_bench,t)``, ``DM = mean(d) / sqrt(V / n)`` where ``V``
    is DM's long-run variance ``gamma_0 + 2 sum_{k=1}^{h-1} gamma_k`` (autocovariances with
    divisor n, rectangular weights: an h-step forecast error is at most MA(h-1)). If that
    estimate is not positive, Bartlett weights ``1 - k/h`` are used (``kernel`` says which).
    With ``hln`` the statistic is multiplied by ``sqrt((n + 1 - 2h + h(h-1)/n) / n)`` and
    referred to Student-t(n-1), otherwise to N(0, 1). For h = 1 and ``hln=False`` the
    statistic is the one-sample t-statistic of ``d`` times ``sqrt(n / (n-1))`` (divisor n
    instead of n-1); with ``hln=True`` the two coincide exactly.

    Parameters
    ----------
    e_model, e_bench : array_like, shape (n_obs,)
        Forecast errors ``y - f`` of the model and of the benchmark, aligned by origin.
    h : int, default 1
        Forecast horizon, 1 <= h < n_obs.
    loss : {"squared", "absolute"}, default "squared"
    hln : bool, default True
        Apply the small-sample correction and Student-t(n-1) p-values.
    alternative : {"two-sided", "less", "greater"}, default "two-sided"
        "less": the model's expected loss is smaller (E d < 0); "greater": larger.

    Returns
    -------
    DieboldMarianoResult

    Raises
    ------
    DataError
        If the loss differential has zero variance (e.g. identical forecasts).

    Examples
    --------
    >>> res = diebold_mariano([0.1, -0.2, 0.3, -0.1], [0.5, -0.4, 0.6, 0.2])
    >>> round(res.statistic, 4), res.kernel
    (-2.9755, 'rectangular')
    """
    if loss not in _LOSSES or alternative not in _ALTERNATIVES:
        raise OptionError(
            f"loss must be one of {_LOSSES} and alternative one of {_ALTERNATIVES}, "
            f"however: {loss=}, {alternative=}."
        )
    em, eb = _vectors(e_model, e_bench)
    d = em**2 - eb**2 if loss == "squared" else np.abs(em) - np.abs(eb)
    return dm_differential(d, h, hln, alternative)


def dm_differential(d: FloatArray, h: int = 1, hln: bool = True,
                    alternative: Alternative = "two-sided") -> DieboldMarianoResult:
    """The Diebold–Mariano test of :func:`diebold_mariano` on given loss differentials.

    ``d`` (shape (n_obs,)) is ``L_model − L_bench`` for any loss, e.g. a density score of
    :mod:`attnreg.timeseries.scores`.

    Examples
    --------
    >>> round(dm_differential(np.array([-0.24, -0.12, -0.27, -0.03])).statistic, 4)
    -2.9755
    """
    if alternative not in _ALTERNATIVES:
        raise OptionError(f"alternative must be one of {_ALTERNATIVES}, however: {alternative=}.")
    (d,) = _vectors(d)
    n = d.size
    h = _check_horizon(h, n)
    lrv, kernel = _dm_variance(d, h)
    if not lrv > 0.0:
        raise DataError("the loss differential has zero variance; the two forecasts tie exactly.")
    statistic = float(d.mean() / np.sqrt(lrv / n))
    if hln:
        statistic *= float(np.sqrt((n + 1 - 2 * h + h * (h - 1) / n) / n))
    dist = stats.t(df=n - 1) if hln else stats.norm
    return DieboldMarianoResult(
        statistic, _p_value(statistic, dist, alternative), float(d.mean()), h, n, lrv, kernel
    )


def clark_west(actual: object, f_model: object, f_bench: object, h: int = 1) -> ClarkWestResult:
    """Clark–West (2007) test for a larger model ``f_model`` nesting ``f_bench``.

    The adjusted differential ``f_t = (y-b)^2 - [(y-m)^2 - (b-m)^2]`` removes the noise the
    larger model adds by estimating parameters that are zero under the null. The statistic
    is ``mean(f) / sqrt(V / n)`` with ``V`` the Newey–West long-run variance of ``f_t``
    (Bartlett weights ``1 - k/h``, lags ``1..h-1``, autocovariances with divisor n), compared
    one-sided with N(0, 1): large values favour the larger model.

    Parameters
    ----------
    actual, f_model, f_bench : array_like, shape (n_obs,)
        Outcomes, forecasts of the larger model, forecasts of the nested benchmark.
    h : int, default 1
        Forecast horizon, 1 <= h < n_obs.

    Returns
    -------
    ClarkWestResult

    Examples
    --------
    >>> res = clark_west([1.0, 0.0, 2.0, 1.0], [0.8, 0.3, 1.5, 0.9], [0.5, 0.5, 0.5, 0.5])
    >>> round(res.statistic, 4)
    1.6649
    """
    y, m, b = _vectors(actual, f_model, f_bench)
    h = _check_horizon(h, y.size)
    adjusted = (y - b) ** 2 - ((y - m) ** 2 - (b - m) ** 2)
    gamma = _autocov(adjusted, h - 1)
    lrv = float(gamma[0] + 2.0 * (1.0 - np.arange(1, h) / h) @ gamma[1:])
    if not lrv > 0.0:
        raise DataError("the adjusted loss differential has zero variance; nothing to test.")
    statistic = float(adjusted.mean() / np.sqrt(lrv / y.size))
    p_value = float(stats.norm.sf(statistic))
    return ClarkWestResult(statistic, p_value, float(adjusted.mean()), h, y.size, lrv)


class CoverageResult(NamedTuple):
    """Empirical coverage of forecast intervals.

    Attributes
    ----------
    coverage : float
        Share of intervals containing the outcome (bounds included); NaN without intervals.
    mean_width : float
        Mean of ``upper - lower``.
    n_intervals : int
        Forecasts that have an interval (both bounds finite).
    """

    coverage: float
    mean_width: float
    n_intervals: int


def interval_coverage(actual: object, lower: object, upper: object) -> CoverageResult:
    """Coverage and mean width of the intervals ``[lower, upper]``, skipping missing ones.

    Parameters
    ----------
    actual, lower, upper : array_like, shape (n_obs,)
        Outcomes and interval bounds; forecasts whose bounds are NaN (no interval yet) are
        left out.

    Returns
    -------
    CoverageResult

    Examples
    --------
    >>> interval_coverage([0.0, 1.0, 5.0, 2.0], [-1.0, 0.0, 0.0, np.nan], [1.0, 1.0, 3.0, 3.0])
    CoverageResult(coverage=0.6666666666666666, mean_width=2.0, n_intervals=3)
    """
    y, lo, up = (np.asarray(a, dtype=np.float64) for a in (actual, lower, upper))
    if not (y.shape == lo.shape == up.shape) or y.ndim != 1:
        raise DataError(f"expected 1-D arrays of one length, however: shapes="
                        f"{sorted({y.shape, lo.shape, up.shape})}.")
    has = np.isfinite(lo) & np.isfinite(up)
    if not has.any():
        return CoverageResult(float("nan"), float("nan"), 0)
    inside = (y[has] >= lo[has]) & (y[has] <= up[has])
    return CoverageResult(float(inside.mean()), float(np.mean(up[has] - lo[has])),
                          int(has.sum()))
