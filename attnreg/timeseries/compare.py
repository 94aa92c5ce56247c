"""Comparing many out-of-sample forecasts: accuracy, pairwise tests and the model confidence set.

:func:`compare_forecasts` takes forecasts of one target (results of :func:`attnreg.forecast`
covering the same target dates at the same horizon) and a benchmark (the prevailing mean, or
another forecast) and returns a ForecastComparison: for every model the MSFE, the
MSFE ratio and out-of-sample R² against the benchmark, the Diebold–Mariano test (with the
Harvey–Leybourne–Newbold correction), Clark–West (for models that nest the benchmark), the
Giacomini–White test of conditional predictive ability, forecast-encompassing tests, and
whether the model belongs to the model confidence set of Hansen, Lunde & Nason.

The tests are also available on plain arrays: :mod:`attnreg.timeseries.predictive_ability`
(``giacomini_white``, ``encompassing_test``) and :mod:`attnreg.timeseries.mcs`
(``model_confidence_set`` and ``bootstrap_indices``, the block-bootstrap draws it uses, which
are those of ``arch.bootstrap`` for the same seed). The comparison's table is a
:class:`~attnreg.timeseries.comparison.ForecastComparison`.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.exceptions import DataError, InferenceWarning, OptionError
from attnreg.timeseries import evaluation as ev
from attnreg.timeseries.comparison import ForecastComparison
from attnreg.timeseries.mcs import BOOTSTRAPS, MCS_METHODS, Bootstrap, MCSMethod, model_confidence_set
from attnreg.timeseries.predictive_ability import (
    GW_MIN_OBS,
    encompassing_test,
    giacomini_white,
    loss_values,
)

__all__ = ["compare_forecasts"]

#: the columns of the comparison's table
_COLUMNS = ("msfe", "msfe_ratio", "oos_r2", "dm_statistic", "dm_p_value", "cw_statistic",
            "cw_p_value", "gw_statistic", "gw_p_value", "enc_statistic", "enc_p_value",
            "enc_weight", "enc_rev_statistic", "enc_rev_p_value", "mcs_p_value", "in_mcs")

def _forecast_data(fc: Any, horizon: int | None, position: int) -> Any:
    from attnreg.timeseries.views import single_horizon

    if not hasattr(fc, "plan") and not hasattr(fc, "at_horizon"):
        raise OptionError(f"compare_forecasts() takes results of attnreg.forecast(), however "
                          f"forecasts[{position}] is {type(fc).__name__}")
    return single_horizon(fc, horizon)


def _default_names(fcs: Sequence[Any]) -> list[str]:
    methods = [str(fc.plan.method) for fc in fcs]
    out = []
    for i, m in enumerate(methods):
        repeated = methods.count(m) > 1
        out.append(f"{m} ({methods[:i + 1].count(m)})" if repeated else m)
    return out


def _describe(labels: pd.Index) -> str:
    shown = ", ".join(str(v) for v in labels[:3])
    return shown + (f" (and {len(labels) - 3} more)" if len(labels) > 3 else "")


def _check_alignment(fcs: Sequence[Any], names: Sequence[str]) -> None:
    h0, t0 = fcs[0].plan.horizon, fcs[0].forecasts.index
    for fc, name in zip(fcs[1:], names[1:], strict=True):
        if fc.plan.horizon != h0:
            raise OptionError(f"forecasts to compare must share one horizon, however {names[0]!r} "
                              f"is at horizon {h0} and {name!r} at horizon {fc.plan.horizon}")
        t = fc.forecasts.index
        if not t.equals(t0):
            missing, extra = t0.difference(t), t.difference(t0)
            parts = []
            if len(missing):
                parts.append(f"{name!r} lacks target dates {_describe(missing)} that "
                             f"{names[0]!r} has")
            if len(extra):
                parts.append(f"{names[0]!r} lacks target dates {_describe(extra)} that "
                             f"{name!r} has")
            raise DataError("forecasts to compare must cover the same target dates, however "
                            + "; ".join(parts or [f"{name!r} orders them differently"])
                            + " (use the same start and horizon)")
        a0, a = fcs[0].forecasts["actual"].to_numpy(), fc.forecasts["actual"].to_numpy()
        if not np.allclose(a, a0, rtol=1e-12, atol=0.0):
            raise DataError(f"forecasts to compare must forecast one series, however the actual "
                            f"values of {name!r} differ from those of {names[0]!r} at "
                            f"{_describe(t0[~np.isclose(a, a0, rtol=1e-12, atol=0.0)])}")


def _nests(model: Any, bench: Any) -> bool:
    return set(bench.plan.design.column_names) <= set(model.plan.design.column_names)


def _safe(test: Any, *args: Any, **kw: Any) -> tuple[Any, str | None]:
    try:
        return test(*args, **kw), None
    except DataError as err:
        return None, str(err)


def compare_forecasts(forecasts: Sequence[Any], benchmark: Any = "mean", *,
                      names: Sequence[str] | None = None, horizon: int | None = None,
                      loss: ev.Loss = "squared", mcs_size: float = 0.1, mcs_reps: int = 1000,
                      block_size: int | None = None, mcs_method: MCSMethod = "R",
                      bootstrap: Bootstrap = "stationary", seed: int = 0) -> ForecastComparison:
    """Compare several out-of-sample forecasts of one target with a benchmark and each other.

    Parameters
    ----------
    forecasts : sequence of ForecastResults (or several-horizon results)
        Results of :func:`attnreg.forecast` with the same target dates and horizon (the same
        ``start`` and ``horizon``; the formulas, methods and schemes may differ).
    benchmark : "mean" or ForecastResults, default "mean"
        The prevailing mean (at each origin, the mean of every response observed by then:
        the same in every run over the same target dates, whatever its model or scheme), or
        another forecast of the same target dates (e.g. an AR model nested in the others).
    names : sequence of str, optional
        One per forecast (default: each method, numbered when repeated).
    horizon : int, optional
        The horizon to compare when the results hold several.
    loss : {"squared", "absolute"}, default "squared"
        The loss of the DM and GW tests and of the model confidence set.
    mcs_size : float, default 0.1
        α of the model confidence set (the set is the (1 − α) MCS).
    mcs_reps, block_size, mcs_method, bootstrap, seed
        Of :func:`model_confidence_set` (block length default ``int(sqrt(n))``).

    Returns
    -------
    ForecastComparison

    Raises
    ------
    DataError
        If the forecasts do not cover the same target dates (the message names the dates
        missing from which model) or do not forecast the same series.
    OptionError
        If their horizons differ (named), or an argument is invalid.

    Notes
    -----
    Each test compares a model with the benchmark on the common target dates; nothing
    beyond the forecasts is used, so the comparison inherits the forecasts' rule that at
    each origin only data observed by then were used. Clark–West applies to models nesting
    the benchmark: the prevailing mean is nested in every model with an intercept; a
    forecast benchmark is taken as nested when its design's columns are among the model's.
    A test that is not defined (identical forecasts) is NaN and a note says why.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> ar1 = ar.forecast("infl ~ lag(infl, 1)", macro, start="1990Q1")
    >>> big = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1) + lag(tbilrate, 1)", macro,
    ...                   method="ridge", start="1990Q1")
    >>> cmp = ar.compare_forecasts([big], benchmark=ar1, names=["ridge"])
    >>> cmp.table.loc["ridge", ["msfe_ratio", "dm_p_value", "cw_p_value"]].round(3)
    msfe_ratio    0.910
    dm_p_value    0.217
    cw_p_value    0.030
    Name: ridge, dtype: float64
    >>> late = ar.forecast("infl ~ lag(infl, 1)", macro, start="1995Q1")
    >>> ar.compare_forecasts([ar1, late])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnreg.exceptions.DataError: ... 'ols (2)' lacks target dates 1990Q1, 1990Q2, 1990Q3 (and 17 more) ...
    """
    fcs, names = _forecasts_and_names(forecasts, names, horizon)
    bench_name, bench, nested, notes = _benchmark(benchmark, fcs, names, horizon)
    if loss not in ("squared", "absolute"):
        raise OptionError(f"loss must be 'squared' or 'absolute', however: {loss=}.")
    if mcs_method not in MCS_METHODS or bootstrap not in BOOTSTRAPS:
        raise OptionError(f"mcs_method must be one of {MCS_METHODS} and bootstrap one of "
                          f"{BOOTSTRAPS}, however: {mcs_method=}, {bootstrap=}.")
    h = int(fcs[0].plan.horizon)
    y = fcs[0].forecasts["actual"].to_numpy()
    F = np.column_stack([fc.forecasts["forecast"].to_numpy() for fc in fcs])
    E, eb = y[:, None] - F, y - bench
    rows = [_model_row(y, F[:, j], bench, h, loss, nested[j], name, notes)
            for j, name in enumerate(names)]
    if y.size - h < GW_MIN_OBS and y.size - h > 2:  # n = T - h differentials, q = 2
        notes.append(f"GW uses {y.size - h} loss differentials, fewer than {GW_MIN_OBS}: its "
                     "chi-squared(2) p-values are unreliable (the test rejects far less often "
                     "than its level in samples this small).")
    if not all(nested):
        notes.append("CW is NaN for " + ", ".join(n for n, k in zip(names, nested, strict=True)
                                                  if not k) + ": the benchmark is not nested.")
    all_names = [*names, bench_name]
    losses = pd.DataFrame(loss_values(np.column_stack([E, eb]), loss), columns=all_names)
    mcs, why_mcs = _safe(model_confidence_set, losses, mcs_size, reps=mcs_reps,
                         block_size=block_size, method=mcs_method, bootstrap=bootstrap, seed=seed)
    if why_mcs:
        notes.append(f"MCS: {why_mcs}")
    rows.append([ev.msfe(y, bench), 1.0, 0.0, *(np.nan,) * 11])
    table = pd.DataFrame(rows, index=pd.Index(all_names, name="model"), columns=list(_COLUMNS[:-2]))
    table["mcs_p_value"] = mcs.p_values.to_numpy() if mcs is not None else np.nan
    table["in_mcs"] = table["mcs_p_value"] > (mcs.size if mcs is not None else np.inf)
    return ForecastComparison(table=table, names=tuple(names), benchmark_name=bench_name,
                              targets=fcs[0].forecasts.index, actual=y, forecasts=F,
                              benchmark=bench, horizon=h, loss=loss, mcs=mcs, notes=tuple(notes))


def _forecasts_and_names(forecasts: Any, names: Sequence[str] | None,
                         horizon: int | None) -> tuple[list[Any], list[str]]:
    """The single-horizon data of each forecast and their checked names."""
    if isinstance(forecasts, (str, bytes)) or not isinstance(forecasts, Sequence) or not forecasts:
        raise OptionError("compare_forecasts() needs a non-empty list of forecasts, however: "
                          f"forecasts={forecasts!r}")
    fcs = [_forecast_data(fc, horizon, i) for i, fc in enumerate(forecasts)]
    if names is None:
        names = _default_names(fcs)
    names = [str(n) for n in names]
    if len(names) != len(fcs):
        raise OptionError(f"names must have one entry per forecast ({len(fcs)}), however: "
                          f"{len(names)} names")
    if len(set(names)) != len(names):
        raise OptionError(f"names must be distinct, however: names={names!r}")
    return fcs, names


def _benchmark(benchmark: Any, fcs: list[Any], names: list[str],
               horizon: int | None) -> tuple[str, FloatArray, list[bool], list[str]]:
    """(its name, its forecasts (n_targets,), whether each model nests it, notes), after
    checking that every forecast covers the same target dates of one series."""
    notes: list[str] = []
    if isinstance(benchmark, str):
        if benchmark != "mean":
            raise OptionError(f"benchmark must be 'mean' or a forecast, however: {benchmark=}")
        bench_name = "mean" if "mean" not in names else "prevailing mean"
        _check_alignment(fcs, names)
        bench = fcs[0].forecasts["benchmark"].to_numpy()
        differ = [n for fc, n in zip(fcs, names, strict=True)
                  if not np.allclose(fc.forecasts["benchmark"].to_numpy(), bench, rtol=1e-12)]
        if differ:
            notes.append(f"The prevailing means of {', '.join(differ)} differ from {names[0]}'s "
                         f"(another response or sample); the benchmark is {names[0]}'s.")
        return bench_name, bench, [True] * len(fcs), notes
    bfc = _forecast_data(benchmark, horizon, len(fcs))
    bench_name = f"{bfc.plan.method} (benchmark)"
    _check_alignment([bfc, *fcs], [bench_name, *names])
    bench = bfc.forecasts["forecast"].to_numpy()
    return bench_name, bench, [_nests(fc, bfc) for fc in fcs], notes


def _model_row(y: FloatArray, f: FloatArray, bench: FloatArray, h: int, loss: ev.Loss,
               nested: bool, name: str, notes: list[str]) -> list[float]:
    """One model's accuracy and tests against the benchmark; why a test is undefined is
    appended to ``notes``."""
    e, eb = y - f, y - bench
    dm, why_dm = _safe(ev.diebold_mariano, e, eb, h=h, loss=loss)
    cw, why_cw = _safe(ev.clark_west, y, f, bench, h=h) if nested else (None, None)
    with warnings.catch_warnings():  # a small sample is said once, in the notes
        warnings.simplefilter("ignore", InferenceWarning)
        gw, why_gw = _safe(giacomini_white, loss_values(e, loss) - loss_values(eb, loss), h=h)
    enc, why_enc = _safe(encompassing_test, eb, e, h=h)
    rev, _ = _safe(encompassing_test, e, eb, h=h)
    notes += [f"{name}: {why}" for why in dict.fromkeys((why_dm, why_cw, why_gw, why_enc)) if why]
    return [ev.msfe(y, f), ev.msfe_ratio(y, f, bench), ev.oos_r2(y, f, bench),
            *(dm[:2] if dm else (np.nan, np.nan)), *(cw[:2] if cw else (np.nan, np.nan)),
            *(gw[:2] if gw else (np.nan, np.nan)), *(enc[:3] if enc else (np.nan,) * 3),
            *(rev[:2] if rev else (np.nan, np.nan))]
