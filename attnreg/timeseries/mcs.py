"""The model confidence set of Hansen, Lunde and Nason (2011) on a matrix of losses, with the
block-bootstrap draws it uses (those of ``arch.bootstrap`` for the same seed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import DataError, OptionError

__all__ = ["BOOTSTRAPS", "MCS_METHODS", "Bootstrap", "MCSMethod", "ModelConfidenceSet",
           "bootstrap_indices", "model_confidence_set"]

Bootstrap = Literal["stationary", "circular", "moving block"]
MCSMethod = Literal["R", "max"]
BOOTSTRAPS = ("stationary", "circular", "moving block")
MCS_METHODS = ("R", "max")
#: the most bootstrap indices held at once (replications × observations)
_CHUNK = 1 << 22


# --------------------------------------------------------------------- model confidence set

def _generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool)):
        return np.random.default_rng(None if seed is None else int(seed))
    raise OptionError(f"seed must be an int, a numpy Generator or None, however: {seed!r}.")


def bootstrap_indices(n_obs: int, reps: int, block_size: int, bootstrap: Bootstrap = "stationary",
                      seed: int | np.random.Generator | None = None) -> IntArray:
    """Block-bootstrap resampling indices, the draws of ``arch.bootstrap`` for the same seed.

    For every replication, in order: the stationary bootstrap (Politis & Romano) draws n
    uniform start positions and n uniforms (a new block starts where the uniform is at most
    ``1 / block_size``; blocks wrap around); the circular block bootstrap draws
    ``ceil(n / block_size)`` starts in ``0..n−1`` (wrapping); the moving-block bootstrap
    draws them in ``0..n−block_size``. Each replication's draws are taken from the
    generator one after another, exactly as ``arch`` does (``seed`` an int means
    ``numpy.random.default_rng(seed)``); building the indices from the draws is vectorised.

    Parameters
    ----------
    n_obs : int
        Observations to resample.
    reps : int
        Replications.
    block_size : int
        Block length (the stationary bootstrap's mean block length).
    bootstrap : {"stationary", "circular", "moving block"}
    seed : int, numpy Generator or None

    Returns
    -------
    ndarray of int64, shape (reps, n_obs)

    Examples
    --------
    >>> bootstrap_indices(6, 2, 3, "circular", seed=0)
    array([[5, 0, 1, 3, 4, 5],
           [3, 4, 5, 1, 2, 3]])
    """
    if bootstrap not in BOOTSTRAPS:
        raise OptionError(f"bootstrap must be one of {BOOTSTRAPS}, however: {bootstrap=}.")
    for name, value, low in (("n_obs", n_obs, 2), ("reps", reps, 1), ("block_size", block_size, 1)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
            raise OptionError(f"{name} must be an integer >= {low}, however: {name}={value!r}.")
    if block_size > n_obs:
        raise OptionError(f"block_size must be at most n_obs ({n_obs}), however: {block_size=}.")
    rng = _generator(seed)
    n, b = int(n_obs), int(block_size)
    if bootstrap == "stationary":
        starts = np.empty((reps, n), dtype=np.int64)
        u = np.empty((reps, n))
        for r in range(reps):  # arch's order of draws: n integers, then n uniforms
            starts[r] = rng.integers(n, size=n, dtype=np.int64)
            u[r] = rng.random(n)
        pos = np.arange(n)
        new = u <= 1.0 / b
        new[:, 0] = True
        first = np.maximum.accumulate(np.where(new, pos, 0), axis=1)  # start of each block
        return (np.take_along_axis(starts, first, axis=1) + (pos - first)) % n
    n_blocks = -(-n // b)
    upper = n if bootstrap == "circular" else n - b + 1
    block_starts = np.empty((reps, n_blocks), dtype=np.int64)
    for r in range(reps):
        block_starts[r] = rng.integers(upper, size=n_blocks, dtype=np.int64)
    out = (block_starts[:, :, None] + np.arange(b)).reshape(reps, -1)[:, :n]
    return out % n if bootstrap == "circular" else out


def _bootstrap_means(losses: FloatArray, idx: IntArray) -> FloatArray:
    """Mean of ``losses[idx[r]]`` for every replication r, shape (reps, k), by index counts."""
    reps, n = idx.shape
    out = np.empty((reps, losses.shape[1]))
    step = max(1, _CHUNK // n)
    for lo in range(0, reps, step):
        block = idx[lo:lo + step]
        flat = (block + n * np.arange(block.shape[0])[:, None]).ravel()
        counts = np.bincount(flat, minlength=block.size).reshape(block.shape)
        out[lo:lo + step] = counts @ losses / n
    return out


@dataclass(frozen=True)
class ModelConfidenceSet:
    """The model confidence set of Hansen, Lunde & Nason (2011).

    Attributes
    ----------
    p_values : pandas.Series
        MCS p-value of each model (in the models' order): the model is in the (1 − α)
        confidence set when its p-value exceeds α.
    eliminated : tuple of str
        Models in the order the procedure eliminated them (the last one survives all tests).
    size : float
        α.
    included : tuple of str
        The models with p-value above α, in the models' order.
    method : {"R", "max"}
        The range statistic ``T_R = max_{i,j} |t_ij|`` with elimination of the model of the
        largest ``t_ij``, or ``T_max = max_i t_i·`` (each model against the set's average).
    bootstrap : str
    block_size : int
    reps : int
    seed : int or None
    """

    p_values: pd.Series
    eliminated: tuple[str, ...]
    size: float
    method: str
    bootstrap: str
    block_size: int
    reps: int
    seed: int | None
    included: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        keep = tuple(str(m) for m in self.p_values.index[self.p_values.to_numpy() > self.size])
        object.__setattr__(self, "included", keep)


def model_confidence_set(losses: Any, size: float = 0.1, *, reps: int = 1000,
                         block_size: int | None = None, method: MCSMethod = "R",
                         bootstrap: Bootstrap = "stationary",
                         seed: int | np.random.Generator | None = 0) -> ModelConfidenceSet:
    """Hansen–Lunde–Nason (2011) model confidence set from a T × k matrix of losses.

    The algorithm and the bootstrap are those of ``arch.bootstrap.MCS``, so for the same
    block length, bootstrap, replications and seed the p-values are the same. Let ``d_ij``
    be the mean loss difference of models i and j and ``d*_ij`` its bootstrap replicate
    (recentred by ``d_ij``), and ``var(d_ij)`` the mean of ``d*_ij²``.

    - ``method="R"``: ``t_ij = d_ij / sqrt(var(d_ij))``; ``T_R = max t_ij`` over the models
      still in the set, the bootstrap distribution ``max t*_ij``; the model i of the largest
      ``t_ij`` is eliminated.
    - ``method="max"``: ``t_i = d_i· / sqrt(var(d_i·))`` with ``d_i·`` the model's mean loss
      less the set's average (variances re-estimated in each round); ``T_max = max t_i``.

    The p-value of the k-th model eliminated is the largest p-value of the tests up to it
    (the last model's is 1).

    Parameters
    ----------
    losses : array_like or DataFrame, shape (T, k)
        One column per model (a DataFrame's columns name the models), k >= 2.
    size : float, default 0.1
        α: the set is the (1 − α) model confidence set.
    reps : int, default 1000
    block_size : int, optional
        Default ``int(sqrt(T))`` (arch's default).
    method : {"R", "max"}, default "R"
    bootstrap : {"stationary", "circular", "moving block"}, default "stationary"
    seed : int, numpy Generator or None, default 0

    Returns
    -------
    ModelConfidenceSet

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> e = rng.standard_normal((120, 3)) * [1.0, 1.05, 1.6]
    >>> mcs = model_confidence_set(pd.DataFrame(e**2, columns=["a", "b", "c"]), reps=500,
    ...                            block_size=5)
    >>> mcs.included, mcs.eliminated[0]
    (('a', 'b'), 'c')
    """
    names = [str(c) for c in losses.columns] if isinstance(losses, pd.DataFrame) else None
    L = np.asarray(losses, dtype=np.float64)
    if L.ndim != 2 or L.shape[1] < 2 or L.shape[0] < 3:
        raise DataError(f"losses must be a T x k matrix with k >= 2 models and T >= 3, "
                        f"however: shape={L.shape}.")
    if not np.isfinite(L).all():
        raise DataError("losses contain NaN or inf.")
    if method not in MCS_METHODS:
        raise OptionError(f"method must be one of {MCS_METHODS}, however: {method=}.")
    if not 0.0 < size < 1.0:
        raise OptionError(f"size must be in (0, 1), however: {size=}.")
    T, k = L.shape
    names = names or [str(j) for j in range(k)]
    block = int(np.sqrt(T)) if block_size is None else block_size
    idx = bootstrap_indices(T, reps, block, bootstrap, seed)
    means = L.mean(axis=0)
    same = [(names[i], names[j]) for i in range(k) for j in range(i + 1, k)
            if np.array_equal(L[:, i], L[:, j])]
    if same:
        raise DataError(f"models {same[0][0]!r} and {same[0][1]!r} have identical losses; the "
                        f"model confidence set needs distinct models (drop one)")
    steps = _mcs_range(L, means, idx) if method == "R" else _mcs_max(L, means, idx)
    order, pvals = [j for j, _ in steps], np.maximum.accumulate([p for _, p in steps])
    out = np.empty(k)
    out[order] = pvals
    return ModelConfidenceSet(pd.Series(out, index=pd.Index(names, name="model"), name="mcs_p_value"),
                              tuple(names[j] for j in order), float(size), method, bootstrap,
                              block, int(reps), seed if isinstance(seed, (int, type(None))) else None)


def _mcs_range(L: FloatArray, means: FloatArray, idx: IntArray) -> list[tuple[int, float]]:
    k = L.shape[1]
    diffs = means[:, None] - means[None, :]
    star = _bootstrap_means(L, idx)
    boot = star[:, :, None] - star[:, None, :] - diffs  # (reps, k, k)
    sd = np.sqrt((boot**2).mean(axis=0) + np.eye(k))
    t, t_star = diffs / sd, boot / sd
    included = np.ones(k, dtype=bool)
    steps: list[tuple[int, float]] = []
    while included.sum() > 1:
        ids = np.flatnonzero(included)
        sub = t[np.ix_(ids, ids)]
        stat = sub.max()
        simulated = t_star[:, ids][:, :, ids].max(axis=(1, 2))
        worst = int(ids[np.argwhere(sub == stat)[0, 0]])
        steps.append((worst, float((stat < simulated).mean())))
        included[worst] = False
    steps.append((int(np.flatnonzero(included)[0]), 1.0))
    return steps


def _mcs_max(L: FloatArray, means: FloatArray, idx: IntArray) -> list[tuple[int, float]]:
    k = L.shape[1]
    star = _bootstrap_means(L - means, idx)
    star -= star.mean(axis=1, keepdims=True)
    included = np.ones(k, dtype=bool)
    steps: list[tuple[int, float]] = []
    while included.sum() > 1:
        ids = np.flatnonzero(included)
        boot = star[:, ids] - star[:, ids].mean(axis=1, keepdims=True)
        sd = np.sqrt((boot**2).mean(axis=0))
        if np.any(sd <= 0):
            raise DataError("a loss difference has zero bootstrap variance (identical losses?); "
                            "the model confidence set is not defined")
        simulated = (boot / sd).max(axis=1)
        centred = means[ids] - means[ids].mean()
        t = centred / sd
        stat = t.max()
        p = float((stat < simulated).mean())
        for j in ids[t == stat]:
            steps.append((int(j), p))
            included[j] = False
    steps.extend((int(j), 1.0) for j in np.flatnonzero(included))
    return steps
