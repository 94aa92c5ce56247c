r"""Prediction, attention and first stages of an IV fit with absorbed fixed effects.

The dummy-variable fit (the fixed effects as exogenous factors) instruments each dummy by
itself, so its normal equations for the effects are ``D'W(y - Rβ - Dα) = 0``: the effects are
those of the residual ``y - Rβ`` on the dummies, ``α = α_y - α_R β`` with ``α_v`` the effects
the demeaning of column ``v`` found (:attr:`attnreg.iv.frame.IVFrame.fe_effects`). A new row
with regressors ``r₀`` and levels ``d₀`` is predicted ``r₀'β + d₀'α`` (invariant to which
solution α is, as ``d₀`` is a row of dummies), and as a weighted vote of the training
responses

.. math:: r_0'\hat\beta + d_0'\hat\alpha = (r_0 - \alpha_R'd_0)'G'y + d_0'(D'WD)^{-}D'W y,

``G'y = β̂`` the 2SLS weights of the demeaned fit (:func:`attnreg.iv.attention.tsls_attention`,
whose weights are orthogonal to the dummies) and the second term the fixed effects' own
weights (exact sparse solves with ``D'WD``, :class:`attnreg.fe.solve.LevelSolver`: ``d₀`` is
in its range, so any solution serves; no G × G matrix). The training rows' self-weights add
the dummies' leverage (:func:`attnreg.fe.leverage.level_quadratic`), no n × n matrix.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attnreg._typing import FloatArray, IntArray
from attnreg._warn import warn_user
from attnreg.exceptions import DataError, InferenceWarning
from attnreg.fe.effects import normalise
from attnreg.fe.leverage import level_quadratic
from attnreg.fe.solve import LevelSolver
from attnreg.formula.design import INTERCEPT
from attnreg.formula.poly import r_column_names
from attnreg.iv.attention import IVAttention, tsls_attention
from attnreg.iv.compare_ols import ols_weights

if TYPE_CHECKING:
    from attnreg.iv.results import IVResults

__all__ = ["fe_attention", "fe_first_stages", "iv_fixed_effects", "predict_iv_fe"]


def _effects(res: IVResults) -> FloatArray:
    """α of the fit (un-normalised), shape (n_levels_total,): ``α_y - α_R β``."""
    eff = res.frame.fe_effects
    assert eff is not None
    k = len(res.names)
    return np.asarray(eff[:, 0] - eff[:, 1:1 + k] @ res.fit.coef)


def iv_fixed_effects(res: IVResults) -> dict[str, pd.Series]:
    """The fixed effects of the fit with fixest's normalisation, one Series per fixed effect
    indexed by its levels (as :meth:`FixedEffectsResults.fixef`)."""
    fe = res.frame.fe
    alpha = normalise(fe, _effects(res))
    o = fe.offsets
    return {name: pd.Series(alpha[o[k]:o[k + 1]], index=fe.levels[k], name=name)
            for k, name in enumerate(fe.names)}


def _new_rows(res: IVResults, newdata: Any) -> tuple[FloatArray, list[IntArray], pd.Index]:
    """The regressors ``[X, D]`` (intercept column dropped) and the level codes (−1: missing
    or not in the fit, with a warning naming them) of the rows of ``newdata``."""
    frame = newdata if isinstance(newdata, pd.DataFrame) else pd.DataFrame(newdata)
    design = res.design
    full = dataclasses.replace(design, column_names=r_column_names(design.design_info))
    X_full, labels = full.rebuild(frame)
    X0 = X_full[:, [j for j, n in enumerate(full.column_names) if n != INTERCEPT]]
    fe, codes = res.frame.fe, []
    for k, name in enumerate(fe.names):
        if name not in frame.columns:
            raise DataError(f"newdata has no fixed-effect column {name!r}; the fit absorbed "
                            f"{', '.join(fe.names)}")
        values = frame[name]
        code = np.asarray(fe.levels[k].get_indexer(pd.Index(values.to_numpy())), dtype=np.int64)
        unseen = (code < 0) & ~values.isna().to_numpy()
        if unseen.any():
            shown = ", ".join(map(repr, pd.unique(values[unseen])[:5].tolist()))
            warn_user(f"fixed effect {name!r} has level(s) not in the fit ({shown}); their "
                      "predictions are NaN", InferenceWarning)
        codes.append(code)
    return X0, codes, labels


def _level_sum(res: IVResults, codes: list[IntArray], values: FloatArray) -> FloatArray:
    """Σ_k values[level of the row in k], shape (m, n_cols); NaN where a code is −1."""
    o = res.frame.fe.offsets
    out = np.zeros((codes[0].size, values.shape[1]))
    bad = np.zeros(codes[0].size, dtype=bool)
    for k, code in enumerate(codes):
        bad |= code < 0
        out += values[np.where(code < 0, 0, code) + o[k]]
    out[bad] = np.nan
    return out


def predict_iv_fe(res: IVResults, newdata: Any) -> pd.Series:
    """``r₀'β + d₀'α`` for the rows of ``newdata`` (NaN for a missing value or a level not
    in the fit), equal to the dummy-variable fit's prediction."""
    X0, codes, labels = _new_rows(res, newdata)
    pred = X0 @ res.fit.coef + _level_sum(res, codes, _effects(res)[:, None])[:, 0]
    return pd.Series(pred, index=labels, name="fit")


def fe_attention(res: IVResults, newdata: Any = None) -> IVAttention:
    """The 2SLS prediction of each row of ``newdata`` (default: the training rows) as weights
    over the training responses, fixed effects included (module docstring)."""
    f = res.frame
    fe, eff = f.fe, f.fe_effects
    assert eff is not None
    k = len(res.names)
    if newdata is None:
        X0, codes = res.design.X, [np.asarray(c) for c in fe.codes]
    else:
        X0, codes, _ = _new_rows(res, newdata)
    X0t = X0 - _level_sum(res, codes, eff[:, 1:1 + k])  # the regressors less their FE part
    if not np.isfinite(X0t).all():
        raise DataError("newdata has rows with a missing value or a fixed-effect level not in "
                        "the fit; drop them first")
    core = tsls_attention(X0t, f.y, f.X if f.X.shape[1] else None, f.D, f.Z, f.weights)
    w = np.ones(res.nobs) if f.weights is None else f.weights
    solver = LevelSolver(fe, f.weights)
    own = _own_weights(res, codes, w, solver)  # (m, n): d₀'(D'WD)⁺D'W
    # the training rows' own fixed-effect weights w_i d_i'(D'WD)⁺d_i: the dummies' leverage
    train = w * level_quadratic(fe, f.weights, [np.asarray(c) for c in fe.codes],
                                solver=solver)
    weights = core.weights + own
    ols = ols_weights(X0t, np.hstack([f.X, f.D]), f.weights) + own  # the dummy-variable OLS
    return IVAttention(weights=weights, predictions=weights @ res.design.y, coef=core.coef,
                       self_weights=core.self_weights + train, ols_weights=ols,
                       y=res.design.y, row_labels=res.design.row_labels)


def _own_weights(res: IVResults, codes: list[IntArray], w: FloatArray,
                 solver: LevelSolver) -> FloatArray:
    """``d₀'(D'WD)⁺D'W`` for the levels ``codes`` of m rows, shape (m, n): the weights by
    which the fixed effects of those rows average the training responses (exact sparse
    solves, :class:`attnreg.fe.solve.LevelSolver`; no G × G matrix)."""
    return solver.projection(codes).T * w


def fe_first_stages(res: IVResults) -> dict[str, Any]:
    """``{endogenous name: FixedEffectsResults}``: OLS of each endogenous regressor on the
    exogenous regressors and the excluded instruments with the same fixed effects absorbed,
    rows, weights and covariance (:func:`attnreg.fe.formula.fit_fe_formula`)."""
    from attnreg.iv.first_stage import fe_first_stage_fits

    return fe_first_stage_fits(res)
