"""Wall-clock and CPU time of one Regression Block fit on Kin8nm: fast vs naive φ-projection.

Protocol (the paper's Table 1): the Kin8nm rows are subsampled once to 5,000 with
``RandomState(42).choice``; split r is ``train_test_split(test_size=0.2, random_state=42 +
1000·r)``; X and y are standardised on the training part; the network is the paper's RB
(d=64, 200 PCA components, ridge warm start, Adam, early stopping on 15% of the training
rows). "fast" projects φ's shared global block once per row (the first mixer works on the
monomials of x) and assembles the PCA covariance blockwise; "naive" builds φ with P copies
of that block, for the forward pass and for the PCA fit, as the paper's code. Both fit the
same model from the same seed (equal forward passes to rounding), so the R² agree to
float32 training noise.

Measured under each condition of ``conditions.py`` (default threads, one thread, a busy
neighbour): runs alternate fast / naive and the medians are reported, wall-clock and CPU time
of the process; the naive path is the peer, so the speed-up is a ratio from the same run.

    python benchmarks/nn_speed.py [--splits 1] [--repeat 1] [--fast-only] [--data DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conditions import add_arguments, under

PAPER_R2 = 0.920  # the paper's RB on Kin8nm (mean of 5 splits, corrected protocol)


def load_kin8nm(data_dir: Path) -> tuple[np.ndarray, np.ndarray] | None:
    """The 5,000-row Kin8nm sample of the paper's protocol, or None when the file is absent."""
    import pandas as pd

    path = data_dir / "uci" / "kin8nm.csv.gz"
    if not path.is_file():
        return None
    frame = pd.read_csv(path).dropna()
    X = frame.iloc[:, :-1].to_numpy(dtype=np.float64)
    y = frame.iloc[:, -1].to_numpy(dtype=np.float64)
    if X.shape[0] > 5000:
        rows = np.random.RandomState(42).choice(X.shape[0], 5000, replace=False)
        X, y = X[rows], y[rows]
    return X, y


def split(X: np.ndarray, y: np.ndarray, r: int) -> tuple[np.ndarray, ...]:
    """Split r, standardised on its training part."""
    from sklearn.model_selection import train_test_split

    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.2, random_state=42 + 1000 * r)
    mx, sx = X_tr.mean(axis=0), X_tr.std(axis=0)
    my, sy = y_tr.mean(), y_tr.std()
    return (X_tr - mx) / sx, (X_te - mx) / sx, (y_tr - my) / sy, (y_te - my) / sy


def one_fit(data: tuple[np.ndarray, ...], *, naive: bool, seed: int) -> dict[str, float]:
    """Fit the RB on one split; seconds (wall, CPU), epochs and test R²."""
    from attnreg.nn.config import BlockConfig
    from attnreg.nn.fit import fit_network

    X_tr, X_te, y_tr, y_te = data
    wall, cpu = time.perf_counter(), time.process_time()
    fit = fit_network(X_tr, y_tr, config=BlockConfig(naive=naive), seed=seed)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    pred = fit.predict(X_te)
    r2 = 1.0 - float(np.sum((y_te - pred) ** 2) / np.sum((y_te - y_te.mean()) ** 2))
    return {"wall": wall, "cpu": cpu, "epochs": fit.history.n_epochs, "best": fit.history.best_epoch,
            "r2": r2}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=1, help="splits r = 0..splits-1 (paper: 5)")
    ap.add_argument("--repeat", type=int, default=1, help="timed fits of each kind per split")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: its default)")
    ap.add_argument("--fast-only", action="store_true",
                    help="skip the naive fits (e.g. to check the R² over the paper's 5 splits)")
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "data")
    add_arguments(ap)
    args = ap.parse_args()

    loaded = load_kin8nm(args.data)
    if loaded is None:
        print(f"skipped: {args.data / 'uci' / 'kin8nm.csv.gz'} not found (pass --data DIR)")
        return
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    X, y = loaded
    warm = split(X[:400], y[:400], 0)  # import and allocate everything once, untimed
    from attnreg.nn.config import BlockConfig
    from attnreg.nn.fit import fit_network

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # two epochs: "still improving" is expected
        for naive in (False, True):
            fit_network(warm[0], warm[2], config=BlockConfig(naive=naive), max_epochs=2)

    print(f"Kin8nm: n_train=4000, P={X.shape[1]}, torch {torch.__version__}, "
          f"{torch.get_num_threads()} thread(s) by default")
    for condition in args.conditions:
        with under(condition):
            run_condition(condition, X, y, args)


def run_condition(condition: str, X: np.ndarray, y: np.ndarray, args: argparse.Namespace) -> None:
    """The fast and naive fits of every split under one condition, and their medians."""
    results: dict[str, list[dict[str, float]]] = {"fast": [], "naive": []}
    for r in range(args.splits):
        data = split(X, y, r)
        for _ in range(args.repeat):
            for kind in ("fast",) if args.fast_only else ("fast", "naive"):
                res = one_fit(data, naive=kind == "naive", seed=r)
                results[kind].append(res)
                print(f"  {condition:>8} split {r} {kind:5s}: {res['wall']:6.1f} s wall, "
                      f"{res['cpu']:6.1f} s CPU, {res['epochs']:3d} epochs (best {res['best']}), "
                      f"test R² {res['r2']:.4f}", flush=True)
    med = {k: {m: statistics.median(x[m] for x in v) for m in ("wall", "cpu")}
           for k, v in results.items() if v}
    for kind in med:
        r2 = statistics.mean(x["r2"] for x in results[kind])
        print(f"{condition:>8} {kind:5s}: median {med[kind]['wall']:.1f} s wall, "
              f"{med[kind]['cpu']:.1f} s CPU; mean test R² {r2:.4f} over {args.splits} split(s) "
              f"(paper's RB: {PAPER_R2:.3f})")
    if "naive" in med:
        print(f"{condition:>8} speed-up (naive / fast): "
              f"{med['naive']['wall'] / med['fast']['wall']:.2f}x wall, "
              f"{med['naive']['cpu'] / med['fast']['cpu']:.2f}x CPU")


if __name__ == "__main__":
    main()
