"""Documentation that runs: the README's code, its picture and the command line.

The numpydoc examples of every module run in tests/test_doctests.py.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO


def readme_blocks() -> list[str]:
    text = (REPO / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_python_blocks_run_in_order() -> None:
    namespace: dict = {"__name__": "__readme__"}
    blocks = readme_blocks()
    assert len(blocks) >= 3
    compared = ""
    for index, code in enumerate(blocks):
        exec(compile(code, f"README block {index}", "exec"), namespace)
        if "ar.compare([ols, ridge, pcr])" in code:
            compared = str(namespace["ar"].compare([namespace[k] for k in ("ols", "ridge", "pcr")]))
    # the outputs shown in the README come from these objects
    assert "Residual standard error: 304.9 on 9 degrees of freedom" in str(namespace["fit"].summary())
    assert namespace["w"].explain(0, top=5).index[0] == 15
    # the side-by-side table lines up the factor's rows of the OLS and ridge fits
    factor_rows = [line for line in compared.splitlines() if "[T." in line]
    assert len(factor_rows) == 2 and all(len(line.split()) >= 3 for line in factor_rows)


def test_command_line_demo_and_errors(tmp_path: Path) -> None:
    run = [sys.executable, "-m", "attnreg"]
    demo = subprocess.run(run, capture_output=True, text=True, check=True)
    assert "Residual standard error: 304.9 on 9 degrees of freedom" in demo.stdout
    assert "weighted vote of the training years" in demo.stdout
    csv = tmp_path / "d.csv"
    csv.write_text("y,x\n1,2\n2,3.5\n3,5.2\n4,8\n")
    fit = subprocess.run([*run, "fit", "y ~ x", "--data", str(csv)], capture_output=True,
                         text=True, check=True)
    assert "Coefficients:" in fit.stdout
    bad = subprocess.run([*run, "fit", "y ~ z", "--data", str(csv)], capture_output=True,
                         text=True)
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("attnreg: error: data has no column 'z'")
    assert "Traceback" not in bad.stderr


def test_readme_picture_of_the_dual_view(tmp_path: Path) -> None:
    """The README shows vignettes/figures/dual_view.png, and its script redraws it."""
    pytest.importorskip("matplotlib")
    readme = (REPO / "README.md").read_text()
    assert "](vignettes/figures/dual_view.png)" in readme
    assert (REPO / "vignettes" / "figures" / "dual_view.png").is_file()
    spec = importlib.util.spec_from_file_location("make_figures", REPO / "vignettes" / "make_figures.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    path = module.dual_view(tmp_path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_readme_documents_the_command_line_and_the_wrapper() -> None:
    readme = (REPO / "README.md").read_text()
    for text in ("attnreg fit ", "attnreg forecast ", "attnreg bench ", "AttnRegressor"):
        assert text in readme
