"""Prediction intervals of a chunked fixed-effects fit, equal to the in-memory fit's.

The variance of x₀'β̂ + d₀'α̂ is that of :func:`attnreg.fe.predict.predict_fe`, computed from
what a chunked fit keeps instead of its rows:

- classical: x̃₀'Var(β̂)x̃₀ + σ² d₀'(D'WD)⁺d₀, the second term by the exact solver of the
  fixed effects' normal equations on pass A's table of combinations (D'WD of the rows is
  that of the combinations weighted by their Σ w): no pass over the rows;
- HC0–HC3 and cluster (HC0, HC1, fixest's or the dummy-variable small-sample convention):
  the sandwich Σ_g (Σ_{i∈g} wᵢcᵢêᵢ)² of :mod:`attnreg.fe.robust`, from **one more pass over
  the rows** (:mod:`attnreg.fe.chunk_interval_pass`) that accumulates, per combination of
  levels (or per (cluster, combination) pair), what the new rows' weights are combined with.
  The pass is the same for any number of new rows; the fixed effects' part of their weights,
  (D'WD)⁺d₀ on the combinations, is solved in blocks of new rows.
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import scipy.sparse as sp

from attnreg._typing import FloatArray, IntArray
from attnreg.exceptions import OptionError
from attnreg.fe.chunk_interval_pass import IntervalPart, IntervalPlan, run_interval_pass
from attnreg.fe.chunk_spec import KeySet
from attnreg.fe.chunked_vcov import nested_of_keys
from attnreg.fe.leverage import level_quadratic
from attnreg.fe.robust import ROBUST_KINDS
from attnreg.fe.solve import BLOCK_ENTRIES
from attnreg.large.passes import pass_plan

if TYPE_CHECKING:
    from attnreg.fe.chunked_results import ChunkedFixedEffectsResults

__all__ = ["chunked_prediction_variance"]


def chunked_prediction_variance(fit: ChunkedFixedEffectsResults, Xt0: FloatArray,
                                codes: list[IntArray], *, data: Any = None,
                                progress: bool = False) -> FloatArray:
    """Variance of the predictions x₀'β̂ + d₀'α̂ under the fit's covariance (module notes).

    Parameters
    ----------
    fit : ChunkedFixedEffectsResults
    Xt0 : ndarray, shape (m, n_coef)
        The new rows' regressors less their fixed-effect part (x̃₀; NaN rows: unseen level or
        missing value).
    codes : list of ndarray of int, each shape (m,)
        Their level in each fixed effect (−1: unseen or missing).
    data : optional
        The fit's data again, when it does not keep its source (robust covariances read the
        rows once more).
    progress : bool

    Returns
    -------
    ndarray, shape (m,)
        NaN where a level is unseen or a value missing.

    Raises
    ------
    OptionError
        A covariance other than classical, HC0–HC3 and cluster (HC0, HC1), before any pass;
        no source to read.
    """
    spec = fit.vcov_spec
    kind = spec.kind
    if fit.vcov_spec.estimator.classical:
        V = np.nan_to_num(fit.vcov.to_numpy())
        q = level_quadratic(fit.absorbed.fe, fit.absorbed.weights, codes,
                            solver=fit._level_solver)
        return np.asarray(np.einsum("ij,jk,ik->i", Xt0, V, Xt0) + fit.sigma ** 2 * q)
    if kind not in ROBUST_KINDS or (kind == "cluster" and spec.option("type") == "CR2"):
        raise OptionError(f"intervals of predictions with fixed effects are computed under "
                          f"the classical, HC0-HC3 and cluster (HC0, HC1) covariances, however "
                          f"the fit uses {kind!r}: call with_vcov() with one of those first")
    source = fit.source if data is None else fit._reread(data)
    if source is None:
        raise OptionError(f"predict(interval=) under the {kind} covariance reads the rows "
                          f"again, but this fit does not keep its source "
                          f"({fit.source_description}): pass data=")
    base = fit._with_leverage() if kind in ("HC2", "HC3") else fit
    names = spec.option("cluster").names if kind == "cluster" else ()
    groups = tuple(tuple(names[d] for d in dims) for size in range(1, len(names) + 1)
                   for dims in itertools.combinations(range(len(names)), size))
    residuals = kind if kind in ("HC2", "HC3") else "plain"
    in_fit = base.spec.in_fit  # type: ignore[attr-defined]  # an AbsorbedSpec
    plan = IntervalPlan(pass_plan(base, residuals=residuals), len(in_fit), groups)
    part = run_interval_pass(plan, source, progress)
    ok = np.flatnonzero(np.isfinite(Xt0).all(axis=1))
    out = np.full(Xt0.shape[0], np.nan)
    step = max(1, BLOCK_ENTRIES // max(int(in_fit.sum()), 1))  # P: ≤ 128 MB
    for lo in range(0, ok.size, step):
        rows = ok[lo:lo + step]
        P = fit._level_solver.projection([c[rows] for c in codes])  # (n_fit_combinations, m)
        u0 = Xt0[rows][:, plan.base.kept] @ plan.base.scaled_g  # (m, rank)
        if kind == "cluster":
            out[rows] = _cluster_sum(fit, plan, part, P, u0.T)
        else:
            out[rows] = _rows_sum(fit, part, P, u0.T)
    return out


def _rows_sum(fit: Any, part: IntervalPart, P: FloatArray, u0: FloatArray) -> FloatArray:
    """Σᵢ sᵢ² for rows as clusters (HC0–HC3), HC1 times n/df_resid; shape (m,)."""
    assert part.per_combination is not None and part.cross is not None
    per = part.per_combination[fit.spec.in_fit]  # (n_fit_combinations, 1 + rank)
    total = (np.einsum("cm,c->m", P * P, per[:, 0])
             + 2.0 * np.einsum("cm,cm->m", P, per[:, 1:] @ u0)
             + np.einsum("rm,rs,sm->m", u0, part.cross, u0))
    return np.asarray(total * (fit.nobs / fit.df_resid if fit.vcov_spec.kind == "HC1" else 1.0))


def _group_totals(fit: Any, table: pd.DataFrame, P: FloatArray,
                  u0: FloatArray) -> tuple[FloatArray, int]:
    """(Σ_g (Σ_{i∈g} sᵢ)², the number of clusters g) of one intersection's table."""
    position = np.cumsum(fit.spec.in_fit) - 1  # a combination's row among those in the fit
    combo = position[table.index.get_level_values(-1).to_numpy(dtype=np.int64)]
    keys = table.index.droplevel(-1)
    g, uniques = keys.factorize()
    n_groups = len(uniques)
    values = table.to_numpy(dtype=np.float64)
    A = sp.csr_matrix((values[:, 0], (g, combo)), shape=(n_groups, P.shape[0]))
    member = sp.csr_matrix((np.ones(g.size), (g, np.arange(g.size))), shape=(n_groups, g.size))
    T = A @ P + (member @ values[:, 1:]) @ u0  # (n_groups, m): each cluster's Σ sᵢ
    return np.asarray(np.einsum("gm,gm->m", T, T)), n_groups


def _cluster_sum(fit: Any, plan: IntervalPlan, part: IntervalPart, P: FloatArray,
                 u0: FloatArray) -> FloatArray:
    """Σ over intersections of sign · adj · Σ_g (Σ_{i∈g} sᵢ)², with the small-sample factors
    of :func:`attnreg.fe.robust._cluster_meat` (fixest's or the dummy-variable one)."""
    spec = fit.vcov_spec
    fixest, cadjust = fit.ssc == "fixest", bool(spec.option("cadjust"))
    total = np.zeros(P.shape[1])
    counts = []
    for group, table in zip(plan.groups, part.sums, strict=True):
        sums, n_groups = _group_totals(fit, table, P, u0)
        counts.append(n_groups)
        adj = n_groups / (n_groups - 1.0) if cadjust and not fixest else 1.0
        total += (-1) ** (len(group) + 1) * adj * sums
    n_dims = len(spec.option("cluster").names)
    if cadjust and fixest:
        g_min = min(counts[:n_dims])
        total *= g_min / (g_min - 1.0)
    if spec.option("type") == "HC1":
        k = fit.edf
        if fixest:
            levels, count = nested_of_keys(fit, _key_set(plan.groups[-1], part.sums[-1]),
                                           plan.groups[-1])
            k = k - levels + count
        total *= (fit.nobs - 1.0) / (fit.nobs - k)
    return total


def _key_set(group: tuple[str, ...], table: pd.DataFrame) -> KeySet:
    """The distinct (combination, cluster ids) of the intersection of every dimension."""
    index = table.index
    return KeySet(pd.DataFrame({"combination": index.get_level_values(-1).to_numpy(),
                                **{f"cluster:{c}": index.get_level_values(j).to_numpy()
                                   for j, c in enumerate(group)}}))
