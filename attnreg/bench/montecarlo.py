"""Monte Carlo driver for the paper's simulation study (Sec. 4, App. B).

``run_montecarlo`` returns one row per (DGP, N, SNR, replication, method) with the test R²,
the replication's seed and the fitting time; ``format_table`` prints the paper's per-cell
table of mean R² and ``summarise`` the means by any grouping. Replication r of every cell
uses seed ``seed + 1000·r`` (the paper's scheme), so methods and cells share draws.

Run the full grid from the command line::

    python -m attnreg.bench.montecarlo --reps 10 --threads 1 --out mc.csv
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray
from attnreg.bench.dgp import DGPS, simulate
from attnreg.exceptions import OptionError

__all__ = ["METHODS", "format_table", "make_method", "run_montecarlo", "summarise"]

Predictor = Callable[[FloatArray, FloatArray, FloatArray, int], FloatArray]
MethodSpec = str | Predictor

#: built-in method names (rf and gbm need scikit-learn)
METHODS = ("ols", "rf", "gbm", "attention", "attention_paper")


def _ols(x: FloatArray, y: FloatArray, x_new: FloatArray, seed: int) -> FloatArray:
    design = np.column_stack([np.ones(len(x)), x])
    coef = np.linalg.lstsq(design, y, rcond=None)[0]
    return np.column_stack([np.ones(len(x_new)), x_new]) @ coef


def _rf(x: FloatArray, y: FloatArray, x_new: FloatArray, seed: int) -> FloatArray:
    from sklearn.ensemble import RandomForestRegressor

    model = RandomForestRegressor(n_estimators=500, max_features=1 / 3, random_state=seed)
    return model.fit(x, y).predict(x_new)


def _gbm(x: FloatArray, y: FloatArray, x_new: FloatArray, seed: int) -> FloatArray:
    from sklearn.ensemble import GradientBoostingRegressor

    model = GradientBoostingRegressor(n_estimators=500, learning_rate=0.01, random_state=seed)
    return model.fit(x, y).predict(x_new)


def make_method(**fit_kwargs: Any) -> Predictor:
    """A predictor fitting :func:`attnreg.softmax.fit_softmax` with ``fit_kwargs`` (seeded).

    Examples
    --------
    >>> from attnreg.bench.dgp import simulate
    >>> sim = simulate("linear", 60, snr=2.0, n_test=10, seed=0)
    >>> fit = make_method(heads=1, max_iter=20)
    >>> fit(sim.X_train, sim.y_train, sim.X_test, seed=0).shape  # doctest: +SKIP
    (10,)
    """

    def _attention(x: FloatArray, y: FloatArray, x_new: FloatArray, seed: int) -> FloatArray:
        import warnings

        from attnreg.softmax import fit_softmax

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # convergence notes are not results
            fit = fit_softmax(x, y, **{"seed": seed, **fit_kwargs})
        return fit.predict(x_new)

    return _attention


def _builtin(name: str) -> Predictor:
    if name in ("rf", "gbm") and importlib.util.find_spec("sklearn") is None:
        raise OptionError(f"method {name!r} needs scikit-learn, which is not installed")
    table: dict[str, Predictor] = {
        "ols": _ols,
        "rf": _rf,
        "gbm": _gbm,
        "attention": make_method(),
        # the paper's estimator without its test-set retry: values y, no masking, dot kernel
        "attention_paper": make_method(value="y", mask_self=False, kernel="dot"),
    }
    if name not in table:
        valid = ", ".join(map(repr, METHODS))
        raise OptionError(f"method must be one of {valid} or a callable; got {name!r}")
    return table[name]


def _default_methods() -> tuple[str, ...]:
    if importlib.util.find_spec("sklearn") is None:
        return ("ols", "attention")
    return ("ols", "rf", "gbm", "attention")


def _resolve(methods: Sequence[MethodSpec] | Mapping[str, MethodSpec] | None) -> dict[str, Predictor]:
    if methods is None:
        methods = _default_methods()
    if isinstance(methods, Mapping):
        items = list(methods.items())
    else:
        items = [(m if isinstance(m, str) else getattr(m, "__name__", "custom"), m) for m in methods]
    out: dict[str, Predictor] = {}
    for label, spec in items:
        out[str(label)] = _builtin(spec) if isinstance(spec, str) else spec
    return out


def _r2(y: FloatArray, pred: FloatArray) -> float:
    return 1.0 - float(np.sum((y - pred) ** 2)) / float(np.sum((y - y.mean()) ** 2))


def _check_grid(dgps: Iterable[str], ns: Iterable[int], snrs: Iterable[float], reps: int) -> None:
    bad = [d for d in dgps if d not in DGPS]
    if bad:
        raise OptionError(f"dgps must be drawn from {', '.join(map(repr, DGPS))}; got {bad!r}")
    if any(int(n) < 20 for n in ns) or any(float(s) <= 0 for s in snrs):
        raise OptionError("ns must be integers >= 20 and snrs positive numbers")
    if isinstance(reps, bool) or not isinstance(reps, (int, np.integer)) or reps < 1:
        raise OptionError(f"reps must be a positive integer; got {reps!r}")


def run_montecarlo(
    dgps: Sequence[str] | None = None,
    ns: Sequence[int] = (500, 1000, 2500, 5000),
    snrs: Sequence[float] = (0.5, 1.0, 2.0, 3.0),
    reps: int = 10,
    methods: Sequence[MethodSpec] | Mapping[str, MethodSpec] | None = None,
    seed: int = 42,
    *,
    n_test: int = 1000,
    progress: bool | Callable[[dict[str, Any]], None] = False,
) -> pd.DataFrame:
    """Run the simulation grid.

    Parameters
    ----------
    dgps : DGP names (default: all six, in the paper's order).
    ns, snrs : training sizes and signal-to-noise ratios.
    reps : replications per cell; replication r uses seed ``seed + 1000·r``.
    methods : names from :data:`METHODS`, callables ``f(X, y, X_new, seed) -> pred``, or a
        mapping label → either (default: OLS, attention, and RF and GBM when scikit-learn is
        installed).
    seed : base seed.
    n_test : fresh test rows per draw.
    progress : True prints a single updating line on stderr; a callable receives each row.

    Returns
    -------
    DataFrame with columns dgp, n, snr, rep, seed, method, r2, seconds.

    Examples
    --------
    >>> res = run_montecarlo(["linear"], ns=[100], snrs=[2.0], reps=2, methods=["ols"])
    >>> res[["dgp", "n", "rep", "seed", "method"]].values.tolist()
    [['linear', 100, 0, 42, 'ols'], ['linear', 100, 1, 1042, 'ols']]
    >>> bool(res["r2"].between(0.5, 0.8).all())  # R² ≈ SNR / (1 + SNR)
    True
    """
    dgps = list(DGPS) if dgps is None else list(dgps)
    _check_grid(dgps, ns, snrs, reps)
    preds = _resolve(methods)
    rows: list[dict[str, Any]] = []
    total = len(dgps) * len(ns) * len(snrs) * reps * len(preds)
    for dgp in dgps:
        for n in ns:
            for snr in snrs:
                for r in range(reps):
                    rep_seed = int(seed) + 1000 * r
                    sim = simulate(dgp, int(n), float(snr), n_test=n_test, seed=rep_seed)
                    for label, fn in preds.items():
                        t0 = time.perf_counter()
                        pred = np.asarray(fn(sim.X_train, sim.y_train, sim.X_test, rep_seed))
                        row = {"dgp": dgp, "n": int(n), "snr": float(snr), "rep": r, "seed": rep_seed,
                               "method": label, "r2": _r2(sim.y_test, pred),
                               "seconds": time.perf_counter() - t0}
                        rows.append(row)
                        _report(progress, row, len(rows), total)
    if progress is True:
        sys.stderr.write("\n")
    return pd.DataFrame(rows, columns=["dgp", "n", "snr", "rep", "seed", "method", "r2", "seconds"])


def _report(
    progress: bool | Callable[[dict[str, Any]], None], row: dict[str, Any], done: int, total: int
) -> None:
    if callable(progress):
        progress(row)
    elif progress:
        msg = (f"monte carlo {done}/{total}: {row['dgp']} N={row['n']} SNR={row['snr']:g} "
               f"rep {row['rep']} {row['method']} R2={row['r2']:.3f} ({row['seconds']:.1f}s)")
        sys.stderr.write("\r" + msg.ljust(100))
        sys.stderr.flush()


def summarise(results: pd.DataFrame, by: str | Sequence[str] = "dgp") -> pd.DataFrame:
    """Mean R² per group (rows) and method (columns), with an ``overall`` row (cell means).

    Examples
    --------
    >>> res = run_montecarlo(["linear", "friedman3"], ns=[100], snrs=[1.0], reps=1, methods=["ols"])
    >>> summarise(res).index.tolist()
    ['linear', 'friedman3', 'overall']
    """
    keys = [by] if isinstance(by, str) else list(by)
    cells = results.groupby(["dgp", "n", "snr", "method"], sort=False)["r2"].mean().reset_index()
    table = cells.pivot_table(index=keys, columns="method", values="r2", aggfunc="mean", sort=False)
    overall = cells.groupby("method", sort=False)["r2"].mean()
    table.loc[("overall", *([""] * (len(keys) - 1))) if len(keys) > 1 else "overall", :] = overall
    return table[list(dict.fromkeys(results["method"]))]


def format_table(results: pd.DataFrame, digits: int = 3) -> str:
    """The paper's per-cell table (mean R² per DGP × N × SNR), then means by DGP, N and SNR.

    Examples
    --------
    >>> res = run_montecarlo(["linear"], ns=[100], snrs=[1.0], reps=1, methods=["ols"])
    >>> format_table(res).splitlines()[-1]
    'replications: 1, seeds: [42]'
    """
    parts = []
    cells = summarise(results, ["dgp", "n", "snr"])
    parts.append(cells.to_string(float_format=lambda v: f"{v:.{digits}f}"))
    for key in ("dgp", "n", "snr"):
        parts.append(summarise(results, key).to_string(float_format=lambda v: f"{v:.{digits}f}"))
    seeds = sorted(results["seed"].unique().tolist())
    parts.append(f"replications: {results['rep'].nunique()}, seeds: {seeds}")
    return "\n\n".join(parts)


def main(argv: Sequence[str] | None = None) -> None:
    """Command-line entry: run the grid, print the table, optionally save the raw rows."""
    ap = argparse.ArgumentParser(description="Monte Carlo study of softmax attention regression")
    ap.add_argument("--dgps", nargs="*", default=list(DGPS))
    ap.add_argument("--ns", nargs="*", type=int, default=[500, 1000, 2500, 5000])
    ap.add_argument("--snrs", nargs="*", type=float, default=[0.5, 1.0, 2.0, 3.0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--methods", nargs="*", default=None)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", type=int, default=1, help="torch and BLAS threads")
    ap.add_argument("--out", default=None, help="CSV file for the raw rows")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(args.threads)
    res = run_montecarlo(args.dgps, args.ns, args.snrs, args.reps, args.methods, args.seed, progress=True)
    if args.out:
        res.to_csv(args.out, index=False)
    sys.stdout.write(format_table(res) + "\n")


if __name__ == "__main__":
    main()
