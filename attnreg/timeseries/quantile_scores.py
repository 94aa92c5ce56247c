"""Scores of quantile forecasts per τ: pinball loss, hit rate and its Kupiec test.

The "coverage" of a τ quantile forecast is its hit rate, the share of outcomes below it,
which equals τ for a calibrated forecast (for growth-at-risk: the 5 % quantile should be
undershot 5 % of the time, Adrian, Boyarchenko & Giannone 2019); Kupiec's likelihood-ratio
test (:func:`attnreg.timeseries.calibration.kupiec`) tests a hit rate of τ.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import OptionError
from attnreg.timeseries.calibration import kupiec
from attnreg.timeseries.scores import pinball_loss

__all__ = ["crossing_note", "n_crossing", "quantile_evaluation"]


def quantile_evaluation(fc: Any) -> pd.DataFrame:
    """Per horizon and τ: pinball loss, hit rate and Kupiec's test of the hit rate.

    Parameters
    ----------
    fc : ForecastResults, MultiHorizonForecasts, RealTimeForecasts or RealTimeHorizons
        Quantile forecasts (``method="quantreg"``); real-time ones are scored against the
        release they are evaluated on, over the forecasts whose release is out.

    Returns
    -------
    DataFrame, shape (n_horizons * n_tau, 5)
        Indexed by (horizon, tau): ``n``, ``pinball`` (mean loss of the τ forecast as
        fitted), ``hit_rate`` (share of outcomes below it; τ when calibrated), ``kupiec_lr``
        and ``kupiec_p`` (χ²(1) test of a hit rate of τ).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import attnreg as ar
    >>> rng = np.random.default_rng(0)
    >>> df = pd.DataFrame({"y": rng.standard_normal(120), "x": rng.standard_normal(120)})
    >>> fc = ar.forecast("y ~ lag(y, 1) + lag(x, 1)", df, method="quantreg",
    ...                  tau=[0.1, 0.5, 0.9], start=60)
    >>> table = quantile_evaluation(fc)
    >>> table.index.tolist()
    [(1, 0.1), (1, 0.5), (1, 0.9)]
    >>> list(table.columns)
    ['n', 'pinball', 'hit_rate', 'kupiec_lr', 'kupiec_p']
    """
    rows, keys = [], []
    for h in fc.horizons:
        part = fc.at_horizon(h)
        if part.quantile_path is None or part.taus is None:
            raise OptionError(f"quantile scores need quantile forecasts (method='quantreg', "
                              f"tau=[...]), not method {part.method!r}")
        actual = part.forecasts["actual"].to_numpy(dtype=float)
        keep = ~np.isnan(actual)  # real-time forecasts: those whose release is out
        y = actual[keep]
        for k, tau in enumerate(part.taus):
            q = part.quantile_path[keep, k]
            hits = (y < q).astype(float)
            test = kupiec(hits, tau)
            rows.append({"n": float(y.size), "pinball": float(pinball_loss(y, q, tau).mean()),
                         "hit_rate": float(hits.mean()), "kupiec_lr": test.statistic,
                         "kupiec_p": test.p_value})
            keys.append((h, tau))
    return pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(keys, names=["horizon", "tau"]))


def n_crossing(res: Any) -> int:
    """Forecasts whose quantiles cross (a larger τ forecast below a smaller one's).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> n_crossing(SimpleNamespace(quantile_path=np.array([[0.0, 1.0], [1.0, 0.5]])))
    1
    """
    q = res.quantile_path
    return 0 if q is None else int(np.count_nonzero(np.any(np.diff(q, axis=1) < 0, axis=1)))


def crossing_note(res: Any) -> list[str]:
    """The summary's line on the τ forecast and their crossings (none for other forecasts)."""
    if res.quantile_path is None or res.taus is None:
        return []
    taus = ", ".join(f"{t:g}" for t in res.taus)
    return [f"Quantile forecasts at tau = {taus}; the point forecast is their median. "
            f"{n_crossing(res)} of {res.quantile_path.shape[0]} forecasts had crossing "
            "quantiles (sorted before the median, intervals and scores)."]
