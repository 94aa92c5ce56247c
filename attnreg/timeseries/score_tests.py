"""Tests of equal predictive ability with a density or interval score as the loss.

:func:`giacomini_white_scores` is :func:`attnreg.timeseries.compare.giacomini_white` on the
differentials ``S(model)_t − S(bench)_t`` of a score of :mod:`attnreg.timeseries.scores`
(CRPS, log, interval, pinball), over the target dates both forecasts score;
:func:`attnreg.timeseries.scores.diebold_mariano_scores` is its Diebold–Mariano twin.
"""

from __future__ import annotations

from typing import Any

from attnreg.timeseries.predictive_ability import GiacominiWhiteResult, giacomini_white
from attnreg.timeseries.scores import score_differential

__all__ = ["giacomini_white_scores"]


def giacomini_white_scores(model: Any, bench: Any, score: str = "crps", *,
                           horizon: int | None = None,
                           conditional: bool = True) -> GiacominiWhiteResult:
    """Giacomini–White test of conditional predictive ability on a score.

    Parameters
    ----------
    model, bench : ForecastResults or MultiHorizonForecasts
        Forecasts of the same target with ``interval=`` (or quantile forecasts);
        ``horizon=`` picks one horizon of several.
    score : {"crps", "log", "interval", "pinball"}
    horizon : int, optional
    conditional : bool
        Instruments ``(1, d_{t−h})``; False: the unconditional test.

    Returns
    -------
    GiacominiWhiteResult
        As :func:`~attnreg.timeseries.compare.giacomini_white` of the differentials in
        target order, with the horizon's ``h``.

    Examples
    --------
    >>> import pandas as pd
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> kw = dict(start="1980Q1", interval="gaussian")
    >>> a = ar.forecast("infl ~ lag(infl, 1)", macro, **kw)
    >>> b = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1)", macro, **kw)
    >>> res = giacomini_white_scores(a, b, "crps")
    >>> res.df, res.n_obs
    (2, 118)
    """
    d, h = score_differential(model, bench, score, horizon)
    return giacomini_white(d, h=h, conditional=conditional)
