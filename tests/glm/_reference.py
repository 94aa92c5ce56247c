"""The R fixtures of tests/glm (tests/reference/glm_r.json, made by make_glm.R)."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import attnreg as ar

FIXTURE = Path(__file__).resolve().parents[1] / "reference" / "glm_r.json"


@cache
def cases() -> dict[str, Any]:
    """Every case of the fixture, by name."""
    return json.loads(FIXTURE.read_text())["cases"]


def frame(case: dict[str, Any]) -> pd.DataFrame:
    return pd.DataFrame(case["data"])


def fit_case(case: dict[str, Any], **options: Any) -> Any:
    """attnreg's fit of a fixture case (``method="glm"`` with its family, link, weights and
    offset)."""
    return ar.attnreg(case["formula"], frame(case), method="glm", family=case["family"],
                      link=case["link"], weights=case["weights"], offset=case["offset"],
                      **options)


def r_name(name: str) -> str:
    """R's name of a design column: ``C(g)[T.b]`` is R's ``gb``."""
    m = re.fullmatch(r"C\((\w+)\)\[T\.(.*)\]", name)
    return name if m is None else m.group(1) + m.group(2)


def r_order(fit: Any, names: list[str]) -> np.ndarray:
    """Positions of R's coefficients (``names``) among attnreg's (patsy puts factors first)."""
    ours = [r_name(n) for n in fit.design.column_names]
    return np.array([ours.index(n) for n in names])
