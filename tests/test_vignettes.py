"""Every vignette runs (in fast mode) so none can rot; figures go to a temporary directory."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from tests.conftest import REPO, shared_data_dir

VIGNETTES = sorted((REPO / "vignettes").glob("*.md"))
#: vignettes whose real-data sections need the benchmark CSVs (they skip them without)
NEEDS_DATA = {"softmax-attention", "regression-block"}


def _builder():
    spec = importlib.util.spec_from_file_location("vignette_build", REPO / "vignettes" / "build.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", VIGNETTES, ids=lambda p: p.stem)
def test_vignette_runs(path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ATTNREG_VIGNETTE_FAST", "1")
    data = shared_data_dir()
    if data is not None:
        monkeypatch.setenv("ATTNREG_DATA", str(data))
    text = _builder().run(path, write=False, figure_dir=tmp_path)
    assert "```text" in text  # blocks printed something
    drawn = {p.name for p in tmp_path.glob("*.png")}
    shown = set(re.findall(r"\]\(figures/([\w.-]+\.png)\)", text))
    committed = {p.name for p in (REPO / "vignettes" / "figures").glob("*.png")}
    assert shown <= committed, f"figures referenced but not committed: {shown - committed}"
    if data is not None or path.stem not in NEEDS_DATA:
        assert shown <= drawn, f"figures referenced but not drawn: {shown - drawn}"


def test_data_vignettes_skip_cleanly_without_data(monkeypatch: pytest.MonkeyPatch,
                                                  tmp_path: Path) -> None:
    monkeypatch.setenv("ATTNREG_VIGNETTE_FAST", "1")
    monkeypatch.setenv("ATTNREG_DATA", str(tmp_path / "none"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    text = _builder().run(REPO / "vignettes" / "regression-block.md", write=False,
                          figure_dir=tmp_path / "figures")
    assert "data not found: set ATTNREG_DATA" in text
    assert "trainable parameters at P = 8" in text


def test_readme_links_every_vignette() -> None:
    readme = (REPO / "README.md").read_text()
    for path in VIGNETTES:
        assert f"(vignettes/{path.name})" in readme, f"README does not link {path.name}"
