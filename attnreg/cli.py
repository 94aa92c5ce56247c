"""Command line: ``attnreg`` / ``python -m attnreg`` (no arguments: the README demo)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from attnreg.exceptions import AttnregError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="attnreg", description=(
        "Regression as attention: R-style formula fits with coefficient and attention views. "
        "Without a command, runs the demo on the Longley data."))
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("demo", help="fit the Longley data and show the summary and attention view")
    fit = sub.add_parser("fit", help="fit a formula to a CSV file and print the summary")
    fit.add_argument("formula", help='R-style formula, e.g. "y ~ x1 + C(g)"')
    fit.add_argument("--data", required=True, help="CSV file with a header row")
    fit.add_argument("--method", default="ols", help="ols, ridge, pcr or softmax (default ols)")
    fit.add_argument("--vcov", default="classical", help="classical, HC0-HC3 or HAC")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command in (None, "demo"):
            from attnreg.demo import demo_text

            print(demo_text())
        elif args.command == "fit":
            import pandas as pd

            from attnreg.api import attnreg

            data = pd.read_csv(args.data)
            print(attnreg(args.formula, data=data, method=args.method, vcov=args.vcov).summary())
    except (AttnregError, OSError) as exc:
        print(f"attnreg: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
