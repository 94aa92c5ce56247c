"""The parts of a forecast report, as data: the setting, the notes and the tuning path.

Each is a :class:`~attnreg.report.figures.Figures` section (its fields are entries of
:attr:`Summary.statistics <attnreg.report.summary.Summary.statistics>`); the tables of
accuracy are :class:`~attnreg.report.sections.Coefficients`. The renderers are in
:mod:`attnreg.report.render_forecast`. Dates (targets, origins) are kept as their labels.
"""

from __future__ import annotations

from dataclasses import dataclass

from attnreg.report.figures import Figures

__all__ = ["CalibrationSetup", "ComparisonNotes", "ComparisonSetup", "ForecastSetup",
           "HorizonsSetup", "IntervalMethod", "LeakageFigures", "ModelConfidence",
           "TuningRange"]


@dataclass(frozen=True)
class ForecastSetup(Figures):
    """The setting of out-of-sample forecasts at one horizon.

    Attributes
    ----------
    formula, method, scheme : str
    window : int or None
        The rolling window (None for a recursive scheme).
    horizon : int
    strategy : str
        ``"direct"`` or ``"iterated"`` (printed in the notes after the tables).
    interval : str or None
        The kind of forecast intervals (None without), described in the notes.
    level : float or None
        Their nominal coverage.
    refit_every : int or None
        Origins between two estimations (None: estimated once).
    n_forecasts : int
    first_target, last_target, first_origin : str
    first_n_train : int
        Training rows at the first origin.
    engine : str
    """

    formula: str
    method: str
    scheme: str
    window: int | None
    horizon: int
    strategy: str
    interval: str | None
    level: float | None
    refit_every: int | None
    n_forecasts: int
    first_target: str
    last_target: str
    first_origin: str
    first_n_train: int
    engine: str


@dataclass(frozen=True)
class IntervalMethod(Figures):
    """How the forecast intervals were made.

    Attributes
    ----------
    interval : str
        ``"gaussian"``, ``"empirical"`` or ``"aci"``.
    level : float
        Nominal coverage.
    min_errors : int
        Past errors needed before an empirical interval.
    aci_gamma : float
        The adaptive conformal step.
    description : tuple of str
        How they were made, in words (the forecasts' own account of it).
    """

    interval: str
    level: float
    min_errors: int
    aci_gamma: float
    description: tuple[str, ...]


@dataclass(frozen=True)
class TuningRange(Figures):
    """The range of a tuning parameter chosen at every origin.

    Attributes
    ----------
    parameter : str
        ``"lambda"`` or ``"k"``.
    over : str
        What it ranges over, in words (``"origins"``).
    tuning_min, tuning_median, tuning_max : float
    """

    parameter: str
    over: str
    tuning_min: float
    tuning_median: float
    tuning_max: float


@dataclass(frozen=True)
class HorizonsSetup(Figures):
    """The setting of forecasts at several horizons.

    Attributes
    ----------
    formula, method, scheme : str
    window : int or None
    horizons : tuple of int
    strategy : str
    first_target, last_target : str
    engines : tuple of str
    """

    formula: str
    method: str
    scheme: str
    window: int | None
    horizons: tuple[int, ...]
    strategy: str
    first_target: str
    last_target: str
    engines: tuple[str, ...]


@dataclass(frozen=True)
class CalibrationSetup(Figures):
    """What a calibration report tests.

    Attributes
    ----------
    level : float
        Nominal coverage of the intervals.
    interval : str
    """

    level: float
    interval: str


@dataclass(frozen=True)
class ComparisonSetup(Figures):
    """What a comparison of several models' forecasts compares.

    Attributes
    ----------
    n_models : int
    benchmark : str
    horizon : int
        The DM test uses ``horizon - 1`` lags.
    loss : str
    n_forecasts : int
        Forecasts common to every model.
    first_target, last_target : str
    """

    n_models: int
    benchmark: str
    horizon: int
    loss: str
    n_forecasts: int
    first_target: str
    last_target: str


@dataclass(frozen=True)
class ComparisonNotes(Figures):
    """What each test of a comparison of forecasts is.

    Attributes
    ----------
    horizon : int
        The DM test uses ``horizon - 1`` lags.
    """

    horizon: int


@dataclass(frozen=True)
class ModelConfidence(Figures):
    """The model confidence set of Hansen, Lunde and Nason.

    Attributes
    ----------
    mcs_method : str
        The statistic (``"R"`` or ``"max"``).
    bootstrap : str
    block_size, reps : int
    seed : int or None
    size : float
        Its test size: the set holds at confidence 1 − size.
    included : tuple of str
        The models in the set.
    """

    mcs_method: str
    bootstrap: str
    block_size: int
    reps: int
    seed: int | None
    size: float
    included: tuple[str, ...]


@dataclass(frozen=True)
class LeakageFigures(Figures):
    """Honest against leaky forecasts (the look-ahead audit).

    Attributes
    ----------
    n_forecasts : int
    oos_r2_honest, oos_r2_leaky, oos_r2_full_sample : float
        OOS R² re-estimated at each origin, with the full-sample metric, and of
        full-sample fits.
    oos_r2_gain : float
        Leaky minus honest OOS R².
    rms_change : float
        Root mean square of the change of each forecast (leaky − honest).
    """

    n_forecasts: int
    oos_r2_honest: float
    oos_r2_leaky: float
    oos_r2_full_sample: float
    oos_r2_gain: float
    rms_change: float
