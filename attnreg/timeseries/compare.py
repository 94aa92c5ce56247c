"""Comparing many out-of-sample forecasts: accuracy, pairwise tests and the model confidence set.

:func:`compare_forecasts` takes forecasts of one target (results of :func:`attnreg.forecast`
covering the same target dates at the same horizon) and a benchmark (the prevailing mean, or
another forecast) and returns a :class:`ForecastComparison`: for every model the MSFE, the
MSFE ratio and out-of-sample R² against the benchmark, the Diebold–Mariano test (with the
Harvey–Leybourne–Newbold correction), Clark–West (for models that nest the benchmark), the
Giacomini–White test of conditional predictive ability, forecast-encompassing tests, and
whether the model belongs to the model confidence set of Hansen, Lunde & Nason.

The tests are also available on plain arrays: :func:`giacomini_white`,
:func:`encompassing_test`, :func:`model_confidence_set` (and :func:`bootstrap_indices`, the
block-bootstrap draws it uses, which are those of ``arch.bootstrap`` for the same seed).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd
from scipy import stats

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import DataError, InferenceWarning, OptionError
from attnreg.timeseries import evaluation as ev

__all__ = [
    "EncompassingResult",
    "ForecastComparison",
    "GiacominiWhiteResult",
    "ModelConfidenceSet",
    "bootstrap_indices",
    "compare_forecasts",
    "encompassing_test",
    "giacomini_white",
    "model_confidence_set",
]

Bootstrap = Literal["stationary", "circular", "moving block"]
MCSMethod = Literal["R", "max"]
_BOOTSTRAPS = ("stationary", "circular", "moving block")
_MCS_METHODS = ("R", "max")
#: the most bootstrap indices held at once (replications × observations)
_CHUNK = 1 << 22
#: Fewest loss differentials n for which the Giacomini-White test is reported without a
#: small-sample note (and warning). At h = 1 the statistic is n times an uncentred R², so it
#: never exceeds n, and the χ²(2) test is undersized in small samples: in a Monte Carlo of
#: 4,000 draws of iid differentials (normal, or differences of squared normals) the 5 % test
#: rejects 0.6-1.2 % of the time at n = 10, 2.2-3.3 % at n = 20 and 3.0-3.7 % at n = 30
#: (4.2-4.6 % at n = 200). With n ≤ q (the number of instruments) the statistic is n
#: whatever the data, and the test is refused.
GW_MIN_OBS = 30


# ---------------------------------------------------------------------------- small helpers

def _loss(errors: FloatArray, loss: str) -> FloatArray:
    if loss not in ("squared", "absolute"):
        raise OptionError(f"loss must be 'squared' or 'absolute', however: {loss=}.")
    return errors**2 if loss == "squared" else np.abs(errors)


def _autocov(x: FloatArray, max_lag: int) -> FloatArray:
    """Autocovariances ``gamma_0..gamma_max_lag`` of ``x`` (divisor n), shape (max_lag + 1,)."""
    dev = x - x.mean()
    n = dev.size
    return np.array([dev[k:] @ dev[: n - k] / n for k in range(max_lag + 1)])


def _hln_factor(n: int, h: int) -> float:
    """Harvey–Leybourne–Newbold (1997) small-sample factor ``sqrt((n + 1 - 2h + h(h-1)/n) / n)``."""
    return math.sqrt((n + 1 - 2 * h + h * (h - 1) / n) / n)


def _horizon(h: object, n: int) -> int:
    if isinstance(h, bool) or not isinstance(h, (int, np.integer)) or not 1 <= h < n:
        raise OptionError(f"h must be an integer in 1..{n - 1} (n_obs - 1), however: {h=}.")
    return int(h)


def _vector(x: object, name: str) -> FloatArray:
    out = np.asarray(x, dtype=np.float64)
    if out.ndim != 1 or out.size < 3:
        raise DataError(f"{name} must be a 1-D array of at least 3 values, however: shape={out.shape}.")
    if not np.isfinite(out).all():
        raise DataError(f"{name} contains NaN or inf; drop those forecasts first.")
    return out


# ------------------------------------------------------------------------- Giacomini–White

class GiacominiWhiteResult(NamedTuple):
    """Giacomini–White (2006) test of equal conditional predictive ability.

    Attributes
    ----------
    statistic : float
        Wald statistic ``n Z̄' Ω̂⁻¹ Z̄`` (for h = 1: ``n R²`` of the regression of a constant
        on ``Z``).
    p_value : float
        ``P(χ²(q) > statistic)``.
    df : int
        q, the number of instruments.
    n_obs : int
        n, the loss differentials used (the first h have no lagged differential).
    mean_loss_diff : float
        Mean of ``d_t = L(model) − L(benchmark)`` over those n (negative: the model loses less).
    share_model_better : float
        GW's decision rule: share of the n dates where the fitted conditional expectation
        ``δ̂' h_t`` of ``d`` is negative (the model expected to lose less).
    h : int
        Forecast horizon.
    """

    statistic: float
    p_value: float
    df: int
    n_obs: int
    mean_loss_diff: float
    share_model_better: float
    h: int


def giacomini_white(loss_diff: object, h: int = 1, conditional: bool = True) -> GiacominiWhiteResult:
    """Giacomini–White (2006) test of conditional predictive ability.

    With the loss differentials ``d_t = L(e_model,t) − L(e_bench,t)`` in target order and the
    instruments ``h_t = (1, d_{t−h})`` (the last differential observed at the origin of
    ``d_t``; only ``1`` when ``conditional`` is False, the unconditional test), let
    ``Z_t = h_t d_t`` for the n = T − h dates that have an instrument. The statistic is
    ``n Z̄' Ω̂⁻¹ Z̄``, referred to χ²(q), q = 2. For h = 1, ``Ω̂ = Z'Z / n`` (the uncentred
    second moment; the statistic equals n times the uncentred R² of the regression of a
    constant on ``Z``, as in the paper); for h > 1, Ω̂ is the Newey–West estimate of the
    demeaned ``Z`` with ``h − 1`` lags and Bartlett weights ``1 − j/h`` (the authors' code).

    Parameters
    ----------
    loss_diff : array_like, shape (T,)
        Loss differentials in target-date order.
    h : int, default 1
        Forecast horizon.
    conditional : bool, default True
        Instruments ``(1, d_{t−h})``; False gives the unconditional test (instrument 1,
        a Diebold–Mariano-type Wald test).

    Returns
    -------
    GiacominiWhiteResult

    Raises
    ------
    DataError
        If Ω̂ is singular (e.g. identical forecasts), or if n ≤ q: with no more differentials
        than instruments the statistic equals n whatever the data (at h = 1, n R² with
        R² = 1), so it carries no information.

    Warns
    -----
    InferenceWarning
        If n < ``GW_MIN_OBS`` (30): the χ² approximation is poor there (the test rejects
        far less often than its level; see ``GW_MIN_OBS``).

    Examples
    --------
    >>> d = np.random.default_rng(1).normal(size=41)
    >>> res = giacomini_white(d)
    >>> round(res.statistic, 4), round(res.p_value, 4), res.df, res.n_obs
    (0.182, 0.913, 2, 40)
    >>> giacomini_white([0.3, -0.5, 0.1])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnreg.exceptions.DataError: the Giacomini-White test needs more loss differentials ... n_obs=2 ...
    """
    d = _vector(loss_diff, "loss_diff")
    h = _horizon(h, d.size - 1)
    if conditional:
        target, instruments = d[h:], np.column_stack([np.ones(d.size - h), d[:-h]])
    else:
        target, instruments = d, np.ones((d.size, 1))
    Z = instruments * target[:, None]
    n, q = Z.shape
    if n <= q:
        raise DataError(f"the Giacomini-White test needs more loss differentials than its {q} "
                        f"instrument(s), however: n_obs={n} (with n <= q the statistic is n "
                        "whatever the data); compare more forecasts")
    if n < GW_MIN_OBS:
        from attnreg._warn import warn_user

        warn_user(f"the Giacomini-White test uses {n} loss differentials, fewer than "
                  f"{GW_MIN_OBS}: its chi-squared({q}) p-value is unreliable (the test rejects "
                  "far less often than its level)", InferenceWarning)
    zbar = Z.mean(axis=0)
    if h == 1:
        omega = Z.T @ Z / n
    else:
        dev = Z - zbar
        omega = dev.T @ dev / n
        for j in range(1, h):
            g = dev[j:].T @ dev[:-j] / n
            omega += (1.0 - j / h) * (g + g.T)
    try:
        solved = np.linalg.solve(omega, zbar)
    except np.linalg.LinAlgError:
        raise DataError("the Giacomini-White covariance is singular; do the two forecasts "
                        "differ?") from None
    statistic = float(n * zbar @ solved)
    delta = np.linalg.lstsq(instruments, target, rcond=None)[0]
    better = float(np.mean(instruments @ delta < 0.0))
    return GiacominiWhiteResult(statistic, float(stats.chi2.sf(statistic, q)), q, n,
                                float(target.mean()), better, h)


# ---------------------------------------------------------------------------- encompassing

class EncompassingResult(NamedTuple):
    """Harvey–Leybourne–Newbold (1998) test that forecast 1 encompasses forecast 2.

    Attributes
    ----------
    statistic : float
        HLN-corrected t statistic of the mean of ``e1 (e1 − e2)``.
    p_value : float
        One-sided, ``P(t(n−1) > statistic)``: small values reject that forecast 1
        encompasses forecast 2 (forecast 2 carries information forecast 1 lacks).
    weight : float
        λ̂, the least-squares slope of ``e1`` on ``e1 − e2``: the weight on forecast 2 in the
        best combination ``(1 − λ) f1 + λ f2``.
    h : int
    n_obs : int
    """

    statistic: float
    p_value: float
    weight: float
    h: int
    n_obs: int


def encompassing_test(e1: object, e2: object, h: int = 1) -> EncompassingResult:
    """Forecast encompassing test of Harvey, Leybourne & Newbold (1998), modified (MHLN).

    H₀: forecast 1 encompasses forecast 2 — in ``e1_t = λ (e1_t − e2_t) + ε_t``, λ = 0.
    With ``d_t = e1_t (e1_t − e2_t)``, the statistic is ``d̄ / sqrt(V / n)`` times the HLN
    (1997) factor ``sqrt((n + 1 − 2h + h(h−1)/n) / n)``, where V is the long-run variance
    ``γ₀ + 2 Σ_{k=1}^{h−1} γ_k`` (autocovariances with divisor n, as in the Diebold–Mariano
    test; Bartlett weights ``1 − k/h`` if that is not positive), compared one-sided with
    Student-t(n − 1). For h = 1 it is the one-sample t statistic of ``d``.

    Parameters
    ----------
    e1, e2 : array_like, shape (n_obs,)
        Forecast errors ``y − f`` of forecasts 1 and 2, aligned by target date.
    h : int, default 1
        Forecast horizon.

    Returns
    -------
    EncompassingResult

    Examples
    --------
    >>> e_bench = [1.2, -0.8, 2.1, 0.4, -1.5, 0.9, 1.7, -0.3]
    >>> e_model = [0.5, -0.4, 1.1, 0.6, -0.9, 0.2, 0.8, -0.5]
    >>> res = encompassing_test(e_bench, e_model)     # does the benchmark encompass the model?
    >>> round(res.statistic, 4), round(res.p_value, 4), round(res.weight, 3)
    (2.8898, 0.0117, 1.823)
    """
    a, b = _vector(e1, "e1"), _vector(e2, "e2")
    if a.size != b.size:
        raise DataError(f"e1 and e2 must have one length, however: {a.size} and {b.size}.")
    n = a.size
    h = _horizon(h, n)
    diff = a - b
    d = a * diff
    gamma = _autocov(d, h - 1)
    lrv = float(gamma[0] + 2.0 * gamma[1:].sum())
    if not lrv > 0.0:
        lrv = float(gamma[0] + 2.0 * (1.0 - np.arange(1, h) / h) @ gamma[1:])
    if not lrv > 0.0:
        raise DataError("e1 (e1 - e2) has zero variance; the two forecasts tie exactly.")
    statistic = float(d.mean() / math.sqrt(lrv / n)) * _hln_factor(n, h)
    weight = float(a @ diff / (diff @ diff))
    return EncompassingResult(statistic, float(stats.t(df=n - 1).sf(statistic)), weight, h, n)


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
    if bootstrap not in _BOOTSTRAPS:
        raise OptionError(f"bootstrap must be one of {_BOOTSTRAPS}, however: {bootstrap=}.")
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
    if method not in _MCS_METHODS:
        raise OptionError(f"method must be one of {_MCS_METHODS}, however: {method=}.")
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


# ------------------------------------------------------------------------ compare_forecasts

_COLUMNS = ("msfe", "msfe_ratio", "oos_r2", "dm_statistic", "dm_p_value", "cw_statistic",
            "cw_p_value", "gw_statistic", "gw_p_value", "enc_statistic", "enc_p_value",
            "enc_weight", "enc_rev_statistic", "enc_rev_p_value", "mcs_p_value", "in_mcs")


@dataclass(frozen=True)
class ForecastComparison:
    """Several forecasts of one target compared with a benchmark and with one another.

    Made by :func:`compare_forecasts`. ``str()`` is the report in the house style (as
    ``fc.summary()``), ``to_latex()`` / ``to_markdown()`` / ``_repr_html_()`` render it.

    Attributes
    ----------
    table : DataFrame, shape (n_models + 1, 16)
        One row per model, then the benchmark. Columns: ``msfe``, ``msfe_ratio`` and
        ``oos_r2`` (against the benchmark); ``dm_statistic`` / ``dm_p_value``
        (Diebold–Mariano, HLN-corrected, two-sided); ``cw_statistic`` / ``cw_p_value``
        (Clark–West, one-sided, for models nesting the benchmark, else NaN);
        ``gw_statistic`` / ``gw_p_value`` (Giacomini–White, instruments (1, lagged loss
        difference), χ²(2)); ``enc_statistic`` / ``enc_p_value`` (H₀: the benchmark
        encompasses the model — a small p-value says the model adds information),
        ``enc_weight`` (λ̂, the model's weight in the best combination with the benchmark),
        ``enc_rev_statistic`` / ``enc_rev_p_value`` (H₀: the model encompasses the
        benchmark); ``mcs_p_value`` and ``in_mcs`` (the model confidence set over all models
        and the benchmark). The benchmark's row has its MSFE, ratio 1 and its MCS entries.
    names : tuple of str
        The models' names (the table's first rows).
    benchmark_name : str
    targets : pandas.Index, shape (n_forecasts,)
        The common target dates.
    actual : ndarray, shape (n_forecasts,)
    forecasts : ndarray, shape (n_forecasts, n_models)
    benchmark : ndarray, shape (n_forecasts,)
    horizon : int
    loss : {"squared", "absolute"}
        The loss of the DM and GW tests and of the MCS (MSFE, OOS R², CW and the
        encompassing tests are squared-error by definition).
    mcs : ModelConfidenceSet or None
        None when the set is not defined (two models with identical losses; a note says so).
    notes : tuple of str
        Remarks on this comparison (tests that could not be computed, differing benchmarks).

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> f = "infl ~ lag(infl, 1) + lag(unemp, 1)"
    >>> fcs = [ar.forecast(f, macro, method=m, start="1990Q1") for m in ("ols", "ridge")]
    >>> cmp = ar.compare_forecasts(fcs)
    >>> cmp.table[["msfe_ratio", "dm_p_value", "gw_p_value", "mcs_p_value"]].round(3)
    ... # doctest: +NORMALIZE_WHITESPACE
           msfe_ratio  dm_p_value  gw_p_value  mcs_p_value
    model
    ols         0.853       0.491       0.618        0.279
    ridge       0.849       0.473       0.624        1.000
    mean        1.000         NaN         NaN        0.376
    """

    table: pd.DataFrame
    names: tuple[str, ...]
    benchmark_name: str
    targets: pd.Index = field(repr=False)
    actual: FloatArray = field(repr=False)
    forecasts: FloatArray = field(repr=False)
    benchmark: FloatArray = field(repr=False)
    horizon: int
    loss: str
    mcs: ModelConfidenceSet | None = field(repr=False)
    notes: tuple[str, ...] = ()

    @property
    def errors(self) -> pd.DataFrame:
        """Forecast errors ``actual − forecast`` by target date, one column per model and the
        benchmark, shape (n_forecasts, n_models + 1)."""
        values = np.column_stack([self.actual[:, None] - self.forecasts, self.actual - self.benchmark])
        return pd.DataFrame(values, index=self.targets, columns=[*self.names, self.benchmark_name])

    def summary(self) -> Any:
        """The report: setting, the table of accuracy and tests, what each test is.

        Returns
        -------
        attnreg.report.Summary
        """
        from attnreg.report import Summary
        from attnreg.report.fcfigures import ComparisonNotes, ComparisonSetup, ModelConfidence
        from attnreg.report.sections import Coefficients, Lines

        m = self.mcs
        setup = ComparisonSetup(len(self.names), self.benchmark_name, int(self.horizon),
                                self.loss, int(self.targets.size), str(self.targets[0]),
                                str(self.targets[-1]))
        mcs = (Lines(("MCS: not computed.",)) if m is None else ModelConfidence(
            m.method, m.bootstrap, int(m.block_size), int(m.reps), m.seed, float(m.size),
            tuple(m.included)))
        return Summary("attnreg forecast comparison", (
            setup, Coefficients(self._display(), stars=False, heading=False),
            ComparisonNotes(int(self.horizon)), mcs, Lines(tuple(self.notes))))

    def _display(self) -> pd.DataFrame:
        """The printed columns: accuracy, each test's p-value, the MCS p-value."""
        t = self.table
        return pd.DataFrame({
            "MSFE": t["msfe"], "OOS R2": t["oos_r2"], "Pr(DM)": t["dm_p_value"],
            "Pr(CW)": t["cw_p_value"], "Pr(GW)": t["gw_p_value"],
            "Pr(ENC)": t["enc_p_value"], "Pr(ENC rev)": t["enc_rev_p_value"],
            "Pr(MCS)": t["mcs_p_value"]}, index=t.index)

    def _cells(self) -> tuple[list[str], list[list[str]]]:
        """The printed table as strings (4 significant digits, blank where undefined)."""
        from attnreg.report.rformat import fmt_g

        table = self._display()
        body = [[str(i), *("" if not np.isfinite(v) else fmt_g(float(v), 4) for v in row)]
                for i, row in zip(table.index, table.to_numpy(dtype=float), strict=True)]
        return ["model", *table.columns], body

    def _notes(self) -> list[str]:
        """The lines after the table (without the blank line that starts them)."""
        from attnreg.report import render

        return [line for section in self.summary().sections[2:]
                for line in render.text(section)][1:]

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        return (f"<attnreg forecast comparison: {len(self.names)} models vs "
                f"{self.benchmark_name!r}, h={self.horizon}, {self.targets.size} forecasts, "
                f"MCS {{{', '.join(self.mcs.included if self.mcs else ())}}}>")

    def _repr_html_(self) -> str:
        return str(self.summary()._repr_html_())

    def to_latex(self) -> str:
        """The printed table as a booktabs LaTeX tabular (needs ``\\usepackage{booktabs}``;
        special characters escaped), the notes as ``%`` comments below it."""
        from tabulate import tabulate

        headers, body = self._cells()
        text = tabulate(body, headers=headers, tablefmt="latex_booktabs", disable_numparse=True,
                        colalign=("left", *("right",) * (len(headers) - 1)))
        return "\n".join([str(text), *(f"% {line}" for line in self._notes())])

    def to_markdown(self) -> str:
        """The printed table as a Markdown (pipe) table, 4 significant digits, notes below."""
        from tabulate import tabulate

        headers, body = self._cells()
        text = tabulate(body, headers=headers, tablefmt="pipe", disable_numparse=True,
                        colalign=("left", *("right",) * (len(headers) - 1)))
        return "\n".join([str(text), "", *self._notes()])

    def plot(self, kind: str = "cumulative", **kw: Any) -> Any:
        """Plot the comparison: ``"cumulative"`` (each model's cumulative squared-error
        difference against the benchmark, Goyal–Welch) or ``"oos_r2"`` (rolling OOS R²,
        ``window=``). Returns the matplotlib Axes; see
        :func:`attnreg.timeseries.fcplots.plot_forecasts`."""
        from attnreg.timeseries.fcplots import plot_forecasts

        return plot_forecasts(self, kind, **kw)


def _forecast_data(fc: Any, horizon: int | None, position: int) -> Any:
    from attnreg.timeseries.views import single_horizon

    if not hasattr(fc, "plan") and not hasattr(fc, "at_horizon"):
        raise OptionError(f"compare_forecasts() takes results of attnreg.forecast(), however "
                          f"forecasts[{position}] is {type(fc).__name__}")
    return single_horizon(fc, horizon)


def _default_names(fcs: Sequence[Any]) -> list[str]:
    methods = [str(fc.plan.method) for fc in fcs]
    out = []
    for i, m in enumerate(methods):
        repeated = methods.count(m) > 1
        out.append(f"{m} ({methods[:i + 1].count(m)})" if repeated else m)
    return out


def _describe(labels: pd.Index) -> str:
    shown = ", ".join(str(v) for v in labels[:3])
    return shown + (f" (and {len(labels) - 3} more)" if len(labels) > 3 else "")


def _check_alignment(fcs: Sequence[Any], names: Sequence[str]) -> None:
    h0, t0 = fcs[0].plan.horizon, fcs[0].forecasts.index
    for fc, name in zip(fcs[1:], names[1:], strict=True):
        if fc.plan.horizon != h0:
            raise OptionError(f"forecasts to compare must share one horizon, however {names[0]!r} "
                              f"is at horizon {h0} and {name!r} at horizon {fc.plan.horizon}")
        t = fc.forecasts.index
        if not t.equals(t0):
            missing, extra = t0.difference(t), t.difference(t0)
            parts = []
            if len(missing):
                parts.append(f"{name!r} lacks target dates {_describe(missing)} that "
                             f"{names[0]!r} has")
            if len(extra):
                parts.append(f"{names[0]!r} lacks target dates {_describe(extra)} that "
                             f"{name!r} has")
            raise DataError("forecasts to compare must cover the same target dates, however "
                            + "; ".join(parts or [f"{name!r} orders them differently"])
                            + " (use the same start and horizon)")
        a0, a = fcs[0].forecasts["actual"].to_numpy(), fc.forecasts["actual"].to_numpy()
        if not np.allclose(a, a0, rtol=1e-12, atol=0.0):
            raise DataError(f"forecasts to compare must forecast one series, however the actual "
                            f"values of {name!r} differ from those of {names[0]!r} at "
                            f"{_describe(t0[~np.isclose(a, a0, rtol=1e-12, atol=0.0)])}")


def _nests(model: Any, bench: Any) -> bool:
    return set(bench.plan.design.column_names) <= set(model.plan.design.column_names)


def _safe(test: Any, *args: Any, **kw: Any) -> tuple[Any, str | None]:
    try:
        return test(*args, **kw), None
    except DataError as err:
        return None, str(err)


def compare_forecasts(forecasts: Sequence[Any], benchmark: Any = "mean", *,
                      names: Sequence[str] | None = None, horizon: int | None = None,
                      loss: ev.Loss = "squared", mcs_size: float = 0.1, mcs_reps: int = 1000,
                      block_size: int | None = None, mcs_method: MCSMethod = "R",
                      bootstrap: Bootstrap = "stationary", seed: int = 0) -> ForecastComparison:
    """Compare several out-of-sample forecasts of one target with a benchmark and each other.

    Parameters
    ----------
    forecasts : sequence of ForecastResults (or several-horizon results)
        Results of :func:`attnreg.forecast` with the same target dates and horizon (the same
        ``start`` and ``horizon``; the formulas, methods and schemes may differ).
    benchmark : "mean" or ForecastResults, default "mean"
        The prevailing mean (at each origin, the mean of every response observed by then:
        the same in every run over the same target dates, whatever its model or scheme), or
        another forecast of the same target dates (e.g. an AR model nested in the others).
    names : sequence of str, optional
        One per forecast (default: each method, numbered when repeated).
    horizon : int, optional
        The horizon to compare when the results hold several.
    loss : {"squared", "absolute"}, default "squared"
        The loss of the DM and GW tests and of the model confidence set.
    mcs_size : float, default 0.1
        α of the model confidence set (the set is the (1 − α) MCS).
    mcs_reps, block_size, mcs_method, bootstrap, seed
        Of :func:`model_confidence_set` (block length default ``int(sqrt(n))``).

    Returns
    -------
    ForecastComparison

    Raises
    ------
    DataError
        If the forecasts do not cover the same target dates (the message names the dates
        missing from which model) or do not forecast the same series.
    OptionError
        If their horizons differ (named), or an argument is invalid.

    Notes
    -----
    Each test compares a model with the benchmark on the common target dates; nothing
    beyond the forecasts is used, so the comparison inherits the forecasts' rule that at
    each origin only data observed by then were used. Clark–West applies to models nesting
    the benchmark: the prevailing mean is nested in every model with an intercept; a
    forecast benchmark is taken as nested when its design's columns are among the model's.
    A test that is not defined (identical forecasts) is NaN and a note says why.

    Examples
    --------
    >>> import attnreg as ar
    >>> from statsmodels.datasets import macrodata
    >>> macro = macrodata.load_pandas().data
    >>> macro.index = pd.period_range("1959Q1", periods=len(macro), freq="Q")
    >>> ar1 = ar.forecast("infl ~ lag(infl, 1)", macro, start="1990Q1")
    >>> big = ar.forecast("infl ~ lag(infl, 1) + lag(unemp, 1) + lag(tbilrate, 1)", macro,
    ...                   method="ridge", start="1990Q1")
    >>> cmp = ar.compare_forecasts([big], benchmark=ar1, names=["ridge"])
    >>> cmp.table.loc["ridge", ["msfe_ratio", "dm_p_value", "cw_p_value"]].round(3)
    msfe_ratio    0.910
    dm_p_value    0.217
    cw_p_value    0.030
    Name: ridge, dtype: float64
    >>> late = ar.forecast("infl ~ lag(infl, 1)", macro, start="1995Q1")
    >>> ar.compare_forecasts([ar1, late])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    attnreg.exceptions.DataError: ... 'ols (2)' lacks target dates 1990Q1, 1990Q2, 1990Q3 (and 17 more) ...
    """
    if isinstance(forecasts, (str, bytes)) or not isinstance(forecasts, Sequence) or not forecasts:
        raise OptionError("compare_forecasts() needs a non-empty list of forecasts, however: "
                          f"forecasts={forecasts!r}")
    fcs = [_forecast_data(fc, horizon, i) for i, fc in enumerate(forecasts)]
    if names is None:
        names = _default_names(fcs)
    names = [str(n) for n in names]
    if len(names) != len(fcs):
        raise OptionError(f"names must have one entry per forecast ({len(fcs)}), however: "
                          f"{len(names)} names")
    if len(set(names)) != len(names):
        raise OptionError(f"names must be distinct, however: names={names!r}")
    notes: list[str] = []
    if isinstance(benchmark, str):
        if benchmark != "mean":
            raise OptionError(f"benchmark must be 'mean' or a forecast, however: {benchmark=}")
        bench_name = "mean" if "mean" not in names else "prevailing mean"
        _check_alignment(fcs, names)
        bench = fcs[0].forecasts["benchmark"].to_numpy()
        differ = [n for fc, n in zip(fcs, names, strict=True)
                  if not np.allclose(fc.forecasts["benchmark"].to_numpy(), bench, rtol=1e-12)]
        if differ:
            notes.append(f"The prevailing means of {', '.join(differ)} differ from {names[0]}'s "
                         f"(another response or sample); the benchmark is {names[0]}'s.")
        nested = [True] * len(fcs)
    else:
        bfc = _forecast_data(benchmark, horizon, len(fcs))
        bench_name = f"{bfc.plan.method} (benchmark)"
        _check_alignment([bfc, *fcs], [bench_name, *names])
        bench = bfc.forecasts["forecast"].to_numpy()
        nested = [_nests(fc, bfc) for fc in fcs]
    if loss not in ("squared", "absolute"):
        raise OptionError(f"loss must be 'squared' or 'absolute', however: {loss=}.")
    if mcs_method not in _MCS_METHODS or bootstrap not in _BOOTSTRAPS:
        raise OptionError(f"mcs_method must be one of {_MCS_METHODS} and bootstrap one of "
                          f"{_BOOTSTRAPS}, however: {mcs_method=}, {bootstrap=}.")
    h = int(fcs[0].plan.horizon)
    targets = fcs[0].forecasts.index
    y = fcs[0].forecasts["actual"].to_numpy()
    F = np.column_stack([fc.forecasts["forecast"].to_numpy() for fc in fcs])
    E, eb = y[:, None] - F, y - bench
    rows = []
    for j, name in enumerate(names):
        e = E[:, j]
        dm, why_dm = _safe(ev.diebold_mariano, e, eb, h=h, loss=loss)
        cw, why_cw = _safe(ev.clark_west, y, F[:, j], bench, h=h) if nested[j] else (None, None)
        with warnings.catch_warnings():  # a small sample is said once, in the notes
            warnings.simplefilter("ignore", InferenceWarning)
            gw, why_gw = _safe(giacomini_white, _loss(e, loss) - _loss(eb, loss), h=h)
        enc, why_enc = _safe(encompassing_test, eb, e, h=h)
        rev, _ = _safe(encompassing_test, e, eb, h=h)
        notes += [f"{name}: {why}" for why in dict.fromkeys((why_dm, why_cw, why_gw, why_enc))
                  if why]
        rows.append([ev.msfe(y, F[:, j]), ev.msfe_ratio(y, F[:, j], bench), ev.oos_r2(y, F[:, j], bench),
                     *(dm[:2] if dm else (np.nan, np.nan)), *(cw[:2] if cw else (np.nan, np.nan)),
                     *(gw[:2] if gw else (np.nan, np.nan)), *(enc[:3] if enc else (np.nan,) * 3),
                     *(rev[:2] if rev else (np.nan, np.nan))])
    if y.size - h < GW_MIN_OBS and y.size - h > 2:  # n = T - h differentials, q = 2
        notes.append(f"GW uses {y.size - h} loss differentials, fewer than {GW_MIN_OBS}: its "
                     "chi-squared(2) p-values are unreliable (the test rejects far less often "
                     "than its level in samples this small).")
    if not all(nested):
        notes.append("CW is NaN for " + ", ".join(n for n, k in zip(names, nested, strict=True)
                                                  if not k) + ": the benchmark is not nested.")
    all_names = [*names, bench_name]
    losses = pd.DataFrame(_loss(np.column_stack([E, eb]), loss), columns=all_names)
    mcs, why_mcs = _safe(model_confidence_set, losses, mcs_size, reps=mcs_reps,
                         block_size=block_size, method=mcs_method, bootstrap=bootstrap, seed=seed)
    if why_mcs:
        notes.append(f"MCS: {why_mcs}")
    rows.append([ev.msfe(y, bench), 1.0, 0.0, *(np.nan,) * 11])
    table = pd.DataFrame(rows, index=pd.Index(all_names, name="model"), columns=list(_COLUMNS[:-2]))
    table["mcs_p_value"] = mcs.p_values.to_numpy() if mcs is not None else np.nan
    table["in_mcs"] = table["mcs_p_value"] > (mcs.size if mcs is not None else np.inf)
    return ForecastComparison(table=table, names=tuple(names), benchmark_name=bench_name,
                              targets=targets, actual=y, forecasts=F, benchmark=bench, horizon=h,
                              loss=loss, mcs=mcs, notes=tuple(notes))
