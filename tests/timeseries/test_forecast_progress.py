"""Long forecasts show their progress by default; short ones and progress=False stay quiet."""

from __future__ import annotations

import pytest

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.timeseries import _running

FORMULA = "y ~ lag(y, 1) + lag(x, 1)"
KW = dict(method="pcr", k=1, start="2019Q1")  # refits at every origin (no updating path)


def test_a_long_forecast_shows_progress_by_default(series, monkeypatch, capsys) -> None:
    seen = []

    def long(plan, first_fit):  # as if each fit took a minute
        seen.append((plan.n_forecasts, first_fit))
        return 60.0 * plan.n_forecasts

    monkeypatch.setattr(_running, "estimated_seconds", long)
    fc = ar.forecast(FORMULA, series, **KW)
    err = capsys.readouterr().err
    n = fc.plan.n_forecasts
    assert f"forecast (pcr, recursive): {n}/{n}" in err and err.endswith("\n")
    assert len(seen) == 1 and seen[0][0] == n and seen[0][1] > 0.0  # judged once, first fit


def test_quiet_when_asked_or_when_short(series, monkeypatch, capsys) -> None:
    ar.forecast(FORMULA, series, **KW)  # a fraction of a second: no line
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(_running, "estimated_seconds", lambda plan, first_fit: 1e6)
    ar.forecast(FORMULA, series, progress=False, **KW)
    assert capsys.readouterr().err == ""
    with pytest.raises(OptionError, match=r"progress must be True, False or None.*'auto'"):
        ar.forecast(FORMULA, series, progress="auto", **KW)


def test_the_estimate_counts_the_refits(series) -> None:
    fc = ar.forecast(FORMULA, series, refit_every=4, **KW)
    refits = int(fc.plan.refit.sum())
    assert refits == -(-fc.plan.n_forecasts // 4)
    assert _running.estimated_seconds(fc.plan, 0.5) == 0.5 * refits
