"""Fixed-effects OLS speed and accuracy: attnreg vs pyfixest's ``feols`` and linearmodels' ``AbsorbingLS``.

    python benchmarks/fe_speed.py                        # n = 1e6, every design; many minutes
    python benchmarks/fe_speed.py --n 1e5 --reps 1       # a quick run
    python benchmarks/fe_speed.py --designs simple-2 difficult-2 --conditions default
    python benchmarks/fe_speed.py --n 1e7 --designs simple-2 --reps 1 --conditions default \\
        --tools pyfixest --cache /tmp/fe_ref             # linearmodels left out (minutes)

Designs (seeded; 10 standard normal covariates x1..x10, each shifted by the first two fixed
effects' values so that the demeaning matters; y = Σ 0.1·j·xj + the effects + noise):

* ``simple-K`` (K = 1, 2, 3), fixest's "simple" benchmark: fe1 with N/20 levels, fe2 with
  N/1000, fe3 with 20 (K of them), each drawn uniformly and independently;
* ``difficult-K``, fixest's "difficult" benchmark: the same level counts, but fe2 is a
  function of fe1 (fe1's levels in contiguous blocks) except for 1% of the rows, which draw fe2
  at random: a poorly connected graph on which alternating projections converge slowly;
* ``wfy``: a worker–firm–year panel, N/10 workers seen 10 years each, N/1000 firms, a worker
  moves to a random firm with probability 2% a year (few movers).

Tools, every one from its own formula on the same DataFrame (building the data is not timed;
the fit is, best of ``--reps``): ``ar.attnreg("y ~ x1 + ... + x10 | fe1 + fe2", df)``;
pyfixest's ``feols`` with its two CPU demeaners, the default MAP in Rust
(``MapDemeaner(backend="rust")``, tolerance 1e-6) and preconditioned LSMR in Rust
(``LsmrDemeaner(backend="within")``, tolerances 1e-8), both printed, the faster one is the
peer; linearmodels' ``AbsorbingLS(...).fit(cov_type="unadjusted")`` (its default absorption:
LSMR, or pyhdfe's MAP when installed). Each tool runs once first
(imports, compilation, caches not timed) on the same design drawn at 2,000 rows.

Digits: −log10 of the largest error of the ten slopes relative to the largest slope, against
an exact reference: the dummy-variable fit ``y ~ x + C(fe1) + C(fe2) + C(fe3)`` solved with
fe1's dummies eliminated exactly (their block of the normal equations is diagonal: group
means), the normal equations of the remaining columns (x and the dummies of fe2 and fe3,
N/1000 + 30 of them at most) formed sparsely, grounded (the first level of each of fe2, fe3
dropped) and factored by dense Cholesky (by pivoted QR of the whole if that factor is not
definite: a graph in more than one piece), then three steps of iterative refinement whose
residual is computed from the data. The script prints the reference's own check (its
normal-equation residual relative to the data's scale); ``--check-reference`` compares it with
numpy's ``lstsq`` on the dense dummy-variable design of every design at 3,000 rows (4e-15 to
9e-15 relative when written), and the Cholesky route with the pivoted-QR route at 1e5 rows
(0 to 1.1e-16). ``--cache DIR`` keeps each reference in ``DIR/<design>-n<n>-seed0.npz``, and
a rerun reads it (at 1e7 forming the Schur complement takes minutes).

Each design's line is printed as soon as it is measured; ``--timeout S`` runs each tool (its
warm-up and its timed calls) in a forked process killed after S seconds, printed "> S (killed)".

Each condition of ``conditions.py`` prints a table: time and digits per tool and design, and
each peer's time over attnreg's (> 1: attnreg faster).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.linalg as sla
import scipy.sparse as sps
from conditions import CONDITIONS, add_arguments, under

DESIGNS = ("simple-1", "simple-2", "simple-3", "difficult-1", "difficult-2", "difficult-3", "wfy")
P = 10


def _covariates(rng: np.random.Generator, n: int, shift: np.ndarray) -> dict[str, np.ndarray]:
    return {f"x{j}": rng.standard_normal(n) + (0.5 if j % 2 else -0.3) * shift
            for j in range(1, P + 1)}


def _data(design: str, n: int, seed: int = 0) -> tuple[pd.DataFrame, list[str]]:
    rng = np.random.default_rng(seed)
    if design == "wfy":
        n_workers, years = max(n // 10, 2), 10
        worker = np.repeat(np.arange(n_workers), years)
        year = np.tile(np.arange(years), n_workers)
        n_firms = max(n // 1000, 5)
        new = np.where(rng.random(worker.size) < 0.02, rng.integers(0, n_firms, worker.size), -1)
        new[year == 0] = rng.integers(0, n_firms, n_workers)
        firm = pd.Series(np.where(new >= 0, new, np.nan)).ffill().to_numpy().astype(np.int64)
        codes = {"fe1": worker, "fe2": firm, "fe3": year}
        names = ["fe1", "fe2", "fe3"]
    else:
        k = int(design.split("-")[1])
        levels = [max(n // 20, 2), max(n // 1000, 2), 20][:k]
        fe1 = rng.integers(0, levels[0], n)
        codes = {"fe1": fe1}
        if k >= 2:
            fe2 = rng.integers(0, levels[1], n)
            if design.startswith("difficult"):
                blocked = fe1 * levels[1] // levels[0]
                fe2 = np.where(rng.random(n) < 0.01, fe2, blocked)
            codes["fe2"] = fe2
        if k >= 3:
            codes["fe3"] = rng.integers(0, levels[2], n)
        names = list(codes)
    m = codes["fe1"].size
    effects = {k: rng.standard_normal(int(c.max()) + 1) for k, c in codes.items()}
    shift = sum(effects[k][codes[k]] for k in names[:2])
    cols = _covariates(rng, m, shift)
    y = sum(0.1 * j * cols[f"x{j}"] for j in range(1, P + 1)) + \
        sum(effects[k][codes[k]] for k in names) + rng.standard_normal(m)
    return pd.DataFrame({**cols, **codes, "y": y}), names


def _schur(df: pd.DataFrame, names: list[str]) -> tuple[
        Callable[[np.ndarray], np.ndarray], sps.csr_matrix, np.ndarray, np.ndarray]:
    """``within`` (less fe1's group means), Z = [X, dummies of the other fixed effects], y and
    S = Z'Z − Z'D1 (D1'D1)⁻¹ D1'Z (dense, symmetric): the Schur complement on Z."""
    xs = [f"x{j}" for j in range(1, P + 1)]
    n = len(df)
    X, y = df[xs].to_numpy(), df["y"].to_numpy()
    c1 = df[names[0]].to_numpy()
    g1 = int(c1.max()) + 1
    D1 = sps.csr_matrix((np.ones(n), (np.arange(n), c1)), shape=(n, g1))
    rest = [sps.csr_matrix((np.ones(n), (np.arange(n), df[k].to_numpy())),
                           shape=(n, int(df[k].max()) + 1)) for k in names[1:]]
    Z = sps.hstack([sps.csr_matrix(X), *rest]).tocsr() if rest else sps.csr_matrix(X)
    count = np.asarray(D1.sum(axis=0)).ravel()

    def within(v: np.ndarray) -> np.ndarray:  # v less its fe1 group means (exact, twice)
        for _ in range(2):
            v = v - (D1 @ (np.asarray(D1.T @ v) / count[:, None]))
        return v

    D1Z = sps.csr_matrix(D1.T @ Z)  # sparse: dense it is N/20 × (N/1000 + 30), 40 GB at 1e7
    S = ((Z.T @ Z) - D1Z.T @ sps.diags(1.0 / count) @ D1Z).toarray()
    return within, Z, y[:, None], (S + S.T) / 2


def _grounded(df: pd.DataFrame, names: list[str]) -> np.ndarray:
    """Columns of Z kept by the Cholesky route: all but each other fixed effect's first level
    (one null direction each on a connected graph; a further one makes S singular and the
    route falls back to the pivoted QR)."""
    keep, start = [np.arange(P)], P
    for k in names[1:]:
        g = int(df[k].max()) + 1
        keep.append(np.arange(start + 1, start + g))
        start += g
    return np.concatenate(keep)


def _reference(df: pd.DataFrame, names: list[str], method: str = "cholesky",
               ) -> tuple[np.ndarray, float, str]:
    """The dummy-variable slopes with fe1 eliminated exactly (module docstring), the relative
    normal-equation residual of the answer and the factor used ("cholesky" or "pivoted QR")."""
    within, Z, Y, S = _schur(df, names)
    solve: Callable[[np.ndarray], np.ndarray] | None = None
    if method == "cholesky":
        keep = _grounded(df, names)
        try:  # S grounded (one level of each other fixed effect dropped) is definite
            factor = sla.cho_factor(S[np.ix_(keep, keep)], lower=False, check_finite=False)
            if np.all(np.diag(factor[0]) > 1e-7 * np.sqrt(np.abs(np.diag(S)[keep]).max())):
                def solve(g: np.ndarray) -> np.ndarray:
                    out = np.zeros_like(g)
                    out[keep] = sla.cho_solve(factor, g[keep], check_finite=False)
                    return out
        except np.linalg.LinAlgError:
            pass
    if solve is None:  # pivoted QR once, reused by the refinements
        method = "pivoted QR"
        Q, R, perm = sla.qr(S, pivoting=True)
        rank = int(np.sum(np.abs(np.diag(R)) > 1e-13 * abs(R[0, 0])))

        def solve(g: np.ndarray) -> np.ndarray:  # the basic solution (slopes are identified)
            out = np.zeros_like(g)
            out[perm[:rank]] = sla.solve_triangular(R[:rank, :rank], (Q.T @ g)[:rank])
            return out
    del S
    theta = np.zeros((Z.shape[1], 1))
    for _ in range(4 if method == "cholesky" else 3):  # a solve, then refinements from the data
        theta = theta + solve(np.asarray(Z.T @ within(Y - Z @ theta)))
    g = np.asarray(Z.T @ within(Y - Z @ theta))
    scale = float(np.asarray(abs(Z).T @ np.abs(within(Y))).max())
    return theta[:P, 0], float(np.abs(g[:P]).max() / scale), method


def _cached_reference(df: pd.DataFrame, names: list[str], key: str,
                      cache: str | None) -> tuple[np.ndarray, float, str, bool]:
    """``_reference``, read from / written to ``cache/key.npz`` when a cache is given."""
    path = Path(cache) / f"{key}.npz" if cache else None
    if path is not None and path.exists():
        with np.load(path) as f:
            return f["ref"], float(f["check"]), str(f["method"]), True
    ref, check, method = _reference(df, names)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, ref=ref, check=check, method=method)
    return ref, check, method, False


def _check_reference(designs: list[str], n: int = 3000, n_qr: int = 100_000) -> None:
    """The reference against ``lstsq`` on the dense dummy-variable design at ``n`` rows, and
    its Cholesky route against its pivoted-QR route at ``n_qr`` rows."""
    for design in designs:
        df, names = _data(design, n, seed=1)
        ref, _, _ = _reference(df, names)
        X = np.column_stack([df[[f"x{j}" for j in range(1, P + 1)]].to_numpy()]
                            + [pd.get_dummies(df[k]).to_numpy(float) for k in names])
        b = np.linalg.lstsq(X, df["y"].to_numpy(), rcond=None)[0][:P]
        print(f"reference check {design}: {X.shape[1]} columns, largest relative difference "
              f"from lstsq {np.max(np.abs(b - ref)) / np.max(np.abs(ref)):.1e}", flush=True)
        df, names = _data(design, n_qr, seed=1)
        chol, c_check, method = _reference(df, names)
        qr, q_check, _ = _reference(df, names, method="qr")
        print(f"reference check {design} at {n_qr:,} rows: {method} vs pivoted QR, largest "
              f"relative difference {np.max(np.abs(chol - qr)) / np.max(np.abs(qr)):.1e} "
              f"(residuals {c_check:.1e}, {q_check:.1e})", flush=True)


def _digits(b: np.ndarray, ref: np.ndarray) -> float:
    err = float(np.max(np.abs(np.asarray(b, dtype=float) - ref)) / np.max(np.abs(ref)))
    return float(-np.log10(max(err, 1e-17)))


def _tools(names: list[str],
           only: list[str] | None = None) -> dict[str, Callable[[pd.DataFrame], np.ndarray]]:
    import attnreg as ar

    xs = [f"x{j}" for j in range(1, P + 1)]
    formula = "y ~ " + " + ".join(xs) + " | " + " + ".join(names)
    tools: dict[str, Callable[[pd.DataFrame], np.ndarray]] = {
        "attnreg": lambda df: ar.attnreg(formula, df).coef.to_numpy()}
    try:
        import pyfixest as pf
        from pyfixest.demeaners import LsmrDemeaner, MapDemeaner

        def pyfixest_with(demeaner: object) -> Callable[[pd.DataFrame], np.ndarray]:
            return lambda df: pf.feols(formula, df, vcov="iid", demeaner=demeaner,
                                       lean=True, store_data=False).coef().to_numpy()

        tools["pyfixest MAP"] = pyfixest_with(MapDemeaner(backend="rust"))
        tools["pyfixest LSMR"] = pyfixest_with(LsmrDemeaner(backend="within"))
    except ImportError:
        print("pyfixest is not installed: pip install pyfixest")
    try:
        from linearmodels.iv.absorbing import AbsorbingLS

        def lm_fit(df: pd.DataFrame) -> np.ndarray:
            absorb = pd.DataFrame({k: pd.Categorical(df[k]) for k in names})
            res = AbsorbingLS(df["y"], df[xs], absorb=absorb).fit(cov_type="unadjusted")
            return res.params[xs].to_numpy()

        tools["linearmodels"] = lm_fit
    except ImportError:
        print("linearmodels is not installed: pip install linearmodels")
    return {k: v for k, v in tools.items() if only is None or k.split()[0] in only}


def _best(fn: Callable[[], np.ndarray], reps: int) -> tuple[float, np.ndarray]:
    best, out = np.inf, np.full(P, np.nan)
    for _ in range(reps):
        t0 = time.perf_counter()
        try:
            out = np.asarray(fn())
        except Exception as exc:  # a peer refusing a design is reported, not fatal
            print(f"      failed: {type(exc).__name__}: {str(exc)[:120]}", flush=True)
            return np.nan, np.full(P, np.nan)
        best = min(best, time.perf_counter() - t0)
    return best, out


def _warm_and_time(fn: Callable[[pd.DataFrame], np.ndarray], small: pd.DataFrame,
                   df: pd.DataFrame, reps: int) -> tuple[float, np.ndarray]:
    fn(small)  # warm-up (imports, compilation, caches) on the design at 2,000 rows: a slice
    # of a large one is mostly singletons, which peers refuse
    return _best(lambda: fn(df), reps)


def _in_child(conn: object, *args: object) -> None:
    conn.send(_warm_and_time(*args))  # type: ignore[arg-type, attr-defined]


def _timed(fn: Callable[[pd.DataFrame], np.ndarray], small: pd.DataFrame, df: pd.DataFrame,
           reps: int, timeout: float | None) -> tuple[float, np.ndarray, bool]:
    """Best time and coefficients; with ``timeout``, in a forked process killed after it
    (then the time is ``timeout`` and the third value True)."""
    if timeout is None:
        return (*_warm_and_time(fn, small, df, reps), False)
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_in_child, args=(send, fn, small, df, reps))
    proc.start()
    ready = recv.poll(timeout)
    out = recv.recv() if ready else (timeout, np.full(P, np.nan))
    proc.kill()
    proc.join()
    return (*out, not ready)


def _measure(design: str, df: pd.DataFrame, names: list[str], ref: np.ndarray,
             small: pd.DataFrame, args: argparse.Namespace) -> dict[str, str]:
    """One design's row of a condition's table (printed as soon as measured)."""
    tools = _tools(names, None if args.tools is None else ["attnreg", *args.tools])
    row: dict[str, str] = {"design": design}
    times, killed = {}, {}
    for name, fn in tools.items():
        times[name], coef, killed[name] = _timed(fn, small, df, args.reps, args.timeout)
        row[name] = (f"> {times[name]:g} (killed)" if killed[name]
                     else f"{times[name]:.3f} ({_digits(coef, ref):.1f})")
    for name in tools:
        if name != "attnreg":
            row[f"{name} / attnreg"] = (("> " if killed[name] else "")
                                        + f"{times[name] / times['attnreg']:.2f}")
    return row


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=float, default=1e6)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--designs", nargs="+", choices=DESIGNS, default=list(DESIGNS))
    parser.add_argument("--check-reference", action="store_true",
                        help="compare the reference with lstsq on dense dummies at 3,000 rows "
                        "and its Cholesky route with its pivoted-QR route at 1e5 rows")
    parser.add_argument("--tools", nargs="+", choices=("attnreg", "pyfixest", "linearmodels"),
                        default=None, help="tools to time (default: all; attnreg always)")
    parser.add_argument("--cache", default=None,
                        help="directory caching the exact reference per (design, n, seed)")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per tool and design: each runs in a forked process, "
                        "killed after that (default: in this process, no limit)")
    add_arguments(parser)
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    n, seed = int(args.n), 0
    if args.check_reference:
        _check_reference(args.designs)
    conditions = [c for c in CONDITIONS if c in args.conditions]
    rows: dict[str, list[dict[str, str]]] = {c: [] for c in conditions}
    for design in args.designs:
        df, names = _data(design, n, seed)
        t0 = time.perf_counter()
        ref, check, method, cached = _cached_reference(df, names, f"{design}-n{n}-seed{seed}",
                                                       args.cache)
        levels = ", ".join(f"{k} {df[k].nunique():,}" for k in names)
        how = "cached" if cached else f"{time.perf_counter() - t0:.1f} s, {method}"
        print(f"{design}: {len(df):,} rows, {levels}; reference {how}, "
              f"normal-equation residual {check:.1e}", flush=True)
        small = _data(design, 2000, seed=1)[0]
        for condition in conditions:
            with under(condition), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                row = _measure(design, df, names, ref, small, args)
            rows[condition].append(row)
            print(f"  [{condition}] " + "; ".join(f"{k} {v}" for k, v in row.items()
                                                 if k != "design"), flush=True)
        del df
    for condition in conditions:
        print(f"\n[{condition}] best of {args.reps}: seconds (digits); peer / attnreg")
        print(pd.DataFrame(rows[condition]).to_string(index=False), flush=True)


if __name__ == "__main__":
    main()
