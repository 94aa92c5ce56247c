"""Calibration of forecast intervals and densities: PIT histogram and likelihood-ratio tests.

- Kupiec (1995) unconditional coverage: misses (outcome outside the interval) ~ Bernoulli(p),
  ``p = 1 − level``; ``LR_uc = −2 [x ln p + (n−x) ln(1−p) − x ln π̂ − (n−x) ln(1−π̂)]``,
  ``π̂ = x / n``, χ²(1).
- Christoffersen (1998) independence: a first-order Markov chain of misses against
  independence, ``LR_ind``, χ²(1), from the transition counts ``n_ij``; conditional
  coverage ``LR_cc = LR_uc + LR_ind``, χ²(2).
- Berkowitz (2001): ``z_t = Φ⁻¹(PIT_t)``, ``z_t − μ = ρ (z_{t−1} − μ) + ε_t``,
  ``ε ~ N(0, σ²)``, fitted by exact maximum likelihood (the first value from the stationary
  law, as Berkowitz; the conditional likelihood on request);
  ``LR_3 = −2 [L(0, 0, 1) − L(μ̂, ρ̂, σ̂²)]``, χ²(3). PIT values of exactly 0 or 1 (an outcome
  beyond the float64 resolution of the predictive tail) are clipped to ``[ε, 1 − ε]``,
  ``ε = 2⁻⁵³`` (the spacing of float64 just below 1), so that ``|z| ≤ 8.2``.

Likelihood-ratio statistics are ≥ 0: rounding below 0 (and −0.0) is reported as 0, p-value 1.

At horizons above 1 the errors of consecutive forecasts overlap (MA(h−1)), so the
independence parts (Christoffersen, Berkowitz's ρ) are only meaningful at h = 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import optimize, stats
from scipy.special import xlogy

from attnreg._typing import FloatArray
from attnreg._warn import warn_user
from attnreg.exceptions import DataError, InferenceWarning, OptionError
from attnreg.report import Summary
from attnreg.report.fcfigures import CalibrationSetup
from attnreg.report.sections import Coefficients, Lines

__all__ = ["Calibration", "LRTest", "berkowitz", "calibration", "christoffersen", "kupiec",
           "pit_histogram"]


class LRTest(NamedTuple):
    """A likelihood-ratio test: statistic, p-value (χ² with ``df``) and degrees of freedom."""

    statistic: float
    p_value: float
    df: int


def _hits(miss: object) -> np.ndarray:
    x = np.asarray(miss, dtype=np.float64)
    if x.ndim != 1 or x.size < 2 or not np.isin(x, (0.0, 1.0)).all():
        raise DataError(f"misses must be a 1-D sequence of 0/1 of length >= 2, however: "
                        f"shape={x.shape}")
    return x


_PIT_EPS = 2.0**-53  # PIT clipped to [ε, 1 − ε]: the spacing of float64 just below 1


def _nonnegative(lr: float) -> float:
    """An LR statistic, ≥ 0 by construction: rounding below 0, and −0.0, become 0.0."""
    return lr if lr > 0.0 else 0.0


def _bernoulli_ll(k: float, n: float, p: float) -> float:
    """``k ln p + (n − k) ln(1 − p)`` with ``0 ln 0 = 0``."""
    return float(xlogy(k, p) + xlogy(n - k, 1.0 - p))


def kupiec(miss: object, p: float) -> LRTest:
    """Kupiec's unconditional-coverage LR test of a miss rate ``p``.

    Examples
    --------
    >>> round(kupiec([0, 0, 0, 1] * 5, 0.1).statistic, 6)  # 5 misses in 20
    3.693261
    """
    x = _hits(miss)
    n, k = float(x.size), float(x.sum())
    lr = _nonnegative(-2.0 * (_bernoulli_ll(k, n, p) - _bernoulli_ll(k, n, k / n)))
    return LRTest(lr, float(stats.chi2.sf(lr, 1)), 1)


def christoffersen(miss: object, p: float) -> tuple[LRTest, LRTest]:
    """Christoffersen's independence and conditional-coverage LR tests.

    Returns
    -------
    independence : LRTest
        Markov chain ``π01 ≠ π11`` against ``π01 = π11`` (χ²(1)).
    conditional_coverage : LRTest
        ``LR_uc + LR_ind`` (χ²(2)).
    """
    x = _hits(miss)
    prev, now = x[:-1], x[1:]
    n01, n11 = float(((prev == 0) & (now == 1)).sum()), float(((prev == 1) & (now == 1)).sum())
    n0, n1 = float((prev == 0).sum()), float((prev == 1).sum())
    pi01 = n01 / n0 if n0 else 0.0
    pi11 = n11 / n1 if n1 else 0.0
    pi = (n01 + n11) / (n0 + n1)
    lr = -2.0 * (_bernoulli_ll(n01 + n11, n0 + n1, pi)
                 - _bernoulli_ll(n01, n0, pi01) - _bernoulli_ll(n11, n1, pi11))
    lr = _nonnegative(lr)
    ind = LRTest(lr, float(stats.chi2.sf(lr, 1)), 1)
    cc = kupiec(x, p).statistic + lr
    return ind, LRTest(cc, float(stats.chi2.sf(cc, 2)), 2)


class BerkowitzResult(NamedTuple):
    """Berkowitz's LR test with the fitted ``μ``, ``ρ``, ``σ²`` of the AR(1) of ``Φ⁻¹(PIT)``."""

    statistic: float
    p_value: float
    mu: float
    rho: float
    sigma2: float


def _ar1_exact_ll(theta: FloatArray, z: FloatArray) -> float:
    """Exact Gaussian AR(1) log likelihood at ``(μ, atanh ρ, log σ²)`` (first value stationary)."""
    mu, rho, s2 = theta[0], np.tanh(theta[1]), np.exp(theta[2])
    d = z - mu
    e = d[1:] - rho * d[:-1]
    v1 = s2 / (1.0 - rho**2)
    return float(-0.5 * (z.size * np.log(2.0 * np.pi) + np.log(v1) + d[0] ** 2 / v1
                         + (z.size - 1) * np.log(s2) + e @ e / s2))


def berkowitz(pit: object, likelihood: str = "exact") -> BerkowitzResult:
    """Berkowitz's (2001) joint LR test of ``μ = 0, ρ = 0, σ² = 1`` (χ²(3)).

    Parameters
    ----------
    pit : array_like, shape (n,)
        PIT values in [0, 1], in time order (n >= 4); 0 and 1 are clipped to
        ``[2⁻⁵³, 1 − 2⁻⁵³]`` (an outcome beyond the float64 resolution of the predictive
        tail; ``|Φ⁻¹| ≤ 8.2``) with an :class:`~attnreg.exceptions.InferenceWarning`.
    likelihood : {"exact", "conditional"}
        ``"exact"`` (Berkowitz's): the first ``z`` drawn from the stationary law
        ``N(μ, σ² / (1 − ρ²))``, maximised numerically from the conditional estimates;
        ``"conditional"``: on the first value, closed form (least squares of ``z_t`` on
        ``1, z_{t−1}``, ``σ̂² = RSS / (n − 1)``), the null likelihood over ``z_2..z_n``.

    Examples
    --------
    >>> pit = stats.norm.cdf(np.random.default_rng(0).normal(size=500))
    >>> berkowitz(pit).p_value > 0.05
    True
    """
    u = np.asarray(pit, dtype=np.float64)
    if u.ndim != 1 or u.size < 4 or not ((u >= 0.0) & (u <= 1.0)).all():
        raise DataError(f"PIT values must be a 1-D sequence of at least 4 values in [0, 1] "
                        f"(no NaN), however: shape={u.shape}")
    edge = int(np.sum((u == 0.0) | (u == 1.0)))
    if edge:
        warn_user(f"{edge} PIT value(s) equal to 0 or 1 (an outcome beyond the predictive "
                  "tail's float64 resolution) clipped to [2**-53, 1 - 2**-53] for Berkowitz's "
                  "inverse-normal transform", InferenceWarning)
        u = np.clip(u, _PIT_EPS, 1.0 - _PIT_EPS)
    if likelihood not in ("exact", "conditional"):
        raise OptionError(f"likelihood must be 'exact' or 'conditional', however: "
                          f"{likelihood=!r}")
    z = stats.norm.ppf(u)
    X = np.column_stack([np.ones(z.size - 1), z[:-1]])
    coef, *_ = np.linalg.lstsq(X, z[1:], rcond=None)
    resid = z[1:] - X @ coef
    rho, sigma2 = float(coef[1]), float(resid @ resid / resid.size)
    mu = float(coef[0] / (1.0 - rho)) if rho != 1.0 else float(np.mean(z))
    if likelihood == "conditional":
        ll1 = -0.5 * resid.size * (np.log(2.0 * np.pi * sigma2) + 1.0)
        lr = _nonnegative(-2.0 * (float(stats.norm.logpdf(z[1:]).sum()) - ll1))
        return BerkowitzResult(lr, float(stats.chi2.sf(lr, 3)), mu, rho, sigma2)
    start = np.array([mu, np.arctanh(np.clip(rho, -0.99, 0.99)), np.log(sigma2)])
    opt = optimize.minimize(lambda t: -_ar1_exact_ll(t, z), start, method="BFGS",
                            options={"gtol": 1e-9})
    lr = _nonnegative(-2.0 * (float(stats.norm.logpdf(z).sum()) + float(opt.fun)))
    return BerkowitzResult(lr, float(stats.chi2.sf(lr, 3)), float(opt.x[0]),
                           float(np.tanh(opt.x[1])), float(np.exp(opt.x[2])))


def pit_histogram(pit: object, bins: int = 10) -> pd.DataFrame:
    """Counts and densities of PIT values in ``bins`` equal bins of [0, 1].

    Examples
    --------
    >>> pit_histogram([0.05, 0.15, 0.16, 0.95], bins=2)["count"].tolist()
    [3, 1]
    """
    u = np.asarray(pit, dtype=np.float64)
    u = u[~np.isnan(u)]
    counts, edges = np.histogram(u, bins=bins, range=(0.0, 1.0))
    return pd.DataFrame({"left": edges[:-1], "right": edges[1:], "count": counts,
                         "density": counts / max(u.size, 1) * bins})


@dataclass(frozen=True)
class Calibration:
    """PIT values and calibration tests of every horizon.

    Attributes
    ----------
    table : DataFrame
        One row per horizon: ``n``, ``coverage``, ``level``, and the statistics and p-values
        of Kupiec (``uc``), Christoffersen (``ind``, ``cc``) and Berkowitz (``berkowitz``).
    pit : dict of int to ndarray
        PIT values of the forecasts that have an interval, by horizon.
    interval : str
        The interval type of the forecasts.
    """

    table: pd.DataFrame
    pit: dict[int, FloatArray]
    interval: str

    def histogram(self, horizon: int | None = None, bins: int = 10) -> pd.DataFrame:
        """The PIT histogram of one horizon (the first by default)."""
        h = self.table.index[0] if horizon is None else horizon
        return pit_histogram(self.pit[h], bins)

    def summary(self) -> Summary:
        """The tests as a report (numbers kept in the table, rendered when printed)."""
        cols = {"n": "n", "coverage": "Coverage", "uc_lr": "LR uc", "uc_p": "Pr(uc)",
                "ind_lr": "LR ind", "ind_p": "Pr(ind)", "cc_lr": "LR cc", "cc_p": "Pr(cc)",
                "berkowitz_lr": "LR Berk.", "berkowitz_p": "Pr(Berk.)"}
        table = self.table[list(cols)].rename(columns=cols)
        table.index = [f"h = {h}" for h in self.table.index]
        level = float(self.table["level"].iloc[0])
        footer = ["uc: Kupiec unconditional coverage (chi2(1)); ind: Christoffersen "
                  "independence of misses (chi2(1)); cc: uc + ind (chi2(2)).",
                  "Berk.: Berkowitz LR of mean 0, AR(1) 0, variance 1 of the inverse-normal "
                  "PIT (exact AR(1) likelihood, chi2(3)).",
                  "h-step errors overlap for h > 1 (MA(h-1)): ind, cc and Berk. test "
                  "independence, which only h = 1 forecasts should have."]
        return Summary("attnreg forecast calibration", (
            CalibrationSetup(level, self.interval), Coefficients(table, stars=False, heading=False),
            Lines(tuple(footer), lead_blank=True)))

    def __str__(self) -> str:
        return str(self.summary())


def _row(table: pd.DataFrame, level: float) -> tuple[dict[str, float], FloatArray]:
    scored = table[~table["miss"].isna()]
    miss, pit = scored["miss"].to_numpy(), scored["pit"].to_numpy()
    p = 1.0 - level
    uc = kupiec(miss, p)
    ind, cc = christoffersen(miss, p)
    bk = berkowitz(pit)
    return {"n": float(miss.size), "coverage": 1.0 - float(miss.mean()), "level": level,
            "uc_lr": uc.statistic, "uc_p": uc.p_value, "ind_lr": ind.statistic,
            "ind_p": ind.p_value, "cc_lr": cc.statistic, "cc_p": cc.p_value,
            "berkowitz_lr": bk.statistic, "berkowitz_p": bk.p_value, "berkowitz_mu": bk.mu,
            "berkowitz_rho": bk.rho, "berkowitz_sigma2": bk.sigma2}, pit


def calibration(fc: Any) -> Calibration:
    """:class:`Calibration` of forecasts made with ``interval=`` (one or several horizons;
    ordinary or real-time forecasts, through their ``score_inputs()``)."""
    from attnreg.timeseries.scores import score_table

    rows, pits, interval = [], {}, ""
    for h in fc.horizons:
        inputs = fc.at_horizon(h).score_inputs()
        table = score_table(inputs)
        n = int(table["miss"].notna().sum())
        if n < 4:
            raise DataError(f"horizon {h} has {n} forecasts with an interval; calibration needs "
                            "at least 4: start earlier or lower min_errors=")
        row, pits[h] = _row(table, inputs.level)
        rows.append(row)
        interval = interval or inputs.interval
    table = pd.DataFrame(rows, index=pd.Index(fc.horizons, name="horizon"))
    return Calibration(table, pits, interval)
