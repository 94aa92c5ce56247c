"""Run the Python blocks of a vignette and write their printed output under each block.

A vignette is Markdown. Every ```python block is executed in order in one namespace; the
```text block that follows it (if any) is replaced by what the block printed. Usage:

    python vignettes/build.py vignettes/forecasting-inflation.md [--check]

``--check`` runs the blocks without writing (the test suite does this). The environment
variable ATTNREG_VIGNETTE_FAST=1 lets a vignette shrink its workload (see each vignette).
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

BLOCK = re.compile(r"```python\n(.*?)```\n(?:\n?```text\n.*?```\n)?", re.S)


def run(path: Path, write: bool) -> str:
    """Execute the vignette's blocks; return the Markdown with fresh outputs."""
    text = path.read_text()
    namespace: dict = {"__name__": "__vignette__"}
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
    for name in [a for a in sys.argv[1:] if not a.startswith("--")]:
        run(Path(name), write="--check" not in sys.argv)
