"""Marginal effects of GLMs on the mean, dμ/dx, with delta-method standard errors, as
statsmodels' ``get_margeff(at="overall" | "mean", method="dydx", dummy=)``.

For a design column j with coefficient β_j the effect is g'(η) β_j (g = the inverse link),
averaged over the training rows (``at="overall"``: average partial effects) or evaluated
at the column means (``at="mean"``). With ``dummy=True`` the effect of a 0/1 column (a
factor's dummy, statsmodels' rule: minimum 0, maximum 1, whole numbers) is the discrete
change μ(x_j = 1) − μ(x_j = 0), the other columns of each row as they are (as statsmodels
does; the other dummies of a factor are not reset). The covariance of the effects is
J V Jᵀ, J their Jacobian in β (closed form, second derivatives of the inverse links) and V
the covariance in use (``vcov=`` / ``with_vcov``). The linear predictor includes the offset
(the mean offset at the means); statsmodels drops an offset here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from attnreg._typing import FloatArray
from attnreg.exceptions import OptionError

if TYPE_CHECKING:
    from attnreg.glm.results import GlmResults

__all__ = ["MU_ETA_DERIV", "margins"]


def _logit_d2(eta: FloatArray) -> FloatArray:
    m = 1 / (1 + np.exp(-eta))
    return m * (1 - m) * (1 - 2 * m)


def _cloglog_d2(eta: FloatArray) -> FloatArray:
    e = np.exp(np.minimum(eta, 700.0))
    return np.exp(eta - e) * (1 - e)


#: d²μ/dη² of each link (the derivative of ``Link.mu_eta``)
MU_ETA_DERIV: dict[str, Callable[[FloatArray], FloatArray]] = {
    "logit": _logit_d2,
    "probit": lambda eta: -eta * stats.norm.pdf(eta),
    "cauchit": lambda eta: -2 * eta / (np.pi * (1 + eta ** 2) ** 2),
    "cloglog": _cloglog_d2,
    "log": np.exp,
    "identity": np.zeros_like,
    "inverse": lambda eta: 2 / eta ** 3,
    "sqrt": lambda eta: np.full_like(eta, 2.0),
    "1/mu^2": lambda eta: 0.75 * eta ** -2.5,
}


def margins(fit: GlmResults, at: str = "overall", dummy: bool = False) -> pd.DataFrame:
    """Marginal effects dμ/dx of the non-constant estimated columns.

    Parameters
    ----------
    fit : GlmResults
    at : {"overall", "mean"}
        Average of the rows' effects, or the effect at the column means.
    dummy : bool
        Discrete changes 0 → 1 for 0/1 columns.

    Returns
    -------
    DataFrame, shape (n_effects, 6)
        ``dy/dx``, ``std_err``, ``z``, ``p_value``, ``ci_low``, ``ci_high`` (95 %, normal),
        indexed by design column.
    """
    if at not in ("overall", "mean"):
        raise OptionError(f"at must be 'overall' or 'mean', however: at={at!r}")
    kept = fit.kept
    X_all = fit.design.X[:, kept]
    beta = fit.fit.coef
    const = np.all(X_all == 1.0, axis=0)
    is_dummy = (X_all.min(axis=0) == 0) & (X_all.max(axis=0) == 1) & np.all(X_all % 1 == 0,
                                                                                axis=0)
    X = X_all if at == "overall" else X_all.mean(axis=0, keepdims=True)
    off = fit.offset if at == "overall" else np.array([fit.offset.mean()])
    eta = X @ beta + off
    g1, g2 = fit.link.mu_eta(eta), MU_ETA_DERIV[fit.link.name](eta)
    k = beta.size
    effects = np.mean(g1) * beta
    jac = np.outer(beta, np.mean(g2[:, None] * X, axis=0)) + np.mean(g1) * np.eye(k)
    for j in np.flatnonzero(is_dummy & ~const) if dummy else []:
        effects[j], jac[j] = _discrete(fit, X, eta, beta, int(j))
    rows = np.flatnonzero(~const)
    jac = jac[rows]
    cov = fit.vcov.to_numpy()[np.ix_(kept, kept)]
    se = np.sqrt(np.einsum("ij,jk,ik->i", jac, cov, jac))
    eff = effects[rows]
    z = eff / se
    q = stats.norm.ppf(0.975)
    names = [fit.design.column_names[j] for j in kept[rows]]
    return pd.DataFrame({"dy/dx": eff, "std_err": se, "z": z, "p_value": 2 * stats.norm.sf(
        np.abs(z)), "ci_low": eff - q * se, "ci_high": eff + q * se}, index=names)


def _discrete(fit: GlmResults, X: FloatArray, eta: FloatArray, beta: FloatArray,
              j: int) -> tuple[float, FloatArray]:
    """The mean change of μ as column j goes 0 → 1, and its gradient in β."""
    eta1 = eta + (1 - X[:, j]) * beta[j]
    eta0 = eta - X[:, j] * beta[j]
    link = fit.link
    effect = float(np.mean(link.linkinv(eta1) - link.linkinv(eta0)))
    d1, d0 = link.mu_eta(eta1), link.mu_eta(eta0)
    grad = np.mean((d1 - d0)[:, None] * X, axis=0)
    grad[j] = np.mean(d1)  # column j is 1 in the first design, 0 in the second
    return effect, grad
