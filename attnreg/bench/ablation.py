"""The paper's ablation grid (App. E): the variants of ``attnreg.nn.VARIANTS`` under Table 1's protocol.

Each variant (A0–A7, RB, trimmed) is a configuration of the same two modules; here each
becomes a protocol method through :func:`attnreg.bench.protocol.network_method`, the code
path of Table 1's ``"block"`` and ``"ftt"``, and runs on the same subsampled data, splits,
standardisation and cell cache (:func:`attnreg.bench.protocol.run_grid`). The report sets our
means beside the published grid (:data:`attnreg.bench.published.ABLATION`) with paired
differences, and each variant against the Regression Block, split by split, beside the
paper's difference.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from attnreg.bench.protocol import COLUMNS, network_method, run_grid
from attnreg.bench.reports import compare_published, means_section, write_tables
from attnreg.bench.published import (
    ABLATION,
    DEFAULT_VARIANTS,
    PARAMS,
    VARIANT_DESCRIPTIONS,
    VARIANT_NAMES,
)
from attnreg.exceptions import OptionError

#: variants that are Table 1 methods: their cached Table 1 cells (same ``--out``) are reused
TABLE1_ALIASES = {"RB": "block", "A0": "ftt"}

__all__ = ["TABLE1_ALIASES", "ablation_methods", "ablation_report", "check_variants", "run_ablation",
           "variant_parameters", "write_ablation"]


def check_variants(variants: Sequence[str] | None) -> list[str]:
    """The variant names, checked and deduplicated in order (None or ``["all"]``: every one).

    Examples
    --------
    >>> check_variants(["RB", "A0", "RB"])
    ['RB', 'A0']
    >>> check_variants(["A9"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnreg.exceptions.OptionError: variant must be one of A0, A1, ..., RB, trimmed; got 'A9'
    """
    if variants is None or list(variants) == ["all"]:
        return list(VARIANT_NAMES)
    if isinstance(variants, str):
        variants = [variants]
    for v in variants:
        if v not in VARIANT_NAMES:
            raise OptionError(f"variant must be one of {', '.join(VARIANT_NAMES)}; got {v!r}")
    if not variants:
        raise OptionError("no variant given")
    return list(dict.fromkeys(variants))


def ablation_methods(variants: Sequence[str] | None = DEFAULT_VARIANTS,
                     **options: Any) -> dict[str, Any]:
    """One protocol :class:`~attnreg.bench.protocol.Method` per variant, keyed by its name.

    ``options`` go to :func:`attnreg.nn.fit_network` (``max_epochs`` for a smoke run).

    Examples
    --------
    >>> sorted(ablation_methods(["RB", "A0"]))
    ['A0', 'RB']
    """
    return {v: network_method(v, VARIANT_DESCRIPTIONS[v], **options) for v in check_variants(variants)}


def run_ablation(variants: Sequence[str] | None = DEFAULT_VARIANTS, datasets: Sequence[str] | None = None,
                 splits: int = 5, *, cache_dir: str | os.PathLike[str] | None = None, device: str = "cpu",
                 progress: bool = True, quick: bool = False,
                 data_dir: str | os.PathLike[str] | None = None, download: bool = True,
                 threads: int | None = 1, max_epochs: int | None = None, repeats: int = 1) -> pd.DataFrame:
    """Run the ablation grid under the Table 1 protocol, resuming from cached cells.

    Parameters
    ----------
    variants : names of ``attnreg.nn.VARIANTS`` (default: A0, A2, A4, A6, RB, trimmed).
    datasets, splits, cache_dir, device, progress, quick, data_dir, download, threads, repeats
        As :func:`attnreg.bench.protocol.run_table1`; a variant's cells are named by the
        variant (``yacht__A2__split0.json``). RB and A0 are Table 1's ``block`` and ``ftt``
        (same code path and seeds): their Table 1 cells in the same cache are reused.
    max_epochs : int, optional
        Cap on the training epochs (default: the paper's 200). Cells trained under a cap are
        cached apart (``full-max_epochs5/``).

    Returns
    -------
    DataFrame with the columns of Table 1's results (``method`` holds the variant).

    Examples
    --------
    >>> res = run_ablation(["A2", "RB"], ["yacht"], 1, progress=False)  # doctest: +SKIP
    >>> res[["dataset", "method"]].values.tolist()  # doctest: +SKIP
    [['yacht', 'A2'], ['yacht', 'RB']]
    """
    options: dict[str, Any] = {}
    tag = ""
    if max_epochs is not None:
        if isinstance(max_epochs, bool) or not isinstance(max_epochs, (int, np.integer)) or max_epochs < 1:
            raise OptionError(f"max_epochs must be a positive integer; got {max_epochs!r}")
        options["max_epochs"], tag = int(max_epochs), f"-max_epochs{int(max_epochs)}"
    methods = ablation_methods(variants, **options)
    return run_grid(datasets, methods, splits, cache_dir=cache_dir, device=device, progress=progress,
                    quick=quick, data_dir=data_dir, download=download, threads=threads, label="ablation",
                    cache_tag=tag, aliases=TABLE1_ALIASES, repeats=repeats)


def variant_parameters(variants: Sequence[str] | None = None, n_features: int = 8) -> dict[str, int]:
    """Trainable parameters of each variant at ``n_features`` inputs (the paper counts at P=8).

    Examples
    --------
    >>> variant_parameters(["RB", "trimmed"])
    {'RB': 30401, 'trimmed': 7489}
    """
    from attnreg.nn import VARIANTS, build_model, count_parameters

    return {v: count_parameters(build_model(VARIANTS[v], n_features)) for v in check_variants(variants)}


def _paired_vs_rb(results: pd.DataFrame, variants: list[str], datasets: list[str]) -> pd.DataFrame:
    """Per dataset: mean over splits of (variant − RB), ours, and the paper's difference of means."""
    wide = results.pivot_table(index=["dataset", "split"], columns="method", values="r2")
    out = pd.DataFrame(index=[*datasets, "mean"])
    for v in variants:
        diff = (wide[v] - wide["RB"]).dropna().groupby(level="dataset").mean()
        ours = diff.reindex(datasets)
        paper = pd.Series({d: ABLATION[d][v] - ABLATION[d]["RB"] for d in datasets})
        out[f"{v}-RB"] = [*ours.map("{:+.3f}".format), f"{ours.mean():+.3f}"]
        out[f"{v}-RB paper"] = [*paper.map("{:+.3f}".format), f"{paper.mean():+.3f}"]
    return out


def ablation_report(results: pd.DataFrame, digits: int = 3, *, quick: bool = False) -> str:
    """Our ablation grid, its parameter counts and its comparison with the published one.

    Sections: mean R² per dataset × variant (and the mean over the datasets other than
    Abalone); trainable parameters at P=8, ours and the paper's; ours beside the published
    grid with paired differences (ours rounded to 3 decimals minus paper) and a sign test per
    variant over the compared datasets; with RB among the variants, each variant minus RB
    paired split by split, beside the paper's difference. ``quick`` adds a warning that a
    ``--quick`` run (one split, at most 1000 rows) is not the paper's protocol.

    Examples
    --------
    >>> rows = [{"dataset": "yacht", "split": 0, "seed": 42, "method": v, "r2": r, "seconds": 1.0,
    ...          "n_train": 246} for v, r in (("A2", 0.6), ("RB", 0.99))]
    >>> text = ablation_report(pd.DataFrame(rows))
    >>> "Ours minus published" in text and "minus the Regression Block, published" in text
    True
    """
    means, compared, table = means_section(results, "Ablation grid (App. E)", "Table 1 protocol", digits)
    variants = [str(v) for v in means.columns]
    parts = [table]
    if quick:
        parts.insert(0, "QUICK RUN: one split and at most 1000 rows per dataset; the paper used five "
                        "splits and up to 4000 training rows, so the comparisons below are indicative only.")
    known = [v for v in variants if v in PARAMS]
    params = pd.DataFrame({"params (P=8)": variant_parameters(known),
                           "paper": {v: PARAMS[v] for v in known},
                           "configuration": {v: VARIANT_DESCRIPTIONS[v] for v in known}})
    parts += ["Trainable parameters at P=8:", params.to_string()]
    if not known or not compared:
        return "\n\n".join([*parts, "No variant or dataset to compare with the published grid."]) + "\n"
    side, tests = compare_published(means, ABLATION, known, compared, digits)
    paper = side[[f"{v} paper" for v in known]].set_axis(known, axis=1)
    diff = side[[f"{v} diff" for v in known]].set_axis(known, axis=1)
    parts += [f"Published grid (tab:abl; trimmed from tab:trim) on the {len(compared)} compared "
              "dataset(s) (not Abalone: the paper's target was mis-encoded):", paper.to_string(),
              "Ours minus published (ours rounded to 3 decimals):", diff.to_string(),
              "Sign test of ours against the paper, per variant:\n" + "\n".join(tests)]
    others = [v for v in known if v != "RB"]
    if "RB" in known and others:
        vs_rb = _paired_vs_rb(results, others, compared)
        parts += ["Each variant minus the Regression Block, ours (paired by split, mean over splits):",
                  vs_rb[[f"{v}-RB" for v in others]].set_axis(others, axis=1).to_string(),
                  "Each variant minus the Regression Block, published:",
                  vs_rb[[f"{v}-RB paper" for v in others]].set_axis(others, axis=1).to_string()]
    return "\n\n".join(parts) + "\n"


def write_ablation(results: pd.DataFrame, out_dir: str | os.PathLike[str],
                   prefix: str = "ablation", *, quick: bool = False) -> dict[str, Path]:
    """Write the long results, the mean table and the report (see :func:`ablation_report`);
    returns their paths.

    Examples
    --------
    >>> import tempfile
    >>> rows = [{"dataset": "yacht", "split": 0, "seed": 42, "method": "RB", "r2": 0.99, "seconds": 1.0,
    ...          "n_train": 246}]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     sorted(p.name for p in write_ablation(pd.DataFrame(rows), tmp).values())
    ['ablation_means.csv', 'ablation_report.txt', 'ablation_results.csv']
    """
    return write_tables(results.reindex(columns=list(COLUMNS)),
                        ablation_report(results, quick=quick), out_dir, prefix)
