"""Command line: ``attnreg`` / ``python -m attnreg``.

``attnreg`` (or ``attnreg demo``) runs the README demo on data that ship with statsmodels;
``attnreg fit FORMULA --data CSV`` prints a fit's summary; ``attnreg forecast FORMULA --data
CSV`` prints the out-of-sample evaluation of recursive, rolling or fixed-scheme forecasts;
``attnreg bench ...`` runs the paper's benchmarks (the same as ``python -m attnreg.bench``).
Every error is one line on stderr, ``attnreg: error: ...``, with exit status 2; set
``ATTNREG_DEBUG=1`` to see the traceback instead.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from attnreg.exceptions import AttnregError, LeakageError, OptionError
from attnreg.methods import method_names

__all__ = ["main"]

PROG = "attnreg"
METHODS = method_names()

EPILOG = """\
commands:
  attnreg                                   the demo (OLS on the Longley data)
  attnreg fit "y ~ x1 + x2" --data d.csv --method ridge
  attnreg forecast "infl ~ lag(infl, h)" --data macro.csv --index-col date --freq Q \\
          --start 1985Q1 --method ridge --horizon 4
  attnreg bench table1 --methods ols,ridge --quick

'attnreg COMMAND --help' describes each command."""


class CommandError(Exception):
    """A usage problem found after parsing (reported like an argparse error)."""


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr, exit status 2."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        raise SystemExit(2)


def _number_or_criterion(convert: Callable[[str], float], what: str) -> Callable[[str], float | str]:
    """An argparse type: ``"gcv"``, ``"loo"`` or ``convert(text)`` (--lam: a number; --k: an integer)."""
    def parse(text: str) -> float | str:
        if text in ("gcv", "loo"):
            return text
        try:
            return convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, 'gcv' or 'loo', got {text!r}") from None
    return parse


_tuning = _number_or_criterion(float, "a number")
_components = _number_or_criterion(int, "an integer")


def _option(text: str) -> tuple[str, Any]:
    """``--opt KEY=VALUE``: VALUE is read as a Python literal when it is one, else a string."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip().isidentifier():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        parsed: Any = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        parsed = value
    return key.strip(), parsed


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("formula", help='R-style formula, e.g. "y ~ x1 + C(g) + np.log(x2)"')
    p.add_argument("--data", required=True, metavar="CSV",
                   help="CSV file with a header row (.csv, .csv.gz, ...)")
    p.add_argument("--method", default="ols", choices=METHODS, metavar="METHOD",
                   help=f"{', '.join(METHODS)} (default ols)")
    p.add_argument("--lam", type=_tuning, default=None,
                   help="ridge penalty: a number, 'gcv' (default) or 'loo'; softmax: its penalty")
    p.add_argument("--k", type=_components, default=None,
                   help="PCR components: an integer, 'gcv' (default) or 'loo'")
    p.add_argument("--index-col", default=None, metavar="COL",
                   help="column to use as row labels (e.g. a date column)")
    p.add_argument("--sep", default=",", help="field separator of the CSV (default ',')")
    p.add_argument("--opt", action="append", type=_option, default=[], metavar="KEY=VALUE",
                   help="a method option, e.g. --opt heads=3 --opt seed=1 (repeatable)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads for softmax and the networks (default 1)")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
        description="Regression as attention: R-style formula fits with coefficient and "
                    "attention views. Without a command, runs the demo on the Longley data.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="{demo,fit,forecast,bench}",
                                parser_class=_Parser)
    sub.add_parser("demo", help="fit the Longley data and show the summary and attention view",
                   description="OLS on the Longley data (shipped with statsmodels): the R-style "
                               "summary and the 1962 prediction as attention over the years.")
    fit = sub.add_parser("fit", help="fit a formula to a CSV file and print the summary",
                         description="Fit FORMULA to the CSV file and print the R-style summary.")
    _common(fit)
    fit.add_argument("--vcov", default="classical",
                     help="classical (default), HC0, HC1, HC2, HC3, HAC, cluster or DK")
    fit.add_argument("--maxlags", type=int, default=None,
                     help="HAC (or Driscoll-Kraay) truncation lag")
    fit.add_argument("--cluster", default=None,
                     help="--vcov cluster: the cluster column(s), e.g. 'firm' or 'firm + year'")
    fit.add_argument("--time", default=None, help="--vcov DK: the time period column")
    fit.add_argument("--na-action", default="drop", choices=("drop", "raise"),
                     help="drop rows with missing values (default) or stop with an error")

    fc = sub.add_parser(
        "forecast", help="out-of-sample forecasts from a CSV time series; print the evaluation",
        description="Re-estimate the model at every forecast origin from the rows observed by "
                    "then and print the evaluation: MSFE, out-of-sample R² against the "
                    "prevailing mean, Diebold-Mariano and Clark-West tests. lag(x, k), lags() "
                    "and diff() work inside the formula; every regressor must be lagged at "
                    "least --horizon periods.")
    _common(fc)
    fc.add_argument("--freq", default=None,
                    help="make the --index-col labels periods of this frequency (Q, M, Y, ...), "
                         "checked for order and gaps")
    fc.add_argument("--scheme", default="recursive", choices=("recursive", "rolling", "fixed"),
                    help="expanding window (default), rolling window, or one fit at the first origin")
    fc.add_argument("--start", default=None,
                    help="label of the first forecast target (default: the middle of the sample)")
    fc.add_argument("--horizon", type=int, default=1, help="forecast horizon h (default 1)")
    fc.add_argument("--window", type=int, default=None, help="rows per fit for --scheme rolling")
    fc.add_argument("--refit-every", type=int, default=1,
                    help="re-estimate every this many origins (default 1)")
    fc.add_argument("--known", default="",
                    help="comma-separated variables or terms known in advance, exempt from the "
                         "leakage guard (e.g. --known \"trend,lag(x, 1)\")")
    fc.add_argument("--leakage-audit", action="store_true",
                    help="also print the leakage audit (the same forecasts with a full-sample metric)")
    fc.add_argument("--out", default=None, metavar="CSV",
                    help="write the forecasts (origin, forecast, actual, errors) to this CSV")

    sub.add_parser("bench", add_help=False,
                   help="the paper's benchmarks: table1, mc, ablation (see 'attnreg bench --help')")
    return parser


def _version() -> str:
    from attnreg import __version__

    return __version__


def _read(args: argparse.Namespace) -> Any:
    import pandas as pd

    path = args.data
    if not os.path.exists(path):
        raise CommandError(f"--data {path}: no such file")
    if os.path.isdir(path):
        raise CommandError(f"--data {path}: is a directory, not a CSV file")
    try:
        data = pd.read_csv(path, sep=args.sep)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        raise CommandError(f"--data {path}: not a readable CSV file ({_first_line(exc)})") from None
    if args.index_col is not None:
        if args.index_col not in data.columns:
            raise CommandError(f"--index-col {args.index_col!r} is not a column of {path} "
                               f"(columns: {', '.join(map(str, data.columns))})")
        data = data.set_index(args.index_col)
    freq = getattr(args, "freq", None)
    if freq is not None:
        if args.index_col is None:
            raise CommandError("--freq needs --index-col (the column holding the dates)")
        try:
            data.index = pd.PeriodIndex(data.index.astype(str), freq=freq)
        except (ValueError, TypeError) as exc:
            raise CommandError(f"--index-col {args.index_col!r} cannot be read as periods of "
                               f"frequency {freq!r} ({_first_line(exc)})") from None
    return data


def _start_label(index: Any, start: str | None) -> Any:
    """Convert ``--start`` to the type of the index labels."""
    import pandas as pd

    if start is None:
        return None
    if isinstance(index, pd.PeriodIndex):
        try:
            return pd.Period(start, freq=index.freqstr)
        except (ValueError, TypeError):
            raise CommandError(f"--start {start!r} is not a period of frequency "
                               f"{index.freqstr!r}") from None
    if isinstance(index, pd.DatetimeIndex):
        return pd.Timestamp(start)
    if pd.api.types.is_integer_dtype(index.dtype):
        try:
            return int(start)
        except ValueError:
            raise CommandError(f"--start {start!r}: the row labels are integers") from None
    if pd.api.types.is_float_dtype(index.dtype):
        return float(start)
    return start


def _method_options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = dict(args.opt)
    for name in ("lam", "k"):
        value = getattr(args, name)
        if value is not None:
            if name in options:
                raise CommandError(f"--{name} is given twice (also as --opt {name}=...)")
            options[name] = value
    return options


def _fit(args: argparse.Namespace) -> str:
    from attnreg.api import attnreg

    data = _read(args)
    options = _method_options(args)
    with_vcov = method_names("vcov")
    extra = {"vcov": args.vcov, "maxlags": args.maxlags} if args.method in with_vcov else {}
    extra.update({k: v for k, v in (("cluster", args.cluster), ("time", args.time))
                  if v is not None and args.method in with_vcov})
    if args.method not in with_vcov and (args.vcov != "classical" or args.maxlags
                                         or args.cluster or args.time):
        raise CommandError(f"--vcov, --maxlags, --cluster and --time apply to "
                           f"{', '.join(with_vcov)}, not {args.method!r}")
    fit = attnreg(args.formula, data=data, method=args.method, na_action=args.na_action,
                  eval_env=_formula_scope(), **extra, **options)
    return str(fit.summary())


def _forecast(args: argparse.Namespace) -> str:
    from attnreg.timeseries.forecast import forecast

    data = _read(args)
    known = _top_level_items(args.known)
    try:
        fc = forecast(args.formula, data, method=args.method, scheme=args.scheme,
                      start=_start_label(data.index, args.start), window=args.window,
                      horizon=args.horizon, refit_every=args.refit_every, known=known,
                      eval_env=_formula_scope(), **_method_options(args))
    except (LeakageError, OptionError) as exc:  # the library says known=[...]: give the option
        raise CommandError(_command_line_spelling(str(exc))) from None
    parts = [str(fc.summary())]
    if args.leakage_audit:
        parts.append(str(fc.leakage_audit()))
    if args.out:
        fc.forecasts.to_csv(args.out)
        parts.append(f"wrote {args.out}")
    return "\n\n".join(parts)


def _formula_scope() -> Any:
    """What a formula on the command line can name besides the CSV's columns: numpy as ``np``
    (``np.log(x)``), as in a Python session that imported it."""
    import numpy as np
    import patsy

    return patsy.EvalEnvironment([{"np": np}])


def _command_line_spelling(message: str) -> str:
    """The library's ``known=['term']`` hints, spelled as the ``--known "term"`` option.

    >>> _command_line_spelling("declare it with known=['lag(x, 1)'] or known=[...]")
    'declare it with --known "lag(x, 1)" or --known TERM'
    """
    message = re.sub(r"known=\[(['\"])(.*?)\1\]", r'--known "\2"', message)
    return message.replace("known=[...]", "--known TERM")


def _top_level_items(text: str) -> list[str]:
    """Split ``--known`` at the commas outside parentheses: ``lag(x, 1),trend`` is two terms.

    >>> _top_level_items("lag(x, 1), trend")
    ['lag(x, 1)', 'trend']
    """
    items, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(char, 0)
        if char == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def _first_line(exc: BaseException) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()] or [type(exc).__name__]
    if lines[0].endswith(":") and len(lines) > 1:  # "could not parse formula ...:\n<reason>"
        return f"{lines[0]} {lines[1]}"
    return lines[0]


def _one_line_warnings(message: Any, category: type[Warning], filename: str, lineno: int,
                       file: Any = None, line: str | None = None) -> None:
    sys.stderr.write(f"{PROG}: warning: {_first_line(Warning(str(message)))}\n")


def _pin_threads(threads: int) -> None:
    if threads < 1:
        raise CommandError(f"--threads must be a positive integer, got {threads}")
    import torch  # the softmax and network methods need it anyway

    torch.set_num_threads(threads)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the process exit status (0 ok, 2 error, 130 interrupted).

    Parameters
    ----------
    argv : sequence of str, optional
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int

    Examples
    --------
    >>> from attnreg.cli import main
    >>> main(["demo"])                                  # doctest: +ELLIPSIS
    attnreg demo: OLS on the Longley data (statsmodels.datasets.longley)
    ...
    Residual standard error: 304.9 on 9 degrees of freedom
    ...
    0
    >>> main(["fit", "y ~ x", "--data", "no-such-file.csv"])
    2
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "bench":
        from attnreg.bench.cli import main as bench_main

        return bench_main(argv[1:])
    args = _parser().parse_args(argv)
    debug = os.environ.get("ATTNREG_DEBUG", "") not in ("", "0")
    try:
        with warnings.catch_warnings():
            if not debug:
                warnings.showwarning = _one_line_warnings
            if args.command in (None, "demo"):
                from attnreg.demo import demo_text

                text = demo_text()
            elif args.command == "fit":
                if args.method in method_names("torch"):
                    _pin_threads(args.threads)
                text = _fit(args)
            else:
                if args.method in method_names("torch"):
                    _pin_threads(args.threads)
                text = _forecast(args)
        print(text)
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{PROG}: interrupted\n")
        return 130
    except BrokenPipeError:  # the reader went away (`attnreg ... | head`): not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so the interpreter's final flush stays quiet
        return 0
    except Exception as exc:
        if debug:
            raise
        known = isinstance(exc, (AttnregError, CommandError, OSError, ValueError, KeyError,
                                 ImportError)) or type(exc).__name__ == "PatsyError"
        prefix = "" if known else f"{type(exc).__name__}: "
        sys.stderr.write(f"{PROG}: error: {prefix}{_first_line(exc)}\n")
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
