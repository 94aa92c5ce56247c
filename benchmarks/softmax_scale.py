"""Softmax attention regression at scale: landmark or top-k fits at 1e4 / 1e5 / 1e6 rows, memory bounded.

For each size N and condition (default threads, then one thread; ``--conditions`` picks), a
fresh process fits ``keys="landmarks"`` (``--n-keys`` landmarks, k-means; ``--keys top_k``:
``--n-keys`` nearest rows per query; 0 takes the fitter's default) on N × P rows of the
Friedman-style design of ``softmax_speed.py``, then predicts ``--n-predict`` new rows, and
reports wall seconds, loss evaluations, seconds per evaluation, peak resident memory
(``ru_maxrss``, the whole process: data included) and test R²; CPU seconds (all threads) are
printed next to wall seconds, the honest figure on a shared machine. The targets of the issue:
1e5 × 8 in under 60 s, 1e6 × 8 in under 15 minutes, prediction of 1e5 rows in seconds.

``--full-rows n`` (default 4,000; 0 skips) also fits the exact attention and the ``--keys`` fit on the
first n rows, for the accuracy the approximation costs where the exact fit is affordable.
``--forward-only`` times one loss-and-gradient evaluation instead of a fit (landmarks, top-k
with its first neighbour search as the setup, or the exact key-blocked pass with
``--keys full``): what to run at 1e6 on a small machine.

    python benchmarks/softmax_scale.py                                  # 1e4, 1e5, 1e6 fits
    python benchmarks/softmax_scale.py --sizes 1e5 --conditions default
    python benchmarks/softmax_scale.py --sizes 1e5 --conditions default --keys top_k --full-rows 0
    python benchmarks/softmax_scale.py --sizes 1e6 --forward-only --conditions default
    python benchmarks/softmax_scale.py --sizes 2e4 --forward-only --keys full --key-block 8192
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from conditions import CONDITIONS, child_env
from softmax_speed import make_data


def _r2(y: np.ndarray, pred: np.ndarray) -> float:
    return float(1 - np.mean((y - pred) ** 2) / np.var(y))


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def one_evaluation(x: np.ndarray, y: np.ndarray, kw: dict[str, object]) -> dict[str, object]:
    """One loss-and-gradient evaluation at the seeded start of a fit with options ``kw``:
    seconds of the setup (landmarks) and of the evaluation, the loss and the gradient."""
    import inspect

    import torch

    from attnreg.softmax.fit import _problem, _seeded_init, _standardise, fit_softmax
    from attnreg.softmax.fused import chunk_runner
    from attnreg.softmax.model import LAM_GRID
    from attnreg.softmax.options import check_options, torch_device
    from attnreg.softmax.train import _Objective

    params = inspect.signature(fit_softmax).parameters
    defaults = {k: p.default for k, p in params.items() if p.default is not inspect.Parameter.empty}
    opts = check_options(**{**defaults, **kw, "lam_grid": LAM_GRID})
    d = _standardise(x, y)
    rows = np.arange(x.shape[0])
    with chunk_runner(torch_device(opts.device), None) as runner:
        t0 = time.perf_counter()
        prob = _problem(d, rows[: int(0.85 * len(rows))], rows[int(0.85 * len(rows)) :], opts,
                        torch_device(opts.device), runner)
        theta, _ = _seeded_init(prob.x_tr, opts, 0)
        theta = theta.requires_grad_(True)
        logits = torch.zeros(opts.heads, dtype=theta.dtype, device=theta.device, requires_grad=True)
        obj = _Objective(prob, opts.lams[0], theta, logits)
        obj.refresh()  # top-k: the first neighbour search
        setup = time.perf_counter() - t0
        t0, c0 = time.perf_counter(), time.process_time()
        loss = float(obj.loss_and_grad())
        if theta.device.type == "cuda":
            torch.cuda.synchronize()
        assert theta.grad is not None
        return {"setup": setup, "evaluation": time.perf_counter() - t0,
                "evaluation_cpu": time.process_time() - c0, "loss": loss,
                "grad": theta.grad.cpu().numpy()}


def worker(args: argparse.Namespace) -> None:
    """One size in this process; one JSON line."""
    import torch

    from attnreg.softmax import fit_softmax

    n = int(float(args.size))
    x, y = make_data(n + args.n_predict, args.p, seed=0)
    x_tr, y_tr, x_te, y_te = x[:n], y[:n], x[n:], y[n:]
    kw: dict[str, object] = {"heads": args.heads, "keys": args.keys, "n_keys": args.n_keys or None,
                             "max_iter": args.max_iter, "seed": 0, "key_block": args.key_block}
    out: dict[str, object] = {"n": n, "threads": torch.get_num_threads()}
    if args.forward_only:
        out.update({k: v for k, v in one_evaluation(x_tr, y_tr, kw).items() if k != "grad"})
        out["peak_mib"] = _peak_mib()
        print(json.dumps(out), flush=True)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0, c0 = time.perf_counter(), time.process_time()
        fit = fit_softmax(x_tr, y_tr, **kw)  # type: ignore[arg-type]
        out["fit"], out["fit_cpu"] = time.perf_counter() - t0, time.process_time() - c0
        t0, c0 = time.perf_counter(), time.process_time()
        pred = fit.predict(x_te)
        out["predict"], out["predict_cpu"] = time.perf_counter() - t0, time.process_time() - c0
        out.update({"n_evals": fit.n_evals, "test_r2": _r2(y_te, pred), "peak_mib": _peak_mib()})
        if args.full_rows:
            m = min(n, args.full_rows)
            for keys in dict.fromkeys(("full", args.keys)):
                sub = fit_softmax(x_tr[:m], y_tr[:m], **{**kw, "keys": keys})  # type: ignore[arg-type]
                out[f"r2_{keys}_{m}"] = _r2(y_te, sub.predict(x_te))
    print(json.dumps(out), flush=True)


def _line(condition: str, r: dict[str, float]) -> str:
    if "evaluation" in r:
        return (f"{condition:>9} n={r['n']:>9,}: setup {r['setup']:7.2f} s, one loss+gradient "
                f"{r['evaluation']:7.2f} s ({r['evaluation_cpu']:.2f} s CPU), peak "
                f"{r['peak_mib']:7.0f} MiB, {r['threads']} thread(s)")
    extra = "".join(f", {k} {v:.4f}" for k, v in r.items() if k.startswith("r2_"))
    return (f"{condition:>9} n={r['n']:>9,}: fit {r['fit']:7.1f} s ({r['fit_cpu']:.1f} s CPU; "
            f"{r['n_evals']} evaluations, {r['fit'] / max(1, r['n_evals']):.2f} s each), predict "
            f"{r['predict']:.2f} s ({r['predict_cpu']:.2f} s CPU), peak "
            f"{r['peak_mib']:.0f} MiB, test R2 {r['test_r2']:.4f}{extra}, {r['threads']} thread(s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1e4,1e5,1e6", help="training rows, comma separated")
    ap.add_argument("--size", default="", help=argparse.SUPPRESS)
    ap.add_argument("--p", type=int, default=8)
    ap.add_argument("--heads", type=int, default=5)
    ap.add_argument("--keys", choices=("landmarks", "top_k", "full"), default="landmarks")
    ap.add_argument("--n-keys", type=int, default=0, help="landmarks or neighbours (0: the default)")
    ap.add_argument("--key-block", type=int, default=32768, help="keys per block, exact path")
    ap.add_argument("--max-iter", type=int, default=300)
    ap.add_argument("--n-predict", type=int, default=100_000)
    ap.add_argument("--full-rows", type=int, default=4000)
    ap.add_argument("--forward-only", action="store_true")
    ap.add_argument("--conditions", nargs="+", choices=CONDITIONS[:2], default=list(CONDITIONS[:2]))
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    passed = ["--p", str(args.p), "--heads", str(args.heads), "--keys", args.keys, "--n-keys",
              str(args.n_keys), "--key-block", str(args.key_block), "--max-iter", str(args.max_iter),
              "--n-predict", str(args.n_predict),
              "--full-rows", str(args.full_rows)] + (["--forward-only"] if args.forward_only else [])
    print(f"softmax attention at scale: keys={args.keys}, n_keys={args.n_keys}, p={args.p}, "
          f"heads={args.heads}, fresh process per size and condition, wall-clock seconds")
    for size in args.sizes.split(","):
        walls: dict[str, float] = {}
        for condition in args.conditions:
            cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", "--size", size, *passed]
            proc = subprocess.run(cmd, env=child_env(condition), capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"{condition:>9} n={size}: failed: {proc.stderr.strip().splitlines()[-1:]}")
                continue
            r = json.loads([ln for ln in proc.stdout.splitlines() if ln.startswith("{")][-1])
            walls[condition] = r.get("fit", r.get("evaluation", 0.0))
            print(_line(condition, r), flush=True)
        if len(walls) == 2:
            print(f"{'':>9} one thread / default: {walls['1 thread'] / walls['default']:.2f}x")


if __name__ == "__main__":
    main()
