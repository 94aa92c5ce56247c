"""``python -m attnreg``."""

import sys

from attnreg.cli import main

sys.exit(main())
