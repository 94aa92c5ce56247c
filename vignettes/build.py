"""Run the Python blocks of a vignette and write their printed output under each block.

A vignette is Markdown. Every ```python block is executed in order in one namespace; the
```text block that follows it (if any) is replaced by what the block printed. Usage:

    python vignettes/build.py vignettes/forecasting-inflation.md [--check]

``--check`` runs the blocks without writing (the test suite does this). The environment
variable ATTNREG_VIGNETTE_FAST=1 lets a vignette shrink its workload (see each vignette).

Figures: a block calls ``save_figure(fig_or_axes, "name")`` (provided in the namespace) and the
Markdown around it shows ``![...](figures/name.png)``. When writing, the PNG goes to
``vignettes/figures/``; with ``--check`` (and in the tests) it goes to a temporary directory,
so a fast run never overwrites the committed figures. matplotlib uses the Agg backend. Torch
runs on one thread (ATTNREG_VIGNETTE_THREADS to change it).
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

BLOCK = re.compile(r"```python\n(.*?)```\n(?:\n?```text\n.*?```\n)?", re.S)
FIGURES = Path(__file__).resolve().parent / "figures"


def _figure_saver(directory: Path) -> Any:
    def save_figure(obj: Any, name: str, dpi: int = 110) -> Path:
        """Save a matplotlib Figure (or the figure of an Axes / array of Axes) as NAME.png."""
        import matplotlib.pyplot as plt
        import numpy as np

        first = np.ravel(obj)[0] if isinstance(obj, (list, tuple, np.ndarray)) else obj
        fig = getattr(first, "figure", first)
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{name}.png"
        fig.savefig(path, dpi=dpi, bbox_inches="tight")
        plt.close(fig)
        return path

    return save_figure


def _setup() -> None:
    with contextlib.suppress(ImportError):
        import matplotlib

        matplotlib.use("Agg")
    with contextlib.suppress(ImportError):
        import torch

        torch.set_num_threads(int(os.environ.get("ATTNREG_VIGNETTE_THREADS", "1")))


def run(path: Path, write: bool, figure_dir: Path | None = None) -> str:
    """Execute the vignette's blocks; return the Markdown with fresh outputs.

    Figures go to ``figure_dir``: by default ``vignettes/figures`` when ``write`` is true,
    else a temporary directory that is removed afterwards.
    """
    _setup()
    text = path.read_text()
    with contextlib.ExitStack() as stack:
        if figure_dir is None:
            figure_dir = FIGURES if write else Path(stack.enter_context(tempfile.TemporaryDirectory()))
        namespace: dict = {"__name__": "__vignette__", "save_figure": _figure_saver(figure_dir)}
        pieces: list[str] = []
        last = 0
        for match in BLOCK.finditer(text):
            code = match.group(1)
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                exec(compile(code, f"{path.name} block", "exec"), namespace)
            out = buffer.getvalue().rstrip()
            pieces.append(text[last:match.start()])
            pieces.append(f"```python\n{code}```\n" + (f"\n```text\n{out}\n```\n" if out else ""))
            last = match.end()
    pieces.append(text[last:])
    result = "".join(pieces)
    if write:
        path.write_text(result)
    return result


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout's attnreg
    for name in [a for a in sys.argv[1:] if not a.startswith("--")]:
        run(Path(name), write="--check" not in sys.argv)
