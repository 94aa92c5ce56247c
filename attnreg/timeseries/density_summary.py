"""The density scores and calibration tests of the forecast summaries, numbers first.

:func:`density_numbers` gathers, for one horizon, what :meth:`evaluate`, :meth:`calibration`,
:meth:`quantile_evaluation` and :func:`~attnreg.timeseries.scores.diebold_mariano_scores`
return (nothing is recomputed here); :func:`density_sections` and
:func:`horizons_density_sections` lay those numbers out as report sections (a table of
numbers and its notes), rendered when printed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from attnreg.exceptions import DataError, OptionError
from attnreg.report.sections import Coefficients, Lines

__all__ = ["density_numbers", "density_sections", "horizons_density_sections"]

#: one-horizon rows: (label, key of the estimate or statistic, key of the p-value)
_SCORE_ROWS = (("CRPS", "crps", None), ("Log score", "log", None),
               ("Interval score", "interval", None),
               ("Pinball loss (interval bounds)", "pinball", None))
_TEST_ROWS = (("Berkowitz LR, chi2(3)", "berkowitz_lr", "berkowitz_p"),
              ("Kupiec LR uc, chi2(1)", "uc_lr", "uc_p"),
              ("Christoffersen LR ind, chi2(1)", "ind_lr", "ind_p"),
              ("Christoffersen LR cc, chi2(2)", "cc_lr", "cc_p"),
              ("Diebold-Mariano (HLN) on CRPS, vs benchmark", "dm_crps", "dm_crps_p"))
#: several-horizon columns: (key, heading)
_SCORE_COLUMNS = (("n_scored", "n"), ("crps", "CRPS"), ("log", "Log"), ("interval", "Interval"),
                  ("pinball", "Pinball"))
_TEST_COLUMNS = (("uc_lr", "LR uc"), ("uc_p", "Pr(uc)"), ("ind_lr", "LR ind"),
                 ("ind_p", "Pr(ind)"), ("cc_lr", "LR cc"), ("cc_p", "Pr(cc)"),
                 ("berkowitz_lr", "LR Berk."), ("berkowitz_p", "Pr(Berk.)"),
                 ("dm_crps", "DM CRPS"), ("dm_crps_p", "Pr(DM)"))
_CALIBRATION_KEYS = ("uc_lr", "uc_p", "ind_lr", "ind_p", "cc_lr", "cc_p", "berkowitz_lr",
                     "berkowitz_p")
_NOTES = ("Scores: means over the forecasts with a predictive distribution (fc.evaluate()), "
          "smaller is better; no log score for empirical or adaptive intervals (an ensemble "
          "of past errors has no density); pinball: mean over the interval's two bounds as "
          "quantile forecasts, and per tau for quantile forecasts (fc.quantile_evaluation()).",
          "Tests (fc.calibration()): Kupiec unconditional coverage and Christoffersen "
          "independence and conditional coverage of the misses; Berkowitz: mean 0, AR(1) 0, "
          "variance 1 of the inverse-normal PIT; for h > 1 the errors overlap (MA(h-1)) and "
          "only uc is meaningful.")


def _pinball_key(tau: float) -> str:
    return f"pinball_tau={tau:g}"


def density_numbers(res: Any, benchmark: Any = None) -> dict[str, float] | None:
    """Every density score and calibration test of one horizon's forecasts, by key.

    Parameters
    ----------
    res : ForecastResults or RealTimeForecasts
        One horizon's forecasts.
    benchmark : forecasts of the same target, optional
        With a predictive distribution at this horizon: adds ``dm_crps`` and ``dm_crps_p``,
        the Diebold-Mariano test of the CRPS (model minus benchmark).

    Returns
    -------
    dict of str to float, or None
        None without a predictive distribution (no interval, no quantile forecasts). Keys:
        ``n_scored``, ``crps``, ``log``, ``interval``, ``pinball`` (NaN where they do not
        apply), ``pinball_tau=<tau>`` per τ of quantile forecasts, the statistics and
        p-values of :func:`~attnreg.timeseries.calibration.calibration` (``uc_lr``, ``uc_p``,
        ``ind_lr``, ..., ``berkowitz_p``; without intervals Berkowitz alone, on the PIT) and
        the DM test when a benchmark is given.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> fc = ar.forecast("infl ~ lag(infl, 1)", macro, start="1990Q1", interval="gaussian")
    >>> numbers = density_numbers(fc)
    >>> {k: round(numbers[k], 3) for k in ("crps", "log", "uc_p", "berkowitz_p")}
    {'crps': 1.301, 'log': 2.354, 'uc_p': 0.731, 'berkowitz_p': 0.002}
    """
    from attnreg.timeseries.scores import diebold_mariano_scores, evaluate_scores

    try:
        scores = evaluate_scores(res).iloc[0]
    except OptionError:
        return None
    if not scores["n_scored"]:
        return None
    out = {k: float(v) for k, v in scores.items()}
    if getattr(res, "quantile_path", None) is not None:
        out.update(_quantile_numbers(res))
    out.update(_calibration_numbers(res))
    if benchmark is not None:
        h = res.horizons[0]
        dm = diebold_mariano_scores(res, benchmark, "crps", horizon=h)
        out.update(dm_crps=float(dm.statistic), dm_crps_p=float(dm.p_value))
    return out


def _quantile_numbers(res: Any) -> dict[str, float]:
    from attnreg.timeseries.quantile_scores import quantile_evaluation

    table = quantile_evaluation(res)
    taus = table.index.get_level_values("tau")
    return {_pinball_key(t): float(v) for t, v in zip(taus, table["pinball"], strict=True)}


def _calibration_numbers(res: Any) -> dict[str, float]:
    """The calibration table's tests; Berkowitz alone on the PIT when the forecasts have no
    interval (quantile forecasts); none with fewer than 4 forecasts to test."""
    from attnreg.timeseries.calibration import berkowitz, calibration
    from attnreg.timeseries.scores import forecast_scores

    try:
        row = calibration(res).table.iloc[0]
        return {k: float(row[k]) for k in _CALIBRATION_KEYS}
    except DataError:
        pit = forecast_scores(res)["pit"].dropna().to_numpy()
    try:
        test = berkowitz(pit)
    except DataError:
        return {}
    return {"berkowitz_lr": test.statistic, "berkowitz_p": test.p_value}


def _rows(numbers: dict[str, float]) -> pd.DataFrame:
    taus = [k for k in numbers if k.startswith("pinball_tau=")]
    rows = [*_SCORE_ROWS, *((f"Pinball loss, tau = {k.split('=')[1]}", k, None) for k in taus),
            *_TEST_ROWS]
    table = pd.DataFrame(
        {"Estimate": [numbers.get(est, np.nan) for _, est, _ in rows],
         "p-value": [np.nan if p is None else numbers.get(p, np.nan) for _, _, p in rows]},
        index=[label for label, _, _ in rows])
    return table[table["Estimate"].notna()]


def _benchmark_note(benchmark: Any) -> str:
    if benchmark is None:
        return ("summary(benchmark=other forecasts with intervals) adds the Diebold-Mariano "
                "test of the CRPS.")
    return ("Diebold-Mariano on CRPS: CRPS(model) - CRPS(benchmark) over the target dates "
            "both score, two-sided, HLN correction, h - 1 lags; negative: the model is better.")


def density_sections(res: Any, benchmark: Any = None) -> tuple[Any, ...]:
    """One horizon: the table "Density scores and calibration" (Estimate, p-value) and its
    notes; none without a predictive distribution."""
    numbers = density_numbers(res, benchmark)
    if numbers is None:
        return ()
    return (Lines(("", "Density scores and calibration:")),
            Coefficients(_rows(numbers), stars=False, heading=False),
            Lines((*_NOTES, _benchmark_note(benchmark)), lead_blank=True))


def _at(benchmark: Any, h: int) -> Any:
    return None if benchmark is None else benchmark.at_horizon(h)


def horizons_density_sections(res: Any, benchmark: Any = None) -> tuple[Any, ...]:
    """Several horizons: the scores (one row per horizon) and the tests (one row per
    horizon), with their notes; none without a predictive distribution."""
    numbers = [density_numbers(res.at_horizon(h), _at(benchmark, h)) for h in res.horizons]
    if any(n is None for n in numbers):
        return ()
    frame = pd.DataFrame(numbers, index=pd.Index([f"h = {h}" for h in res.horizons]))
    taus = [(k, f"Pinball {k.split('=')[1]}") for k in frame.columns
            if k.startswith("pinball_tau=")]
    sections: list[Any] = []
    for title, columns in (("Density scores (means):", (*_SCORE_COLUMNS, *taus)),
                           ("Calibration and score tests:", _TEST_COLUMNS)):
        keep = [(k, head) for k, head in columns if k in frame and frame[k].notna().any()]
        table = frame[[k for k, _ in keep]].set_axis([head for _, head in keep], axis=1)
        sections += [Lines(("", title)), Coefficients(table, stars=False, heading=False)]
    return (*sections, Lines((*_NOTES, _benchmark_note(benchmark)), lead_blank=True))
