"""Out-of-sample R² of landmark and top-k attention against full attention on the paper's UCI sets.

Table 1's protocol (``attnreg.bench.protocol``: at most 5,000 rows, 80/20 splits seeded
42 + 1000·r, predictors standardised on the training part): for each dataset and split,
``fit_softmax`` with ``keys="full"``, with ``keys="landmarks"`` for each ``--n-keys`` and
with ``keys="top_k"`` for each ``--top-k`` (neighbours per query), everything else at its
default (``--threads`` to pin the worker threads). ``--fit-seeds`` fits each method that
many times per split (seeds split + 0, 1, ...; the seed draws the validation split that
chooses the penalty and the stopping point) and averages their R²; the printed range (max −
min over those seeds) shows how much one fit's R² moves. Prints each R², the difference from
the full fit, the seconds, and per dataset the mean difference (the issue's bar: within
0.005). The data are read from
``--data`` (default $ATTNREG_DATA, else ../shared/data) and never downloaded.

    python benchmarks/softmax_landmark_accuracy.py --datasets kin8nm,airfoil --splits 1
    python benchmarks/softmax_landmark_accuracy.py --n-keys "" --top-k 64,128 --splits 3
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _default_data() -> Path:
    env = os.environ.get("ATTNREG_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"


def _fit_r2(x_tr, y_tr, x_te, y_te, keys: str, n_keys: int, seed: int,
            threads: int | None) -> tuple[float, float]:
    """Out-of-sample R² and seconds of one fit."""
    from attnreg.softmax import fit_softmax

    kw = {"keys": keys, "n_keys": n_keys} if keys != "full" else {}
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = fit_softmax(x_tr, y_tr, seed=seed, threads=threads, **kw)  # type: ignore[arg-type]
    pred = fit.predict(x_te)
    r2 = 1 - np.sum((y_te - pred) ** 2) / np.sum((y_te - y_te.mean()) ** 2)
    return float(r2), time.perf_counter() - t0


def main() -> int:
    from attnreg.bench.protocol import _standardise, prepare, split_indices, split_seeds

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", default="kin8nm,airfoil,concrete")
    ap.add_argument("--splits", type=int, default=1)
    ap.add_argument("--fit-seeds", type=int, default=1,
                    help="fits per split and method (seeds split + 0, 1, ...), R² averaged")
    ap.add_argument("--n-keys", default="256,1024", help="landmark counts ('' for none)")
    ap.add_argument("--top-k", default="", help="neighbours per query of keys='top_k' ('' for none)")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--data", type=Path, default=_default_data())
    args = ap.parse_args()
    if not args.data.is_dir():
        print(f"no data folder at {args.data}; set ATTNREG_DATA or pass --data (skipped)")
        return 0
    runs = [("full", 0)] + [("landmarks", int(k)) for k in args.n_keys.split(",") if k]
    runs += [("top_k", int(k)) for k in args.top_k.split(",") if k]
    label = {"full": "full", "landmarks": "L={}", "top_k": "k={}"}
    for name in args.datasets.split(","):
        X, y = prepare(name, data_dir=args.data / "uci", download=False)
        diffs: dict[str, list[float]] = {}
        for split in split_seeds(args.splits):
            tr, te = split_indices(len(X), split)
            x_tr, x_te = _standardise(X.to_numpy()[tr], X.to_numpy()[te])
            y_tr, y_te = y.to_numpy()[tr], y.to_numpy()[te]
            row = []
            for keys, n_keys in runs:
                got = [_fit_r2(x_tr, y_tr, x_te, y_te, keys, n_keys, split + j, args.threads)
                       for j in range(args.fit_seeds)]
                r2s = [g[0] for g in got]
                row.append((label[keys].format(n_keys), float(np.mean(r2s)), np.ptp(r2s),
                            sum(g[1] for g in got)))
            full = row[0][1]
            for lab, r2, _, _ in row[1:]:
                diffs.setdefault(lab, []).append(r2 - full)
            print(f"{name:>10} split {split:>5} (n_train {len(tr)}): " + ", ".join(
                f"{lab} R2 {r2:.4f} ({r2 - full:+.4f}, range {rng:.4f}, {sec:.0f} s)"
                for lab, r2, rng, sec in row), flush=True)
        print(f"{name:>10} mean difference over {args.splits} split(s) x {args.fit_seeds} seed(s): "
              + ", ".join(f"{lab} {np.mean(d):+.4f}" for lab, d in diffs.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
