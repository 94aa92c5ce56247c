"""The torch paths on a CUDA GPU: softmax fitter and Regression Block, timed against the CPU.

One short script for a machine with a GPU (about 5-10 minutes on one H200):

    python benchmarks/gpu_check.py --data ../shared/data --out results/gpu

1. softmax attention regression (``method="softmax"``) on a 4,000 x 8 Monte Carlo draw with
   ``device="cuda"`` and ``device="cpu"``: seconds and the largest difference of predictions;
2. the Regression Block (``method="block"``) on Kin8nm split 0 (the paper's code: about 8.5 s
   on an H200) on cuda and cpu: seconds and test R²;
3. the Regression Block rows of Table 1 (``python -m attnreg.bench table1 --methods block
   --device cuda``), unless ``--skip-table1``; cells are cached in OUT so a rerun resumes.

Everything is written to OUT/gpu_check.json and printed. Exits 2 without a CUDA device.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _softmax(device: str) -> tuple[float, np.ndarray]:
    import pandas as pd

    import attnreg as ar
    from attnreg.bench.dgp import simulate

    sim = simulate("friedman1", 4000, snr=2.0, seed=0)
    names = [f"x{j}" for j in range(sim.X_train.shape[1])]
    train = pd.DataFrame(sim.X_train, columns=names).assign(y=sim.y_train)
    test = pd.DataFrame(sim.X_test, columns=names)
    t = time.perf_counter()
    fit = ar.attnreg("y ~ " + " + ".join(names), train, method="softmax", seed=0, device=device,
                     progress=False)
    pred = fit.predict(test).to_numpy()
    return time.perf_counter() - t, pred


def _block(device: str, data: Path) -> dict[str, float]:
    from attnreg.bench.protocol import prepare, run_cell, split_seeds

    X, y = prepare("kin8nm", data_dir=data, download=False)
    cell = run_cell(X, y, split_seeds(1)[0], "block", device=device)
    return {"seconds": cell["seconds"], "r2": cell["r2"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=Path("../shared/data"))
    ap.add_argument("--out", type=Path, default=Path("results/gpu"))
    ap.add_argument("--skip-table1", action="store_true")
    args = ap.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("gpu_check: no CUDA device; nothing to do", file=sys.stderr)
        return 2
    torch.set_num_threads(1)
    args.out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"device": torch.cuda.get_device_name(0)}
    s_gpu, p_gpu = _softmax("cuda")
    s_cpu, p_cpu = _softmax("cpu")
    report["softmax"] = {"cuda_s": s_gpu, "cpu_s": s_cpu,
                         "max_abs_pred_diff": float(np.max(np.abs(p_gpu - p_cpu)))}
    print("softmax", report["softmax"], flush=True)
    report["block_kin8nm_split0"] = {"cuda": _block("cuda", args.data),
                                     "cpu": _block("cpu", args.data), "paper_code_h200_s": 8.5}
    print("block", report["block_kin8nm_split0"], flush=True)
    if not args.skip_table1:
        t = time.perf_counter()
        cmd = [sys.executable, "-m", "attnreg.bench", "table1", "--methods", "block", "--splits",
               "5", "--device", "cuda", "--data-dir", str(args.data), "--no-download",
               "--out", str(args.out / "table1_block")]
        rc = subprocess.run(cmd, check=False).returncode
        report["table1_block"] = {"rc": rc, "seconds": time.perf_counter() - t}
        print("table1", report["table1_block"], flush=True)
    (args.out / "gpu_check.json").write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
