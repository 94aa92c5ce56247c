"""Command line of the benchmarks: ``python -m attnreg.bench {table1,mc,ablation} ...``.

Errors are one line on stderr with exit status 2; an interrupted ``table1`` or ``ablation``
run keeps its finished cells and resumes when started again with the same ``--out``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any, NoReturn

from attnreg.exceptions import AttnregError

PROG = "python -m attnreg.bench"


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are a single line."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        raise SystemExit(2)


def _listof(cast: Callable[[str], Any]) -> Callable[[str], list[Any]]:
    def parse(text: str) -> list[Any]:
        items = [t.strip() for t in text.split(",") if t.strip()]
        if not items:
            raise argparse.ArgumentTypeError("expected a comma-separated list")
        try:
            return [cast(t) for t in items]
        except ValueError as exc:
            raise argparse.ArgumentTypeError(f"invalid list {text!r}: {exc}") from None

    parse.__name__ = f"list of {cast.__name__}"
    return parse


def _parser() -> argparse.ArgumentParser:
    from attnreg.bench.dgp import DGPS
    from attnreg.bench.montecarlo import METHODS as MC_METHODS
    from attnreg.bench.protocol import METHODS, PLANNED
    from attnreg.bench.published import DEFAULT_VARIANTS, VARIANT_NAMES
    from attnreg.datasets import dataset_names

    p = _Parser(prog=PROG, description="Reproduce the paper's benchmarks.")
    sub = p.add_subparsers(dest="command", required=True, metavar="{table1,mc,ablation}")
    t = sub.add_parser("table1", help="real-data Table 1 (eight datasets, five 80/20 splits)",
                       description="Real-data Table 1: mean out-of-sample R² per dataset and method, "
                                   "beside the published values. Finished cells are cached under "
                                   "OUT/cells, so an interrupted run resumes.")
    t.add_argument("--methods", type=_listof(str), default=["ols", "ridge", "pcr", "rf"],
                   help=f"comma-separated, or 'all': {', '.join(METHODS)} (planned: "
                        f"{', '.join(PLANNED) or 'none'}); default ols,ridge,pcr,rf")
    t.add_argument("--datasets", type=_listof(str), default=["all"],
                   help=f"comma-separated, or 'all' (default): {', '.join(dataset_names())}")
    _grid_arguments(t, "table1")

    m = sub.add_parser("mc", help="Monte Carlo study (six DGPs × N × SNR)",
                       description="Monte Carlo study of the paper (Sec. 4): test R² per DGP, N, "
                                   "SNR and method; replication r uses seed SEED + 1000·r.")
    m.add_argument("--dgps", type=_listof(str), default=list(DGPS),
                   help=f"comma-separated (default all): {', '.join(DGPS)}")
    m.add_argument("--ns", type=_listof(int), default=[500, 1000, 2500, 5000],
                   help="training sizes (default 500,1000,2500,5000)")
    m.add_argument("--snrs", type=_listof(float), default=[0.5, 1.0, 2.0, 3.0],
                   help="signal-to-noise ratios (default 0.5,1,2,3)")
    m.add_argument("--reps", type=int, default=10, help="replications per cell (default 10)")
    m.add_argument("--methods", type=_listof(str), default=None,
                   help=f"comma-separated: {', '.join(MC_METHODS)} (default: ols, rf, gbm, attention)")
    m.add_argument("--seed", type=int, default=42, help="base seed (default 42)")
    m.add_argument("--n-test", type=int, default=1000, help="fresh test rows per draw (default 1000)")
    m.add_argument("--threads", type=int, default=1, help="BLAS and torch threads (default 1)")
    m.add_argument("--out", default=None,
                   help="output directory (default: results/ in the user cache, ~/.cache/attnreg "
                        "or $XDG_CACHE_HOME/attnreg; the files written are listed at the end)")
    m.add_argument("--no-progress", action="store_true", help="no progress line on stderr")

    a = sub.add_parser("ablation", help="ablation grid of the paper's App. E (A0–A7, RB, trimmed)",
                       description="Ablation grid of the paper's App. E: each variant of the Regression "
                                   "Block / FT-Transformer under the Table 1 protocol, beside the "
                                   "published grid with paired differences. Finished cells are cached "
                                   "under OUT/cells, so an interrupted run resumes.")
    a.add_argument("--variants", type=_listof(str), default=list(DEFAULT_VARIANTS),
                   help=f"comma-separated, or 'all': {', '.join(VARIANT_NAMES)} "
                        f"(default {','.join(DEFAULT_VARIANTS)})")
    a.add_argument("--datasets", type=_listof(str), default=["all"],
                   help=f"comma-separated, or 'all' (default): {', '.join(dataset_names())}")
    _grid_arguments(a, "ablation")
    a.add_argument("--max-epochs", type=int, default=None,
                   help="cap on the training epochs, for smoke runs (default: the paper's 200)")
    return p


def _grid_arguments(p: argparse.ArgumentParser, name: str) -> None:
    """The options ``table1`` and ``ablation`` share."""
    p.add_argument("--splits", type=int, default=5, help="80/20 splits, seeds 42+1000r (default 5)")
    p.add_argument("--device", default="cpu", help="cpu or cuda, for the torch methods (default cpu)")
    p.add_argument("--out", default=None,
                   help="output directory (default: results/ in the user cache, ~/.cache/attnreg "
                        "or $XDG_CACHE_HOME/attnreg; the files written are listed at the end)")
    p.add_argument("--cache-dir", default=None, help="cached cells (default OUT/cells)")
    p.add_argument("--data-dir", default=None, help="directory with the dataset CSVs "
                   "(default: $ATTNREG_DATA, then the user cache, then download)")
    p.add_argument("--no-download", action="store_true", help="never download missing datasets")
    p.add_argument("--quick", action="store_true", help="1 split, at most 1000 rows per dataset")
    p.add_argument("--threads", type=int, default=1, help="BLAS and torch threads (default 1)")
    p.add_argument("--repeats", type=int, default=1,
                   help="training runs per split of the stochastic methods, seeds seed, seed+1, ..., "
                        "averaged (default 1: the paper's protocol)")
    p.add_argument("--no-progress", action="store_true", help="no progress line on stderr")
    p.add_argument("-q", "--quiet", action="store_true",
                   help=f"no progress line and no table on stdout: only the files written (the "
                        f"report is in OUT/{name}_report.txt, or {name}_quick_report.txt)")


def _out_dir(out: str | None) -> Path:
    """``--out``, or ``results/`` in the user cache (never the current folder unasked)."""
    from attnreg.datasets import default_cache_dir

    return Path(out) if out is not None else default_cache_dir() / "results"


def _pin(stack: ExitStack, threads: int) -> None:
    from threadpoolctl import threadpool_limits

    stack.enter_context(threadpool_limits(limits=threads))
    import torch

    stack.callback(torch.set_num_threads, torch.get_num_threads())
    torch.set_num_threads(threads)


def _table1(args: argparse.Namespace) -> None:
    from attnreg.bench.protocol import METHODS, run_table1, table1_report, write_results

    out = _out_dir(args.out)
    methods = list(METHODS) if args.methods == ["all"] else args.methods
    datasets = None if args.datasets == ["all"] else args.datasets
    cache = Path(args.cache_dir) if args.cache_dir else out / "cells"
    res = run_table1(datasets, methods, args.splits, cache_dir=cache, device=args.device,
                     progress=not (args.no_progress or args.quiet), quick=args.quick,
                     data_dir=args.data_dir, download=not args.no_download, threads=args.threads,
                     repeats=args.repeats)
    paths = write_results(res, out, "table1_quick" if args.quick else "table1")
    if not args.quiet:
        sys.stdout.write(table1_report(res) + "\n")
    sys.stdout.write("wrote " + ", ".join(str(p) for p in paths.values()) + "\n")


def _ablation(args: argparse.Namespace) -> None:
    from attnreg.bench.ablation import ablation_report, run_ablation, write_ablation

    out = _out_dir(args.out)
    datasets = None if args.datasets == ["all"] else args.datasets
    cache = Path(args.cache_dir) if args.cache_dir else out / "cells"
    res = run_ablation(args.variants, datasets, args.splits, cache_dir=cache, device=args.device,
                       progress=not (args.no_progress or args.quiet), quick=args.quick,
                       data_dir=args.data_dir, download=not args.no_download, threads=args.threads,
                       max_epochs=args.max_epochs, repeats=args.repeats)
    paths = write_ablation(res, out, "ablation_quick" if args.quick else "ablation", quick=args.quick)
    if not args.quiet:
        sys.stdout.write(ablation_report(res, quick=args.quick) + "\n")
    sys.stdout.write("wrote " + ", ".join(str(p) for p in paths.values()) + "\n")


def _mc(args: argparse.Namespace) -> None:
    from attnreg.bench.montecarlo import format_table, run_montecarlo

    out = _out_dir(args.out)
    with ExitStack() as stack:
        _pin(stack, args.threads)
        res = run_montecarlo(args.dgps, args.ns, args.snrs, args.reps, args.methods, args.seed,
                             n_test=args.n_test, progress=not args.no_progress)
    out.mkdir(parents=True, exist_ok=True)
    res.to_csv(out / "montecarlo_results.csv", index=False)
    text = format_table(res) + "\n"
    (out / "montecarlo_table.txt").write_text(text)
    sys.stdout.write(text + f"\nwrote {out / 'montecarlo_results.csv'}, {out / 'montecarlo_table.txt'}\n")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit status (0 ok, 2 error, 130 interrupted).

    Examples
    --------
    >>> main(["ablation", "--variants", "A9", "--no-progress"])  # the error is one line on stderr
    2
    >>> main(["table1", "--methods", "ols", "--datasets", "yacht", "--out", "results"])  # doctest: +SKIP
    0
    """
    args = _parser().parse_args(argv)
    prog = f"{PROG} {args.command}"
    try:
        for flag in ("splits", "reps", "threads", "n_test", "max_epochs"):
            value = getattr(args, flag, 1)
            if value is not None and value < 1:
                sys.stderr.write(f"{prog}: error: --{flag.replace('_', '-')} must be a positive integer\n")
                return 2
        {"table1": _table1, "ablation": _ablation, "mc": _mc}[args.command](args)
    except (AttnregError, OSError, ImportError) as exc:
        sys.stderr.write(f"{prog}: error: {exc}\n")
        return 2
    except KeyboardInterrupt:
        where = " (finished cells are kept; rerun to resume)" if args.command != "mc" else ""
        sys.stderr.write(f"\n{prog}: interrupted{where}\n")
        return 130
    return 0
