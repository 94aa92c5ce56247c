"""Every vignette runs (in fast mode) so none can rot."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from tests.conftest import REPO

VIGNETTES = sorted((REPO / "vignettes").glob("*.md"))


def _builder():
    spec = importlib.util.spec_from_file_location("vignette_build", REPO / "vignettes" / "build.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", VIGNETTES, ids=lambda p: p.stem)
def test_vignette_runs(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATTNREG_VIGNETTE_FAST", "1")
    text = _builder().run(path, write=False)
    assert "```text" in text  # blocks printed something
