"""Proper scores of forecast distributions: CRPS, log score, interval (Winkler) score, pinball.

Every score is negatively oriented (smaller is better). The predictive distribution of a
forecast follows from its interval type (:func:`attnreg.forecast`):

- ``"gaussian"``: the distribution whose central ``level`` interval is the printed
  interval. At h = 1 the interval is the fit's prediction interval ``forecast ± t_ν s``
  (ν the residual degrees of freedom of the fit at the origin, ``s`` the prediction sd), so
  the predictive distribution is the location-scale Student t ``forecast + s·T_ν``: CRPS
  (closed form, Jordan, Krüger & Lerch 2019), log score and PIT of that t. For h > 1
  (direct: ``z σ``; iterated: ``z σ sqrt(Σψ²)``) it is ``N(forecast, s²)`` with
  ``s = (upper − lower) / (2 z)``, ``z`` the normal quantile of ``(1 + level) / 2``.
- ``"empirical"`` and ``"aci"``: the forecast plus each past out-of-sample error at the same
  horizon observed by the origin (an ensemble, as the empirical intervals); CRPS from the
  ensemble, no log score (an ensemble has no density: NaN).
- quantile forecasts (``method="quantreg"`` with two τ or more, ``interval=None`` or
  ``"quantile"``): the distribution with those quantiles of
  :mod:`attnreg.timeseries.quantile_density` (linear between them, exponential tails): its
  exact CRPS, log score and PIT (the pinball loss of every τ:
  :func:`attnreg.timeseries.quantile_scores.quantile_evaluation`).

The interval score and the pinball loss use the forecast interval itself, as the
``(1 − level) / 2`` and ``(1 + level) / 2`` quantile forecasts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError
from attnreg.timeseries import quantile_density as qd

__all__ = ["SCORES", "Predictive", "crps_ensemble", "crps_normal", "crps_t",
           "diebold_mariano_scores", "evaluate_scores", "forecast_scores", "interval_score",
           "log_score_normal", "log_score_t", "pinball_loss", "predictive", "score_differential",
           "score_table"]

SCORES = ("crps", "log", "interval", "pinball")


def crps_normal(y: FloatArray, mu: FloatArray, sigma: FloatArray) -> FloatArray:
    """CRPS of ``N(mu, sigma²)`` at ``y``: ``σ [z (2Φ(z) − 1) + 2φ(z) − 1/√π]``, shape (n,).

    Examples
    --------
    >>> round(float(crps_normal(np.array([0.0]), np.array([0.0]), np.array([1.0]))[0]), 6)
    0.233695
    """
    z = (y - mu) / sigma
    return sigma * (z * (2.0 * stats.norm.cdf(z) - 1.0) + 2.0 * stats.norm.pdf(z)
                    - 1.0 / np.sqrt(np.pi))


def crps_t(y: FloatArray, df: FloatArray, mu: FloatArray, sigma: FloatArray) -> FloatArray:
    """CRPS of the location-scale Student t ``mu + sigma·T_df`` at ``y``, shape (n,).

    With ``z = (y − mu) / sigma`` and ``F``, ``f`` the cdf and density of ``T_df``:
    ``σ [z (2F(z) − 1) + 2 f(z) (ν + z²) / (ν − 1) − 2√ν B(½, ν − ½) / ((ν − 1) B(½, ν/2)²)]``
    (Jordan, Krüger & Lerch 2019); infinite for ``ν ≤ 1`` (no finite mean).

    Examples
    --------
    >>> round(float(crps_t(np.array([0.0]), np.array([1e8]), np.array([0.0]),
    ...                    np.array([1.0]))[0]), 6)  # ν → ∞: the normal's 0.233695
    0.233695
    """
    y, df, mu, sigma = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64)
                                             for a in (y, df, mu, sigma)))
    z = (y - mu) / sigma
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.exp(special.betaln(0.5, df - 0.5) - 2.0 * special.betaln(0.5, df / 2.0))
        out = sigma * (z * (2.0 * stats.t.cdf(z, df) - 1.0)
                       + 2.0 * stats.t.pdf(z, df) * (df + z**2) / (df - 1.0)
                       - 2.0 * np.sqrt(df) * ratio / (df - 1.0))
    return np.where(df > 1.0, out, np.where(np.isnan(df), np.nan, np.inf))


def log_score_t(y: FloatArray, df: FloatArray, mu: FloatArray, sigma: FloatArray) -> FloatArray:
    """Negative log density of ``mu + sigma·T_df`` at ``y``, shape (n,).

    Examples
    --------
    >>> round(float(log_score_t(np.array([0.0]), np.array([1.0]), np.array([0.0]),
    ...                         np.array([1.0]))[0]), 6)  # Cauchy: log π
    1.14473
    """
    return -stats.t.logpdf(y, df, loc=mu, scale=sigma)


def crps_ensemble(y: FloatArray, members: FloatArray) -> FloatArray:
    """CRPS of the empirical distribution of ``members`` (n, m) at ``y`` (n,), shape (n,).

    ``E|X − y| − E|X − X'| / 2`` with X, X' drawn from the m members (divisor m²), from the
    sorted members: ``(2 / m²) Σ_i (x_(i) − y) (m 1{y < x_(i)} − i + 1/2)``.

    Examples
    --------
    >>> float(crps_ensemble(np.array([0.0]), np.array([[-1.0, 1.0]]))[0])  # 1 - 1/2
    0.5
    """
    x = np.sort(members, axis=1)
    m = x.shape[1]
    i = np.arange(1, m + 1)
    w = m * (y[:, None] < x) - i[None, :] + 0.5
    return 2.0 / m**2 * np.einsum("nm,nm->n", x - y[:, None], w)


def log_score_normal(y: FloatArray, mu: FloatArray, sigma: FloatArray) -> FloatArray:
    """Negative log density of ``N(mu, sigma²)`` at ``y``, shape (n,).

    Examples
    --------
    >>> round(float(log_score_normal(np.array([0.0]), np.array([0.0]), np.array([1.0]))[0]), 6)
    0.918939
    """
    return -stats.norm.logpdf(y, loc=mu, scale=sigma)


def interval_score(y: FloatArray, lower: FloatArray, upper: FloatArray,
                   alpha: float) -> FloatArray:
    """Winkler's interval score of the central ``1 − alpha`` interval, shape (n,).

    ``(u − l) + (2/α)(l − y)1{y < l} + (2/α)(y − u)1{y > u}`` (Gneiting & Raftery 2007).

    Examples
    --------
    >>> interval_score(np.array([0.0, 3.0]), np.array([-1.0, -1.0]), np.array([1.0, 1.0]), 0.5)
    array([ 2., 10.])
    """
    return (upper - lower) + 2.0 / alpha * (np.maximum(lower - y, 0.0)
                                            + np.maximum(y - upper, 0.0))


def pinball_loss(y: FloatArray, q: FloatArray, tau: float) -> FloatArray:
    """Quantile (pinball) loss of the ``tau`` quantile forecast ``q``, shape (n,).

    Examples
    --------
    >>> pinball_loss(np.array([1.0, -1.0]), np.array([0.0, 0.0]), 0.9)
    array([0.9, 0.1])
    """
    return np.where(y >= q, tau * (y - q), (1.0 - tau) * (q - y))


@dataclass(frozen=True)
class Predictive:
    """The predictive distributions of one horizon's forecasts.

    Attributes
    ----------
    kind : {"gaussian", "t", "ensemble", "quantile"}
    actual, mean : ndarray, shape (n,)
        Outcomes and forecasts.
    scale : ndarray, shape (n,), or None
        Gaussian: the sd ``s``; t: the scale ``s`` of ``mean + s·T_df`` (NaN where the
        forecast has no interval).
    errors : ndarray, shape (n,), or None
        Ensemble: past errors in target order; forecast i's ensemble is
        ``mean[i] + errors[:n_members[i]]``.
    n_members : ndarray of int, shape (n,), or None
        Ensemble size of each forecast (0 where it has no interval).
    quantiles : ndarray, shape (n, K), or None
        Quantile forecasts, rearranged (sorted along each row).
    taus : ndarray, shape (K,), or None
        Their levels.
    """

    kind: str
    actual: FloatArray
    mean: FloatArray
    scale: FloatArray | None
    errors: FloatArray | None
    n_members: np.ndarray | None
    quantiles: FloatArray | None = None
    taus: FloatArray | None = None
    df: FloatArray | None = None
    """t: the degrees of freedom of each forecast's Student t, shape (n,)."""

    def pit(self) -> FloatArray:
        """Probability integral transform of each outcome, shape (n,); NaN without interval.

        Gaussian: ``Φ((y − mean) / s)``; t: ``F_df((y − mean) / s)``. Ensemble of m past
        errors: ``(r + 1/2) / (m + 1)``, with r the number of past errors below the outcome's
        error; under exchangeability r is uniform on 0..m, so the PIT is uniform on the
        midpoints of m + 1 equal bins.
        """
        if self.kind == "gaussian":
            assert self.scale is not None
            return stats.norm.cdf((self.actual - self.mean) / self.scale)
        if self.kind == "t":
            assert self.scale is not None and self.df is not None
            return stats.t.cdf((self.actual - self.mean) / self.scale, self.df)
        if self.kind == "quantile":
            assert self.quantiles is not None and self.taus is not None
            return qd.quantile_cdf(self.actual, self.quantiles, self.taus)
        assert self.errors is not None and self.n_members is not None
        err = self.actual - self.mean
        out = np.full(err.size, np.nan)
        for i in np.flatnonzero(self.n_members > 0):  # one pool per origin
            m = int(self.n_members[i])
            out[i] = (np.count_nonzero(self.errors[:m] < err[i]) + 0.5) / (m + 1)
        return out

    def crps(self) -> FloatArray:
        """CRPS of each forecast, shape (n,); NaN without interval."""
        if self.kind == "gaussian":
            assert self.scale is not None
            return crps_normal(self.actual, self.mean, self.scale)
        if self.kind == "t":
            assert self.scale is not None and self.df is not None
            return crps_t(self.actual, self.df, self.mean, self.scale)
        if self.kind == "quantile":
            assert self.quantiles is not None and self.taus is not None
            return qd.crps_quantile_density(self.actual, self.quantiles, self.taus)
        assert self.errors is not None and self.n_members is not None
        out = np.full(self.actual.size, np.nan)
        for i in np.flatnonzero(self.n_members > 0):
            m = int(self.n_members[i])
            out[i] = crps_ensemble(self.actual[i:i + 1],
                                   self.mean[i] + self.errors[None, :m])[0]
        return out

    def log_score(self) -> FloatArray:
        """Negative log predictive density, shape (n,); NaN for ensembles."""
        if self.kind == "gaussian":
            assert self.scale is not None
            return log_score_normal(self.actual, self.mean, self.scale)
        if self.kind == "t":
            assert self.scale is not None and self.df is not None
            return log_score_t(self.actual, self.df, self.mean, self.scale)
        if self.kind == "quantile":
            assert self.quantiles is not None and self.taus is not None
            return -qd.quantile_logpdf(self.actual, self.quantiles, self.taus)
        return np.full(self.actual.size, np.nan)


def predictive(res: Any) -> Predictive:
    """The predictive distributions implied by one horizon's forecast intervals or quantiles."""
    p = res.plan
    quantiles = getattr(res, "quantile_path", None)
    if quantiles is not None and p.interval in (None, "quantile"):
        return _quantile_predictive(res, quantiles)
    if p.interval is None or res.lower is None or res.upper is None:
        raise OptionError("density scores and calibration need forecast intervals: call "
                          "forecast(..., interval='gaussian', 'empirical' or 'aci')")
    actual = np.asarray(p.design.y[p.targets], dtype=np.float64)
    mean = np.asarray(res.predictions, dtype=np.float64)
    df = getattr(res, "df_path", None)
    if p.interval == "gaussian" and df is not None:  # h = 1: the fit's t prediction interval
        q = stats.t.ppf(0.5 + p.level / 2.0, df)
        return Predictive("t", actual, mean, (res.upper - res.lower) / (2.0 * q), None, None,
                          df=np.asarray(df, dtype=np.float64))
    if p.interval == "gaussian":
        z = stats.norm.ppf(0.5 + p.level / 2.0)
        return Predictive("gaussian", actual, mean, (res.upper - res.lower) / (2.0 * z),
                          None, None)
    known = np.searchsorted(p.target_pos, p.origin_pos, side="right")
    members = np.where(np.isnan(res.lower), 0, known)
    return Predictive("ensemble", actual, mean, None, actual - mean, members)


def _quantile_predictive(res: Any, quantiles: FloatArray) -> Predictive:
    """The distribution of :mod:`~attnreg.timeseries.quantile_density` of each forecast."""
    if len(res.taus) < 2:
        raise OptionError(f"density scores of quantile forecasts need at least two tau, "
                          f"however: tau={list(res.taus)}; fit several (tau=[0.05, 0.5, 0.95])")
    p = res.plan
    actual = np.asarray(p.design.y[p.targets], dtype=np.float64)
    return Predictive("quantile", actual, np.asarray(res.predictions, dtype=np.float64), None,
                      None, None, quantiles=qd.rearrange(quantiles),
                      taus=np.asarray(res.taus, dtype=np.float64))


def forecast_scores(res: Any) -> pd.DataFrame:
    """Per-forecast scores and PIT of one horizon, indexed by target date.

    Columns ``crps``, ``log``, ``interval``, ``pinball`` (the mean of the pinball losses of
    the lower and upper bounds as the ``(1 ∓ level) / 2`` quantiles), ``pit`` and ``miss``
    (1 when the outcome is outside the interval); NaN where a forecast has no interval
    (quantile forecasts have CRPS, log score and PIT without one). The forecasts come from
    ``res.score_inputs()`` (:mod:`attnreg.timeseries.score_inputs`; real-time forecasts:
    those whose release is out, against it).
    """
    return score_table(res.score_inputs())


def score_table(inputs: Any) -> pd.DataFrame:
    """:func:`forecast_scores` of a :class:`~attnreg.timeseries.score_inputs.ScoreInputs`."""
    pred, lo, up = inputs.predictive, inputs.lower, inputs.upper
    alpha = 1.0 - inputs.level
    y = pred.actual
    has = ~(np.isnan(lo) | np.isnan(up))
    pinball = 0.5 * (pinball_loss(y, lo, alpha / 2.0) + pinball_loss(y, up, 1.0 - alpha / 2.0))
    miss = np.where(has, ((y < lo) | (y > up)).astype(float), np.nan)
    return pd.DataFrame({"crps": pred.crps(), "log": pred.log_score(),
                         "interval": interval_score(y, lo, up, alpha), "pinball": pinball,
                         "pit": pred.pit(), "miss": miss}, index=inputs.index)


def evaluate_scores(fc: Any, scores: Any = SCORES) -> pd.DataFrame:
    """Mean scores per horizon: one row per horizon, a column per score and ``n_scored``.

    Parameters
    ----------
    fc : ForecastResults or MultiHorizonForecasts
        Forecasts made with ``interval=``, or quantile forecasts.
    scores : sequence of {"crps", "log", "interval", "pinball"}

    Returns
    -------
    DataFrame, shape (n_horizons, len(scores) + 1)
        Means over the forecasts that have a predictive distribution (``n_scored`` of them,
        those with an interval or quantile forecasts); ``log`` is
        NaN for empirical and adaptive intervals.
    """
    names = [scores] if isinstance(scores, str) else list(scores)
    unknown = [s for s in names if s not in SCORES]
    if unknown or not names:
        raise OptionError(f"scores must name some of {SCORES}, however: {scores=!r}")
    rows = []
    for h in fc.horizons:
        table = forecast_scores(fc.at_horizon(h))
        scored = table[table["crps"].notna()]  # forecasts with a predictive distribution
        rows.append({"n_scored": float(len(scored)),
                     **{s: float(scored[s].mean()) if len(scored) else np.nan
                        for s in names}})
    return pd.DataFrame(rows, index=pd.Index(fc.horizons, name="horizon"))


def diebold_mariano_scores(model: Any, bench: Any, score: str = "crps", *,
                           horizon: int | None = None, hln: bool = True,
                           alternative: str = "two-sided") -> Any:
    """Diebold–Mariano test with a density or interval score as the loss.

    ``d_t = S(model)_t − S(bench)_t`` over the target dates both score (both need
    ``interval=``; e.g. ACI against Gaussian intervals of the same model), tested as in
    :func:`attnreg.timeseries.evaluation.diebold_mariano` (``h − 1`` autocovariances, HLN).

    Parameters
    ----------
    model, bench : ForecastResults or MultiHorizonForecasts
        Forecasts of the same target (``horizon=`` picks one horizon of several).
    score : {"crps", "log", "interval", "pinball"}
    horizon : int, optional
    hln : bool
    alternative : {"two-sided", "less", "greater"}
        ``"less"``: the model's expected score is smaller (better).

    Returns
    -------
    DieboldMarianoResult
    """
    from attnreg.timeseries.evaluation import dm_differential

    d, h = score_differential(model, bench, score, horizon)
    return dm_differential(d, h, hln, alternative)  # type: ignore[arg-type]


def score_differential(model: Any, bench: Any, score: str,
                       horizon: int | None = None) -> tuple[FloatArray, int]:
    """``S(model)_t − S(bench)_t`` over the target dates both score, in target order, shape
    (n,), and the horizon (OptionError for another score, different horizons, or fewer than
    2 common dates)."""
    from attnreg.timeseries.views import single_horizon

    if score not in SCORES:
        raise OptionError(f"score must be one of {SCORES}, however: {score=!r}")
    a, b = single_horizon(model, horizon), single_horizon(bench, horizon)
    if a.horizons != b.horizons:
        raise OptionError(f"the two forecasts have horizons {a.horizons[0]} and "
                          f"{b.horizons[0]}: compare forecasts of one horizon")
    both = pd.concat([forecast_scores(a)[score], forecast_scores(b)[score]], axis=1,
                     join="inner", keys=["model", "bench"]).dropna()
    if len(both) < 2:
        raise OptionError(f"the two forecasts share {len(both)} target dates with a {score!r} "
                          "score; at least 2 are needed (log: Gaussian intervals only)")
    return both["model"].to_numpy() - both["bench"].to_numpy(), int(a.horizons[0])
