"""Real-time forecasts at several horizons: one :class:`RealTimeForecasts` per horizon.

``forecast(formula, vintages, vintage="vintage", horizon=[1, 4])`` runs
:func:`attnreg.timeseries.vintages.forecast_vintages` once per horizon (the formula's name
``h`` replaced by the horizon, as in :func:`attnreg.forecast`) and gathers the results in a
:class:`RealTimeHorizons`, indexed by (horizon, target date).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from attnreg.timeseries.forecast_common import ByHorizon, DensityScoring
from attnreg.timeseries.vintages import RealTimeForecasts, forecast_vintages

__all__ = ["RealTimeHorizons", "forecast_real_time"]


@dataclass(frozen=True)
class RealTimeHorizons(ByHorizon, DensityScoring):
    """Real-time forecasts of several horizons from the same vintages.

    :meth:`evaluate`, :meth:`calibration`, :meth:`quantile_evaluation`, :meth:`plot` and
    :meth:`summary` as for :class:`~attnreg.timeseries.vintages.RealTimeForecasts`, per horizon.

    Attributes
    ----------
    parts : tuple of RealTimeForecasts
        One per horizon, increasing (``at_horizon(h)`` picks one).
    formula : str
        The formula as given (``h`` stands for the horizon).
    """

    parts: tuple[RealTimeForecasts, ...]
    formula: str

    @property
    def horizons(self) -> list[int]:
        """The horizons, increasing."""
        return [p.horizon for p in self.parts]

    def leakage_audit(self) -> pd.DataFrame:
        """:meth:`RealTimeForecasts.leakage_audit` of every horizon, one row per horizon."""
        return pd.DataFrame([p.leakage_audit() for p in self.parts],
                            index=pd.Index(self.horizons, name="horizon"))

    def summary(self, benchmark: Any = None) -> Any:
        """Report by horizon (:func:`attnreg.timeseries.rtreport.real_time_horizons_summary`;
        ``benchmark``: forecasts with intervals to test the CRPS against, per horizon)."""
        from attnreg.timeseries.rtreport import real_time_horizons_summary

        return real_time_horizons_summary(self, benchmark)

    def plot(self, kind: str = "forecast", **kw: Any) -> Any:
        """Plots of :func:`attnreg.timeseries.rtreport.plot_real_time` (``horizon=`` picks one)."""
        from attnreg.timeseries.rtreport import plot_real_time

        return plot_real_time(self, kind, **kw)

    def __repr__(self) -> str:
        r2 = ", ".join(f"{p.horizon}: {p.evaluation.oos_r2:.4f}" for p in self.parts)
        first = self.parts[0]
        return (f"<attnreg real-time forecasts: {first.method}, {first.scheme}, horizons "
                f"{self.horizons} vs {first.evaluate_on!r} release, OOS R² {r2}>")


def forecast_real_time(formula: str, data: Any, method: str, *, horizons: list[int],
                       several: bool, at_horizon: Any,
                       **kw: Any) -> RealTimeForecasts | RealTimeHorizons:
    """:func:`~attnreg.timeseries.vintages.forecast_vintages` at every horizon.

    Parameters
    ----------
    formula : str
        The formula, with ``h`` for the horizon.
    data : DataFrame or dict of DataFrame
        The vintages (long form or by vintage).
    method : str
    horizons : list of int
    several : bool
        True when ``horizon=`` was a sequence (a :class:`RealTimeHorizons` even for one).
    at_horizon : callable
        :func:`attnreg.timeseries.forecast.at_horizon` (the formula of one horizon).
    **kw
        The other arguments of ``forecast_vintages``.
    """
    frames = [data] if isinstance(data, pd.DataFrame) else list(getattr(data, "values", list)())
    sample = next((f for f in frames if isinstance(f, pd.DataFrame)), pd.DataFrame())
    parts = [forecast_vintages(at_horizon(formula, h, sample), data, method, horizon=h, **kw)
             for h in horizons]
    if not several:
        return parts[0]
    return RealTimeHorizons(parts=tuple(parts), formula=formula)
