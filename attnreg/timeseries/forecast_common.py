"""What the forecast results classes share: density scoring, calibration, plots, labels.

:class:`DensityScoring` gives one- and several-horizon forecasts their density and interval
scores, calibration and quantile evaluation; :func:`plot_results` is their ``plot``.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any

import pandas as pd

from attnreg.exceptions import OptionError
from attnreg.methods import get_method

__all__ = ["ByHorizon", "DensityScoring", "plot_results", "tuning_label"]


class ByHorizon:
    """What forecasts of several horizons share (their ``parts``, one per horizon, and the
    ``horizons`` they are for): one horizon's part, and the tables of every horizon."""

    parts: tuple[Any, ...]

    @property
    def horizons(self) -> list[int]:  # pragma: no cover - each class says where h is kept
        raise NotImplementedError

    def at_horizon(self, h: int) -> Any:
        """The forecasts of horizon ``h`` (indexed by target date).

        Examples
        --------
        >>> import attnreg as ar
        >>> from statsmodels.datasets import macrodata
        >>> macro = macrodata.load_pandas().data
        >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
        >>> fh = ar.forecast("infl ~ lag(infl, h)", macro, start="2000Q1", horizon=[1, 2])
        >>> fh.at_horizon(2)
        <attnreg forecasts: ols, recursive, h=2, 39 forecasts, OOS R²=-0.2450>
        """
        for horizon, part in zip(self.horizons, self.parts, strict=True):
            if horizon == h:
                return part
        raise OptionError(f"horizon={h!r} was not forecast; horizons: {self.horizons}")

    @cached_property
    def forecasts(self) -> pd.DataFrame:
        """Every horizon's forecasts table, indexed by (horizon, target)."""
        return pd.concat([p.forecasts for p in self.parts], keys=self.horizons,
                         names=["horizon", "target"])

    @cached_property
    def evaluation(self) -> pd.DataFrame:
        """Every horizon's evaluation, one row per horizon."""
        return pd.DataFrame([p.evaluation for p in self.parts],
                            index=pd.Index(self.horizons, name="horizon"))


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
    """``plot_forecasts(res, kind, **kw)`` from :mod:`attnreg.timeseries.fcplots` (an
    ImportError naming the module where an installation lacks it)."""
    try:
        from attnreg.timeseries.fcplots import plot_forecasts
    except ModuleNotFoundError as err:
        if err.name != "attnreg.timeseries.fcplots":
            raise
        raise ImportError(f"plot(kind={kind!r}) needs the module attnreg.timeseries.fcplots, "
                          "which this installation does not have") from None
    return plot_forecasts(res, kind, **kw)


def tuning_label(method: str) -> str:
    """How the summary names a method's tuning parameter (``lambda`` or ``k``)."""
    return "lambda" if get_method(method).tuning == "lam" else "k"
