"""Speed and client memory of a fixed-effects fit over a parquet dataset (issue 25, item 4).

    python benchmarks/fe_chunked.py                        # 1e6 rows, 8 files
    python benchmarks/fe_chunked.py --rows 2e8 --files 200 # the issue's size (larger than RAM)
    python benchmarks/fe_chunked.py --rows 1e6 --dask      # and on a dask LocalCluster
    python benchmarks/fe_chunked.py --rows 2e8 --workers 1e6 --files 200 --dir /tmp/fe

The dataset: ``--rows`` rows of a worker–firm panel, two fixed effects (``worker``: rows/10
levels by default, ``--workers`` to set them, int64 ids; ``firm``: 1,000 levels; each worker
at one firm but for a fraction of the rows, 5 % with 10 rows per worker, scaled so that a
worker has 0.5 moved rows on average whatever its rows: about 1.4 combinations of levels per
worker), five regressors x0..x4 and a response y, in ``--files`` parquet files, generated
file by file into a temporary directory (``--dir`` to keep one; reused when it has the right
size; memory: one file). The client holds pass A's table of combinations (about 1.4 per
worker), not the rows: its memory grows with ``--workers``, not with ``--rows``. Each tool
runs in a fresh Python process; the best wall-clock seconds of ``--reps`` calls and the
client's peak RSS during them (VmHWM, reset before by writing "5" to /proc/self/clear_refs
after malloc_trim, as benchmarks/large_ols.py; absolute, so it includes the interpreter and
the libraries):

* ``pyarrow read`` -- the I/O floor: the same columns read and decoded by a
  ``pyarrow.dataset`` scan (nothing computed);
* ``attnreg fe fit`` -- ``ar.attnreg("y ~ x0 + ... + x4 | worker + firm", glob,
  vcov="cluster", cluster="worker")``: the spec, pass A (sums per worker–firm combination and
  the demeaning on them), the R factor of the residualised chunks, the nesting pass and the
  cluster pass (five reads of the columns);
* ``attnreg fe on dask`` (``--dask``) -- the same formula on ``dd.read_parquet(dir)`` on a
  LocalCluster of 2 single-threaded worker processes (started before the timing).

Printed: seconds, peak client memory (GB), the ratio of each fit's time to the I/O floor and
the machine's load averages before and after.
Target (issue 25): client memory < 2 GB at 2e8 rows.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

#: benchmarks measure the checkout they belong to, whatever attnreg is installed
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

N_X = 5
COLUMNS = ["worker", "firm", *(f"x{j}" for j in range(N_X)), "y"]
FORMULA = "y ~ " + " + ".join(f"x{j}" for j in range(N_X)) + " | worker + firm"
N_FIRMS = 1000
ROW_GROUP = 1 << 18


def write_dataset(directory: Path, n_rows: int, n_files: int, n_workers: int,
                  seed: int = 25) -> float:
    """The parquet files, one generated at a time (memory: one file); returns GB written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    move = min(0.05, 0.5 * n_workers / n_rows)  # 0.5 moved rows per worker (5 % of 10 rows)
    ability = rng.normal(size=n_workers)
    premium = rng.normal(size=N_FIRMS)
    home = rng.integers(0, N_FIRMS, n_workers)
    per = -(-n_rows // n_files)
    for i in range(n_files):
        rows = min(per, n_rows - i * per)
        if rows <= 0:
            break
        worker = rng.integers(0, n_workers, rows)
        firm = home[worker]  # a worker's firm, but for 5 % of rows (movers)
        moved = rng.random(rows) < move
        firm[moved] = rng.integers(0, N_FIRMS, int(moved.sum()))
        X = rng.normal(size=(rows, N_X)) + 0.3 * ability[worker][:, None]
        y = X @ np.linspace(-1, 1, N_X) + ability[worker] + premium[firm] + rng.normal(size=rows)
        table = pa.table({"worker": worker, "firm": firm,
                          **{f"x{j}": X[:, j] for j in range(N_X)}, "y": y})
        pq.write_table(table, directory / f"part-{i:04d}.parquet", row_group_size=ROW_GROUP)
    return sum(p.stat().st_size for p in directory.glob("*.parquet")) / 1e9


def _loadavg() -> str:
    """The 1-, 5- and 15-minute load averages of the machine."""
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def _peak_gb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20
    return float("nan")


def _reset_peak() -> None:
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")


def measure(tool: str, directory: Path, reps: int) -> dict[str, Any]:
    """Best seconds of ``reps`` calls of ``tool`` and the peak RSS (GB) during them."""
    import attnreg as ar

    glob = str(directory / "*.parquet")
    client = None
    if tool == "attnreg fe on dask":
        import logging

        import dask.dataframe as dd
        from distributed import Client, LocalCluster

        client = Client(LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                     host="127.0.0.1", dashboard_address=None,
                                     silence_logs=logging.ERROR))

    def run() -> Any:
        if tool == "pyarrow read":
            import pyarrow.dataset as ds

            files = sorted(str(p) for p in directory.glob("*.parquet"))
            return sum(b.num_rows for b in ds.dataset(files, format="parquet")
                       .to_batches(columns=COLUMNS, batch_size=ROW_GROUP))
        data: Any = glob if client is None else dd.read_parquet(glob)
        fit = ar.attnreg(FORMULA, data, vcov="cluster", cluster="worker")
        return [round(float(c), 6) for c in fit.coef]

    best, out = np.inf, None
    _reset_peak()
    for _ in range(reps):
        t = time.perf_counter()
        out = run()
        best = min(best, time.perf_counter() - t)
    return {"tool": tool, "seconds": best, "peak_gb": _peak_gb(), "result": out}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=float, default=1e6)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--workers", type=float, default=None,
                        help="worker levels (default: rows/10)")
    parser.add_argument("--reps", type=int, default=1)
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--dask", action="store_true")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.dir, args.reps)))
        return
    n = int(args.rows)
    n_workers = max(1, int(args.workers) if args.workers else n // 10)
    directory = args.dir or Path(tempfile.mkdtemp(prefix="fe_chunked_"))
    directory.mkdir(parents=True, exist_ok=True)
    marker = directory / f"rows-{n}-workers-{n_workers}-files-{args.files}.txt"
    if not marker.exists():
        for p in [*directory.glob("*.parquet"), *directory.glob("rows-*.txt")]:
            p.unlink()
        t = time.perf_counter()
        gb = write_dataset(directory, n, args.files, n_workers)
        marker.write_text(f"{gb}")
        print(f"generated in {time.perf_counter() - t:.0f} s")
    print(f"{n:,} rows, {n_workers:,} workers x {N_FIRMS} firms, {args.files} files, "
          f"{float(marker.read_text()):.2f} GB; formula {FORMULA!r}, clustered by worker")
    print(f"load average before: {_loadavg()}")
    tools = ["pyarrow read", "attnreg fe fit"] + (["attnreg fe on dask"] if args.dask else [])
    rows = []
    for tool in tools:
        done = subprocess.run([sys.executable, __file__, "--child", tool, "--dir",
                               str(directory), "--reps", str(args.reps)],
                              capture_output=True, text=True, check=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"load average after: {_loadavg()}")
    floor = rows[0]["seconds"]
    print(f"{'tool':<22}{'seconds':>9}{'peak GB':>9}{'/ I/O floor':>13}")
    for r in rows:
        print(f"{r['tool']:<22}{r['seconds']:>9.2f}{r['peak_gb']:>9.2f}"
              f"{r['seconds'] / floor:>13.1f}")
    if args.dir is None:
        shutil.rmtree(directory)


if __name__ == "__main__":
    main()
