"""The fitting driver of softmax attention regression: split, base fit, runs, selection."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import torch

from attnreg._warn import warn_user
from attnreg._progress import Progress
from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import ConvergenceWarning, OptionError
from attnreg.threads import get_threads
from attnreg.linear.filters import apply_filter
from attnreg.linear.selection import loo_scores
from attnreg.linear.spectral import decompose
from attnreg.softmax.fused import ChunkRunner, chunk_runner
from attnreg.softmax.insample import in_sample
from attnreg.softmax.landmarks import build_landmarks, metric_map
from attnreg.softmax.model import LAM_GRID, SoftmaxFit, ridge_base
from attnreg.softmax.standardise import StandardData, standardise
from attnreg.softmax.topk import Neighbours
from attnreg.softmax.options import (
    KEY_BLOCK,
    TASK_BYTES,
    Options,
    as_design,
    as_outcome,
    check_options,
    choose_chunk,
    split_sizes,
    torch_device,
)
from attnreg.softmax.train import (
    FitStep,
    Problem,
    RunResult,
    Schedule,
    init_factors,
    refit_run,
    train_run,
)

_INNER = 5  # L-BFGS iterations between validation checks
_INIT_RIDGE = 1e-6  # jitter of the warm start √n·chol((X'X + jitter·n·I)⁻¹)

Init = tuple[torch.Tensor, "torch.Tensor | None"]


#: penalties the ridge base chooses from by closed-form leave-one-out: n · 10^-8 … n · 10^2
RIDGE_BASE_GRID = np.logspace(-8, 2, 31)


def _base(z: FloatArray, ys: FloatArray, value: str) -> tuple[FloatArray | None, float]:
    """Ridge base (intercept + slopes on the standardised scale, penalty by closed-form LOO
    over ``n`` · :data:`RIDGE_BASE_GRID`) or None for value='y'.

    The spectral family's decomposition and LOO scores (:func:`attnreg.linear.selection.loo_scores`)
    on the grid; the first minimum wins.
    """
    if value != "ridge":
        return None, 0.0
    n = z.shape[0]
    X = np.column_stack([np.ones(n), z])
    sp = decompose(X, ys, intercept=0, weights=None, scaling="none")
    lams = n * RIDGE_BASE_GRID
    s2 = sp.s[:, None] ** 2
    F = s2 / (s2 + lams[None, :])
    best = int(np.argmin(loo_scores(sp, F)))
    coef = apply_filter(sp, F[:, best], X.shape[1]).coef
    return np.where(np.isnan(coef), 0.0, coef), float(lams[best])  # a constant column: slope 0


def _problem(d: StandardData, tr: IntArray, va: IntArray, opts: Options, dev: torch.device,
             runner: ChunkRunner, metric: FloatArray | None = None) -> Problem:
    """Tensors of the train-part / validation-part problem; the base is fitted on ``tr``;
    landmarks clustered in ``metric`` (:func:`~attnreg.softmax.landmarks.metric_map`)."""
    coef, _ = _base(d.z[tr], d.ys[tr], opts.value)
    base = ridge_base(d.z, coef)
    t = lambda a: torch.as_tensor(np.ascontiguousarray(a), dtype=opts.dtype, device=dev)  # noqa: E731
    itemsize = torch.empty((), dtype=opts.score_dtype).element_size()
    landmarks, n_keys = None, min(len(tr), opts.key_block)
    if opts.keys == "landmarks":
        v_tr = d.ys[tr] - base[tr]
        found = build_landmarks(d.z[tr], v_tr, opts.n_keys, opts.landmark_method, opts.seed, metric)
        landmarks, n_keys = found.tensors(v_tr, dev, opts.dtype), found.counts.shape[0]
    neighbours = None
    if opts.keys == "top_k":  # a gathered (heads × chunk × k × (r + 1)) block per chunk
        neighbours, n_keys = Neighbours(opts.n_keys, opts.mask_self), opts.n_keys * (d.z.shape[1] + 2)
    return Problem(
        x_tr=t(d.z[tr]), y_tr=t(d.ys[tr]), base_tr=t(base[tr]), v_tr=t(d.ys[tr] - base[tr]),
        x_va=t(d.z[va]), y_va=t(d.ys[va]), base_va=t(base[va]), heads=opts.heads,
        rank=opts.rank or d.z.shape[1], kernel=opts.kernel, mask_self=opts.mask_self,
        chunk=choose_chunk(opts.chunk_size, opts.heads, len(tr), n_keys, itemsize, TASK_BYTES),
        score_dtype=opts.score_dtype, runner=runner, key_block=opts.key_block, landmarks=landmarks,
        neighbours=neighbours,
    )


def _warm_init(warm: SoftmaxFit, d: StandardData, opts: Options, dev: torch.device) -> Init:
    f = np.asarray(warm.factors, dtype=np.float64)
    p = d.z.shape[1]
    if f.shape != (opts.heads, p, opts.rank or p):
        raise OptionError(
            f"warm_start factors have shape {f.shape}; this fit needs ({opts.heads}, {p}, {opts.rank or p})"
        )
    # z_old = z_new · s_new / s_old, so L_new = diag(s_new / s_old) L_old keeps the metric
    theta = torch.as_tensor(f * (d.x_scale / warm.x_scale)[None, :, None], dtype=opts.dtype)
    logits = torch.log(torch.as_tensor(np.maximum(warm.alpha, 1e-300), dtype=opts.dtype))
    return theta.to(dev), logits.to(dev)


def _seeded_init(x: torch.Tensor, opts: Options, restart: int) -> Init:
    """The warm start of one restart; the noise depends only on (seed, restart)."""
    state = np.random.SeedSequence([opts.seed, restart]).generate_state(1)[0]
    gen = torch.Generator().manual_seed(int(state))
    rank = opts.rank or x.shape[1]
    return init_factors(x, _INIT_RIDGE * x.shape[0], opts.heads, rank, opts.init_noise, gen), None


def _runs(
    prob: Problem, opts: Options, inits: list[Init], report: Callable[[FitStep], None] | None
) -> tuple[RunResult, list[RunResult], list[tuple[float, float]]]:
    """Every (penalty, restart) run; the best by validation loss, all runs, the penalty path."""
    sched = Schedule(opts.max_iter, _INNER, opts.patience, opts.tol)
    runs: list[RunResult] = []
    path: list[tuple[float, float]] = []
    for lam in opts.lams:
        lam_runs = [
            train_run(prob, lam, th, sched, restart=r, report=report, logits0=lg)
            for r, (th, lg) in enumerate(inits)
        ]
        runs.extend(lam_runs)
        path.append((lam, min(run.val_loss for run in lam_runs)))
    return min(runs, key=lambda run: run.val_loss), runs, path


def _r2(y: FloatArray, pred: FloatArray) -> float:
    sst = float(np.sum((y - y.mean()) ** 2))
    return 1.0 - float(np.sum((y - pred) ** 2)) / sst if sst > 0 else math.nan


def run_fit(
    x_in: FloatArray, y_in: FloatArray, opts: Options, warm: SoftmaxFit | None,
    progress: bool | Callable[[FitStep], None],
) -> SoftmaxFit:
    """Fit with validated options; see :func:`attnreg.softmax.fit_softmax`."""
    x = as_design(x_in, None)
    y = as_outcome(y_in, x.shape[0])
    n, p = x.shape
    if opts.rank is not None and opts.rank > p:
        raise OptionError(f"rank must be at most the number of predictors ({p}); got {opts.rank}")
    n_tr, _ = split_sizes(n, p, opts)
    d = standardise(x, y)
    perm = np.random.default_rng(opts.seed).permutation(n)
    tr, va = np.sort(perm[:n_tr]), np.sort(perm[n_tr:])
    dev = torch_device(opts.device)
    line = Progress(len(opts.lams) * opts.restarts, "softmax fit") if progress is True else None
    report = _StepLine(line, opts) if line is not None else (progress if callable(progress) else None)
    threads = opts.threads if opts.threads is not None else get_threads()
    with chunk_runner(dev, threads) as runner:
        prob = _problem(d, tr, va, opts, dev, runner)
        if warm is not None:
            inits = [_warm_init(warm, d, opts, dev)]
        else:
            inits = [_seeded_init(prob.x_tr, opts, r) for r in range(opts.restarts)]
        try:
            best, runs, path = _runs(prob, opts, inits, report)
            prob, best, runs = _refresh(d, (tr, va), prob, best, runs, opts, runner, report)
        finally:
            if line is not None:
                line.close()
        return _assemble(d, prob, best, runs, path, opts, dev, warm)


def _metric(theta: torch.Tensor, logits: torch.Tensor, prob: Problem, opts: Options) -> FloatArray | None:
    """The learned metric to cluster landmarks in (None: not a refreshed landmark fit)."""
    refreshed = opts.keys == "landmarks" and opts.landmark_refresh > 0
    return metric_map(theta * prob.tril, torch.softmax(logits, dim=0)) if refreshed else None


def _refresh(d: StandardData, split: tuple[IntArray, IntArray], prob: Problem, best: RunResult,
             runs: list[RunResult], opts: Options, runner: ChunkRunner,
             report: Callable[[FitStep], None] | None) -> tuple[Problem, RunResult, list[RunResult]]:
    """``landmark_refresh`` rounds: re-cluster the landmarks in the metric learned so far and
    continue from the best state (its penalty; the run restores its best validation state)."""
    one = replace(opts, lams=(best.lam,), restarts=1)
    for _ in range(opts.landmark_refresh if opts.keys == "landmarks" else 0):
        metric = _metric(best.theta, best.logits, prob, opts)
        prob = _problem(d, *split, opts, prob.x_tr.device, runner, metric)
        best, more, _ = _runs(prob, one, [(best.theta, best.logits)], report)
        runs = [*runs, *more]
    return prob, best, runs


@dataclass
class _StepLine:
    """Each :class:`FitStep` on the shared progress line (runs done of penalties × restarts)."""

    bar: Progress
    opts: Options

    def __call__(self, rec: FitStep) -> None:
        done = self.opts.lams.index(rec.lam) * self.opts.restarts + rec.restart
        self.bar.update(done, f"lam={rec.lam:.3g} restart {rec.restart + 1} step {rec.step + 1} "
                              f"iter {rec.n_iter} evals {rec.n_evals} train {rec.train_loss:.4f} "
                              f"val {rec.val_loss:.4f}")


def _final_state(
    d: StandardData, prob: Problem, best: RunResult, opts: Options, dev: torch.device,
    warm: SoftmaxFit | None,
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """Selected (factors, logits) — re-run on all rows when ``refit`` — and the extra evaluations."""
    if not opts.refit or best.best_iter == 0:
        return best.theta, best.logits, 0
    everything = np.arange(d.z.shape[0])
    full = _problem(d, everything, everything[:0], opts, dev, prob.runner,
                    _metric(best.theta, best.logits, prob, opts))
    if warm is not None:
        theta0, logits0 = _warm_init(warm, d, opts, dev)
    else:
        theta0, logits0 = _seeded_init(full.x_tr, opts, best.restart)
    theta, logits, evals = refit_run(full, best.lam, theta0, logits0, best.best_iter, _INNER)
    if not (torch.isfinite(theta).all() and torch.isfinite(logits).all()):
        return best.theta, best.logits, evals  # keep the train-part state
    return theta, logits, evals


def _assemble(
    d: StandardData, prob: Problem, best: RunResult, runs: list[RunResult],
    path: list[tuple[float, float]], opts: Options, dev: torch.device, warm: SoftmaxFit | None,
) -> SoftmaxFit:
    theta, logits, extra_evals = _final_state(d, prob, best, opts, dev, warm)
    theta = (theta * prob.tril).to(torch.float64)
    alpha = torch.softmax(logits.to(torch.float64), dim=0)
    coef, pen = _base(d.z, d.ys, opts.value)
    base = ridge_base(d.z, coef)
    values = d.ys - base
    keys, vals = torch.as_tensor(d.z, device=dev), torch.as_tensor(values, device=dev)
    landmarks = None
    if opts.keys == "landmarks":
        landmarks = build_landmarks(d.z, values, opts.n_keys, opts.landmark_method, opts.seed,
                                    _metric(theta, torch.log(alpha), prob, opts))
    train_pred = base + in_sample(theta, alpha, keys, vals, opts, False, prob.runner, landmarks)[0]
    loo_att, eff = in_sample(theta, alpha, keys, vals, opts, True, prob.runner, landmarks)
    loo_pred = base + loo_att
    y_va = prob.y_va.cpu().numpy()
    sst_va = float(np.mean((y_va - y_va.mean()) ** 2))
    if not best.converged:
        warn_user(
            f"softmax attention fit did not converge: the selected run used all {best.n_iter} "
            f"L-BFGS iterations (max_iter={opts.max_iter}) with the validation loss still "
            "improving; raise max_iter",
            ConvergenceWarning,
        )
    return SoftmaxFit(
        factors=theta.cpu().numpy(), alpha=alpha.cpu().numpy(), x_mean=d.x_mean,
        x_scale=d.x_scale, y_mean=d.y_mean, y_scale=d.y_scale, X_train=d.z, values=values,
        ridge_coef=coef, lam=best.lam, n_iter=best.n_iter,
        n_evals=sum(r.n_evals for r in runs) + extra_evals, converged=best.converged,
        mask_self=opts.mask_self, train_r2=_r2(d.ys, train_pred),
        val_r2=1.0 - best.val_loss / sst_va if sst_va > 0 else math.nan,
        loo_r2=_r2(d.ys, loo_pred), history=tuple(h for r in runs for h in r.history),
        kernel=opts.kernel, value=opts.value, ridge_penalty=pen, lam_path=tuple(path),
        seed=opts.seed, device=str(dev.type), landmarks=landmarks, key_block=opts.key_block,
        n_neighbours=opts.n_keys if opts.keys == "top_k" else 0, effective_neighbours=eff,
    )


def fit_softmax(
    X: FloatArray,
    y: FloatArray,
    *,
    heads: int = 5,
    lam: float | str = 1e-3,
    rank: int | None = None,
    value: str = "ridge",
    kernel: str = "distance",
    mask_self: bool = True,
    val_frac: float = 0.15,
    max_iter: int = 300,
    tol: float = 1e-4,
    patience: int = 4,
    restarts: int = 1,
    seed: int = 0,
    device: str = "cpu",
    dtype: str = "float64",
    score_dtype: str = "float32",
    chunk_size: int | None = None,
    init_noise: float = 0.05,
    refit: bool = False,
    threads: int | None = None,
    keys: str = "full",
    n_keys: int | None = None,
    landmark_method: str = "kmeans",
    key_block: int = KEY_BLOCK,
    landmark_refresh: int = 1,
    warm_start: SoftmaxFit | None = None,
    progress: bool | Callable[[FitStep], None] = False,
) -> SoftmaxFit:
    """Fit softmax attention regression by full-batch L-BFGS (strong Wolfe line search).

    Parameters
    ----------
    X : (N, P) predictors, original scale, no intercept column.
    y : (N,) outcome.
    heads : number of heads M.
    lam : penalty on Σ_m ‖L_m‖²_F, or ``"auto"`` to choose from :data:`LAM_GRID` on the
        validation split. The default 1e-3 keeps the linear Monte Carlo design within 0.01 of
        OLS at N = 500; 1e-5 fits large real datasets better (Table 1 mean 0.856 vs 0.814 over
        seven datasets) but loses up to 0.036 R² to OLS on small linear samples.
    rank : columns r of each factor (None: P, i.e. full lower-triangular).
    value : ``"ridge"`` (ridge base + attention over its residuals) or ``"y"``.
    kernel : ``"dot"`` (x*'Ωx, the paper's score) or ``"distance"`` (−½‖x* − x‖²_Ω).
    mask_self : leave-one-out training (a row never attends to itself); False reproduces
        the paper's in-sample fit.
    val_frac : share of the training rows held out for penalty choice, early stopping and
        restarts (seeded split).
    max_iter : L-BFGS iteration budget per run; tol : relative validation improvement
        that counts as progress; patience : validation checks (5 iterations apart)
        without progress before stopping.
    restarts : runs per penalty from differently seeded noise; the best on validation wins.
    seed : seeds the split and the initial noise: same seed, same fit, bit for bit (on the
        same machine, device and thread count).
    device : ``"cpu"``, ``"cuda"`` or ``"auto"``. dtype : parameters, loss and gradient
        accumulation. score_dtype : the N×N scores and exponentials (float32: fast;
        float64: exact).
    chunk_size : query rows per score block (None: automatic); memory O(M·chunk·key_block).
    keys : ``"full"`` (exact), ``"landmarks"``: ``n_keys`` cluster centres with their sizes
        and mean values as keys (``landmark_method`` ``"kmeans"`` or ``"sample"``; re-clustered
        ``landmark_refresh`` times in the learned metric), or ``"top_k"``: each query attends
        to its ``n_keys`` nearest training rows in the learned metric (exact search, redone
        when the metric moves; the other rows get no weight). O(N·n_keys) per evaluation
        instead of O(N²) (:mod:`attnreg.softmax.landmarks`, :mod:`attnreg.softmax.topk`).
    n_keys : landmarks (default 1,024) or neighbours per query (default 256); at least the
        rows available means every row.
    key_block : the exact path visits more keys than this in blocks with an online softmax
        (:mod:`attnreg.softmax.flash`): the same numbers in O(N·r + M·chunk·key_block) memory.
    init_noise : noise sd of the warm start, relative to its mean |diagonal|.
    refit : after selection, re-run the selected penalty and restart on *all* training rows
        for the selected number of L-BFGS iterations (no validation left to stop on);
        default False keeps the metric learned on the train part (keys are all rows).
    threads : torch CPU threads for this fit (restored afterwards); None leaves the
        current setting. One thread is often faster on a busy machine.
    warm_start : start every run from this fit's factors and weights instead.
    progress : True writes a single updating line to stderr; a callable receives each
        :class:`FitStep`.

    Returns
    -------
    SoftmaxFit
    """
    opts = check_options(
        heads=heads, lam=lam, rank=rank, value=value, kernel=kernel, val_frac=val_frac,
        max_iter=max_iter, tol=tol, patience=patience, restarts=restarts, device=device,
        dtype=dtype, score_dtype=score_dtype, chunk_size=chunk_size, init_noise=init_noise,
        mask_self=mask_self, seed=seed, lam_grid=LAM_GRID, refit=refit, threads=threads,
        keys=keys, n_keys=n_keys, landmark_method=landmark_method, key_block=key_block,
        landmark_refresh=landmark_refresh,
    )
    if warm_start is not None and not isinstance(warm_start, SoftmaxFit):
        raise OptionError("warm_start must be a SoftmaxFit or None")
    return run_fit(X, y, opts, warm_start, progress)
