"""Capabilities decide: no code asks which method a fit is, and refusals name what is missing.

Outside the registry (``attnreg/methods.py``) and the family that defines a method
(``linear/`` for ols, ridge and pcr, ``softmax/``, ``nn/`` for the networks), the package
never compares a method's or family's name with a literal, nor looks a method up in the
spectral table ``RULES``; it asks the estimator's :class:`~attnreg.methods.Capabilities` or
the fit's rule.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import attnreg as ar
from attnreg.exceptions import OptionError
from attnreg.methods import get_method, method_names
from tests.conftest import REPO

NAMES = ("ols", "ridge", "pcr", "softmax", "block", "ftt", "spectral", "network")
#: ``method == 'ols'``, ``family != "spectral"``, ``name in ("block", "ftt")``, ...
COMPARISON = re.compile(r"\b(method|family|name)\s*(==|!=|\bin\b|\bnot in\b)\s*[(\[{]?\s*"
                        r"[\"'](" + "|".join(NAMES) + r")[\"']")
#: ``.family ==`` and ``RULES[...]``: which method, not what it can do
LOOKUP = re.compile(r"\.family\s*(==|!=|\bin\b|\bnot in\b)|\.family\)|\bRULES\[")
#: the registry, and the families that define the methods
ALLOWED = ("methods.py", "linear/", "softmax/", "nn/")


def offending(root: Path) -> list[str]:
    """``path:line: text`` of every comparison against a method or family name."""
    hits = []
    for path in sorted((root / "attnreg").rglob("*.py")):
        rel = path.relative_to(root / "attnreg").as_posix()
        if rel.startswith(ALLOWED):
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if COMPARISON.search(code) or LOOKUP.search(code):
                hits.append(f"attnreg/{rel}:{number}: {line.strip()}")
    return hits


def test_no_method_name_comparison_outside_the_registry_and_its_families() -> None:
    hits = offending(REPO)
    assert not hits, "ask a capability instead:\n" + "\n".join(hits)


@pytest.mark.parametrize("line", ['    if fit.method != "ols":',
                                  "    spectral = estimator.family == 'spectral'",
                                  '    if method not in ("block", "ftt"):',
                                  "    rule = RULES[fit.method]"])
def test_a_comparison_is_found(tmp_path: Path, line: str) -> None:
    """The check can fail: one comparison added to a copy of a module is reported."""
    (tmp_path / "attnreg" / "report").mkdir(parents=True)
    shutil.copy(REPO / "attnreg" / "plots.py", tmp_path / "attnreg" / "plots.py")
    (tmp_path / "attnreg" / "report" / "x.py").write_text(f"def f(fit):\n{line}\n")
    assert offending(tmp_path) == [f"attnreg/report/x.py:2: {line.strip()}"]


def test_the_registry_declares_the_capabilities() -> None:
    assert method_names("linear") == ("ols", "ridge", "pcr")
    assert method_names("attention") == ("ols", "ridge", "pcr", "softmax")
    assert [get_method(m).rule.least_squares for m in ("ols", "ridge", "pcr")] == [True, False, False]
    assert get_method("softmax").rule is None and get_method("ridge").rule.tuning == "lam"


@pytest.fixture(scope="module")
def ridge() -> object:
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"x1": rng.normal(size=40), "x2": rng.normal(size=40)})
    df["y"] = df.x1 + rng.normal(size=40)
    return ar.attnreg("y ~ x1 + x2", df, method="ridge", lam=1.0)


@pytest.mark.parametrize("operation", ["rstudent", "anova", "pairs"])
def test_a_refusal_names_the_missing_capability(ridge: object, operation: str) -> None:
    call = {"rstudent": lambda: ridge.rstudent(),  # type: ignore[attr-defined]
            "anova": lambda: ar.anova(ridge),
            "pairs": lambda: ridge.bootstrap("pairs", reps=9)}[operation]  # type: ignore[attr-defined]
    with pytest.raises(OptionError, match=r"method 'ridge' has no exact hat values"):
        call()


def test_a_chunked_fit_needs_a_declared_rule() -> None:
    df = pd.DataFrame({"x": np.arange(30.0), "y": np.sqrt(np.arange(30.0))})
    with pytest.raises(OptionError, match=r"method 'softmax' cannot be fitted chunk by chunk: "
                                          r"it declares no spectral rule"):
        ar.attnreg("y ~ x", df, method="softmax", chunk_rows=10)
