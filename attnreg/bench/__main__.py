"""``python -m attnreg.bench``: see :mod:`attnreg.bench.cli`."""

from __future__ import annotations

import sys

from attnreg.bench.cli import main

if __name__ == "__main__":
    sys.exit(main())
