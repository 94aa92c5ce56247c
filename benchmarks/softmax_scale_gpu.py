"""Softmax attention regression at scale on a CUDA GPU, checked against the CPU.

Prepared for a machine with a GPU; without CUDA it says so and exits 0 (nothing to check).

1. One loss-and-gradient evaluation in float64 at the same parameters on ``device="cuda"`` and
   ``device="cpu"``, for the landmark pass and the exact key-blocked pass (``key_block`` below
   N): the losses and gradients must agree to 1e-9 relative (the same sums in another order).
2. The same landmark fit (``keys="landmarks"``, float32 scores, the defaults) on both devices:
   seconds, test R² of each and the largest difference of predictions relative to sd(y).
   L-BFGS amplifies rounding differences, so the fits agree in R² (to 0.01), not to the digit.

    python benchmarks/softmax_scale_gpu.py [--n 100000] [--n-exact 20000] [--out results/gpu]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from softmax_scale import make_data, one_evaluation

#: float64 sums in another order (device reductions vs CPU blocks)
RTOL_DEVICE = 1e-9
#: test R² of the two devices' fits (L-BFGS paths diverge from rounding on)
R2_AGREE = 0.01


def _evaluations(x: np.ndarray, y: np.ndarray, kw: dict[str, object]) -> dict[str, object]:
    res = {dev: one_evaluation(x, y, {**kw, "device": dev, "score_dtype": "float64"})
           for dev in ("cuda", "cpu")}
    g_gpu, g_cpu = np.asarray(res["cuda"]["grad"]), np.asarray(res["cpu"]["grad"])
    loss_gpu, loss_cpu = float(res["cuda"]["loss"]), float(res["cpu"]["loss"])  # type: ignore[arg-type]
    loss_err = abs(loss_gpu - loss_cpu) / abs(loss_cpu)
    grad_err = float(np.abs(g_gpu - g_cpu).max() / np.abs(g_cpu).max())
    return {"loss_rel_diff": loss_err, "grad_rel_diff": grad_err,
            "seconds_cuda": res["cuda"]["evaluation"], "seconds_cpu": res["cpu"]["evaluation"],
            "ok": loss_err < RTOL_DEVICE and grad_err < RTOL_DEVICE}


def _fits(x: np.ndarray, y: np.ndarray, n: int, kw: dict[str, object]) -> dict[str, object]:
    from attnreg.softmax import fit_softmax

    out: dict[str, object] = {}
    preds = {}
    for dev in ("cuda", "cpu"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            fit = fit_softmax(x[:n], y[:n], device=dev, **kw)  # type: ignore[arg-type]
            preds[dev] = fit.predict(x[n:])
        out[f"seconds_{dev}"] = time.perf_counter() - t0
        out[f"r2_{dev}"] = float(1 - np.mean((y[n:] - preds[dev]) ** 2) / np.var(y[n:]))
    out["max_pred_diff_over_sd"] = float(np.abs(preds["cuda"] - preds["cpu"]).max() / np.std(y))
    out["ok"] = abs(out["r2_cuda"] - out["r2_cpu"]) < R2_AGREE  # type: ignore[operator]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="rows of the landmark fit")
    ap.add_argument("--n-exact", type=int, default=20_000, help="rows of the exact blocked check")
    ap.add_argument("--n-keys", type=int, default=1024)
    ap.add_argument("--out", type=Path, default=None, help="folder for softmax_scale_gpu.json")
    args = ap.parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("softmax_scale_gpu: CUDA is not available; nothing to check (skipped)")
        return 0
    x, y = make_data(args.n + 10_000, 8, seed=0)
    report = {
        "device": torch.cuda.get_device_name(0),
        "landmark_evaluation": _evaluations(x[: args.n], y[: args.n],
                                            {"keys": "landmarks", "n_keys": args.n_keys}),
        "exact_blocked_evaluation": _evaluations(x[: args.n_exact], y[: args.n_exact],
                                                 {"keys": "full", "key_block": 4096}),
        "landmark_fit": _fits(x, y, args.n, {"keys": "landmarks", "n_keys": args.n_keys, "seed": 0}),
    }
    text = json.dumps(report, indent=2)
    print(text)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "softmax_scale_gpu.json").write_text(text + "\n")
    ok = all(bool(part["ok"]) for part in report.values() if isinstance(part, dict))  # type: ignore[index]
    print("CPU and GPU agree" if ok else "CPU and GPU DISAGREE")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
