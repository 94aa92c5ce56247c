"""NIST StRD linear least squares: certified values to the precision float64 data allow."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import attnreg as ar

# Minimum log relative error (correct significant digits) required per dataset. Filip's
# float64 data limit any solver to about 7-8 digits; R's lm drops a column there.
MIN_LRE = {"Norris": 12, "Pontius": 12, "NoInt1": 12, "NoInt2": 12, "Filip": 7,
           "Longley": 11, "Wampler1": 12, "Wampler2": 12, "Wampler3": 12, "Wampler4": 12,
           "Wampler5": 12}


def lre(got: np.ndarray, cert: np.ndarray) -> float:
    """Log relative error (absolute where the certified value is 0), capped at 15."""
    got, cert = np.asarray(got, float), np.asarray(cert, float)
    scale = np.where(cert == 0, 1.0, np.abs(cert))
    err = np.abs(got - cert) / scale
    worst = float(np.max(err))
    return 15.0 if worst == 0 else min(15.0, -np.log10(worst))


def load(nist_dir: Path, name: str) -> tuple[str, pd.DataFrame, dict]:
    spec = json.loads((nist_dir / f"{name}.json").read_text())
    frame = pd.DataFrame(spec["data"])
    model = spec["model"]
    if name == "Longley":
        xs = [c for c in frame.columns if c != "y"]
        rhs = " + ".join(xs)
    else:
        degree = int(model.get("degree", 1))
        rhs = " + ".join(["x"] + [f"I(x**{k})" for k in range(2, degree + 1)])
    formula = f"y ~ {rhs}" + ("" if model.get("intercept", True) else " - 1")
    return formula, frame, spec["certified"]


@pytest.mark.parametrize("name", sorted(MIN_LRE))
def test_certified_values(nist_dir: Path, name: str) -> None:
    formula, frame, cert = load(nist_dir, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no column may be dropped as aliased
        fit = ar.attnreg(formula, data=frame)
    est = np.array([p["estimate"] for p in cert["parameters"]])
    sd = np.array([p["std_dev"] for p in cert["parameters"]])
    assert lre(fit.coef.to_numpy(), est) >= MIN_LRE[name]
    if cert["residual_standard_deviation"] > 0:
        assert lre(fit.std_err.to_numpy(), sd) >= MIN_LRE[name] - 1
        assert lre(fit.sigma, cert["residual_standard_deviation"]) >= MIN_LRE[name] - 1
    assert lre(fit.r_squared, cert["r_squared"]) >= MIN_LRE[name] - 1


def test_filip_beats_lstsq(nist_dir: Path) -> None:
    formula, frame, cert = load(nist_dir, "Filip")
    fit = ar.attnreg(formula, data=frame)
    est = np.array([p["estimate"] for p in cert["parameters"]])
    naive = np.linalg.lstsq(fit.design.X, fit.design.y, rcond=None)[0]
    assert lre(naive, est) < 2 <= 7 <= lre(fit.coef.to_numpy(), est)
