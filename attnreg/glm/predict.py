"""Predictions of a GLM: standard errors and intervals, and the prediction as a vote of rows.

Standard errors are R's ``predict.glm(se.fit = TRUE)``: on the link scale
``se(η*) = sqrt(x*' V x*)`` with V the covariance in use (``vcov.glm`` by default, the sandwich
chosen by ``vcov=``), on the response scale the delta method ``|dμ/dη| · se(η*)``. Intervals are
formed on the link scale, ``η* ± q · se(η*)``, and mapped through the inverse link (so they stay
inside the response's range, e.g. (0, 1) for a probability); q is the normal quantile when the
tests are z tests (dispersion fixed, or a sandwich covariance) and the t(df_resid) quantile
otherwise, as in the summary.

The attention view: at the IRLS fixed point β = (X'WX)⁻¹X'Wz, with W the working weights and
z = η − offset + (y − μ) dη/dμ the working response. So the linear predictor of a new row is

    η* = offset* + Σ_i ω_i z_i,     ω_i = x*' (X'WX)⁻¹ x_i w_i,

a weighted vote of the training rows' working responses, as OLS's prediction is a vote of the
responses (OLS is the Gaussian identity-link case: z = y, w = prior weights). The weights come
from the factor F(x) = x R⁻¹ of the last IRLS step's QR (a triangular solve, no inverse).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import stats
from scipy.linalg import solve_triangular

from attnreg._typing import FloatArray
from attnreg.views.attention import AttentionWeights, linear_weight_fn
from attnreg.exceptions import OptionError
from attnreg.glm.offset import evaluate_offset

if TYPE_CHECKING:
    from attnreg.glm.results import GlmResults

__all__ = ["glm_attention", "predict_glm", "working_response"]

_INTERVALS = ("none", "confidence")


def _check(type: str, interval: str, level: float) -> None:
    if type not in ("link", "response"):
        raise OptionError(f"type must be 'link' or 'response', however: {type=}")
    if interval not in _INTERVALS:
        raise OptionError(f"interval must be 'none' or 'confidence' (a GLM has no prediction "
                          f"interval), however: {interval=}")
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise OptionError(f"level must be a number in (0, 1), however: {level=}")


def _new_offset(res: GlmResults, newdata: Any, offset: Any, n: int) -> FloatArray:
    spec = res.offset_spec if offset is None else offset
    if spec is None:
        return np.zeros(n)
    if offset is None and not isinstance(spec, str):
        raise OptionError("the fit's offset was a vector: give predict(newdata, offset=...) "
                          "for the new rows")
    return evaluate_offset(spec, pd.DataFrame(newdata), res.design.eval_env, "newdata")


def _rows(res: GlmResults, newdata: Any, offset: Any) -> tuple[FloatArray, FloatArray, pd.Index]:
    """Design rows (kept columns), offsets and labels of ``newdata`` (training rows if None)."""
    if newdata is None:
        X = res.design.X[:, res.kept]
        return X, res.fit.eta - X @ res.fit.coef, res.design.row_labels
    X_full, labels = res.design.rebuild(newdata)
    return X_full[:, res.kept], _new_offset(res, newdata, offset, len(labels)), labels


def predict_glm(res: GlmResults, newdata: Any = None, type: str = "link", offset: Any = None,
                *, se_fit: bool = False, interval: str = "none", level: float = 0.95) -> Any:
    """:meth:`GlmResults.predict`: predictions, with standard errors or intervals if asked."""
    _check(type, interval, level)
    X, off, labels = _rows(res, newdata, offset)
    eta = X @ res.fit.coef + off
    if newdata is None:
        eta = res.fit.eta  # the fit's own linear predictor, bit for bit
    link = res.link
    fit = eta if type == "link" else link.linkinv(eta)
    if not se_fit and interval == "none":
        return pd.Series(fit, index=labels, name="fit")
    V = res.vcov.to_numpy()[np.ix_(res.kept, res.kept)]
    se_eta = np.sqrt(np.einsum("ij,jk,ik->i", X, V, X))
    se = se_eta if type == "link" else np.abs(link.mu_eta(eta)) * se_eta
    out = pd.DataFrame({"fit": fit}, index=labels)
    if se_fit:
        out["se_fit"] = se
    if interval == "confidence":
        q = (stats.norm.ppf if res.z_tests else lambda p: stats.t.ppf(p, res.df_resid))(
            0.5 + level / 2)
        lo, hi = eta - q * se_eta, eta + q * se_eta
        if type == "response":
            lo, hi = link.linkinv(lo), link.linkinv(hi)
        out["lwr"], out["upr"] = np.fmin(lo, hi), np.fmax(lo, hi)  # a decreasing link swaps them
    return out


def working_response(res: GlmResults) -> FloatArray:
    """z = η − offset + (y − μ) dη/dμ of the training rows, shape (n_obs,)."""
    X = res.design.X[:, res.kept]
    eta = res.fit.eta
    return X @ res.fit.coef + (res.design.y - res.fit.mu) / res.link.mu_eta(eta)


def glm_attention(res: GlmResults, newdata: Any = None, offset: Any = None, *,
                  chunk_size: int | None = None) -> AttentionWeights:
    """:meth:`GlmResults.attention`: the link-scale prediction as a vote of working responses."""
    X, off, labels = _rows(res, newdata, offset)
    R = res.fit.r
    F_train = solve_triangular(R, res.design.X[:, res.kept].T, trans="T").T  # x R⁻¹
    F_query = F_train if newdata is None else solve_triangular(R, X.T, trans="T").T
    fn = linear_weight_fn(F_query, F_train, res.fit.working_weights)
    return AttentionWeights(weight_fn=fn, n_queries=F_query.shape[0], query_labels=labels,
                            train_labels=res.design.row_labels, y_train=working_response(res),
                            kind="linear", chunk_size=chunk_size, base=off,
                            queries_are_training=newdata is None)
