"""``python -m attnreg``: see :mod:`attnreg.cli`."""

import sys

from attnreg.cli import main

if __name__ == "__main__":
    sys.exit(main())
