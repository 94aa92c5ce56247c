"""What the forecast results classes share: density scoring, calibration, plots, labels.

:class:`DensityScoring` gives one- and several-horizon forecasts their density and interval
scores, calibration and quantile evaluation; :func:`plot_results` is their ``plot``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from attnreg.methods import get_method

__all__ = ["DensityScoring", "plot_results", "tuning_label"]


class DensityScoring:
    """What one- and several-horizon forecasts share: their density and interval scores, their
    calibration and, for quantile forecasts, the scores of each quantile."""

    def evaluate(self, scores: Any = ("crps", "log", "interval", "pinball")) -> pd.DataFrame:
        """Mean density and interval scores per horizon (:mod:`attnreg.timeseries.scores`)."""
        from attnreg.timeseries.scores import evaluate_scores

        return evaluate_scores(self, scores)

    def calibration(self) -> Any:
        """PIT values; Kupiec, Christoffersen, Berkowitz tests (:mod:`.calibration`)."""
        from attnreg.timeseries.calibration import calibration

        return calibration(self)

    def quantile_evaluation(self) -> pd.DataFrame:
        """Quantile forecasts: pinball loss, hit rate and Kupiec test per horizon and τ
        (:func:`attnreg.timeseries.quantile_scores.quantile_evaluation`)."""
        from attnreg.timeseries.quantile_scores import quantile_evaluation

        return quantile_evaluation(self)


def plot_results(res: Any, kind: str, kw: dict[str, Any]) -> Any:
    """``plot_forecasts(res, kind, **kw)`` from :mod:`attnreg.timeseries.fcplots`."""
    try:
        from attnreg.timeseries.fcplots import plot_forecasts
    except ModuleNotFoundError as err:
        if err.name != "attnreg.timeseries.fcplots":
            raise
        if kind == "forecast" and not hasattr(res, "parts"):  # the original plot (one horizon)
            from attnreg.plots import plot_forecast

            return plot_forecast(res, **kw)
        raise ImportError(f"plot(kind={kind!r}) needs the module attnreg.timeseries.fcplots, "
                          "which this installation does not have") from None
    return plot_forecasts(res, kind, **kw)


def tuning_label(method: str) -> str:
    """How the summary names a method's tuning parameter (``lambda`` or ``k``)."""
    return "lambda" if get_method(method).tuning == "lam" else "k"
