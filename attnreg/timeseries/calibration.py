"""Calibration of forecast intervals and densities: PIT histogram and likelihood-ratio tests.

- Kupiec (1995) unconditional coverage: misses (outcome outside the interval) ~ Bernoulli(p),
  ``p = 1 − level``; ``LR_uc = −2 [x ln p + (n−x) ln(1−p) − x ln π̂ − (n−x) ln(1−π̂)]``,
  ``π̂ = x / n``, χ²(1).
- Christoffersen (1998) independence: a first-order Markov chain of misses against
  independence, ``LR_ind``, χ²(1), from the transition counts ``n_ij``; conditional
  coverage ``LR_cc = LR_uc + LR_ind``, χ²(2).
- Berkowitz (2001): ``z_t = Φ⁻¹(PIT_t)``, ``z_t − μ = ρ (z_{t−1} − μ) + ε_t``,
  ``ε ~ N(0, σ²)``, fitted by conditional maximum likelihood (least squares of ``z_t`` on
  ``1, z_{t−1}``, ``σ̂² = RSS / (n − 1)``); ``LR_3 = −2 [L(0, 0, 1) − L(μ̂, ρ̂, σ̂²)]``, χ²(3).

At horizons above 1 the misses of consecutive forecasts overlap (MA(h−1) errors), so the
independence tests are only meaningful at h = 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import xlogy

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError
from attnreg.report import Summary

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
    lr = max(-2.0 * (_bernoulli_ll(k, n, p) - _bernoulli_ll(k, n, k / n)), 0.0)  # rounding
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
    lr = max(lr, 0.0)  # rounding
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


def berkowitz(pit: object) -> BerkowitzResult:
    """Berkowitz's (2001) joint LR test of ``μ = 0, ρ = 0, σ² = 1`` (χ²(3)).

    Examples
    --------
    >>> pit = stats.norm.cdf(np.random.default_rng(0).normal(size=500))
    >>> berkowitz(pit).p_value > 0.05
    True
    """
    u = np.asarray(pit, dtype=np.float64)
    if u.ndim != 1 or u.size < 4 or not ((u > 0.0) & (u < 1.0)).all():
        raise DataError(f"PIT values must be a 1-D sequence of at least 4 values strictly "
                        f"inside (0, 1), however: shape={u.shape}")
    z = stats.norm.ppf(u)
    X = np.column_stack([np.ones(z.size - 1), z[:-1]])
    coef, *_ = np.linalg.lstsq(X, z[1:], rcond=None)
    resid = z[1:] - X @ coef
    m = resid.size
    sigma2 = float(resid @ resid / m)
    ll1 = -0.5 * m * (np.log(2.0 * np.pi * sigma2) + 1.0)
    ll0 = float(stats.norm.logpdf(z[1:]).sum())
    lr = max(-2.0 * (ll0 - ll1), 0.0)
    rho = float(coef[1])
    mu = float(coef[0] / (1.0 - rho)) if rho != 1.0 else float("nan")
    return BerkowitzResult(lr, float(stats.chi2.sf(lr, 3)), mu, rho, sigma2)


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
        header = [f"Calibration of {100 * level:g}% {self.interval} forecast intervals "
                  "and densities"]
        footer = ["uc: Kupiec unconditional coverage (chi2(1)); ind: Christoffersen "
                  "independence of misses (chi2(1)); cc: uc + ind (chi2(2)).",
                  "Berk.: Berkowitz LR of mean 0, AR(1) 0, variance 1 of the inverse-normal "
                  "PIT (chi2(3)).",
                  "Misses of h-step forecasts overlap for h > 1: ind and cc assume h = 1."]
        return Summary.from_lines("attnreg forecast calibration", header, table, footer,
                                  stars=False)

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
    """:class:`Calibration` of forecasts made with ``interval=`` (one or several horizons)."""
    from attnreg.timeseries.scores import forecast_scores

    rows, pits = [], {}
    for h in fc.horizons:
        part = fc.at_horizon(h)
        row, pits[h] = _row(forecast_scores(part), part.plan.level)
        rows.append(row)
    table = pd.DataFrame(rows, index=pd.Index(fc.horizons, name="horizon"))
    return Calibration(table, pits, str(fc.at_horizon(fc.horizons[0]).plan.interval))
