"""Documentation that runs: numpydoc examples, the README's code and the command line."""

from __future__ import annotations

import doctest
import re
import subprocess
import sys
from pathlib import Path

import pytest

import attnreg.api
import attnreg.design
from tests.conftest import REPO

MODULES = [attnreg.api, attnreg.design]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
def test_docstring_examples(module) -> None:
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0


def readme_blocks() -> list[str]:
    text = (REPO / "README.md").read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_readme_python_blocks_run_in_order() -> None:
    namespace: dict = {"__name__": "__readme__"}
    blocks = readme_blocks()
    assert len(blocks) >= 3
    for index, code in enumerate(blocks):
        exec(compile(code, f"README block {index}", "exec"), namespace)
    # the outputs shown in the README come from these objects
    assert "Residual standard error: 304.9 on 9 degrees of freedom" in str(namespace["fit"].summary())
    assert namespace["w"].explain(0, top=5).index[0] == 15


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
