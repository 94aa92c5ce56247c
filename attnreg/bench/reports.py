"""Reports of the benchmark grids: mean tables, the comparison with published numbers, files.

:func:`table1_report` sets our Table 1 beside the published one; :func:`compare_published`
is the paired comparison it shares with the ablation report
(:func:`attnreg.bench.ablation.ablation_report`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from attnreg.bench.published import COMPARED
from attnreg.bench.published import TABLE1 as PUBLISHED
from attnreg.datasets import dataset_names

__all__ = ["compare_published", "mean_table", "means_section", "runs_note", "table1_report", "write_results"]


def mean_table(results: pd.DataFrame) -> pd.DataFrame:
    """Mean R² per dataset (rows, the paper's order) and method (columns, in order of appearance).

    Examples
    --------
    >>> rows = pd.DataFrame({"dataset": ["yacht", "yacht", "california"], "method": ["ols"] * 3,
    ...                      "split": [0, 1, 0], "r2": [0.5, 0.7, 0.6]})
    >>> mean_table(rows)["ols"].round(3).to_dict()
    {'california': 0.6, 'yacht': 0.6}
    """
    order = [n for n in dataset_names() if n in set(results["dataset"])]
    table = results.pivot_table(index="dataset", columns="method", values="r2", aggfunc="mean")
    return table.reindex(index=order, columns=list(dict.fromkeys(results["method"])))


def table1_report(results: pd.DataFrame, digits: int = 3) -> str:
    """Our mean R² per dataset × method, then each against the published Table 1.

    The comparison uses the seven datasets other than Abalone (the paper's Abalone target
    was mis-encoded). Our means are rounded to the paper's three decimals before pairing;
    the report gives the paired differences, their mean and a two-sided sign test
    (``scipy.stats.binomtest``; equal pairs are left out) of how often we are above the paper.

    Examples
    --------
    >>> rows = [{"dataset": "yacht", "split": 0, "seed": 42, "method": "ols", "r2": 0.565, "seconds": 0.1,
    ...          "n_train": 246}]
    >>> print(table1_report(pd.DataFrame(rows)).splitlines()[-1])
      ols: 1 of 1 above the paper, 0 below, 0 equal; mean difference +0.003; sign test two-sided p = 1.000
    """
    means, seven, table = means_section(results, "Table 1", "80/20, seeds 42 + 1000·r", digits)
    parts = [table]
    comp = [m for m in means.columns if m in PUBLISHED["california"]]
    if not comp or not seven:
        return "\n\n".join([*parts, "No method or dataset to compare with the published Table 1."]) + "\n"
    side, tests = compare_published(means, PUBLISHED, comp, seven, digits)
    parts += ["Against the published Table 1 (camera-ready), the seven datasets other than Abalone "
              "(the paper's Abalone target was mis-encoded; ours uses the true Rings):",
              side.to_string(), "Paired differences (ours, rounded to 3 decimals, minus paper) and sign "
              "test:\n" + "\n".join(tests)]
    return "\n\n".join(parts) + "\n"


def means_section(results: pd.DataFrame, title: str, protocol: str, digits: int = 3
                  ) -> tuple[pd.DataFrame, list[str], str]:
    """The mean-R² section that opens the Table 1 and ablation reports.

    Returns the means (dataset × method), the datasets compared with the paper (all present
    but Abalone) and the text: a heading naming ``title``, the number of splits, ``protocol``
    and, where cells average several runs, :func:`runs_note`; then the table with each
    dataset's training rows and the mean over the compared datasets.

    Examples
    --------
    >>> rows = [{"dataset": "yacht", "split": r, "method": "ols", "r2": 0.56 + r / 100, "n_train": 246}
    ...         for r in range(2)]
    >>> means, compared, text = means_section(pd.DataFrame(rows), "Table 1", "80/20")
    >>> compared, text.splitlines()[0]
    (['yacht'], 'Table 1: mean out-of-sample R² over 2 split(s) (80/20; n_train: training rows per split)')
    """
    fmt = f"{{:.{digits}f}}".format
    means = mean_table(results)
    n_splits = results.groupby(["dataset", "method"])["split"].nunique()
    head = means.apply(lambda col: col.map(fmt))
    head.insert(0, "n_train", results.groupby("dataset")["n_train"].max().reindex(means.index).astype(str))
    compared = [d for d in COMPARED if d in means.index]
    if compared:
        head.loc[f"mean ({len(compared)}, no Abalone)"] = ["", *means.loc[compared].mean().map(fmt)]
    lo, hi = int(n_splits.min()), int(n_splits.max())
    heading = (f"{title}: mean out-of-sample R² over {lo if lo == hi else f'{lo}-{hi}'} split(s) "
               f"({protocol}; n_train: training rows per split)" + runs_note(results))
    return means, compared, heading + "\n\n" + head.to_string()


def runs_note(results: pd.DataFrame) -> str:
    """How many training runs per split the stochastic methods' cells average, if not one.

    Examples
    --------
    >>> runs_note(pd.DataFrame({"method": ["ftt", "ols"], "repeats": [5, 1]}))[-39:]
    'ftt 5; the paper trained once per split'
    >>> runs_note(pd.DataFrame({"method": ["ols"], "repeats": [1]}))
    ''
    """
    if "repeats" not in results or not (results["repeats"].fillna(1) > 1).any():
        return ""
    runs = results[results["repeats"] > 1].groupby("method")["repeats"].max()
    listed = ", ".join(f"{m} {int(k)}" for m, k in runs.items())
    return (f";\neach stochastic method's cell averages several training runs per split (seeds seed, "
            f"seed + 1, ...): {listed}; the paper trained once per split")


def compare_published(means: pd.DataFrame, published: dict[str, dict[str, float]],
                      methods: Sequence[str], datasets: Sequence[str],
                      digits: int = 3) -> tuple[pd.DataFrame, list[str]]:
    """Our means beside published ones: per method ``m``, ``paper`` and ``diff`` columns.

    Ours are rounded to the paper's three decimals before pairing; rows are ``datasets``
    and their mean. Also returns one line per method: how many datasets are above / below
    the paper, the mean difference and a two-sided sign test (``scipy.stats.binomtest``,
    equal pairs left out).

    Examples
    --------
    >>> means = pd.DataFrame({"ols": [0.600, 0.567]}, index=["california", "yacht"])
    >>> side, tests = compare_published(means, PUBLISHED, ["ols"], ["california", "yacht"])
    >>> side["ols diff"].tolist()
    ['+0.003', '+0.005', '+0.004']
    >>> tests[0]
    '  ols: 2 of 2 above the paper, 0 below, 0 equal; mean difference +0.004; sign test two-sided p = 0.500'
    """
    from scipy.stats import binomtest

    fmt, sfmt = f"{{:.{digits}f}}".format, "{:+.3f}".format
    side, tests = pd.DataFrame(index=[*datasets, "mean"]), []
    for m in methods:
        ours = means.loc[list(datasets), m]
        paper = pd.Series({d: published[d][m] for d in datasets})
        diff = (ours.round(3) - paper).round(3) + 0.0  # + 0.0: no "-0.000"
        side[m] = [*ours.map(fmt), fmt(ours.mean())]
        side[f"{m} paper"] = [*paper.map(fmt), fmt(paper.mean())]
        side[f"{m} diff"] = [*diff.map(sfmt), sfmt(diff.mean() + 0.0)]
        d = diff.dropna()
        above, below = int((d > 0).sum()), int((d < 0).sum())
        p = binomtest(above, above + below, 0.5).pvalue if above + below else 1.0
        tests.append(f"  {m}: {above} of {len(d)} above the paper, {below} below, {len(d) - above - below} "
                     f"equal; mean difference {sfmt(d.mean() + 0.0)}; sign test two-sided p = {p:.3f}")
    return side, tests


def write_results(results: pd.DataFrame, out_dir: str | os.PathLike[str],
                  prefix: str = "table1") -> dict[str, Path]:
    """Write the long results, the mean table and the report; returns their paths.

    Examples
    --------
    >>> import tempfile
    >>> rows = [{"dataset": "yacht", "split": 0, "seed": 42, "method": "ols", "r2": 0.565, "seconds": 0.1,
    ...          "n_train": 246}]
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     sorted(p.name for p in write_results(pd.DataFrame(rows), tmp).values())
    ['table1_means.csv', 'table1_report.txt', 'table1_results.csv']
    """
    return write_tables(results, table1_report(results), out_dir, prefix)


def write_tables(results: pd.DataFrame, report: str, out_dir: str | os.PathLike[str],
                 prefix: str) -> dict[str, Path]:
    """Write ``PREFIX_results.csv`` (long), ``PREFIX_means.csv`` and ``PREFIX_report.txt``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {k: out / f"{prefix}_{k}" for k in ("results.csv", "means.csv", "report.txt")}
    results.to_csv(paths["results.csv"], index=False)
    mean_table(results).to_csv(paths["means.csv"])
    paths["report.txt"].write_text(report)
    return paths
