"""The paper's real-data protocol (Table 1): data preparation, splits and the runner.

Protocol (DESIGN.md §3, PAPER.md §3.1): drop rows with a missing value; Abalone drops its
categorical ``Sex`` and keeps the true ``Rings`` target; when N > 5000, subsample once with
``numpy.random.RandomState(42).choice(N, 5000, replace=False)`` (rows in the order drawn);
five 80/20 splits ``train_test_split(test_size=0.2, random_state=42 + 1000·r)``; X standardised
on the training part (y too for neural methods, predictions mapped back); out-of-sample R².

``run_table1`` (through :func:`run_grid`, which the ablation grid of
:mod:`attnreg.bench.ablation` shares) stores every finished (dataset, split, method) cell as a
small JSON file, so an interrupted run resumes where it stopped; ``table1_report`` sets our
means beside the published ones (:mod:`attnreg.bench.published`). The methods and their
registry are in :mod:`attnreg.bench.methods` (re-exported here: :data:`METHODS`,
:func:`register_method`, :func:`get_method`, :func:`network_method`).
"""

from __future__ import annotations

import json
import os
import time
import warnings
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from attnreg._progress import Progress
from attnreg._typing import FloatArray
from attnreg.bench.methods import (METHODS, PLANNED, Method, get_method, network_method, register_method,
                                   require_sklearn)
from attnreg.bench.published import TABLE1
from attnreg.bench.reports import compare_published, table1_report, write_results
from attnreg.datasets import dataset_info, dataset_names, load_dataset
from attnreg.exceptions import OptionError

__all__ = ["CAP", "COLUMNS", "COMPARED", "METHODS", "PLANNED", "PUBLISHED", "QUICK_CAP", "Method",
           "compare_published", "get_method", "network_method", "prepare", "register_method",
           "run_cell", "run_grid", "run_table1", "split_indices", "split_seeds", "table1_report",
           "write_results"]

CAP, QUICK_CAP = 5000, 1000  #: row caps of the full and the ``quick`` protocol
SUBSAMPLE_SEED, SPLIT_SEED, SEED_STEP, TEST_SIZE = 42, 42, 1000, 0.2
#: stored in each cached cell; a cell from another version is recomputed (2: the networks
#: draw their validation rows and batches as the paper's code does)
PROTOCOL_VERSION = 2
COLUMNS = ("dataset", "split", "seed", "method", "r2", "seconds", "n_train", "repeats")

#: published Table 1 (camera-ready, PAPER.md §3.2); Abalone's used a mis-encoded target
PUBLISHED: dict[str, dict[str, float]] = TABLE1
#: the datasets compared with the paper (all but Abalone)
COMPARED = tuple(n for n in dataset_names() if n != "abalone")

def prepare(name: str, *, cap: int = CAP, data_dir: str | os.PathLike[str] | None = None,
            download: bool = True) -> tuple[pd.DataFrame, pd.Series]:
    """Predictors and target of a benchmark under the protocol.

    Non-numeric columns (Abalone's ``Sex``) and rows with a missing value are dropped; when
    more than ``cap`` rows remain, ``RandomState(42).choice(N, cap, replace=False)`` picks
    them, in the order drawn. The index holds the original row numbers.

    Examples
    --------
    >>> X, y = prepare("protein")  # doctest: +SKIP
    >>> X.shape, y.name  # doctest: +SKIP
    ((5000, 9), 'RMSD')
    """
    df = load_dataset(name, data_dir=data_dir, download=download, numeric_only=True).dropna()
    if len(df) > cap:
        df = df.iloc[np.random.RandomState(SUBSAMPLE_SEED).choice(len(df), cap, replace=False)]
    return df.iloc[:, :-1].astype(float), df.iloc[:, -1].astype(float)


def split_seeds(splits: int = 5) -> list[int]:
    """Seeds of the splits: 42 + 1000·r.

    Examples
    --------
    >>> split_seeds(3)
    [42, 1042, 2042]
    """
    return [SPLIT_SEED + SEED_STEP * r for r in range(splits)]


def split_indices(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Train and test positions of one 80/20 split, exactly as ``train_test_split`` draws them.

    Examples
    --------
    >>> train, test = split_indices(10, seed=42)
    >>> len(train), len(test), sorted([*train, *test]) == list(range(10))
    (8, 2, True)
    """
    require_sklearn()
    from sklearn.model_selection import train_test_split

    train, test = train_test_split(np.arange(n), test_size=TEST_SIZE, random_state=seed)
    return np.asarray(train), np.asarray(test)


def _r2(y: FloatArray, pred: FloatArray) -> float:
    return 1.0 - float(np.sum((y - pred) ** 2)) / float(np.sum((y - np.mean(y)) ** 2))


def _standardise(train: FloatArray, other: FloatArray) -> tuple[FloatArray, FloatArray]:
    mu, sd = train.mean(axis=0), train.std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return (train - mu) / sd, (other - mu) / sd


def run_cell(X: pd.DataFrame, y: pd.Series, seed: int, method: str | Method, *,
             device: str = "cpu", progress: bool = False, repeats: int = 1) -> dict[str, Any]:
    """Fit one method on one split; returns r2, seconds, n_train, n_test and repeats.

    With ``repeats`` > 1 a stochastic method is trained that many times on the same split,
    with training seeds ``seed, seed + 1, ...`` (the first run is the single-seed protocol's),
    and ``r2`` is the mean of the runs' R² (listed in ``r2_runs``); ``seconds`` is the total.
    A deterministic method is fitted once whatever ``repeats`` is.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame(rng.normal(size=(100, 2)), columns=["a", "b"])
    >>> y = pd.Series(X["a"] - 2 * X["b"] + 0.1 * rng.normal(size=100))
    >>> cell = run_cell(X, y, 42, "ols")
    >>> round(cell["r2"], 2), cell["n_train"], cell["n_test"]
    (1.0, 80, 20)
    """
    m = get_method(method) if isinstance(method, str) else method
    train, test = split_indices(len(X), seed)
    xa, ya = X.to_numpy(dtype=float), y.to_numpy(dtype=float)
    x_tr, x_te = _standardise(xa[train], xa[test])
    y_tr, y_mu, y_sd = ya[train], 0.0, 1.0
    if m.scale_y:
        y_mu, y_sd = float(y_tr.mean()), float(y_tr.std()) or 1.0
        y_tr = (y_tr - y_mu) / y_sd
    repeats = _check_repeats(repeats)
    runs = repeats if m.stochastic else 1
    r2s, t0 = [], time.perf_counter()
    for k in range(runs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # fitting notes are not results
            pred = m(x_tr, y_tr, x_te, seed + k, device, progress) * y_sd + y_mu
        r2s.append(_r2(ya[test], pred))
    cell = {"r2": float(np.mean(r2s)), "seconds": time.perf_counter() - t0,
            "n_train": len(train), "n_test": len(test), "repeats": runs}
    return {**cell, "r2_runs": r2s} if runs > 1 else cell


def _check_repeats(repeats: object) -> int:
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise OptionError(f"repeats must be a positive integer; got {repeats!r}")
    return int(repeats)


def _cell_path(cache: Path, mode: str, dataset: str, method: str, split: int, repeats: int = 1) -> Path:
    runs = f"__x{repeats}" if repeats > 1 else ""
    return cache / mode / f"{dataset}__{method}{runs}__split{split}.json"


def _read_cell(path: Path) -> dict[str, Any] | None:
    try:
        cell = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    ok = isinstance(cell, dict) and cell.get("version") == PROTOCOL_VERSION
    if ok:
        cell.setdefault("repeats", 1)  # cells written before repeats existed
    return cell if ok and all(k in cell for k in COLUMNS) else None


def run_table1(datasets: Sequence[str] | None = None,
               methods: Sequence[str] = ("ols", "ridge", "pcr", "rf"), splits: int = 5, *,
               cache_dir: str | os.PathLike[str] | None = None, device: str = "cpu",
               progress: bool = True, quick: bool = False,
               data_dir: str | os.PathLike[str] | None = None, download: bool = True,
               threads: int | None = 1, repeats: int = 1) -> pd.DataFrame:
    """Run the Table 1 grid, resuming from cached cells.

    Parameters
    ----------
    datasets : names (default: all eight); methods : keys of :data:`METHODS`.
    splits : number of 80/20 splits (seeds 42 + 1000·r).
    cache_dir : directory for the finished cells (one JSON file each); None: no caching.
        Delete a cell's file to recompute it.
    device : passed to the methods (``"cpu"``, ``"cuda"``). progress : one updating line on
        stderr (the methods' own progress stays off).
    quick : one split and at most 1000 rows per dataset (cached apart from full runs).
    data_dir, download : where the data are looked for; see :func:`attnreg.datasets.load_dataset`.
    threads : BLAS and torch threads during the run (None: leave as is).
    repeats : training runs per split of the stochastic methods (seeds ``seed, seed + 1,
        ...``), averaged in the cell; 1 (default) is the paper's protocol. Such cells are
        cached apart (``yacht__ftt__x5__split0.json``).

    Returns
    -------
    DataFrame with columns :data:`COLUMNS`, one row per (dataset, split, method).

    Examples
    --------
    >>> res = run_table1(["yacht"], ["ols", "ridge"], splits=2, progress=False)  # doctest: +SKIP
    >>> res.shape  # doctest: +SKIP
    (4, 7)
    """
    chosen = {m: get_method(m) for m in dict.fromkeys(methods)}
    return run_grid(datasets, chosen, splits, cache_dir=cache_dir, device=device, progress=progress,
                    quick=quick, data_dir=data_dir, download=download, threads=threads, label="table1",
                    repeats=repeats)


def run_grid(datasets: Sequence[str] | None, methods: dict[str, Method], splits: int = 5, *,
             cache_dir: str | os.PathLike[str] | None = None, device: str = "cpu",
             progress: bool = True, quick: bool = False,
             data_dir: str | os.PathLike[str] | None = None, download: bool = True,
             threads: int | None = 1, label: str = "grid", cache_tag: str = "",
             aliases: dict[str, str] | None = None, repeats: int = 1) -> pd.DataFrame:
    """The protocol's runner behind :func:`run_table1` and the ablation grid.

    Fits every ``methods[key]`` on every (dataset, split) with :func:`run_cell`, caching
    each finished cell under ``cache_dir/{full|quick}{cache_tag}/``; ``label`` names the
    progress line. ``aliases`` maps a key to another method's name whose cached cell is the
    same computation (the ablation's ``"RB"`` is Table 1's ``"block"``): a missing cell is
    copied from it when present. Arguments otherwise as :func:`run_table1`.

    Examples
    --------
    >>> mean = Method(lambda X, y, X_new, seed, device, progress: np.full(len(X_new), y.mean()))
    >>> res = run_grid(["yacht"], {"mean": mean}, 1, progress=False)  # doctest: +SKIP
    >>> res[["dataset", "method", "n_train"]].values.tolist()  # doctest: +SKIP
    [['yacht', 'mean', 246]]
    """
    names = [dataset_info(d).name for d in (datasets or dataset_names())]
    if isinstance(splits, bool) or not isinstance(splits, (int, np.integer)) or splits < 1:
        raise OptionError(f"splits must be a positive integer; got {splits!r}")
    seeds = split_seeds(1 if quick else int(splits))
    repeats = _check_repeats(repeats)
    cache = Path(cache_dir) if cache_dir is not None else None
    mode = ("quick" if quick else "full") + cache_tag
    rows: list[dict[str, Any]] = []
    with ExitStack() as stack:
        _pin_threads(stack, threads, any(m.uses_torch for m in methods.values()))
        bar = stack.enter_context(Progress(len(names) * len(seeds) * len(methods), label, progress))
        for name in names:
            data: tuple[pd.DataFrame, pd.Series] | None = None
            for r, seed in enumerate(seeds):
                for key, method in methods.items():
                    runs = repeats if method.stochastic else 1
                    path = _cell_path(cache, mode, name, key, r, runs) if cache else None
                    cell = _read_cell(path) if path else None
                    if cell is None and path and aliases and key in aliases:
                        same = _read_cell(_cell_path(path.parents[1], mode, name, aliases[key], r, runs))
                        if same is not None:
                            cell = {**same, "method": key, "copied_from": aliases[key]}
                            path.parent.mkdir(parents=True, exist_ok=True)
                            path.write_text(json.dumps(cell, indent=1))
                    if cell is None:
                        if data is None:
                            data = prepare(name, cap=QUICK_CAP if quick else CAP, data_dir=data_dir,
                                           download=download)
                        bar.update(len(rows), f"{name} split {r} {key} ...")
                        cell = {"dataset": name, "split": r, "seed": seed, "method": key,
                                **run_cell(*data, seed, method, device=device, repeats=runs),
                                "version": PROTOCOL_VERSION, "quick": quick}
                        if path:
                            path.parent.mkdir(parents=True, exist_ok=True)
                            path.write_text(json.dumps(cell, indent=1))
                    rows.append(cell)
                    bar.update(len(rows), f"{name} split {r} {key} R2={cell['r2']:.3f}")
    return pd.DataFrame(rows, columns=list(COLUMNS))


def _pin_threads(stack: ExitStack, threads: int | None, torch_too: bool) -> None:
    if threads is None:
        return
    try:
        from threadpoolctl import threadpool_limits

        stack.enter_context(threadpool_limits(limits=threads))
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        pass
    if torch_too:
        import torch

        stack.callback(torch.set_num_threads, torch.get_num_threads())
        torch.set_num_threads(threads)
